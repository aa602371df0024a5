/* scenario.h — a ddpprof scenario: every key of every section, typed and validated.
 *
 * Contract: a scenario is loaded from an INI file (parsed with inih) on top of the
 * defaults, then command-line overrides (`section.key=value`) are applied on top.
 * Every key has a type, a range, a default and a one-line meaning (the key table in
 * scenario_keys.c; `ddpprof explain` prints it).  `[sweep]` holds `section.key = v1, v2,
 * ...` lists; scenario_sweep_point() builds the cartesian product, one scenario per point,
 * each its own run.  The caller exits with status 2 on any error below.
 *
 * Includes: `include = FILE` lines before the first [section] read FILE (a path
 * relative to the including file's directory) first; the including file's keys then
 * override the included ones, wherever they stand.  Included files may include others,
 * at most SCENARIO_MAX_INCLUDES files in all; a file that includes itself, directly or
 * not, is an error at the include line, as are a missing file and a [sweep] in an
 * included file (the sweep belongs to the scenario that runs).  A problem inside an
 * included file is reported at that file's line ("included.ini:LINE: message").
 *
 * Messages (one line, no trailing newline, valid UTF-8):
 *   path:LINE: message      a problem on that line of the file (LINE counts from 1)
 *   path: message           a problem with the whole file: cannot open, not a regular
 *                           file (directory, device, FIFO, socket), larger than
 *                           SCENARIO_MAX_FILE_BYTES, or no [section] at all
 *   -s section.key=v: msg   a bad override; cross-key problems of an override are
 *                           reported as "-s section.key: message"
 *   path:LINE: warning: msg a key that cannot take effect but does no harm (see below)
 *
 * What a file may hold: UTF-8 text (checked line by line: no NUL byte, no malformed or
 * overlong sequence, no surrogate, nothing above U+10FFFF, no control character but tab
 * and a CR before the newline), lines of at most SCENARIO_MAX_LINE bytes (inih's buffer;
 * long lists continue on indented lines), at most SCENARIO_MAX_FILE_BYTES in all, at
 * least one [section].  Every value must be well-formed UTF-8 without control
 * characters; run.name must be 1..127 bytes, without ';' and without C0/C1 controls.
 * A file or FIFO is opened with O_NONBLOCK and checked with fstat before it is read, so
 * that a FIFO or a device never blocks the reader.
 *
 * Keys that cannot take effect where they are set (checked by scenario_validate):
 *   model.hidden (mlp), model.layers (mlp, bert-large, gpt2), model.d_model,
 *   model.vocab, model.seq_len (bert-large, gpt2), model.params (custom) set for
 *   another model.preset .................................................... error
 *   skew.slowdown set but skew.slow_ranks empty ................................ error
 *   skew.slow_ranks set but skew.slowdown is 1 ................................. error
 *   fault.rank or fault.iter set but fault.mode unset .......................... error
 *   fault.mode set but fault.rank unset ........................................ error
 *   fault.iter >= run.warmup + run.iterations (the fault would never fire) ..... error
 *   run.name empty; skew.slow_ranks entry >= run.world_size; skew.speed not one
 *   value per rank; fault.rank >= run.world_size .............................. error
 * Each "cannot take effect" error above is only a warning when nothing is lost:
 *   - the key holds its default value (e.g. hidden = 1024 for a resnet18);
 *   - the key that switches it on was explicitly switched off (fault.mode = none,
 *     skew.slowdown = 1, skew.slow_ranks empty): a deliberate toggle;
 *   - the file sets the key and a -s override changed the preset or switch under it
 *     (re-using a file for another model).
 * In a [sweep], a key is checked over all points: an error when it takes effect in no
 * point, nothing when it takes effect in some (the sweep varies its context on purpose).
 * Other cross-key rules are also judged over all points at load; a point that breaks
 * one is reported by scenario_sweep_point() with the point's name.
 */
