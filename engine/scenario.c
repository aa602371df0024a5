/* scenario.c — ddpprof scenarios: the key table, INI loading with `file:line` errors,
 * command-line overrides, cross-key validation, sweeps, `explain` and INI export.
 *
 * Everything known about a key (section, name, type, range, default, meaning, and where
 * it lives in struct scenario) is in the one table below, so the defaults, the loader,
 * `ddpprof explain` and the INI writer cannot disagree about it.
 *
 * INI syntax is inih's, with two rules of our own that the error messages explain:
 *  - a list value (model.params, skew.speed, skew.slow_ranks) may continue on indented
 *    lines (inih's multi-line values), so long lists fit inih's fixed line length;
 *  - in [sweep], values are comma-separated, except for list keys, whose values are
 *    themselves comma-separated lists and are therefore separated with '|'.
 */
#include "scenario.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum {
    K_INT,
    K_U64,
    K_DOUBLE,
    K_BOOL,
    K_STRING,
    K_ENUM_STR, /* stored as its canonical text */
    K_ENUM_INT, /* stored as the index of the choice, which is the C enum's value */
    K_LIST_DOUBLE,
    K_LIST_INT,
    K_LIST_I64,
} key_type;

typedef struct {
    const char *section;
    const char *name;
    key_type type;
    double min, max; /* numbers, and each element of a list */
    const char *const *choices; /* enums, NULL-terminated */
    const char *def;            /* default, as the text a file would hold */
    const char *meaning;
    size_t offset;
    size_t size;         /* capacity of strings; bytes of the array for lists */
    size_t count_offset; /* lists: the int holding the element count */
    int max_count;       /* lists */
} key_def;

static const char *const backend_choices[] = {"auto", "cpu", NULL};
static const char *const model_choices[] = {"mlp",  "resnet18", "resnet50", "bert-large",
                                            "gpt2", "custom",   NULL};
static const char *const dtype_choices[] = {"fp32", NULL};
static const char *const compute_choices[] = {"model", "real", NULL};
static const char *const hook_choices[] = {"none", "fp16", "bf16", NULL};
static const char *const loss_choices[] = {"mean", "sum", NULL};
static const char *const algorithm_choices[] = {"ring", "tree", NULL};
static const char *const device_choices[] = {"v100", "a100", "h100", "h200", "custom", NULL};
static const char *const fault_choices[] = {"none", "hang", "exit", "error", NULL};

/* fp32 (non-tensor-core) peak and HBM bandwidth; the H100/H200 figures are SXM parts. */
static const struct {
    const char *name;
    double peak_tflops;
    double mem_bw_gbps;
} device_presets[] = {
    {"v100", 15.7, 900},
    {"a100", 19.5, 1555},
    {"h100", 67, 3350},
    {"h200", 67, 4800},
};

#define MEMBER_SIZE(m) sizeof(((scenario *)0)->m)
#define AT(m) .offset = offsetof(scenario, m), .size = MEMBER_SIZE(m)
#define LIST_AT(m, n)                                                                  \
    AT(m), .count_offset = offsetof(scenario, n),                                      \
           .max_count = (int)(MEMBER_SIZE(m) / sizeof(((scenario *)0)->m[0]))

