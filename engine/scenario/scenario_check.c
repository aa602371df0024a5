/* scenario_check.c — cross-key checks of a scenario: values that contradict each other
 * (a slow rank outside world_size), keys that cannot take effect where they are set
 * (model.hidden on a resnet), the size of a sweep; errors for scenario_validate() and
 * warnings for scenario_warnings() (the rules are listed in scenario.h).
 *
 * Every check yields ok, a warning or an error with its message.  A scenario with a
 * [sweep] is judged over its points, because the values written in the sections may be
 * replaced by the sweep in every point: a check fails only when it fails in every point,
 * and then with the message of a failing point.
 */
#include "engine/scenario/scenario.h"

#include "engine/scenario/scenario_check.h"
#include "engine/scenario/scenario_keys.h"
#include "engine/scenario/scenario_sweep.h"
#include "engine/scenario/scenario_text.h"
#include "engine/scenario/scenario_value.h"
#include "profiler/span_select.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef enum { RES_OK = 0, RES_WARN, RES_ERROR } res_kind;

typedef struct {
    res_kind kind;
    char msg[SCENARIO_ERR];
} result;

/* "source:line: " for the key's line, so that the message points where to edit. */
static void where(const scenario *sc, int ki, char *buf, size_t n)
{
    int line = sc->key_line[ki];
    const char *src = sc->source[0] ? sc->source : "defaults";
    int inc = sc->key_include[ki];
    if (line > 0 && inc > 0 && inc <= sc->ninclude && inc <= SCENARIO_MAX_INCLUDES)
        src = sc->include_path[inc - 1];
    if (line > 0)
        scn_bprintf(buf, n, "%s:%d: ", src, line);
    else if (line < 0)
        scn_bprintf(buf, n, "-s %s.%s: ", scn_keys[ki].section, scn_keys[ki].name);
    else
        scn_bprintf(buf, n, "%s: ", src);
}

int scenario_key_where(const scenario *sc, const char *dotted, char *buf, size_t n)
{
    const char *dot = strchr(dotted, '.');
    char section[64];
    if (!dot || (size_t)(dot - dotted) >= sizeof section)
        return -1;
    scn_bprintf(section, sizeof section, "%.*s", (int)(dot - dotted), dotted);
    int ki = scn_key_index(section, dot + 1);
    if (ki < 0)
        return -1;
    where(sc, ki, buf, n);
    return 0;
}