#ifndef DDPPROF_SCENARIO_H
#define DDPPROF_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SCENARIO_MAX_WORLD 65536   /* run.world_size (the cpu backend has its own, lower, limit) */
#define SCENARIO_MAX_MEASURED 256   /* points of a measured allreduce table (network.measured_*) */
#define SCENARIO_MAX_RANK_LIST 1024 /* entries of a per-rank list (skew.speed, skew.slow_ranks) */
#define SCENARIO_MAX_CUSTOM_PARAMS 4096
#define SCENARIO_MAX_SWEEP_KEYS 8
#define SCENARIO_MAX_SWEEP_VALUES 32
#define SCENARIO_STR 128
#define SCENARIO_ERR 512 /* room for any message below: the size to give err (errlen) */
#define SCENARIO_MAX_KEYS 128 /* room in key_line[] for every key of the table in scenario_keys.c */
#define SCENARIO_MAX_SWEEP_POINTS 4096           /* product of the [sweep] axes' lengths */
#define SCENARIO_MAX_FILE_BYTES (1024 * 1024)    /* a scenario file, whole */
#define SCENARIO_MAX_LINE 198                    /* bytes of one line (inih's 200-byte buffer) */
#define SCENARIO_MAX_INCLUDES 8 /* files included, all levels together; also the deepest nesting */

typedef enum { COMPUTE_MODEL = 0, COMPUTE_REAL } compute_mode;
typedef enum { COMM_HOOK_NONE = 0, COMM_HOOK_FP16, COMM_HOOK_BF16 } comm_hook_kind;
typedef enum { LOSS_MEAN = 0, LOSS_SUM } loss_reduction_kind;
/* NET_MEASURED: allreduce times interpolated from measured points (network.measured_*,
 * what `ddpprof calibrate` writes), the ring's alpha-beta for world sizes not measured. */
typedef enum { NET_RING = 0, NET_TREE, NET_MEASURED } net_algorithm;
typedef enum { FAULT_NONE = 0, FAULT_HANG, FAULT_EXIT, FAULT_ERROR } fault_mode;
typedef enum { RECORD_OP = 0, RECORD_PHASE } record_detail;
typedef enum { LOSS_FN_MSE = 0, LOSS_FN_CROSS_ENTROPY } loss_fn_kind;
typedef enum { SYNC_DDP = 0, SYNC_MANUAL } sync_kind;

typedef struct {
    char key[64]; /* "ddp.bucket_cap_mb" */
    int nvalues;  /* at most SCENARIO_MAX_SWEEP_VALUES */
    char **values; /* nvalues strings of fewer than SCENARIO_STR bytes, raw text validated at
                    * load; the array and each string are the axis's own (malloc'ed) */
    int line;
} sweep_axis;