static const key_def keys[] = {
    /* [run] */
    {"run", "name", K_STRING, 0, 0, NULL, "scenario",
     "label of the run in reports; a file that does not set it is named after the file "
     "(without .ini)",
     AT(name), 0, 0},
    {"run", "backend", K_ENUM_STR, 0, 0, backend_choices, "auto",
     "where kernels run: auto uses the GPU when there is one, cpu never does", AT(backend), 0,
     0},
    {"run", "world_size", K_INT, 1, SCENARIO_MAX_RANKS, NULL, "4",
     "number of DDP ranks (one process each)", AT(world_size), 0, 0},
    {"run", "iterations", K_INT, 1, 100000, NULL, "10",
     "measured training iterations, after the warm-up", AT(iterations), 0, 0},
    {"run", "warmup", K_INT, 0, 1000, NULL, "2",
     "warm-up iterations: recorded, but flagged and left out of the statistics", AT(warmup),
     0, 0},
    {"run", "seed", K_U64, 0, 0, NULL, "1",
     "seed of every random draw (jitter), so that a run can be repeated exactly", AT(seed), 0,
     0},
    {"run", "timeout_s", K_DOUBLE, 0.1, 86400, NULL, "60",
     "a collective not completed within this many seconds fails the run, naming the missing "
     "ranks",
     AT(timeout_s), 0, 0},

    /* [model] */
    {"model", "preset", K_ENUM_STR, 0, 0, model_choices, "resnet18",
     "model whose gradients are synchronised (custom: parameter sizes from model.params)",
     AT(preset), 0, 0},
    {"model", "layers", K_INT, 0, 1000, NULL, "0",
     "layers of mlp, bert-large or gpt2 (0 = the preset's own depth)", AT(layers), 0, 0},
    {"model", "hidden", K_INT, 1, 65536, NULL, "1024", "hidden width of the mlp preset",
     AT(hidden), 0, 0},
    {"model", "d_model", K_INT, 0, 65536, NULL, "0", "gpt2 model width (0 = preset default)",
     AT(d_model), 0, 0},
    {"model", "vocab", K_INT, 0, 1000000, NULL, "0",
     "gpt2 vocabulary size (0 = preset default)", AT(vocab), 0, 0},
    {"model", "seq_len", K_INT, 0, 65536, NULL, "0",
     "tokens per sample of gpt2 and bert-large (0 = preset default)", AT(seq_len), 0, 0},
    {"model", "batch", K_INT, 1, 65536, NULL, "32", "samples per rank per iteration",
     AT(batch), 0, 0},
    {"model", "dtype", K_ENUM_STR, 0, 0, dtype_choices, "fp32",
     "element type of parameters and gradients (only fp32 so far)", AT(dtype), 0, 0},
    {"model", "compute", K_ENUM_INT, 0, 0, compute_choices, "model",
     "model: kernel times from a roofline model of the device; real: run and time the "
     "kernels",
     AT(compute), 0, 0},
    {"model", "params", K_LIST_I64, 1, 1099511627776.0 /* 2^40 */, NULL, "",
     "element counts of a custom model's parameters, in registration order (needs "
     "model.preset = custom)",
     LIST_AT(custom_params, ncustom)},

    /* [ddp] */
    {"ddp", "bucket_cap_mb", K_DOUBLE, 0.001, 1048576, NULL, "25",
     "size limit of a gradient bucket in MiB (torch DDP's bucket_cap_mb)", AT(bucket_cap_mb),
     0, 0},
    {"ddp", "first_bucket_mb", K_DOUBLE, 0.001, 1048576, NULL, "1",
     "size limit of the first bucket in MiB, small so that the first allreduce starts early",
     AT(first_bucket_mb), 0, 0},
    {"ddp", "gradient_as_bucket_view", K_BOOL, 0, 0, NULL, "false",
     "gradients are views into the buckets, saving the copies into and out of them",
     AT(gradient_as_bucket_view), 0, 0},
    {"ddp", "no_sync_every", K_INT, 1, 10000, NULL, "1",
     "allreduce every k-th iteration, accumulating gradients locally (no_sync) in between",
     AT(no_sync_every), 0, 0},
    {"ddp", "comm_hook", K_ENUM_INT, 0, 0, hook_choices, "none",
     "compress gradients to fp16 or bf16 before the allreduce (half the bytes sent)",
     AT(comm_hook), 0, 0},
    {"ddp", "find_unused_parameters", K_BOOL, 0, 0, NULL, "false",
     "walk the autograd graph every iteration to find parameters without gradients",
     AT(find_unused_parameters), 0, 0},
    {"ddp", "static_graph", K_BOOL, 0, 0, NULL, "false",
     "the graph is the same every iteration, so DDP skips per-iteration bookkeeping",
     AT(static_graph), 0, 0},
    {"ddp", "loss_reduction", K_ENUM_INT, 0, 0, loss_choices, "mean",
     "how the loss is reduced over the batch, which sets the scale of the gradients averaged",
     AT(loss_reduction), 0, 0},

    /* [skew] */
    {"skew", "speed", K_LIST_DOUBLE, 0.01, 100, NULL, "",
     "speed factor of each rank, one per rank (1.5 = 1.5x faster); empty = all 1",
     LIST_AT(speed, nspeed)},
    {"skew", "slow_ranks", K_LIST_INT, 0, SCENARIO_MAX_RANKS - 1, NULL, "",
     "ranks whose compute is slowed down by skew.slowdown", LIST_AT(slow_ranks, nslow)},
    {"skew", "slowdown", K_DOUBLE, 1, 100, NULL, "1",
     "the slow ranks' compute takes this many times longer", AT(slowdown), 0, 0},
    {"skew", "jitter", K_DOUBLE, 0, 0.5, NULL, "0",
     "relative standard deviation of every kernel's duration (0 = deterministic)",
     AT(jitter), 0, 0},

    /* [network] */
    {"network", "bandwidth_gbps", K_DOUBLE, 0.001, 100000, NULL, "12.5",
     "bandwidth of each link in GB/s (1e9 bytes per second)", AT(bandwidth_gbps), 0, 0},
    {"network", "latency_us", K_DOUBLE, 0, 1e6, NULL, "10",
     "latency of each step of a collective in microseconds", AT(latency_us), 0, 0},
    {"network", "algorithm", K_ENUM_INT, 0, 0, algorithm_choices, "ring",
     "allreduce algorithm: ring (bandwidth-optimal) or tree (fewer latency-bound steps)",
     AT(algorithm), 0, 0},
    {"network", "pace", K_BOOL, 0, 0, NULL, "false",
     "hold each allreduce to the modelled link time, so measured overlap matches the network",
     AT(pace), 0, 0},

    /* [device] — the preset must come before the two keys it fills, so that the defaults
     * (applied in table order) agree with it. */
    {"device", "preset", K_ENUM_STR, 0, 0, device_choices, "a100",
     "GPU assumed by the compute model; fills peak_tflops and mem_bw_gbps unless they are set",
     AT(device_preset), 0, 0},
    {"device", "peak_tflops", K_DOUBLE, 0.001, 1e6, NULL, "19.5",
     "fp32 peak in TFLOP/s (from device.preset unless set)", AT(peak_tflops), 0, 0},
    {"device", "mem_bw_gbps", K_DOUBLE, 0.001, 1e6, NULL, "1555",
     "memory bandwidth in GB/s (from device.preset unless set)", AT(mem_bw_gbps), 0, 0},
    {"device", "efficiency", K_DOUBLE, 0.01, 1, NULL, "0.5",
     "fraction of the peak that kernels achieve", AT(efficiency), 0, 0},

    /* [fault] */
    {"fault", "rank", K_INT, -1, SCENARIO_MAX_RANKS - 1, NULL, "-1",
     "rank that fails on purpose (-1 = none)", AT(fault_rank), 0, 0},
    {"fault", "iter", K_INT, 0, 1000000, NULL, "0", "iteration at which that rank fails",
     AT(fault_iter), 0, 0},
    {"fault", "mode", K_ENUM_INT, 0, 0, fault_choices, "none",
     "how it fails: hang (never joins the collective), exit (the process dies) or error",
     AT(fault), 0, 0},
};

#define NKEYS (sizeof keys / sizeof keys[0])
_Static_assert(NKEYS <= SCENARIO_MAX_KEYS, "raise SCENARIO_MAX_KEYS in scenario.h");
_Static_assert(sizeof(compute_mode) == sizeof(int) && sizeof(comm_hook_kind) == sizeof(int) &&
                   sizeof(loss_reduction_kind) == sizeof(int) &&
                   sizeof(net_algorithm) == sizeof(int) && sizeof(fault_mode) == sizeof(int),
               "K_ENUM_INT keys are stored as int");

static const char *const sections[] = {"run",     "model",  "ddp",   "skew",
                                       "network", "device", "fault", "sweep"};
#define NSECTIONS (sizeof sections / sizeof sections[0])
#define SECTION_LIST "run, model, ddp, skew, network, device, fault, sweep"

/* Longest physical line written by scenario_to_ini(), well inside inih's line buffer. */
#define INI_WRAP 100

/* ---------------------------------------------------------------- small helpers */