static void report(result *r, res_kind kind, const scenario *sc, int ki, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void report(result *r, res_kind kind, const scenario *sc, int ki, const char *fmt, ...)
{
    char at[320], body[SCENARIO_ERR];
    where(sc, ki, at, sizeof at);
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    r->kind = kind;
    scn_bprintf(r->msg, sizeof r->msg, "%s%s%s", at, kind == RES_WARN ? "warning: " : "", body);
}

static int K(const char *section, const char *name)
{
    return scn_key_index(section, name);
}

/* ---------------------------------------------------------------- value rules */

static void rule_name(const scenario *sc, result *r)
{
    int ki = K("run", "name");
    size_t len = strlen(sc->name);
    if (len == 0) {
        report(r, RES_ERROR, sc, ki, "run.name is empty (give the run a name)");
        return;
    }
    const unsigned char *u = (const unsigned char *)sc->name;
    for (size_t i = 0; i < len;) {
        uint32_t cp = 0;
        size_t c = scn_utf8_next(u + i, len - i, &cp);
        if (c == 0 || scn_is_control(cp)) {
            report(r, RES_ERROR, sc, ki, "run.name: byte %zu is %s", i + 1,
                   c == 0 ? "not valid UTF-8" : "a control character");
            return;
        }
        i += c;
    }
}

/* One value is every rank's speed; a longer list is one per rank, unless it repeats.
 * The message names each way out, since a list written for one world size meets another
 * as soon as run.world_size is overridden. */
static void rule_speed_count(const scenario *sc, result *r)
{
    if (sc->nspeed > 1 && sc->nspeed != sc->world_size && !sc->speed_repeat)
        report(r, RES_ERROR, sc, K("skew", "speed"),
               "skew.speed has %d values but run.world_size is %d: give one per rank, one for every rank "
               "(-s skew.speed=1), none (-s skew.speed=), or repeat the list over the ranks "
               "(-s skew.speed_repeat=true)",
               sc->nspeed, sc->world_size);
}

static void rule_nodes(const scenario *sc, result *r)
{
    int g = sc->gpus_per_node;
    if (g > 0 && sc->world_size % g != 0)
        report(r, RES_ERROR, sc, K("network", "gpus_per_node"),
               "network.gpus_per_node is %d but run.world_size %d is not a multiple of it", g,
               sc->world_size);
    else if (sc->nodes > 0 && g == 0)
        report(r, RES_ERROR, sc, K("network", "nodes"),
               "network.nodes needs network.gpus_per_node (the GPUs of each node)");
    else if (sc->nodes > 0 && sc->nodes * g != sc->world_size)
        report(r, RES_ERROR, sc, K("network", "nodes"),
               "network.nodes x gpus_per_node is %d x %d = %d but run.world_size is %d", sc->nodes, g,
               sc->nodes * g, sc->world_size);
}

static void rule_slow_ranks(const scenario *sc, result *r)
{
    int ws = sc->world_size;
    for (int i = 0; i < sc->nslow; i++) {
        if (sc->slow_ranks[i] >= ws) {
            report(r, RES_ERROR, sc, K("skew", "slow_ranks"),
                   "skew.slow_ranks lists rank %d but run.world_size is %d (ranks are 0..%d)",
                   sc->slow_ranks[i], ws, ws - 1);
            return;
        }
        for (int j = 0; j < i; j++)
            if (sc->slow_ranks[j] == sc->slow_ranks[i]) {
                report(r, RES_ERROR, sc, K("skew", "slow_ranks"),
                       "skew.slow_ranks lists rank %d twice", sc->slow_ranks[i]);
                return;
            }
    }
}

/* algorithm = measured reads three lists, one entry per measurement; without it they
 * are inert. */
static void rule_measured(const scenario *sc, result *r)
{
    int nr = sc->nmeasured_ranks, nb = sc->nmeasured_bytes, nu = sc->nmeasured_us;
    if (sc->algorithm != NET_MEASURED) {
        if (nr || nb || nu)
            report(r, RES_WARN, sc, K("network", nu ? "measured_us" : nb ? "measured_bytes" : "measured_ranks"),
                   "network.measured_* has no effect with network.algorithm = %s (set it to measured)",
                   sc->algorithm == NET_TREE ? "tree" : "ring");
        return;
    }
    if (nu == 0)
        report(r, RES_ERROR, sc, K("network", "algorithm"),
               "network.algorithm = measured needs network.measured_ranks, measured_bytes and measured_us "
               "(ddpprof calibrate writes them)");
    else if (nr != nu || nb != nu)
        report(r, RES_ERROR, sc, K("network", "measured_us"),
               "network.measured_ranks, measured_bytes and measured_us have %d, %d and %d entries: one each per "
               "measurement",
               nr, nb, nu);
}

static void rule_fault_rank_range(const scenario *sc, result *r)
{
    int ws = sc->world_size;
    if (sc->fault_rank >= ws)
        report(r, RES_ERROR, sc, K("fault", "rank"),
               "fault.rank %d is not a rank of run.world_size %d (ranks are 0..%d)",
               sc->fault_rank, ws, ws - 1);
}

static void rule_spans_ranks(const scenario *sc, result *r)
{
    char why[200];
    if (span_select_check(sc->spans_ranks, sc->world_size, why, sizeof why) != 0)
        report(r, RES_ERROR, sc, K("record", "spans_ranks"), "%s", why);
}

static void rule_fault_needs_rank(const scenario *sc, result *r)
{
    int ki = K("fault", "mode");
    if (sc->fault != FAULT_NONE && sc->fault_rank < 0)
        report(r, RES_ERROR, sc, ki,
               "fault.mode = %s needs fault.rank, which is missing (the rank that fails)",
               scn_keys[ki].choices[sc->fault]);
}

static void rule_fault_iter_reached(const scenario *sc, result *r)
{
    long total = (long)sc->warmup + sc->iterations;
    if (sc->fault != FAULT_NONE && sc->fault_iter >= total)
        report(r, RES_ERROR, sc, K("fault", "iter"),
               "fault.iter = %d is never reached, so the fault would never happen: the run has "
               "%ld iterations (run.warmup %d + run.iterations %d), numbered 0 to %ld",
               sc->fault_iter, total, sc->warmup, sc->iterations, total - 1);
}

static void rule_custom_needs_params(const scenario *sc, result *r)
{
    bool custom = strcmp(sc->preset, "custom") == 0;
    if (custom && sc->ncustom == 0 && sc->params_file[0] == '\0')
        report(r, RES_ERROR, sc, K("model", "preset"),
               "model.preset = custom needs model.params (the element count of each parameter) or "
               "model.params_file (each parameter's name, kind and shape)");
    else if (custom && sc->ncustom > 0 && sc->params_file[0] != '\0')
        report(r, RES_ERROR, sc, K("model", "params_file"),
               "model.params and model.params_file both describe the custom model: keep one");
    else if (!custom && sc->params_file[0] != '\0')
        report(r, RES_ERROR, sc, K("model", "params_file"),
               "model.params_file describes a custom model, but model.preset is %s", sc->preset);
}

static void rule_custom_device(const scenario *sc, result *r)
{
    if (strcmp(sc->device_preset, "custom") != 0)
        return;
    /* A custom device left at the a100 defaults would model the wrong GPU silently. */
    const char *missing = NULL;
    if (sc->key_line[K("device", "peak_tflops")] == 0)
        missing = "device.peak_tflops";
    else if (sc->key_line[K("device", "mem_bw_gbps")] == 0)
        missing = "device.mem_bw_gbps";
    if (missing != NULL)
        report(r, RES_ERROR, sc, K("device", "preset"),
               "device.preset = custom needs %s, which is missing", missing);
}

/* ---------------------------------------------------------------- keys without effect */

/* A key (dep) that only acts when another key (ctx) has certain values. */
typedef struct {
    const char *dep_section, *dep_name;
    const char *ctx_section, *ctx_name;
    bool (*in_effect)(const scenario *sc);
    /* ctx set explicitly to its default turns dep off on purpose (a toggle) */
    bool off_switch;
    const char *hint; /* appended to the message: what would use the key */
} ctx_rule;

static bool preset_is(const scenario *sc, const char *a, const char *b, const char *c)
{
    return strcmp(sc->preset, a) == 0 || (b && strcmp(sc->preset, b) == 0) ||
           (c && strcmp(sc->preset, c) == 0);
}
static bool uses_hidden(const scenario *sc) { return preset_is(sc, "mlp", NULL, NULL); }
static bool uses_layers(const scenario *sc) { return preset_is(sc, "mlp", "bert-large", "gpt2"); }
static bool uses_transformer(const scenario *sc)
{
    return preset_is(sc, "bert-large", "gpt2", NULL);
}
static bool uses_params(const scenario *sc) { return preset_is(sc, "custom", NULL, NULL); }
static bool fault_on(const scenario *sc) { return sc->fault != FAULT_NONE; }
static bool has_slow_ranks(const scenario *sc) { return sc->nslow > 0 || sc->slow_fraction > 0; }
static bool slows_down(const scenario *sc) { return sc->slowdown != 1.0; }

#define CTX(dep_s, dep_n, ctx_s, ctx_n, fn, off, h)                                        \
    {.dep_section = dep_s, .dep_name = dep_n, .ctx_section = ctx_s, .ctx_name = ctx_n,     \
     .in_effect = fn, .off_switch = off, .hint = h}

static const ctx_rule ctx_fault_rank = CTX("fault", "rank", "fault", "mode", fault_on, true, "");
static const ctx_rule ctx_fault_iter = CTX("fault", "iter", "fault", "mode", fault_on, true, "");
static const ctx_rule ctx_params =
    CTX("model", "params", "model", "preset", uses_params, false, "");
static const ctx_rule ctx_hidden =
    CTX("model", "hidden", "model", "preset", uses_hidden, false, " (only mlp uses it)");
static const ctx_rule ctx_layers = CTX("model", "layers", "model", "preset", uses_layers, false,
                                       " (only mlp, bert-large and gpt2 use it)");
static const ctx_rule ctx_d_model = CTX("model", "d_model", "model", "preset", uses_transformer,
                                        false, " (only bert-large and gpt2 use it)");
static const ctx_rule ctx_vocab = CTX("model", "vocab", "model", "preset", uses_transformer,
                                      false, " (only bert-large and gpt2 use it)");
static const ctx_rule ctx_seq_len = CTX("model", "seq_len", "model", "preset", uses_transformer,
                                        false, " (only bert-large and gpt2 use it)");
static const ctx_rule ctx_slowdown =
    CTX("skew", "slowdown", "skew", "slow_ranks", has_slow_ranks, true,
        " (list the ranks to slow down in skew.slow_ranks)");
static const ctx_rule ctx_slow_ranks =
    CTX("skew", "slow_ranks", "skew", "slowdown", slows_down, true,
        " (set how many times slower they are in skew.slowdown)");

static const ctx_rule *const all_ctx_rules[] = {&ctx_fault_rank, &ctx_fault_iter, &ctx_params,
                                                &ctx_hidden,     &ctx_layers,     &ctx_d_model,
                                                &ctx_vocab,      &ctx_seq_len,    &ctx_slowdown,
                                                &ctx_slow_ranks};

/* "with model.preset = resnet18", "without skew.slow_ranks": the context that is off. */
static void context_text(const ctx_rule *c, const scenario *sc, char *buf, size_t n)
{
    int ctx = K(c->ctx_section, c->ctx_name);
    if (scn_is_list(&scn_keys[ctx])) {
        scn_bprintf(buf, n, "without %s.%s", c->ctx_section, c->ctx_name);
        return;
    }
    char value[64];
    scn_value_text(sc, ctx, value, sizeof value);
    scn_bprintf(buf, n, "with %s.%s = %s", c->ctx_section, c->ctx_name, value);
}

static void eval_ctx(const ctx_rule *c, const scenario *sc, bool judging, result *r)
{
    int dep = K(c->dep_section, c->dep_name), ctx = K(c->ctx_section, c->ctx_name);
    const key_def *dk = &scn_keys[dep];
    if (sc->key_line[dep] == 0)
        return; /* not set: nothing to complain about */
    if (scn_is_list(dk) && scn_key_is_default(sc, dep))
        return; /* an empty list sets nothing */
    if (c->in_effect(sc))
        return;
    if (!judging && sc->swept[ctx])
        return; /* a sweep point where the sweep switched the key off on purpose */

    bool ctx_set = sc->key_line[ctx] != 0;
    res_kind kind = RES_ERROR;
    if (scn_key_is_default(sc, dep))
        kind = RES_WARN;
    else if (c->off_switch && ctx_set && scn_key_is_default(sc, ctx))
        kind = RES_WARN;
    else if (sc->key_line[ctx] < 0 && sc->key_line[dep] > 0)
        kind = RES_WARN;

    char value[96], context[128];
    scn_value_text(sc, dep, value, sizeof value);
    context_text(c, sc, context, sizeof context);
    if (c == &ctx_fault_rank && !ctx_set)
        report(r, kind, sc, dep, "fault.rank = %s needs fault.mode, which is missing (hang, exit "
                                 "or error)",
               value);
    else if (c == &ctx_fault_iter && !ctx_set)
        report(r, kind, sc, dep,
               "fault.iter = %s needs fault.mode (hang, exit or error) and fault.rank, which are "
               "missing",
               value);
    else if (c == &ctx_params)
        report(r, kind, sc, dep, "model.params is only used with model.preset = custom (preset "
                                 "is %s)",
               sc->preset);
    else if (kind == RES_WARN && sc->key_line[ctx] < 0 && sc->key_line[dep] > 0)
        report(r, kind, sc, dep, "%s.%s = %s has no effect %s%s; -s changed %s.%s",
               c->dep_section, c->dep_name, value, context, c->hint, c->ctx_section,
               c->ctx_name);
    else
        report(r, kind, sc, dep, "%s.%s = %s has no effect %s%s", c->dep_section, c->dep_name,
               value, context, c->hint);
}

static void rule_global_batch(const scenario *sc, result *r)
{
    if (sc->global_batch > 0 && sc->global_batch % sc->world_size != 0)
        report(r, RES_ERROR, sc, K("model", "global_batch"),
               "model.global_batch = %d does not split over run.world_size %d ranks (per-rank batch = "
               "global batch / world size must be whole)",
               sc->global_batch, sc->world_size);
}

static void rule_rank_steps(const scenario *sc, result *r)
{
    int ki = K("skew", "rank_steps");
    if (sc->nrank_steps == 0)
        return;
    if (sc->nrank_steps != sc->world_size) {
        report(r, RES_ERROR, sc, ki, "skew.rank_steps has %d values but run.world_size is %d (one per rank)",
               sc->nrank_steps, sc->world_size);
        return;
    }
    bool uneven = false;
    for (int i = 0; i < sc->nrank_steps; i++) {
        if (sc->rank_steps[i] > sc->warmup + sc->iterations) {
            report(r, RES_ERROR, sc, ki, "skew.rank_steps gives rank %d %d steps, more than the run's %d", i,
                   sc->rank_steps[i], sc->warmup + sc->iterations);
            return;
        }
        uneven |= sc->rank_steps[i] != sc->rank_steps[0];
    }
    int most = 0;
    for (int i = 0; i < sc->nrank_steps; i++)
        most = sc->rank_steps[i] > most ? sc->rank_steps[i] : most;
    if (most != sc->warmup + sc->iterations) {
        report(r, RES_ERROR, sc, ki,
               "skew.rank_steps: the rank with the most data must train every step of the run (%d), not %d",
               sc->warmup + sc->iterations, most);
        return;
    }
    if (uneven && !sc->join)
        report(r, RES_ERROR, sc, ki,
               "skew.rank_steps differ but ddp.join is false: the ranks with more data would wait forever in "
               "their next allreduce (set ddp.join = true)");
}

static void rule_equivalence(const scenario *sc, result *r)
{
    if (!sc->equivalence)
        return;
    if (sc->compute != COMPUTE_REAL || strcmp(sc->preset, "mlp") != 0)
        report(r, RES_ERROR, sc, K("run", "equivalence"),
               "run.equivalence needs real training: model.preset = mlp and model.compute = real");
    else if (sc->nsweep > 0)
        report(r, RES_ERROR, sc, K("run", "equivalence"), "run.equivalence cannot be combined with a [sweep]");
    else if (strcmp(sc->ranks, "threads") != 0)
        report(r, RES_ERROR, sc, K("run", "equivalence"), "run.equivalence runs its ranks as threads (run.ranks = threads)");
}

/* ---------------------------------------------------------------- all checks, in order */

typedef struct {
    void (*fn)(const scenario *sc, result *r);
    const ctx_rule *ctx;
} check;

/* The order is the order of precedence: the first error is the one reported. */
static const check checks[] = {
    {rule_name, NULL},
    {rule_global_batch, NULL},
    {rule_equivalence, NULL},
    {rule_rank_steps, NULL},
    {rule_speed_count, NULL},
    {rule_slow_ranks, NULL},
    {rule_nodes, NULL},
    {rule_measured, NULL},
    {rule_fault_rank_range, NULL},
    {rule_fault_needs_rank, NULL},
    {rule_spans_ranks, NULL},
    {NULL, &ctx_fault_rank},
    {NULL, &ctx_fault_iter},
    {rule_fault_iter_reached, NULL},
    {rule_custom_needs_params, NULL},
    {NULL, &ctx_params},
    {rule_custom_device, NULL},
    {NULL, &ctx_hidden},
    {NULL, &ctx_layers},
    {NULL, &ctx_d_model},
    {NULL, &ctx_vocab},
    {NULL, &ctx_seq_len},
    {NULL, &ctx_slowdown},
    {NULL, &ctx_slow_ranks},
};
#define NCHECKS (sizeof checks / sizeof checks[0])

static void eval_check(const check *c, const scenario *sc, bool judging, result *r)
{
    r->kind = RES_OK;
    r->msg[0] = '\0';
    if (c->fn != NULL)
        c->fn(sc, r);
    else
        eval_ctx(c->ctx, sc, judging, r);
}

/* Memory safety first: the checks index arrays with these counts. */
static int check_shape(const scenario *sc, char *err, size_t errlen)
{
    for (size_t i = 0; i < scn_nkeys; i++) {
        const key_def *k = &scn_keys[i];
        const char *p = (const char *)sc + k->offset;
        if (k->type == K_STRING || k->type == K_ENUM_STR) {
            if (memchr(p, '\0', k->size) == NULL)
                return scn_errf(err, errlen, "corrupt scenario: %s.%s is not terminated", k->section,
                                k->name);
        } else if (k->type == K_ENUM_INT) {
            int v, nchoices = 0;
            memcpy(&v, p, sizeof v);
            while (k->choices[nchoices] != NULL)
                nchoices++;
            if (v < 0 || v >= nchoices)
                return scn_errf(err, errlen, "corrupt scenario: %s.%s = %d", k->section, k->name, v);
        } else if (scn_is_list(k)) {
            int n;
            memcpy(&n, (const char *)sc + k->count_offset, sizeof n);
            if (n < 0 || n > k->max_count)
                return scn_errf(err, errlen, "corrupt scenario: %s.%s has %d elements", k->section,
                                k->name, n);
        }
    }
    if (memchr(sc->source, '\0', sizeof sc->source) == NULL)
        return scn_errf(err, errlen, "corrupt scenario: source is not terminated");
    return scn_sweep_shape(sc, err, errlen);
}

static int check_sweep_size(const scenario *sc, char *err, size_t errlen)
{
    char msg[SCENARIO_ERR];
    int axis = 0;
    if (scn_sweep_over_limit(sc, msg, sizeof msg, &axis) == 0)
        return 0;
    const char *src = sc->source[0] ? sc->source : "defaults";
    if (sc->sweep[axis].line > 0)
        return scn_errf(err, errlen, "%s:%d: %s", src, sc->sweep[axis].line, msg);
    return scn_errf(err, errlen, "%s: %s", src, msg);
}

/* Fills res[NCHECKS]; for a sweep, each check's outcome over all points.  The scenario
 * must have passed check_shape and check_sweep_size.  0, or -1 with err. */
static int evaluate(const scenario *sc, result *res, char *err, size_t errlen)
{
    for (size_t i = 0; i < NCHECKS; i++)
        eval_check(&checks[i], sc, false, &res[i]);
    if (sc->nsweep == 0)
        return 0;

    scenario *pt = malloc(sizeof *pt);
    result *worst = calloc(NCHECKS, sizeof *worst);
    if (pt == NULL || worst == NULL || scenario_copy(pt, sc, NULL, 0) != 0) {
        free(pt);
        free(worst);
        return scn_errf(err, errlen, "out of memory while checking the sweep");
    }
    bool ok_any[NCHECKS];
    memset(ok_any, 0, sizeof ok_any);
    size_t count = scenario_sweep_count(sc), open = NCHECKS;
    int rc = 0;
    for (size_t p = 0; p < count && open > 0 && rc == 0; p++) {
        if (scn_sweep_apply(sc, p, pt, err, errlen) != 0) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < NCHECKS; i++) {
            if (ok_any[i])
                continue;
            result r;
            eval_check(&checks[i], pt, true, &r);
            if (r.kind == RES_OK) {
                ok_any[i] = true;
                open--;
            } else if (r.kind > worst[i].kind) {
                worst[i] = r;
            }
        }
    }
    for (size_t i = 0; i < NCHECKS && rc == 0; i++) {
        if (ok_any[i]) {
            res[i].kind = RES_OK;
            res[i].msg[0] = '\0';
        } else if (strcmp(worst[i].msg, res[i].msg) != 0) {
            /* The sweep changes the message: it is about values of the points. */
            res[i].kind = worst[i].kind;
            scn_bprintf(res[i].msg, sizeof res[i].msg, "%s (in every point of the [sweep])",
                        worst[i].msg);
        }
    }
    scenario_free(pt);
    free(pt);
    free(worst);
    return rc;
}