typedef struct scenario {
    char source[256]; /* file the scenario came from ("" for defaults only) */

    /* [run] */
    char name[SCENARIO_STR];
    char backend[16]; /* "auto" | "cpu" */
    char ranks[16];   /* "threads" | "processes" */
    int world_size;
    int iterations; /* measured iterations (after warm-up) */
    int warmup;     /* warm-up iterations, recorded and flagged */
    uint64_t seed;
    double timeout_s; /* a collective not completed in this time fails the run */
    bool equivalence;         /* train world_size 1, N and the hand-written sync; compare */

    /* [model] */
    char preset[32]; /* one of scenario_model_presets */
    int layers;      /* mlp / gpt2 / bert: number of layers (0 = preset default) */
    int hidden;      /* mlp: hidden width */
    int d_model;     /* gpt2: model width (0 = preset default) */
    int vocab;       /* gpt2: vocabulary size (0 = preset default) */
    int seq_len;     /* gpt2 / bert: tokens per sample (0 = preset default) */
    int batch;       /* samples per rank */
    char dtype[8];   /* "fp32" */
    compute_mode compute;
    int ncustom;
    int64_t *custom_params; /* ncustom elements, registration order */
    /* Measured times of each layer (registration order) at speed 1, in place of the
     * roofline (what `ddpprof whatif` derives from a run); empty: modelled. */
    double *layer_forward_us;  /* nlayer_forward */
    double *layer_backward_us; /* nlayer_backward */
    int nlayer_forward, nlayer_backward;
    /* Time inside the measured layer times that collectives other than DDP's took (an
     * all_to_all in the forward), at comm_ranks ranks: it scales with the world size as
     * their (n-1)/n, not with a rank's speed. */
    double forward_comm_us, backward_comm_us;
    int comm_ranks;
    char params_file[256]; /* custom: parameter-list file (custom_model.h), "" for none */
    int global_batch;   /* compute = real: samples per step over all ranks (0 = batch x world) */
    loss_fn_kind loss;  /* compute = real, mlp: mse | cross_entropy */
    double lr;          /* SGD learning rate */
    double loss_scale;  /* the loss is multiplied by this before backward */

    /* [ddp] */
    double bucket_cap_mb;   /* MiB */
    double first_bucket_mb; /* MiB */
    bool gradient_as_bucket_view;
    int no_sync_every; /* synchronise every k-th step (1 = every step) */
    comm_hook_kind comm_hook;
    bool find_unused_parameters;
    bool static_graph;
    loss_reduction_kind loss_reduction;
    sync_kind sync; /* ddp: the reducer; manual: allreduce every gradient after backward */
    bool broadcast_buffers; /* rank 0's module buffers broadcast before each forward */
    bool join;                          /* training inside DDP's join() (uneven inputs) */
    bool divide_by_initial_world_size; /* join: divide by world_size, not by ranks still training */

    /* [skew] */
    int nspeed;
    double *speed; /* nspeed per-rank speed factors; empty = all 1 */
    bool speed_repeat; /* skew.speed repeats over any world size: rank r takes speed[r mod nspeed] */
    int nslow;
    int *slow_ranks; /* nslow */
    double slowdown; /* slow ranks' compute takes this many times longer */
    double jitter;   /* relative std-dev of each kernel's duration */
    double slow_fraction; /* each rank is slow (skew.slowdown) with this probability, seeded */
    double speed_sigma;   /* > 0: speed factors drawn from a seeded lognormal, median 1 */
    int nrank_steps;
    int *rank_steps; /* nrank_steps; uneven inputs: steps of data per rank; empty = all */

    /* [network] */
    double bandwidth_gbps; /* GB/s (1e9) of each link */
    double latency_us;     /* per-step latency */
    net_algorithm algorithm;
    bool pace; /* hold each allreduce to the modelled link time */
    char net_preset[32];   /* fills bandwidth_gbps / latency_us unless set */
    char intra_preset[32]; /* fills intra_bandwidth_gbps / intra_latency_us unless set */
    int nodes;             /* 0: world_size / gpus_per_node */
    int gpus_per_node;     /* 0: one flat network */
    double intra_bandwidth_gbps;
    double intra_latency_us;
    /* network.algorithm = measured: allreduce of measured_bytes[i] among measured_ranks[i]
     * ranks took measured_us[i] (three lists of one length) */
    int nmeasured_ranks, nmeasured_bytes, nmeasured_us;
    int *measured_ranks;     /* nmeasured_ranks */
    int64_t *measured_bytes; /* nmeasured_bytes */
    double *measured_us;     /* nmeasured_us */

    /* [record] */
    record_detail detail; /* every op as a span, or one span per phase (sim backend) */
    char spans_ranks[SCENARIO_STR]; /* auto | all | ranks "0,17,4095" (profiler/span_select.h) */

    /* [device] */
    char device_preset[32]; /* v100 | a100 | h100 | h200 | custom */
    double peak_tflops;     /* fp32 peak (preset fills it; custom sets it) */
    double mem_bw_gbps;
    double copy_out_gbps;  /* copies out of the buckets (0: mem_bw_gbps) */
    double optimizer_gbps; /* the optimizer step (0: mem_bw_gbps) */
    double grad_write_gbps; /* a backward's gradient write, bytes written (0: mem_bw_gbps) */
    double efficiency; /* achieved fraction of peak */
    double op_overhead_us; /* predict only: per stream op, the host to stream hand-off a real stream pays */
    double comm_slowdown;   /* predict only: forwards and backwards 1/(1+this) as fast while the comm stream moves data */

    /* [host] — ranks sharing one host's cores and cache (the cpu backend's machine), predict only */
    double op_overhead_busy_us; /* predict only: that hand-off behind a copy or step its worker ran (< 0: op_overhead_us) */
    double op_wakeup_us;   /* predict only: per forward/backward op, the wake-up after its modelled deadline */
    double op_wakeup_sd_us; /* predict only: its standard deviation from op to op (seeded lognormal) */
    double op_stall_fraction; /* predict only: share of those wake-ups that stall as well */
    double op_stall_us;       /* predict only: a stall's mean length (exponential) */
    double backward_stall_fraction, backward_stall_us; /* predict only: a backward's own (both 0: op_stall_*) */
    double op_gap_stall_fraction, op_gap_stall_us; /* predict only: stalls of the hand-off before a compute op */
    uint64_t noise_seed;      /* predict only: seed of those draws alone (0: run.seed) */
    double comm_wakeup_us;  /* predict only: their wake-up this much later when it falls inside a collective */
    double comm_launch_us;  /* predict only: an idle comm stream's late start after the compute stream's event */
    double comm_launch_sd_us; /* predict only: its standard deviation (seeded lognormal) */
    double comm_launch_per_op_us; /* predict only: later by this per copy, step or write of the host's other ranks running */
    double comm_launch_behind_us; /* predict only: mean hold of those launches behind their rank's compute run of copies (exponential) */
    double comm_exit_late_fraction; /* predict only: share of ranks a waited-for collective lets go late on a crowded host */
    double comm_exit_late_us, comm_exit_late_sd_us; /* predict only: how late, mean and deviation (seeded lognormal) */
    double compute_wake_late_fraction; /* predict only: share of a crowded host's compute streams, idle until a comm event, that start late */
    double compute_wake_late_us, compute_wake_late_sd_us; /* predict only: how late, mean and deviation (seeded lognormal) */
    double host_wake_us, host_wake_sd_us; /* predict only: how late a host goes on after a synchronize it waited in */
    double host_wake_stall_fraction, host_wake_stall_us; /* predict only: the share of those that stall, a stall's mean */
    double host_cores;      /* predict only: cores a host's ranks share for copies and optimizer steps (0: not shared) */
    double comm_core_weight; /* predict only: a comm stream's work on the host's cores beside a copy or step, when they outnumber the cores */
    bool comm_on_host_cores; /* predict only: bucket allreduces' sums share the host's cores too; the measured table is their time alone */
    double cache_mb;        /* predict only: the last-level cache a host's ranks share (0: none modelled) */
    double cache_allreduce_factor; /* predict only: the measured allreduce table's times in cache, times this (0: 1) */
    double cache_allreduce_stall_fraction, cache_allreduce_stall_us; /* predict only: the share of those that stall, */
    double cache_allreduce_crowded_stall_fraction, cache_allreduce_crowded_stall_us; /* and how long, by crowding */
    double cache_copy_in_gbps, cache_copy_out_gbps, cache_optimizer_gbps, cache_grad_write_gbps; /* predict only: */
                            /* those ops' bandwidths where the host's memory fits in cache_mb (0: as out of it) */
    double cache_op_wakeup_us, cache_op_wakeup_sd_us, cache_op_stall_fraction, cache_op_stall_us; /* predict only: */
                            /* the forwards' and backwards' wake-ups and stalls there (-1: as out of it) */
    double cache_host_wake_us, cache_host_wake_sd_us, cache_host_wake_stall_fraction, cache_host_wake_stall_us;
                            /* predict only: the host's wake-ups after a synchronize there (-1: as out of it) */
    double cache_comm_launch_us, cache_comm_launch_sd_us, cache_comm_launch_per_op_us, cache_comm_launch_behind_us;
                            /* predict only: an idle comm stream's late start there (-1: as out of it) */

    /* [fault] — deliberate failure, to see detection and the failed-run record */
    int fault_rank; /* -1 = none */
    int fault_iter;
    fault_mode fault;

    /* [sweep] */
    int nsweep;        /* at most SCENARIO_MAX_SWEEP_KEYS */
    sweep_axis *sweep; /* nsweep axes */

    /* Where each key (index in scenario.c's key table) got its value: the file line,
     * -1 for scenario_set()/an override, 0 for the default.  Non-zero also means "set
     * explicitly", which keeps device.preset from overwriting peak_tflops/mem_bw_gbps,
     * and lets scenario_validate() name the line at fault. */
    int key_line[SCENARIO_MAX_KEYS];
    /* Set in a sweep point for each key whose value came from a [sweep] axis: the
     * sweep varies it on purpose, so keys it switches off are not reported there. */
    bool swept[SCENARIO_MAX_KEYS];
    /* `include = FILE`: the files read besides `source`, and for each key the file its
     * key_line counts in (0: source; k: include_path[k - 1]). */
    int ninclude;        /* at most SCENARIO_MAX_INCLUDES */
    char **include_path; /* ninclude paths, each shorter than sizeof source */
    unsigned char key_include[SCENARIO_MAX_KEYS];
} scenario;