static int errf(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int errf(char *err, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(err, SCENARIO_ERR, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* snprintf that may truncate on purpose (labels, messages); returns the length written. */
static size_t bprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static size_t bprintf(char *buf, size_t n, const char *fmt, ...)
{
    if (n == 0)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    if (r < 0) {
        buf[0] = '\0';
        return 0;
    }
    return (size_t)r < n ? (size_t)r : n - 1;
}

static bool is_list(const key_def *k)
{
    return k->type == K_LIST_DOUBLE || k->type == K_LIST_INT || k->type == K_LIST_I64;
}

static void dotted_name(const key_def *k, char *buf, size_t n)
{
    bprintf(buf, n, "%s.%s", k->section, k->name);
}

static int find_key(const char *section, const char *name)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
            return (int)i;
    return -1;
}

static bool known_section(const char *section)
{
    for (size_t i = 0; i < NSECTIONS; i++)
        if (strcmp(sections[i], section) == 0)
            return true;
    return false;
}

static void section_keys(const char *section, char *buf, size_t n)
{
    size_t pos = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NKEYS && pos < n; i++)
        if (strcmp(keys[i].section, section) == 0)
            pos += bprintf(buf + pos, n - pos, "%s%s", pos ? ", " : "", keys[i].name);
}

static int unknown_key_msg(const char *section, const char *name, char *err)
{
    char list[400];
    section_keys(section, list, sizeof list);
    return errf(err, "unknown key \"%s\" in [%s] (keys: %s)", name, section, list);
}

/* Resolves "section.key" to a table index, with a message saying what is allowed. */
static int find_dotted(const char *dotted, int *index, char *err)
{
    const char *dot = strchr(dotted, '.');
    if (dot == NULL || dot == dotted || dot[1] == '\0')
        return errf(err, "\"%s\" is not a section.key name (e.g. ddp.bucket_cap_mb)", dotted);
    char section[64];
    size_t len = (size_t)(dot - dotted);
    if (len >= sizeof section)
        return errf(err, "unknown section in \"%s\" (sections: %s)", dotted, SECTION_LIST);
    memcpy(section, dotted, len);
    section[len] = '\0';
    if (strcmp(section, "sweep") == 0)
        return errf(err, "\"%s\": sweep axes can only be given in the [sweep] section of a file",
                    dotted);
    if (!known_section(section))
        return errf(err, "unknown section [%s] (sections: %s)", section, SECTION_LIST);
    int i = find_key(section, dot + 1);
    if (i < 0)
        return unknown_key_msg(section, dot + 1, err);
    *index = i;
    return 0;
}

static int key_index(const char *section, const char *name)
{
    int i = find_key(section, name);
    if (i < 0) {
        /* Only reachable if the table and the code that names its keys disagree. */
        fprintf(stderr, "ddpprof: scenario key %s.%s missing from the key table\n", section,
                name);
        abort();
    }
    return i;
}

static void fmt_double(double v, char *buf, size_t n)
{
    /* Plain %.15g where it reads back exactly (no "1e+03" for 1000), more digits only
     * where needed, so that INI export round-trips. */
    for (int prec = 15; prec <= 17; prec++) {
        bprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void describe_range(const key_def *k, char *buf, size_t n)
{
    char lo[32], hi[32];
    fmt_double(k->min, lo, sizeof lo);
    fmt_double(k->max, hi, sizeof hi);
    switch (k->type) {
    case K_INT:
    case K_DOUBLE:
        bprintf(buf, n, "[%s, %s]", lo, hi);
        break;
    case K_U64:
        bprintf(buf, n, "[0, 2^64-1]");
        break;
    case K_BOOL:
        bprintf(buf, n, "true|false");
        break;
    case K_STRING:
        bprintf(buf, n, "<=%zu chars", k->size - 1);
        break;
    case K_ENUM_STR:
    case K_ENUM_INT: {
        size_t pos = 0;
        buf[0] = '\0';
        for (int c = 0; k->choices[c] != NULL && pos < n; c++)
            pos += bprintf(buf + pos, n - pos, "%s%s", c ? "|" : "", k->choices[c]);
        break;
    }
    case K_LIST_DOUBLE:
    case K_LIST_INT:
    case K_LIST_I64:
        bprintf(buf, n, "<=%d x [%s, %s]", k->max_count, lo, hi);
        break;
    }
}

static const char *type_name(key_type t)
{
    switch (t) {
    case K_INT:
        return "int";
    case K_U64:
        return "uint64";
    case K_DOUBLE:
        return "double";
    case K_BOOL:
        return "bool";
    case K_STRING:
        return "string";
    case K_ENUM_STR:
    case K_ENUM_INT:
        return "enum";
    case K_LIST_DOUBLE:
        return "list<double>";
    case K_LIST_INT:
        return "list<int>";
    case K_LIST_I64:
        return "list<int64>";
    }
    return "?";
}

/* ---------------------------------------------------------------- parsing values */

typedef enum { NUM_OK, NUM_BAD, NUM_RANGE, NUM_NONFINITE } num_status;

static num_status parse_integer(const char *s, long long *out)
{
    if (*s == '\0')
        return NUM_BAD;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0')
        return NUM_BAD;
    if (errno == ERANGE)
        return NUM_RANGE;
    *out = v;
    return NUM_OK;
}

static num_status parse_real(const char *s, double *out)
{
    if (*s == '\0')
        return NUM_BAD;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0')
        return NUM_BAD;
    if (!isfinite(v))
        return NUM_NONFINITE;
    if (errno == ERANGE)
        return NUM_RANGE;
    *out = v;
    return NUM_OK;
}

static bool parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"true", "yes", "1", "on"};
    static const char *const no[] = {"false", "no", "0", "off"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* One element of a list or one scalar: checks type and range, writes *dst. */
static int parse_number(const key_def *k, key_type t, const char *text, void *dst,
                        const char *what, char *err)
{
    char lo[32], hi[32];
    fmt_double(k->min, lo, sizeof lo);
    fmt_double(k->max, hi, sizeof hi);
    if (t == K_DOUBLE) {
        double v = 0;
        num_status st = parse_real(text, &v);
        if (st == NUM_BAD)
            return errf(err, "%s: \"%s\" is not a number", what, text);
        if (st == NUM_NONFINITE)
            return errf(err, "%s: \"%s\" is not a finite number", what, text);
        if (st == NUM_RANGE || v < k->min || v > k->max)
            return errf(err, "%s %s is out of range [%s, %s]", what, text, lo, hi);
        memcpy(dst, &v, sizeof v);
        return 0;
    }
    long long v = 0;
    num_status st = parse_integer(text, &v);
    if (st == NUM_BAD)
        return errf(err, "%s: \"%s\" is not an integer", what, text);
    if (st == NUM_RANGE || v < (long long)k->min || v > (long long)k->max)
        return errf(err, "%s %s is out of range [%s, %s]", what, text, lo, hi);
    if (t == K_INT) {
        int iv = (int)v;
        memcpy(dst, &iv, sizeof iv);
    } else {
        int64_t lv = (int64_t)v;
        memcpy(dst, &lv, sizeof lv);
    }
    return 0;
}

/* Walks sep-separated, trimmed items.  A trailing separator is allowed (after at least
 * one item) so that a long list can end a line with ',' and continue on the next. */
typedef struct {
    const char *p;
    char sep;
    int n; /* items returned so far */
} splitter;

/* 1 = item in buf, 0 = no more, -1 = empty item, -2 = item longer than buf. */
static int next_item(splitter *s, char *buf, size_t n)
{
    if (s->p == NULL)
        return 0;
    const char *start = s->p;
    const char *sep = strchr(start, s->sep);
    const char *stop = sep ? sep : start + strlen(start);
    s->p = sep ? sep + 1 : NULL;
    while (start < stop && isspace((unsigned char)*start))
        start++;
    while (stop > start && isspace((unsigned char)stop[-1]))
        stop--;
    size_t len = (size_t)(stop - start);
    if (len == 0)
        return (sep == NULL && s->n > 0) ? 0 : -1;
    if (len >= n)
        return -2;
    memcpy(buf, start, len);
    buf[len] = '\0';
    s->n++;
    return 1;
}

static size_t elem_size(key_type t)
{
    return t == K_LIST_DOUBLE ? sizeof(double) : t == K_LIST_INT ? sizeof(int) : sizeof(int64_t);
}

static int set_list(scenario *sc, const key_def *k, const char *dotted, const char *text,
                    bool append, char *err)
{
    char *array = (char *)sc + k->offset;
    int count;
    memcpy(&count, (char *)sc + k->count_offset, sizeof count);
    int n = append ? count : 0;
    key_type et = k->type == K_LIST_DOUBLE ? K_DOUBLE : k->type == K_LIST_INT ? K_INT : K_LIST_I64;
    size_t es = elem_size(k->type);

    if (*text != '\0') {
        splitter s = {text, ',', 0};
        char item[64];
        int r;
        while ((r = next_item(&s, item, sizeof item)) != 0) {
            if (r == -1)
                return errf(err, "%s: element %d is empty (elements are separated by commas)",
                            dotted, n + 1);
            if (r == -2)
                return errf(err, "%s: element %d is too long to be a number", dotted, n + 1);
            if (n >= k->max_count)
                return errf(err, "%s: more than %d elements", dotted, k->max_count);
            char what[128];
            bprintf(what, sizeof what, "%s element %d", dotted, n + 1);
            if (parse_number(k, et, item, array + (size_t)n * es, what, err) != 0)
                return -1;
            n++;
        }
    }
    /* Zero the unused tail so that equal lists are equal bytes (round-trip tests). */
    memset(array + (size_t)n * es, 0, (size_t)(k->max_count - n) * es);
    memcpy((char *)sc + k->count_offset, &n, sizeof n);
    return 0;
}

static void apply_device_preset(scenario *sc)
{
    int peak = key_index("device", "peak_tflops");
    int bw = key_index("device", "mem_bw_gbps");
    for (size_t i = 0; i < sizeof device_presets / sizeof device_presets[0]; i++) {
        if (strcmp(device_presets[i].name, sc->device_preset) != 0)
            continue;
        /* Explicit values win whatever their order in the file: a preset seen after
         * peak_tflops must not overwrite it. */
        if (sc->key_line[peak] == 0)
            sc->peak_tflops = device_presets[i].peak_tflops;
        if (sc->key_line[bw] == 0)
            sc->mem_bw_gbps = device_presets[i].mem_bw_gbps;
    }
}

/* Sets key `ki` from trimmed text exactly as a file line would (no location in err).
 * `append` continues a list from an indented continuation line. */
static int set_key(scenario *sc, int ki, const char *text, bool append, char *err)
{
    const key_def *k = &keys[ki];
    char dotted[96];
    dotted_name(k, dotted, sizeof dotted);
    char range[160];
    describe_range(k, range, sizeof range);
    void *dst = (char *)sc + k->offset;

    if (*text == '\0') {
        switch (k->type) {
        case K_INT:
            return errf(err, "%s: no value (expected an integer in %s)", dotted, range);
        case K_U64:
            return errf(err, "%s: no value (expected an integer in %s)", dotted, range);
        case K_DOUBLE:
            return errf(err, "%s: no value (expected a number in %s)", dotted, range);
        case K_BOOL:
            return errf(err, "%s: no value (expected true or false)", dotted);
        case K_ENUM_STR:
        case K_ENUM_INT:
            return errf(err, "%s: no value (expected one of: %s)", dotted, range);
        default:
            break; /* an empty string or list is a value */
        }
    }

    switch (k->type) {
    case K_INT:
    case K_DOUBLE:
        return parse_number(k, k->type, text, dst, dotted, err);
    case K_U64: {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(text, &end, 10);
        /* strtoull quietly negates "-1"; a seed given as negative is a mistake. */
        if (text[0] == '-' || end == text || *end != '\0')
            return errf(err, "%s: \"%s\" is not a non-negative integer", dotted, text);
        if (errno == ERANGE)
            return errf(err, "%s %s is out of range %s", dotted, text, range);
        uint64_t u = (uint64_t)v;
        memcpy(dst, &u, sizeof u);
        return 0;
    }
    case K_BOOL: {
        bool b;
        if (!parse_bool(text, &b))
            return errf(err, "%s: \"%s\" is not a boolean (use true/false, yes/no, on/off, 1/0)",
                        dotted, text);
        memcpy(dst, &b, sizeof b);
        return 0;
    }
    case K_STRING: {
        size_t len = strlen(text);
        if (len >= k->size)
            return errf(err, "%s is longer than %zu characters", dotted, k->size - 1);
        for (size_t i = 0; i < len; i++) {
            if (iscntrl((unsigned char)text[i]))
                return errf(err, "%s: control characters are not allowed", dotted);
            /* inih would cut the value at " ;" when it is read back. */
            if (text[i] == ';')
                return errf(err, "%s: ';' is not allowed (it starts an INI comment)", dotted);
        }
        memset(dst, 0, k->size);
        memcpy(dst, text, len);
        return 0;
    }
    case K_ENUM_STR:
    case K_ENUM_INT: {
        for (int c = 0; k->choices[c] != NULL; c++) {
            if (strcasecmp(text, k->choices[c]) != 0)
                continue;
            if (k->type == K_ENUM_INT) {
                memcpy(dst, &c, sizeof c);
            } else {
                memset(dst, 0, k->size);
                memcpy(dst, k->choices[c], strlen(k->choices[c]));
            }
            if (strcmp(k->section, "device") == 0 && strcmp(k->name, "preset") == 0)
                apply_device_preset(sc);
            return 0;
        }
        char list[160];
        size_t pos = 0;
        list[0] = '\0';
        for (int c = 0; k->choices[c] != NULL && pos < sizeof list; c++)
            pos += bprintf(list + pos, sizeof list - pos, "%s%s", c ? ", " : "", k->choices[c]);
        return errf(err, "%s \"%s\" is not one of: %s", dotted, text, list);
    }
    case K_LIST_DOUBLE:
    case K_LIST_INT:
    case K_LIST_I64:
        return set_list(sc, k, dotted, text, append, err);
    }
    return errf(err, "%s: unsupported key type", dotted);
}

/* ---------------------------------------------------------------- public: set */

void scenario_defaults(scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    for (size_t i = 0; i < NKEYS; i++) {
        char err[SCENARIO_ERR];
        if (set_key(sc, (int)i, keys[i].def, false, err) != 0) {
            /* A default the table's own range rejects is a bug in the table. */
            fprintf(stderr, "ddpprof: bad default in the scenario key table: %s\n", err);
            abort();
        }
    }
    memset(sc->key_line, 0, sizeof sc->key_line);
}

static char *trimmed_copy(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    return strndup(s, len);
}

int scenario_set(scenario *sc, const char *dotted_key, const char *value, char err[SCENARIO_ERR])
{
    char *key = trimmed_copy(dotted_key);
    char *text = trimmed_copy(value);
    int rc = -1;
    int ki = -1;
    if (key == NULL || text == NULL)
        errf(err, "out of memory");
    else if (find_dotted(key, &ki, err) == 0 && set_key(sc, ki, text, false, err) == 0) {
        sc->key_line[ki] = -1;
        rc = 0;
    }
    free(key);
    free(text);
    return rc;
}

int scenario_override(scenario *sc, const char *assignment, char err[SCENARIO_ERR])
{
    const char *eq = strchr(assignment, '=');
    if (eq == NULL)
        return errf(err, "-s %s: expected section.key=value (e.g. ddp.bucket_cap_mb=25)",
                    assignment);
    char *key = strndup(assignment, (size_t)(eq - assignment));
    if (key == NULL)
        return errf(err, "-s %s: out of memory", assignment);
    char msg[SCENARIO_ERR];
    int rc = scenario_set(sc, key, eq + 1, msg);
    free(key);
    if (rc != 0)
        return errf(err, "-s %s: %s", assignment, msg);
    return 0;
}

/* ---------------------------------------------------------------- loading a file */

typedef struct {
    FILE *f;
    int line;      /* physical line last handed to inih */
    bool indented; /* that line starts with white space */
    char *buf;
    size_t cap;
    int read_errno;
    scenario *sc;
    scenario *scratch; /* where sweep values are tried out */
    /* inih's own notion of "the previous key", needed to tell a continuation line
     * (same key again, from an indented line) from a duplicate key. */
    bool has_prev;
    char prev_section[64];
    char prev_name[64];
    int err_line; /* first error found by us (0 = none) */
    char msg[SCENARIO_ERR];
    int syntax_line; /* first line that inih will reject by itself, and why */
    char syntax_msg[SCENARIO_ERR];
} load_state;

static int fail_at(load_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_at(load_state *st, const char *fmt, ...)
{
    if (st->err_line == 0) {
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(st->msg, sizeof st->msg, fmt, ap);
        va_end(ap);
        st->err_line = st->line;
    }
    return 0;
}

/* inih's handler has no line number, so lines are fed through this reader, which counts
 * them and also looks at what inih does not report to the handler: section headers
 * (an empty unknown section would otherwise pass) and lines inih will reject. */
static char *read_line(char *str, int num, void *stream)
{
    load_state *st = stream;
    if (st->err_line != 0)
        return NULL; /* stop at our first error; the rest cannot change the outcome */
    errno = 0;
    ssize_t n = getline(&st->buf, &st->cap, st->f);
    if (n < 0) {
        st->read_errno = errno;
        return NULL;
    }
    st->line++;
    size_t len = (size_t)n;
    if (len > 0 && st->buf[len - 1] == '\n')
        st->buf[--len] = '\0';
    if (len + 2 > (size_t)num) {
        /* inih would silently split it into two lines. */
        fail_at(st,
                "line is longer than %d characters (a long list can continue on indented "
                "lines)",
                num - 2);
        return NULL;
    }
    memcpy(str, st->buf, len);
    str[len] = '\n';
    str[len + 1] = '\0';

    const char *p = st->buf;
    if (st->line == 1 && strncmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    st->indented = *p == ' ' || *p == '\t';
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0' || *p == ';' || *p == '#')
        return str;
    if (st->indented && st->has_prev)
        return str; /* a continuation line; the handler judges it */
    if (*p == '[') {
        const char *close = strchr(p, ']');
        if (close == NULL) {
            if (st->syntax_line == 0) {
                st->syntax_line = st->line;
                bprintf(st->syntax_msg, sizeof st->syntax_msg,
                        "section header \"%s\" has no closing ']'", p);
            }
            return str;
        }
        char name[64];
        size_t nlen = (size_t)(close - p - 1);
        bprintf(name, sizeof name, "%.*s", (int)nlen, p + 1);
        st->has_prev = false;
        if (nlen >= sizeof name || !known_section(name))
            fail_at(st, "unknown section [%.*s] (sections: %s)", (int)nlen, p + 1, SECTION_LIST);
        return str;
    }
    if (strpbrk(p, "=:") == NULL && st->syntax_line == 0) {
        st->syntax_line = st->line;
        bprintf(st->syntax_msg, sizeof st->syntax_msg,
                "cannot read \"%s\": expected key = value, [section] or a ; comment", p);
    }
    return str;
}

static int find_axis(const scenario *sc, const char *key)
{
    for (int a = 0; a < sc->nsweep; a++)
        if (strcmp(sc->sweep[a].key, key) == 0)
            return a;
    return -1;
}

/* Adds the values of one [sweep] line to axis `a`, trying each on a scratch scenario so
 * that a bad value is reported at its line rather than when the point runs. */
static int add_sweep_values(load_state *st, sweep_axis *axis, int ki, const char *value,
                            bool continuation)
{
    const key_def *k = &keys[ki];
    char sep = is_list(k) ? '|' : ',';
    if (is_list(k) && !continuation && strchr(value, '|') == NULL && strchr(value, ',') != NULL)
        return fail_at(st,
                       "[sweep] %s is a list key: separate its values with '|' (each value is a "
                       "comma-separated list), e.g. %s = 1, 2 | 3",
                       axis->key, axis->key);
    if (st->scratch == NULL) {
        st->scratch = malloc(sizeof *st->scratch);
        if (st->scratch == NULL)
            return fail_at(st, "out of memory");
        scenario_defaults(st->scratch);
    }
    splitter s = {value, sep, 0};
    char item[SCENARIO_STR];
    int r;
    if (*value == '\0')
        return fail_at(st, "[sweep] %s: no values (give 1 to %d values separated by '%c')",
                       axis->key, SCENARIO_MAX_SWEEP_VALUES, sep);
    while ((r = next_item(&s, item, sizeof item)) != 0) {
        int vi = axis->nvalues + 1;
        if (r == -1)
            return fail_at(st, "[sweep] %s: value %d is empty (values are separated by '%c')",
                           axis->key, vi, sep);
        if (r == -2)
            return fail_at(st, "[sweep] %s: value %d is longer than %d characters", axis->key,
                           vi, SCENARIO_STR - 1);
        if (axis->nvalues >= SCENARIO_MAX_SWEEP_VALUES)
            return fail_at(st, "[sweep] %s: more than %d values", axis->key,
                           SCENARIO_MAX_SWEEP_VALUES);
        for (int j = 0; j < axis->nvalues; j++)
            if (strcmp(axis->values[j], item) == 0)
                return fail_at(st, "[sweep] %s: value \"%s\" is given twice", axis->key, item);
        char msg[SCENARIO_ERR];
        if (set_key(st->scratch, ki, item, false, msg) != 0)
            return fail_at(st, "[sweep] %s", msg);
        memcpy(axis->values[axis->nvalues], item, strlen(item) + 1);
        axis->nvalues++;
    }
    return 1;
}

/* Cuts a ';' comment that follows white space, inih's rule for inline comments. */
static void strip_inline_comment(char *s)
{
    for (char *p = s; *p; p++)
        if (*p == ';' && p > s && isspace((unsigned char)p[-1])) {
            *p = '\0';
            break;
        }
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        s[--len] = '\0';
}

static int on_sweep(load_state *st, const char *name, const char *value, bool continuation)
{
    scenario *sc = st->sc;
    if (continuation) {
        int a = find_axis(sc, name);
        int ki = -1;
        if (a < 0 || find_dotted(name, &ki, NULL) != 0)
            return fail_at(st, "[sweep] %s: continuation of an unknown axis", name);
        char *text = strdup(value);
        if (text == NULL)
            return fail_at(st, "out of memory");
        strip_inline_comment(text);
        int rc = add_sweep_values(st, &sc->sweep[a], ki, text, true);
        free(text);
        return rc;
    }
    int ki = -1;
    char msg[SCENARIO_ERR];
    if (find_dotted(name, &ki, msg) != 0)
        return fail_at(st, "[sweep] %s (sweep keys are section.key names of other sections)",
                       msg);
    int a = find_axis(sc, name);
    if (a >= 0)
        return fail_at(st, "duplicate key %s in [sweep] (first given on line %d)", name,
                       sc->sweep[a].line);
    if (sc->nsweep >= SCENARIO_MAX_SWEEP_KEYS)
        return fail_at(st, "[sweep] %s: more than %d sweep axes", name, SCENARIO_MAX_SWEEP_KEYS);
    sweep_axis *axis = &sc->sweep[sc->nsweep];
    memset(axis, 0, sizeof *axis);
    dotted_name(&keys[ki], axis->key, sizeof axis->key);
    axis->line = st->line;
    sc->nsweep++;
    return add_sweep_values(st, axis, ki, value, false);
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    load_state *st = user;
    if (st->err_line != 0)
        return 0;
    bool continuation = st->indented && st->has_prev &&
                        strcmp(section, st->prev_section) == 0 &&
                        strcmp(name, st->prev_name) == 0;
    st->has_prev = true;
    bprintf(st->prev_section, sizeof st->prev_section, "%s", section);
    bprintf(st->prev_name, sizeof st->prev_name, "%s", name);

    if (section[0] == '\0')
        return fail_at(st, "key \"%s\" is outside any section (sections: %s)", name,
                       SECTION_LIST);
    if (strcmp(section, "sweep") == 0)
        return on_sweep(st, name, value, continuation);
    if (!known_section(section))
        return fail_at(st, "unknown section [%s] (sections: %s)", section, SECTION_LIST);
    int ki = find_key(section, name);
    if (ki < 0) {
        char msg[SCENARIO_ERR];
        unknown_key_msg(section, name, msg);
        return fail_at(st, "%s", msg);
    }
    scenario *sc = st->sc;
    char msg[SCENARIO_ERR];
    if (continuation) {
        if (!is_list(&keys[ki]))
            return fail_at(st,
                           "%s.%s: this indented line is read as a continuation of its value; "
                           "only list values may continue (remove the indentation)",
                           section, name);
        /* inih leaves inline comments on continuation lines; cut them as on key lines. */
        char *text = strdup(value);
        if (text == NULL)
            return fail_at(st, "out of memory");
        strip_inline_comment(text);
        int rc = set_key(sc, ki, text, true, msg);
        free(text);
        if (rc != 0)
            return fail_at(st, "%s", msg);
        return 1;
    }
    if (sc->key_line[ki] > 0)
        return fail_at(st, "duplicate key %s.%s (first set on line %d)", section, name,
                       sc->key_line[ki]);
    if (set_key(sc, ki, value, false, msg) != 0)
        return fail_at(st, "%s", msg);
    sc->key_line[ki] = st->line;
    return 1;
}

int scenario_load_file(const char *path, scenario *sc, char err[SCENARIO_ERR])
{
    scenario_defaults(sc);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return errf(err, "%s: cannot open: %s", path, strerror(errno));

    load_state st = {.f = f, .sc = sc};
    int ret = ini_parse_stream(read_line, &st, on_entry, &st);
    int rc = 0;
    if (st.err_line > 0 && (ret <= 0 || ret >= st.err_line))
        rc = errf(err, "%s:%d: %s", path, st.err_line, st.msg);
    else if (ret > 0 && ret == st.syntax_line)
        rc = errf(err, "%s:%d: %s", path, ret, st.syntax_msg);
    else if (ret > 0)
        rc = errf(err, "%s:%d: cannot read this line (expected key = value, [section] or a ; "
                       "comment)",
                  path, ret);
    else if (ret < 0)
        rc = errf(err, "%s: out of memory while reading", path);
    else if (ferror(f))
        rc = errf(err, "%s: read error: %s", path, strerror(st.read_errno));
    free(st.buf);
    free(st.scratch);
    if (fclose(f) != 0 && rc == 0)
        rc = errf(err, "%s: %s", path, strerror(errno));
    if (rc != 0)
        return rc;

    bprintf(sc->source, sizeof sc->source, "%s", path);
    int name_ki = key_index("run", "name");
    if (sc->key_line[name_ki] == 0 || sc->name[0] == '\0') {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        size_t len = strlen(base);
        if (len > 4 && strcmp(base + len - 4, ".ini") == 0)
            len -= 4;
        if (len >= sizeof sc->name)
            len = sizeof sc->name - 1;
        if (len > 0) {
            memset(sc->name, 0, sizeof sc->name);
            memcpy(sc->name, base, len);
        }
    }
    return scenario_validate(sc, err);
}

/* ---------------------------------------------------------------- validation */

/* "source:line: " for the key's line, so the message points where the user must edit. */
static void where(const scenario *sc, const char *section, const char *name, char *buf,
                  size_t n)
{
    int line = sc->key_line[key_index(section, name)];
    const char *src = sc->source[0] ? sc->source : "defaults";
    if (line > 0)
        bprintf(buf, n, "%s:%d: ", src, line);
    else if (line < 0)
        bprintf(buf, n, "-s %s.%s: ", section, name);
    else
        bprintf(buf, n, "%s: ", src);
}

int scenario_validate(const scenario *sc, char err[SCENARIO_ERR])
{
    char at[320];
    int ws = sc->world_size;

    if (sc->nspeed > 0 && sc->nspeed != ws) {
        where(sc, "skew", "speed", at, sizeof at);
        return errf(err, "%sskew.speed has %d values but run.world_size is %d (give one per rank, "
                         "or none)",
                    at, sc->nspeed, ws);
    }
    for (int i = 0; i < sc->nslow; i++) {
        if (sc->slow_ranks[i] >= ws) {
            where(sc, "skew", "slow_ranks", at, sizeof at);
            return errf(err, "%sskew.slow_ranks lists rank %d but run.world_size is %d (ranks are "
                             "0..%d)",
                        at, sc->slow_ranks[i], ws, ws - 1);
        }
        for (int j = 0; j < i; j++)
            if (sc->slow_ranks[j] == sc->slow_ranks[i]) {
                where(sc, "skew", "slow_ranks", at, sizeof at);
                return errf(err, "%sskew.slow_ranks lists rank %d twice", at, sc->slow_ranks[i]);
            }
    }
    if (sc->fault_rank >= ws) {
        where(sc, "fault", "rank", at, sizeof at);
        return errf(err, "%sfault.rank %d is not a rank of run.world_size %d (ranks are 0..%d)",
                    at, sc->fault_rank, ws, ws - 1);
    }
    if (sc->fault != FAULT_NONE && sc->fault_rank < 0) {
        where(sc, "fault", "mode", at, sizeof at);
        return errf(err, "%sfault.mode = %s needs fault.rank, which is missing (the rank that "
                         "fails)",
                    at, fault_choices[sc->fault]);
    }
    if (sc->fault == FAULT_NONE && sc->fault_rank >= 0) {
        where(sc, "fault", "rank", at, sizeof at);
        return errf(err, "%sfault.rank = %d needs fault.mode, which is missing (hang, exit or "
                         "error)",
                    at, sc->fault_rank);
    }
    bool custom = strcmp(sc->preset, "custom") == 0;
    if (custom && sc->ncustom == 0) {
        where(sc, "model", "preset", at, sizeof at);
        return errf(err, "%smodel.preset = custom needs model.params (the element count of each "
                         "parameter)",
                    at);
    }
    if (!custom && sc->ncustom > 0) {
        where(sc, "model", "params", at, sizeof at);
        return errf(err, "%smodel.params is only used with model.preset = custom (preset is %s)",
                    at, sc->preset);
    }
    if (strcmp(sc->device_preset, "custom") == 0) {
        /* A custom device left at the a100 defaults would model the wrong GPU silently. */
        const char *missing = NULL;
        if (sc->key_line[key_index("device", "peak_tflops")] == 0)
            missing = "device.peak_tflops";
        else if (sc->key_line[key_index("device", "mem_bw_gbps")] == 0)
            missing = "device.mem_bw_gbps";
        if (missing != NULL) {
            where(sc, "device", "preset", at, sizeof at);
            return errf(err, "%sdevice.preset = custom needs %s, which is missing", at, missing);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- sweeps */

size_t scenario_sweep_count(const scenario *sc)
{
    size_t n = 1;
    for (int a = 0; a < sc->nsweep; a++)
        n *= (size_t)(sc->sweep[a].nvalues > 0 ? sc->sweep[a].nvalues : 0);
    return n;
}

int scenario_sweep_point(const scenario *sc, size_t index, scenario *out, char err[SCENARIO_ERR])
{
    size_t count = scenario_sweep_count(sc);
    if (index >= count)
        return errf(err, "sweep point %zu does not exist (%zu points)", index, count);
    if (sc->nsweep < 0 || sc->nsweep > SCENARIO_MAX_SWEEP_KEYS)
        return errf(err, "corrupt scenario: %d sweep axes", sc->nsweep);

    int choice[SCENARIO_MAX_SWEEP_KEYS];
    size_t rest = index;
    for (int a = sc->nsweep - 1; a >= 0; a--) { /* last axis varies fastest */
        choice[a] = (int)(rest % (size_t)sc->sweep[a].nvalues);
        rest /= (size_t)sc->sweep[a].nvalues;
    }

    char base[sizeof sc->name];
    memcpy(base, sc->name, sizeof base);
    base[sizeof base - 1] = '\0';
    if (out != sc)
        *out = *sc;
    char label[2048];
    size_t pos = 0;
    const char *src = sc->source[0] ? sc->source : "defaults";
    for (int a = 0; a < sc->nsweep; a++) {
        const sweep_axis *axis = &sc->sweep[a];
        const char *value = axis->values[choice[a]];
        int ki = -1;
        char msg[SCENARIO_ERR];
        if (find_dotted(axis->key, &ki, msg) != 0 || set_key(out, ki, value, false, msg) != 0)
            return errf(err, "%s:%d: [sweep] %s", src, axis->line, msg);
        out->key_line[ki] = axis->line > 0 ? axis->line : -1;
        pos += bprintf(label + pos, sizeof label - pos, "%s%s=%s", a ? ", " : "", axis->key,
                       value);
    }
    if (sc->nsweep > 0) {
        size_t room = sizeof out->name - 1;
        if (strlen(base) + 3 + pos <= room) {
            bprintf(out->name, sizeof out->name, "%s [%s]", base, label);
        } else {
            /* Too long for the name: still unique, and the values are in the INI. */
            char tag[64];
            size_t tlen = bprintf(tag, sizeof tag, " [point %zu of %zu]", index + 1, count);
            bprintf(out->name, sizeof out->name, "%.*s%s", (int)(room - tlen), base, tag);
        }
    }
    memset(out->sweep, 0, sizeof out->sweep);
    out->nsweep = 0;

    if (scenario_validate(out, err) != 0) {
        size_t len = strlen(err);
        bprintf(err + len, SCENARIO_ERR - len, " (sweep point \"%s\")", out->name);
        return -1;
    }
    return 0;
}

double scenario_rank_speed(const scenario *sc, int rank)
{
    double s = (rank >= 0 && rank < sc->nspeed) ? sc->speed[rank] : 1.0;
    for (int i = 0; i < sc->nslow; i++)
        if (sc->slow_ranks[i] == rank)
            return s / sc->slowdown;
    return s;
}

/* ---------------------------------------------------------------- explain */

static int explain_line(FILE *out, const key_def *k)
{
    char dotted[96], range[160];
    dotted_name(k, dotted, sizeof dotted);
    describe_range(k, range, sizeof range);
    const char *def = k->def[0] ? k->def : (is_list(k) ? "(empty)" : "\"\"");
    return fprintf(out, "%-30s %-12s %-28s %-9s %s\n", dotted, type_name(k->type), range, def,
                   k->meaning) < 0
               ? -1
               : 0;
}

static int explain_sweep(FILE *out)
{
    if (fprintf(out, "[sweep]\n") < 0)
        return -1;
    return fprintf(out, "%-30s %-12s %-28s %-9s %s\n", "sweep.<section.key>", "list",
                   "1..32 values, <=8 keys", "-",
                   "one run per point of the product of all axes; values separated by ',' "
                   "(by '|' for list keys)") < 0
               ? -1
               : 0;
}

static int explain_section(FILE *out, const char *section)
{
    if (strcmp(section, "sweep") == 0)
        return explain_sweep(out);
    if (fprintf(out, "[%s]\n", section) < 0)
        return -1;
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].section, section) == 0 && explain_line(out, &keys[i]) != 0)
            return -1;
    return 0;
}

int scenario_explain(FILE *out, const char *key)
{
    if (key == NULL) {
        if (fprintf(out, "%-30s %-12s %-28s %-9s %s\n", "key", "type", "range", "default",
                    "meaning") < 0)
            return -1;
        for (size_t s = 0; s < NSECTIONS; s++)
            if (explain_section(out, sections[s]) != 0)
                return -1;
        return 0;
    }
    if (strchr(key, '.') == NULL)
        return known_section(key) ? explain_section(out, key) : -1;
    int ki = -1;
    if (find_dotted(key, &ki, NULL) != 0)
        return -1;
    return explain_line(out, &keys[ki]);
}

/* ---------------------------------------------------------------- INI export */

typedef struct {
    char *s;
    size_t len, cap;
    size_t col; /* characters since the last newline, for wrapping long lists */
    bool failed;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(strbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) {
        b->failed = true;
        return;
    }
    if (b->len + (size_t)need + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + (size_t)need + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    (void)vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    const char *nl = memrchr(b->s + b->len, '\n', (size_t)need);
    b->col = nl ? (size_t)(b->s + b->len + need - nl - 1) : b->col + (size_t)need;
    b->len += (size_t)need;
}

/* Appends one item of a list value, breaking onto an indented continuation line (after a
 * trailing separator, which the reader accepts) before the line gets too long. */
static void sb_item(strbuf *b, bool first, char sep, const char *item)
{
    if (first)
        sb_printf(b, "%s", item);
    else if (b->col + 3 + strlen(item) > INI_WRAP)
        sb_printf(b, "%s%c\n    %s", sep == '|' ? " " : "", sep, item);
    else
        sb_printf(b, "%s%c %s", sep == '|' ? " " : "", sep, item);
}

static void write_value(strbuf *b, const scenario *sc, const key_def *k)
{
    const char *src = (const char *)sc + k->offset;
    char tmp[64];
    switch (k->type) {
    case K_INT: {
        int v;
        memcpy(&v, src, sizeof v);
        sb_printf(b, "%d", v);
        break;
    }
    case K_U64: {
        uint64_t v;
        memcpy(&v, src, sizeof v);
        sb_printf(b, "%" PRIu64, v);
        break;
    }
    case K_DOUBLE: {
        double v;
        memcpy(&v, src, sizeof v);
        fmt_double(v, tmp, sizeof tmp);
        sb_printf(b, "%s", tmp);
        break;
    }
    case K_BOOL: {
        bool v;
        memcpy(&v, src, sizeof v);
        sb_printf(b, "%s", v ? "true" : "false");
        break;
    }
    case K_STRING:
    case K_ENUM_STR:
        sb_printf(b, "%.*s", (int)k->size, src);
        break;
    case K_ENUM_INT: {
        int v;
        memcpy(&v, src, sizeof v);
        int nchoices = 0;
        while (k->choices[nchoices] != NULL)
            nchoices++;
        sb_printf(b, "%s", v >= 0 && v < nchoices ? k->choices[v] : "?");
        break;
    }
    case K_LIST_DOUBLE:
    case K_LIST_INT:
    case K_LIST_I64: {
        int n;
        memcpy(&n, (const char *)sc + k->count_offset, sizeof n);
        for (int i = 0; i < n && i < k->max_count; i++) {
            const char *e = src + (size_t)i * elem_size(k->type);
            if (k->type == K_LIST_DOUBLE) {
                double v;
                memcpy(&v, e, sizeof v);
                fmt_double(v, tmp, sizeof tmp);
            } else if (k->type == K_LIST_INT) {
                int v;
                memcpy(&v, e, sizeof v);
                bprintf(tmp, sizeof tmp, "%d", v);
            } else {
                int64_t v;
                memcpy(&v, e, sizeof v);
                bprintf(tmp, sizeof tmp, "%" PRId64, v);
            }
            sb_item(b, i == 0, ',', tmp);
        }
        break;
    }
    }
}

char *scenario_to_ini(const scenario *sc)
{
    strbuf b = {0};
    sb_printf(&b, "; ddpprof scenario: the effective value of every key\n");
    if (sc->source[0])
        sb_printf(&b, "; loaded from %s\n", sc->source);
    bool device_custom = strcmp(sc->device_preset, "custom") == 0;
    const char *section = "";
    for (size_t i = 0; i < NKEYS; i++) {
        const key_def *k = &keys[i];
        if (strcmp(section, k->section) != 0) {
            section = k->section;
            sb_printf(&b, "%s[%s]\n", b.len ? "\n" : "", section);
        }
        /* A value that came from the device preset stays a comment, so that reading
         * this file back leaves it following the preset (e.g. when device.preset is
         * swept) instead of pinning it. */
        bool from_preset = strcmp(k->section, "device") == 0 && !device_custom &&
                           (strcmp(k->name, "peak_tflops") == 0 ||
                            strcmp(k->name, "mem_bw_gbps") == 0) &&
                           sc->key_line[i] == 0;
        sb_printf(&b, "%s%s = ", from_preset ? "; " : "", k->name);
        size_t before = b.len;
        write_value(&b, sc, k);
        if (!b.failed && b.len == before)
            b.s[--b.len] = '\0'; /* an empty list: no trailing blank */
        sb_printf(&b, "%s\n", from_preset ? "   (from device.preset)" : "");
    }
    if (sc->nsweep > 0) {
        sb_printf(&b, "\n[sweep]\n");
        for (int a = 0; a < sc->nsweep && a < SCENARIO_MAX_SWEEP_KEYS; a++) {
            const sweep_axis *axis = &sc->sweep[a];
            int ki = -1;
            bool list = find_dotted(axis->key, &ki, NULL) == 0 && is_list(&keys[ki]);
            sb_printf(&b, "%s = ", axis->key);
            for (int v = 0; v < axis->nvalues && v < SCENARIO_MAX_SWEEP_VALUES; v++)
                sb_item(&b, v == 0, list ? '|' : ',', axis->values[v]);
            sb_printf(&b, "\n");
        }
    }
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