int scenario_validate(const scenario *sc, char *err, size_t errlen)
{
    if (check_shape(sc, err, errlen) != 0 || check_sweep_size(sc, err, errlen) != 0)
        return -1;
    result *res = calloc(NCHECKS, sizeof *res);
    if (res == NULL)
        return scn_errf(err, errlen, "out of memory while checking the scenario");
    int rc = evaluate(sc, res, err, errlen);
    for (size_t i = 0; i < NCHECKS && rc == 0; i++) {
        if (res[i].kind == RES_ERROR) {
            rc = scn_errf(err, errlen, "%s", res[i].msg);
        }
    }
    free(res);
    return rc;
}

int scenario_warnings(const scenario *sc, char *buf, size_t n)
{
    char err[SCENARIO_ERR];
    if (n > 0)
        buf[0] = '\0';
    if (check_shape(sc, err, sizeof err) != 0 || check_sweep_size(sc, err, sizeof err) != 0)
        return -1;
    result *res = calloc(NCHECKS, sizeof *res);
    if (res == NULL || evaluate(sc, res, err, sizeof err) != 0) {
        free(res);
        return -1;
    }
    int count = 0;
    size_t pos = 0;
    for (size_t i = 0; i < NCHECKS; i++) {
        if (res[i].kind != RES_WARN)
            continue;
        count++;
        size_t len = strlen(res[i].msg);
        if (pos + len + 2 <= n) { /* the line, its newline and the terminator */
            memcpy(buf + pos, res[i].msg, len);
            buf[pos + len] = '\n';
            pos += len + 1;
            buf[pos] = '\0';
        }
    }
    free(res);
    return count;
}

static bool swept_key(const scenario *sc, const char *section, const char *name)
{
    char dotted[96];
    scn_bprintf(dotted, sizeof dotted, "%s.%s", section, name);
    for (int a = 0; a < sc->nsweep && a < SCENARIO_MAX_SWEEP_KEYS; a++)
        if (strncmp(sc->sweep[a].key, dotted, sizeof sc->sweep[a].key) == 0)
            return true;
    return false;
}

bool scn_key_in_effect(const scenario *sc, int ki, char *why, size_t n)
{
    for (size_t i = 0; i < sizeof all_ctx_rules / sizeof all_ctx_rules[0]; i++) {
        const ctx_rule *c = all_ctx_rules[i];
        if (K(c->dep_section, c->dep_name) != ki || c->in_effect(sc))
            continue;
        /* Swept, it may act in some points: keep it. */
        if (swept_key(sc, c->dep_section, c->dep_name) ||
            swept_key(sc, c->ctx_section, c->ctx_name))
            continue;
        char context[128];
        context_text(c, sc, context, sizeof context);
        scn_bprintf(why, n, "no effect %s", context);
        return false;
    }
    return true;
}