/* Who frees what.  A scenario owns its lists (model.params, the layer times, skew.speed,
 * skew.slow_ranks, skew.rank_steps, network.measured_*: each NULL when empty, else
 * allocated to its count), its [sweep] axes with their values, and its include paths;
 * nothing else in it points anywhere.  Every function below that fills a scenario
 * (scenario_defaults, scenario_load_file/_text, scenario_copy) writes over `sc` without
 * freeing: it must hold nothing (fresh memory, zeroed or not, or a scenario after
 * scenario_free); scenario_sweep_point frees its `out` first (see there).  The caller releases what it filled
 * with scenario_free(), also after a failed load, and copies with scenario_copy(), never
 * with `=` (two owners of one list).  A scenario whose functions failed holds nothing, or
 * what scenario_free() releases. */

/* The model presets model.preset accepts, NULL-terminated, in the order `explain` lists
 * them: mlp, resnet18, resnet50, bert-large, gpt2, custom (the zoo builds each). */
extern const char *const scenario_model_presets[];

/* Defaults for every key (name "scenario"); allocates nothing (every list is empty). */
void scenario_defaults(scenario *sc);

/* Frees what sc owns and leaves it holding nothing (every list empty, no sweep, no
 * include), its other keys as they were; harmless on a scenario holding nothing and on
 * NULL. */
