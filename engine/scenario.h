/* scenario.h — a ddpprof scenario: every key of every section, typed and validated.
 *
 * Contract: a scenario is loaded from an INI file (parsed with inih) on top of the
 * defaults, then command-line overrides (`section.key=value`) are applied on top.
 * Every key has a type, a range, a default and a one-line meaning (see the key table
 * in scenario.c; `ddpprof explain` prints it).  Any unknown section or key, wrong type,
 * or out-of-range value is rejected with a message of the form `file:line: message`
 * (or `-s section.key=value: message` for overrides); the caller exits with status 2.
 * `[sweep]` holds `section.key = v1, v2, ...` lists; scenario_sweep_point() builds the
 * cartesian product, one scenario per point, each its own run.
 */
#ifndef DDPPROF_SCENARIO_H
#define DDPPROF_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SCENARIO_MAX_RANKS 64
#define SCENARIO_MAX_CUSTOM_PARAMS 4096
#define SCENARIO_MAX_SWEEP_KEYS 8
#define SCENARIO_MAX_SWEEP_VALUES 32
#define SCENARIO_STR 128
#define SCENARIO_ERR 512
#define SCENARIO_MAX_KEYS 64 /* room in key_line[] for every key of the table in scenario.c */

typedef enum { COMPUTE_MODEL = 0, COMPUTE_REAL } compute_mode;
typedef enum { COMM_HOOK_NONE = 0, COMM_HOOK_FP16, COMM_HOOK_BF16 } comm_hook_kind;
typedef enum { LOSS_MEAN = 0, LOSS_SUM } loss_reduction_kind;
typedef enum { NET_RING = 0, NET_TREE } net_algorithm;
typedef enum { FAULT_NONE = 0, FAULT_HANG, FAULT_EXIT, FAULT_ERROR } fault_mode;

typedef struct {
    char key[64];                                        /* "ddp.bucket_cap_mb" */
    int nvalues;
    char values[SCENARIO_MAX_SWEEP_VALUES][SCENARIO_STR]; /* raw text, validated at load */
    int line;
} sweep_axis;

typedef struct scenario {
    char source[256]; /* file the scenario came from ("" for defaults only) */

    /* [run] */
    char name[SCENARIO_STR];
    char backend[16]; /* "auto" | "cpu" */
    int world_size;
    int iterations; /* measured iterations (after warm-up) */
    int warmup;     /* warm-up iterations, recorded and flagged */
    uint64_t seed;
    double timeout_s; /* a collective not completed in this time fails the run */

    /* [model] */
    char preset[32]; /* mlp | resnet18 | resnet50 | bert-large | gpt2 | custom */
    int layers;      /* mlp / gpt2 / bert: number of layers (0 = preset default) */
    int hidden;      /* mlp: hidden width */
    int d_model;     /* gpt2: model width (0 = preset default) */
    int vocab;       /* gpt2: vocabulary size (0 = preset default) */
    int seq_len;     /* gpt2 / bert: tokens per sample (0 = preset default) */
    int batch;       /* samples per rank */
    char dtype[8];   /* "fp32" */
    compute_mode compute;
    int ncustom;
    int64_t custom_params[SCENARIO_MAX_CUSTOM_PARAMS]; /* elements, registration order */

    /* [ddp] */
    double bucket_cap_mb;   /* MiB */
    double first_bucket_mb; /* MiB */
    bool gradient_as_bucket_view;
    int no_sync_every; /* synchronise every k-th step (1 = every step) */
    comm_hook_kind comm_hook;
    bool find_unused_parameters;
    bool static_graph;
    loss_reduction_kind loss_reduction;

    /* [skew] */
    int nspeed;
    double speed[SCENARIO_MAX_RANKS]; /* per-rank speed factor; empty = all 1 */
    int nslow;
    int slow_ranks[SCENARIO_MAX_RANKS];
    double slowdown; /* slow ranks' compute takes this many times longer */
    double jitter;   /* relative std-dev of each kernel's duration */

    /* [network] */
    double bandwidth_gbps; /* GB/s (1e9) of each link */
    double latency_us;     /* per-step latency */
    net_algorithm algorithm;
    bool pace; /* hold each allreduce to the modelled link time */

    /* [device] */
    char device_preset[32]; /* v100 | a100 | h100 | h200 | custom */
    double peak_tflops;     /* fp32 peak (preset fills it; custom sets it) */
    double mem_bw_gbps;
    double efficiency; /* achieved fraction of peak */

    /* [fault] — deliberate failure, to see detection and the failed-run record */
    int fault_rank; /* -1 = none */
    int fault_iter;
    fault_mode fault;

    /* [sweep] */
    int nsweep;
    sweep_axis sweep[SCENARIO_MAX_SWEEP_KEYS];

    /* Where each key (index in scenario.c's key table) got its value: the file line,
     * -1 for scenario_set()/an override, 0 for the default.  Non-zero also means "set
     * explicitly", which keeps device.preset from overwriting peak_tflops/mem_bw_gbps,
     * and lets scenario_validate() name the line at fault. */
    int key_line[SCENARIO_MAX_KEYS];
} scenario;

/* Defaults for every key (name "scenario"). */
void scenario_defaults(scenario *sc);

/* Loads `path` on top of the defaults.  Returns 0, or -1 with `err` holding
 * "path:line: message" (and *sc left unspecified). */
int scenario_load_file(const char *path, scenario *sc, char err[SCENARIO_ERR]);

/* Sets one key given as "section.key" from its text value, as a file would.
 * Returns 0, or -1 with `err` holding the message (no location prefix). */
int scenario_set(scenario *sc, const char *dotted_key, const char *value, char err[SCENARIO_ERR]);

/* Applies "section.key=value" (command-line -s).  Returns 0 or -1 with
 * err = "-s section.key=value: message". */
int scenario_override(scenario *sc, const char *assignment, char err[SCENARIO_ERR]);

/* Cross-key checks (speed list length vs world_size, custom params present...).
 * Returns 0 or -1 with err = "source:line: message" naming the offending key's line. */
int scenario_validate(const scenario *sc, char err[SCENARIO_ERR]);

/* Number of sweep points (1 when there is no [sweep]). */
size_t scenario_sweep_count(const scenario *sc);

/* Fills `out` with sweep point `index` (0-based, last axis fastest): a copy of `sc`
 * with the point's values applied, no sweep axes, and the name suffixed with
 * " [key=value, ...]".  Returns 0 or -1 with err. */
int scenario_sweep_point(const scenario *sc, size_t index, scenario *out, char err[SCENARIO_ERR]);

/* Effective speed factor of `rank` (speed list, slow_ranks/slowdown combined). */
double scenario_rank_speed(const scenario *sc, int rank);

/* Prints every key (key == NULL), one section (key == "ddp"), or one key
 * ("ddp.bucket_cap_mb"): type, range, default, meaning.  Returns 0, or -1 if unknown. */
int scenario_explain(FILE *out, const char *key);

/* Writes the effective scenario as INI text (stored with each run). Caller frees. */
char *scenario_to_ini(const scenario *sc);

#endif
