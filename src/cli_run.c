/* cli_run.c — `ddpprof run FILE`: load and check the scenario (and every sweep point)
 * before touching the database, then run each point and print its report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "engine/backend.h"
#include "engine/launch/equivalence.h"
#include "src/cli.h"
#include "engine/launch/launch_as_rank.h"
#include "engine/launch/launch_env.h"
#include "engine/launch/launch_processes.h"
#include "engine/launch/launcher.h"
#include "engine/launch/memory_budget.h"
#include "engine/workload/real_training.h"
#include "engine/workload/model_zoo.h"
#include "reports/report.h"
#include "reports/report_equivalence.h"
#include "engine/scenario/scenario.h"
#include "profiler/store.h"
#include "reports/sweep_summary.h"

typedef struct {
    const char *db_path, *backend;
    cli_strings overrides, sweeps;
    cli_strings spans_settings; /* the -s settings --spans-ranks stands for (owned) */
    rank_select ranks;
    bool verify, no_record, json, quiet;
} run_args;

/* --spans-ranks LIST: the -s record.spans_ranks=LIST it stands for, in its place among the -s. */
static int take_spans_ranks(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)cmd;
    (void)opt;
    run_args *a = args;
    static const char key[] = "record.spans_ranks=";
    size_t len = sizeof key + strlen(value);
    char *setting = malloc(len);
    if (setting)
        snprintf(setting, len, "%s%s", key, value);
    if (!setting || !cli_strings_add(&a->spans_settings, setting)) {
        free(setting);
        fprintf(stderr, "ddpprof: out of memory\n");
        return EXIT_RUNTIME;
    }
    if (!cli_strings_add(&a->overrides, setting)) {
        fprintf(stderr, "ddpprof: out of memory\n");
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

static int take_ranks(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    return cli_parse_ranks(cmd, value, &((run_args *)args)->ranks);
}

static const cli_option run_option_table[] = {
    {CLI_STRING('o', NULL, run_args, db_path, "DB", "results database (default ddpprof.sqlite; created if missing)")},
    {CLI_STRING_LIST('s', NULL, run_args, overrides, "section.key=value",
                     "override a scenario key, e.g. -s ddp.bucket_cap_mb=50 (repeatable); a key the\n"
                     "file's [sweep] varies is then not swept (said on stderr)")},
    {CLI_STRING_LIST(0, "sweep", run_args, sweeps, "section.key=a,b,...",
                     "sweep a key from the command line (repeatable; list keys: A1,A2|B1,B2);\n"
                     "replaces the file's sweep of that key (said on stderr)")},
    {CLI_STRING(0, "backend", run_args, backend, "NAME",
                "auto, cpu or cuda (default: the scenario's run.backend); cuda fails\n"
                "at once where it cannot run (no GPU), auto says what it passed over")},
    {CLI_FLAG(0, "verify", run_args, verify,
              "check after every synchronised step that each rank's gradients are\n"
              "exactly the average over ranks (slow on large models)")},
    {CLI_FLAG(0, "no-record", run_args, no_record, "run without storing spans (measures the profiler's own cost)")},
    {CLI_CALLBACK(0, "spans-ranks", "LIST", take_spans_ranks,
                  "above 64 ranks, the ranks whose spans are stored beside the chosen\n"
                  "ones (slowest, fastest, median, quantiles, rank 0): 0,17,4095; all =\n"
                  "every rank; every rank's statistics are kept (-s record.spans_ranks=LIST)")},
    {CLI_FLAG(0, "json", run_args, json, "print the report as JSON")},
    {CLI_FLAG('q', "quiet", run_args, quiet, "no report, no progress bar")},
    {CLI_CALLBACK(0, "ranks", "all|LIST", take_ranks,
                  "the report's per-rank tables show every rank, or these (0,5,8-11); default:\n"
                  "every rank up to 32, above that min, median, p90, max, slowest and fastest")},
    {CLI_OPT_END},
};

const cli_command cli_run_command = {
    .name = "run",
    .forms = {{"FILE", "run a scenario, record it into DB (default ddpprof.sqlite), print its report"}},
    .options = run_option_table,
};

static void run_args_free(run_args *a)
{
    for (int i = 0; i < a->spans_settings.n; i++)
        free((char *)a->spans_settings.items[i]);
    cli_strings_free(&a->spans_settings);
    rank_select_free(&a->ranks);
}

/* What one `run` works with, from its arguments to the store it writes. */
typedef struct {
    const run_args *args;
    const char *file;
    const char *text; /* the scenario's text when it comes from memory (file names it), else NULL */
    char **self_argv; /* the command each rank process runs when ddpprof starts them: this one */
    const atomic_int *interrupted;
    scenario *sc, *point; /* large (custom parameter lists): kept off the stack */
    const backend_ops *be;
    size_t npoints;
    launch_env env;
    const char *coordinated, *only_point; /* DDPPROF_COORDINATOR, DDPPROF_SWEEP_POINT */
    bool rank_mode, writer;
    store *st; /* NULL in a rank that does not write */
} run_job;

/* Refuses a point whose allocations do not fit in the memory available now. */
static int check_memory(const char *file, const scenario *point, const model *m)
{
    memory_estimate est;
    memory_run_estimate(point, m, &est);
    const double mib = 1024.0 * 1024.0;
    char detail[320], what[400], err[1024];
    snprintf(detail, sizeof detail,
             "%d ranks: parameters %.0f MiB, gradients %.0f MiB, buckets %.0f MiB, hook copies %.0f MiB, GEMM "
             "scratch %.0f MiB, span rings %.0f MiB",
             point->world_size, est.params / mib, est.grads / mib, est.buckets / mib, est.hook_copies / mib,
             est.gemm_scratch / mib, est.span_rings / mib);
    snprintf(what, sizeof what, "%s: %s", file, point->name);
    if (memory_check(est.total, what, detail, err, sizeof err) != 0) {
        fprintf(stderr, "%s (try fewer ranks or a smaller model)\n", err);
        return -1;
    }
    return 0;
}

/* The backend the scenario asks for, resolved once before anything is written:
 * `auto` takes the first available (and says what it passed over), a named backend that
 * cannot run here fails at once (exit 1), one not built in is bad usage (exit 2). */
/* The command line's settings and sweep point `p` of `sc` (the file's scenario after the
 * command line) as a JSON object of "section.key": "value", in the order given (the -s
 * settings, then the point's axes); NULL when there are none, or out of memory (*oom). */
static char *overrides_json(const char *const *overrides, int noverrides, const scenario *sc, size_t p, bool *oom)
{
    *oom = false;
    json_t *o = json_object();
    if (!o) {
        *oom = true;
        return NULL;
    }
    bool ok = true;
    for (int i = 0; i < noverrides && ok; i++) {
        const char *eq = strchr(overrides[i], '=');
        char key[128];
        if (!eq || (size_t)(eq - overrides[i]) >= sizeof key)
            continue; /* refused at the override already */
        snprintf(key, sizeof key, "%.*s", (int)(eq - overrides[i]), overrides[i]);
        ok = json_object_set_new(o, key, json_string(eq + 1)) == 0;
    }
    /* Point p of the cartesian product, the last axis fastest (scenario_sweep_point);
     * written in the axes' order. */
    size_t rest = p, at[SCENARIO_MAX_SWEEP_KEYS] = {0};
    for (int a = sc->nsweep - 1; a >= 0; a--)
        if (sc->sweep[a].nvalues > 0) {
            at[a] = rest % (size_t)sc->sweep[a].nvalues;
            rest /= (size_t)sc->sweep[a].nvalues;
        }
    for (int a = 0; a < sc->nsweep && ok; a++)
        if (sc->sweep[a].nvalues > 0)
            ok = json_object_set_new(o, sc->sweep[a].key, json_string(sc->sweep[a].values[at[a]])) == 0;
    char *text = ok && json_object_size(o) > 0 ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    *oom = !ok || (json_object_size(o) > 0 && !text);
    json_decref(o);
    return text;
}

static const backend_ops *resolve_backend(const scenario *sc, bool quiet, int *status)
{
    char why[512], names[128];
    if (!strcmp(sc->backend, "auto")) {
        const backend_ops *be = backend_auto(why, sizeof why);
        if (be && why[0] && !quiet)
            fprintf(stderr, "ddpprof: backend auto: %s (passed over %s)\n", be->name, why);
        if (!be) {
            fprintf(stderr, "ddpprof: backend auto: no backend can run here (%s)\n", why);
            *status = EXIT_RUNTIME;
        }
        return be;
    }
    const backend_ops *be = backend_find(sc->backend);
    if (!be) {
        backend_names(names, sizeof names);
        fprintf(stderr, "ddpprof: backend '%s' is not built into this ddpprof (built in: %s)\n", sc->backend, names);
        *status = EXIT_USAGE;
        return NULL;
    }
    if (!be->available(why, sizeof why)) {
        fprintf(stderr, "ddpprof: backend %s: %s\n", be->name, why);
        *status = EXIT_RUNTIME;
        return NULL;
    }
    return be;
}

/* Threads, processes started here, or this process as one rank under a launcher.  A
 * backend that schedules the ranks itself (the sim) runs them all here: run.ranks then
 * says what it models (ranks as processes copy each bucket's sum out of shared memory). */
static int run_point(const scenario *point, const model *m, const backend_ops *be, const launch_env *env,
                     bool coordinated, store *st, const launch_options *opt, launch_result *res, char *err,
                     size_t errlen)
{
    if (env->kind != LAUNCH_NONE)
        return launch_as_rank(point, m, env, !coordinated, st, be, opt, res, err, errlen);
    if ((!strcmp(point->ranks, "processes") && !be->run_ranks) || be->one_rank_per_process)
        return launch_processes(point, m, st, be, opt, res, err, errlen);
    return launch_run(point, m, st, be, opt, res, err, errlen);
}

static void print_outcome(store *st, const scenario *point, const launch_result *res, bool record, bool json,
                          bool quiet, const rank_select *sel)
{
    char err[512];
    if (!quiet && record &&
        report_write_ranks(st, res->run_id, json ? REPORT_JSON : REPORT_TEXT, sel, stdout, err,
                           sizeof err) != 0)
        fprintf(stderr, "ddpprof: report: %s\n", err);
    if (!quiet)
        fprintf(stderr, "run %lld %s: %s in %.2f s, %lld spans%s\n", (long long)res->run_id, point->name,
                res->complete ? "complete" : "FAILED", res->wall_s, (long long)res->spans,
                record ? "" : " (not recorded)");
}

/* run.equivalence: the reference, DDP and hand-written trainings, then their table. */
static int run_equivalence(const scenario *sc, const backend_ops *be, store *st, bool rank_mode, bool record,
                           bool quiet, const atomic_int *interrupted)
{
    if (rank_mode) {
        fprintf(stderr, "ddpprof: run.equivalence starts its own ranks; run it without a launcher\n");
        return EXIT_USAGE;
    }
    if (be->run_ranks) {
        fprintf(stderr, "ddpprof: run.equivalence compares trained weights, and the %s backend only models time "
                        "(run it on cpu, or predict with -s run.equivalence=false)\n", be->name);
        return EXIT_USAGE;
    }
    launch_options opt = {.record = record, .progress = !quiet, .label = sc->name, .interrupted = interrupted};
    int64_t group = -1;
    char err[512];
    int rc = equivalence_run(sc, st, be, &opt, &group, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "ddpprof: equivalence: %s\n", err);
    if (group >= 0 && report_equivalence_text(st, group, stdout, err, sizeof err) != 0)
        fprintf(stderr, "ddpprof: report: %s\n", err);
    return rc == 0 ? EXIT_OK : EXIT_RUNTIME;
}

/* The scenario read, the command line applied and checked. */
static int load_scenario(run_job *job)
{
    const run_args *a = job->args;
    char err[SCENARIO_ERR];
    if ((job->text ? scenario_load_text(job->text, job->file, job->sc, err, sizeof err)
                   : scenario_load_file(job->file, job->sc, err, sizeof err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return EXIT_USAGE;
    }
    /* Said once, by the command the user typed, not again by each rank process. */
    int status = cli_scenario_apply(job->sc, job->file, a->overrides.items, a->overrides.n, a->sweeps.items,
                                    a->sweeps.n, a->backend, !getenv("DDPPROF_COORDINATOR"));
    if (status != EXIT_OK)
        return status;
    if (a->verify && real_training_applies(job->sc)) {
        fprintf(stderr, "ddpprof: --verify checks the synthetic gradients of compute = model; the mlp with compute "
                        "= real trains on real ones (tests/parity compares them with PyTorch)\n");
        return EXIT_USAGE;
    }
    char warnings[4096];
    if (scenario_warnings(job->sc, warnings, sizeof warnings) > 0)
        fputs(warnings, stderr);
    return EXIT_OK;
}

static int choose_backend(run_job *job)
{
    int status = EXIT_OK;
    job->be = resolve_backend(job->sc, job->args->quiet, &status);
    if (!job->be)
        return status;
    if (job->args->verify && job->be->run_ranks) {
        fprintf(stderr, "ddpprof: --verify needs gradients, and the %s backend only models time\n", job->be->name);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* A point of more ranks than the backend runs, said with where the file sets them. */
static int refuse_world_size(const run_job *job)
{
    const scenario *point = job->point;
    const backend_ops *be = job->be;
    char at[320];
    if (scenario_key_where(point, "run.world_size", at, sizeof at) != 0)
        snprintf(at, sizeof at, "%s: ", job->file);
    bool sweep = job->npoints > 1;
    fprintf(stderr, "%srun.world_size %d is more than the %s backend runs (at most %d ranks); "
                    "`ddpprof predict` models up to %d%s%s%s\n",
            at, point->world_size, be->name, be->max_world, SCENARIO_MAX_WORLD, sweep ? " (sweep point \"" : "",
            sweep ? point->name : "", sweep ? "\")" : "");
    return EXIT_USAGE;
}

/* Sweep point p: a scenario, a model the backend runs, memory that fits. */
static int check_point(run_job *job, size_t p)
{
    model m;
    char merr[256], err[SCENARIO_ERR];
    if (scenario_sweep_point(job->sc, p, job->point, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return EXIT_USAGE;
    }
    if (model_build(job->point, &m, merr, sizeof merr) != 0) {
        fprintf(stderr, "%s: %s\n", job->file, merr);
        return EXIT_USAGE;
    }
    int status = EXIT_OK;
    if (job->be->max_world > 0 && job->point->world_size > job->be->max_world)
        status = refuse_world_size(job);
    /* A backend in virtual time allocates no model memory. */
    else if (!job->be->run_ranks && check_memory(job->file, job->point, &m) != 0)
        status = EXIT_USAGE;
    model_free(&m);
    return status;
}

/* Every point is checked before anything is written. */
static int check_points(run_job *job)
{
    job->npoints = scenario_sweep_count(job->sc);
    for (size_t p = 0; p < job->npoints; p++) {
        if (job->interrupted && atomic_load(job->interrupted)) {
            fprintf(stderr, "ddpprof: interrupted while checking the sweep's points; nothing was written\n");
            return EXIT_RUNTIME;
        }
        int status = check_point(job, p);
        if (status != EXIT_OK)
            return status;
    }
    return EXIT_OK;
}

/* Under a launcher (torchrun, srun, mpirun, or ddpprof's own processes) this process
 * is one rank; rank 0 alone writes the database when it hosts the coordinator. */
static int detect_launch(run_job *job)
{
    char eerr[512];
    if (launch_env_detect(launch_env_getenv, NULL, &job->env, eerr, sizeof eerr) != 0) {
        fprintf(stderr, "ddpprof: %s\n", eerr);
        return EXIT_USAGE;
    }
    const launch_env *env = &job->env;
    if (env->kind != LAUNCH_NONE && env->world_size != job->sc->world_size) {
        fprintf(stderr,
                "ddpprof: %s started %d ranks (%s) but the scenario's run.world_size is %d; make them agree "
                "(-s run.world_size=%d)\n",
                launch_kind_name(env->kind), env->world_size, env->world_var, job->sc->world_size, env->world_size);
        return EXIT_USAGE;
    }
    job->coordinated = getenv("DDPPROF_COORDINATOR");
    job->only_point = getenv("DDPPROF_SWEEP_POINT");
    job->rank_mode = env->kind != LAUNCH_NONE;
    job->writer = !job->rank_mode || (!job->coordinated && env->rank == 0);
    return EXIT_OK;
}

/* Everything a run checks before it writes, then the store opened (by the writer). */
static int prepare(run_job *job)
{
    int status = load_scenario(job);
    if (status == EXIT_OK)
        status = choose_backend(job);
    if (status == EXIT_OK)
        status = check_points(job);
    if (status == EXIT_OK)
        status = detect_launch(job);
    char err[512];
    if (status == EXIT_OK && job->writer && store_open(job->args->db_path, &job->st, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", job->args->db_path, err);
        status = EXIT_RUNTIME;
    }
    return status;
}

/* What the points run so far came to. */
typedef struct {
    int64_t *complete_runs; /* each completed point's run, for the sweep's summary */
    size_t ncomplete, done;
    int64_t sweep_first; /* the first run of this sweep; -1 before it */
    int status;
} sweep_progress;

/* What was run: the command line's settings, the sweep point, the verdict. */
static void record_provenance(const run_job *job, size_t p, const launch_result *res, int rc, sweep_progress *prog)
{
    const run_args *a = job->args;
    if (job->npoints > 1 && prog->sweep_first < 0)
        prog->sweep_first = res->run_id;
    bool oom;
    char *over = overrides_json(a->overrides.items, a->overrides.n, job->sc, p, &oom);
    int verified = a->verify ? rc == 0 && res->complete : -1;
    char perr[256];
    if (oom || store_set_run_provenance(job->st, res->run_id, over, job->npoints > 1 ? prog->sweep_first : -1,
                                        verified, perr, sizeof perr) != 0) {
        fprintf(stderr, "ddpprof: run %lld: %s\n", (long long)res->run_id, oom ? "out of memory" : perr);
        prog->status = EXIT_RUNTIME;
    }
    free(over);
}

static void say_verified(const run_job *job, int rc, const launch_result *res)
{
    fprintf(job->args->json || job->args->quiet ? stderr : stdout, "%s\n",
            rc == 0 && res->complete
                ? "verify: every synchronised step checked: each rank's gradients were exactly the average"
                  " over ranks"
                : "verify: not every synchronised step was checked and exact (the run did not complete)");
}

/* Sweep point p run and recorded; false when the sweep cannot go on. */
static bool run_one_point(run_job *job, size_t p, sweep_progress *prog)
{
    const run_args *a = job->args;
    model m;
    char merr[256], label[200], err[SCENARIO_ERR];
    if (scenario_sweep_point(job->sc, p, job->point, err, sizeof err) != 0 || model_build(job->point, &m, merr, sizeof merr) != 0) {
        prog->status = EXIT_RUNTIME; /* checked before; cannot happen */
        return false;
    }
    snprintf(label, sizeof label, "%s (%zu/%zu)", job->point->name, p + 1, job->npoints);
    launch_options opt = {.verify = a->verify,
                          .record = !a->no_record,
                          .progress = !a->quiet && job->writer,
                          .label = label,
                          .interrupted = job->interrupted,
                          .self_argv = job->self_argv,
                          .sweep_point = (int)p};
    launch_result res;
    int rc = run_point(job->point, &m, job->be, &job->env, job->coordinated != NULL, job->st, &opt, &res, err,
                       sizeof err);
    model_free(&m);
    if (rc < 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", job->writer ? a->db_path : "rank", err);
        prog->status = EXIT_RUNTIME;
        return false;
    }
    if (job->writer && res.run_id > 0)
        record_provenance(job, p, &res, rc, prog);
    if (job->writer)
        print_outcome(job->st, job->point, &res, !a->no_record, a->json, a->quiet, &a->ranks);
    if (job->writer && a->verify)
        say_verified(job, rc, &res);
    if (prog->complete_runs && res.complete)
        prog->complete_runs[prog->ncomplete++] = res.run_id;
    if (rc == 1) {
        if (job->writer)
            fprintf(stderr, "ddpprof: run %lld failed: %s\n", (long long)res.run_id, res.error);
        prog->status = EXIT_RUNTIME;
    } else {
        prog->done++;
    }
    return true;
}

/* Each point (or, in a rank process ddpprof started, its one), then a sweep's answer. */
static int run_points(run_job *job)
{
    const run_args *a = job->args;
    sweep_progress prog = {.complete_runs = calloc(job->npoints, sizeof(int64_t)), .sweep_first = -1};
    bool one_point = job->coordinated && job->only_point;
    size_t wanted = one_point ? 1 : job->npoints;
    for (size_t p = 0; p < job->npoints && !(job->interrupted && atomic_load(job->interrupted)); p++) {
        if (one_point && (size_t)atoll(job->only_point) != p)
            continue;
        if (!run_one_point(job, p, &prog))
            break;
    }
    /* A sweep's answer: the step of each point and the best. */
    char err[512];
    if (job->writer && !a->no_record && !a->quiet && !a->json && job->npoints > 1 && prog.ncomplete > 1 &&
        report_sweep_summary(job->st, prog.complete_runs, prog.ncomplete, stdout, err, sizeof err) != 0)
        fprintf(stderr, "ddpprof: sweep summary: %s\n", err);
    free(prog.complete_runs);
    /* A signal fails the command when it cut work short: one landing after the last
     * point was recorded complete leaves nothing undone, and the exit status agrees with
     * the database. */
    if (job->interrupted && atomic_load(job->interrupted) && prog.status == EXIT_OK && prog.done < wanted)
        prog.status = EXIT_RUNTIME;
    return prog.status;
}

/* `run` on the scenario in `file`, or (text not NULL) on `text`, which `file` names. */
static int run_command(const char *file, const char *text, const run_args *a, int argc, char **argv,
                       const atomic_int *interrupted)
{
    run_job job = {.args = a, .file = file, .text = text, .interrupted = interrupted};
    job.self_argv = calloc((size_t)argc + 2, sizeof *job.self_argv);
    /* Zeroed: each holds nothing until filled, so that scenario_free() suits every path. */
    job.sc = calloc(1, sizeof *job.sc);
    job.point = calloc(1, sizeof *job.point);
    int status = EXIT_RUNTIME;
    if (job.self_argv && job.sc && job.point) {
        job.self_argv[0] = "ddpprof";
        for (int i = 0; i < argc; i++)
            job.self_argv[i + 1] = argv[i];
        status = prepare(&job);
        if (status == EXIT_OK)
            status = job.sc->equivalence ? run_equivalence(job.sc, job.be, job.st, job.rank_mode, !a->no_record,
                                                           a->quiet, interrupted)
                                         : run_points(&job);
        store_close(job.st);
    }
    free(job.self_argv);
    if (job.sc)
        scenario_free(job.sc);
    if (job.point)
        scenario_free(job.point);
    free(job.sc);
    free(job.point);
    return status;
}

/* `run` on argv's FILE, or (text not NULL) on `text`, named `origin`. */
static int run_parsed(int argc, char **argv, const char *text, const char *origin, const atomic_int *interrupted)
{
    run_args a = {.db_path = "ddpprof.sqlite"};
    cli_parsed parsed;
    int status = cli_options_parse(&cli_run_command, argc, argv, &a, &parsed);
    const char *file = cli_operand(&parsed, 0);
    if (status == EXIT_OK && parsed.operands.n > 1)
        status = cli_usage_error(&cli_run_command, "one scenario file at a time ('%s' and '%s')", file,
                                 cli_operand(&parsed, 1));
    if (status == EXIT_OK && text && file)
        status = cli_usage_error(&cli_run_command, "one scenario at a time ('%s' and '%s')", origin, file);
    if (text)
        file = origin; /* what messages name it by */
    if (status == EXIT_OK && !file)
        status = cli_usage_error(&cli_run_command, "no scenario file given");
    if (status == EXIT_OK)
        status = run_command(file, text, &a, argc, argv, interrupted);
    cli_options_free(&cli_run_command, &a, &parsed);
    run_args_free(&a);
    return cli_parse_exit(status);
}

int cli_run(int argc, char **argv, const atomic_int *interrupted)
{
    return run_parsed(argc, argv, NULL, NULL, interrupted);
}

int cli_run_text(int argc, char **argv, const char *text, const char *origin, const atomic_int *interrupted)
{
    return run_parsed(argc, argv, text, origin, interrupted);
}