void scenario_free(scenario *sc);

/* dst (holding nothing) becomes a deep copy of src.  Returns 0, or -1 with err (out of
 * memory) and dst holding nothing. */
int scenario_copy(scenario *dst, const scenario *src, char *err, size_t errlen);

/* Loads `path` on top of the defaults and validates it; sc must hold nothing.  Returns 0
 * (the caller frees sc with scenario_free()), or -1 with `err` holding "path:line:
 * message" or "path: message" and sc holding nothing (its values unspecified). */
int scenario_load_file(const char *path, scenario *sc, char *err, size_t errlen);
/* The same from a scenario's text held in memory (a run's stored scenario); `origin`
 * names it in messages ("origin:line: message") and becomes sc->source; an include is
 * read relative to origin's folder, as a file's is. */
int scenario_load_text(const char *text, const char *origin, scenario *sc, char *err, size_t errlen);

/* Sets one key given as "section.key" from its text value, as a file would.
 * Returns 0, or -1 with `err` holding the message (no location prefix). */
int scenario_set(scenario *sc, const char *dotted_key, const char *value, char *err, size_t errlen);
/* Every key of [section] back to its default, as if the file had not set it; the number
 * of keys reset (0 for an unknown section). */
int scenario_reset_section(scenario *sc, const char *section);

/* Applies "section.key=value" (command-line -s).  Returns 0 or -1 with
 * err = "-s section.key=value: message". */
int scenario_override(scenario *sc, const char *assignment, char *err, size_t errlen);

/* The command line describing the skew anew: an override of skew.slow_ranks or
 * skew.slow_fraction drops a per-rank skew.speed list the file gave (written for the
 * file's world size), so that a skewed scenario runs at another world size with other
 * slow ranks.  Returns 1 with the dropped list in `was` ("skew.speed = 1.5, 1.5, 1, 1"),
 * else 0 (nothing changed; a -s skew.speed given earlier on the command line is kept). */
int scenario_reskew(scenario *sc, const char *assignment, char *was, size_t n);

/* Cross-key checks (speed list length vs world_size, custom params present, keys that
 * cannot take effect, the sweep's size...).  Call it again after overrides.  Returns 0
 * or -1 with err = "source:line: message" naming the offending key's line. */
int scenario_validate(const scenario *sc, char *err, size_t errlen);

/* A key as short as it stays unambiguous, for labels a reader scans: "bucket_cap_mb"
 * for "ddp.bucket_cap_mb" (no other section has that name), "model.preset" as it is
 * (network and device have one too).  Text that is no known key is copied as it is. */
void scenario_short_key(const char *dotted, char *out, size_t n);

/* Where key `dotted` ("run.world_size") got its value, as the messages above begin:
 * "path:LINE: " (the file or include that set it), "-s run.world_size: " for an
 * override, "path: " for a default.  Returns 0, or -1 for an unknown key. */
int scenario_key_where(const scenario *sc, const char *dotted, char *buf, size_t n);

/* Writes every warning of a scenario that scenario_validate() accepted, one line each
 * ("source:line: warning: message\n"), into buf (n bytes, always NUL-terminated when
 * n > 0; lines that do not fit are left out whole).  Returns the number of warnings,
 * including any left out, or -1 when out of memory. */
int scenario_warnings(const scenario *sc, char *buf, size_t n);

/* Number of sweep points (1 when there is no [sweep]); SIZE_MAX if the product
 * overflows (scenario_validate() refuses more than SCENARIO_MAX_SWEEP_POINTS). */
size_t scenario_sweep_count(const scenario *sc);

/* Fills `out` with sweep point `index` (0-based, last axis fastest): a copy of `sc`
 * with the point's values applied, no sweep axes, and the name suffixed with
 * " [key value, ...]" (keys as scenario_short_key() writes them).  `out` is sc itself
 * (the point replaces it), or zeroed memory or a scenario these functions filled (an
 * earlier point, say): what it held is freed first, so that one `out` serves a loop over
 * the points.  The caller frees it with scenario_free() whatever the outcome.  Returns 0
 * or -1 with err. */
int scenario_sweep_point(const scenario *sc, size_t index, scenario *out, char *err, size_t errlen);

/* The command line against the file's [sweep].  An override "section.key=value" of a key
 * the sweep varies replaces that axis: scenario_unsweep() removes it and returns 1, with
 * the axis as the file gave it ("key = a, b, c") in `was`; 0 when the key is not swept
 * (nothing changed), also for a malformed assignment, which scenario_override() (called
 * next, with the same text) reports.  scenario_sweep_override() sweeps
 * "section.key=a,b,c" (list keys: "a1,a2|b1,b2"), each value checked: it adds an axis, or
 * replaces the file's axis of that key (returns 1, the old axis in `was`); -1 with err. */
int scenario_unsweep(scenario *sc, const char *assignment, char *was, size_t n);
int scenario_sweep_override(scenario *sc, const char *assignment, char *was, size_t n, char *err,
                            size_t errlen);

/* Effective speed factor of `rank` (speed list, slow_ranks/slowdown combined). */
double scenario_rank_speed(const scenario *sc, int rank);
/* The ranks of one host: a node of network.gpus_per_node ranks, or the whole world. */
int scenario_host_ranks(const scenario *sc);

/* Prints every key (key == NULL), one section (key == "ddp"), or one key
 * ("ddp.bucket_cap_mb"): type, range, default, meaning.  Returns 0, or -1 if unknown. */
int scenario_explain(FILE *out, const char *key);

/* Writes the effective scenario as INI text (stored with each run). Caller frees. */
char *scenario_to_ini(const scenario *sc);

#endif
