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

static const char *const usage =
    "usage: ddpprof run FILE [-o DB] [-s section.key=value]... [--sweep section.key=a,b,...]...\n"
    "                        [--backend NAME] [--verify] [--no-record] [--spans-ranks LIST]\n"
    "  -o DB            results database (default ddpprof.sqlite; created if missing)\n"
    "  -s KEY=VALUE     override a scenario key, e.g. -s ddp.bucket_cap_mb=50 (repeatable); a key the\n"
    "                   file's [sweep] varies is then not swept (said on stderr)\n"
    "  --sweep KEY=A,B,...  sweep a key from the command line (repeatable; list keys: A1,A2|B1,B2);\n"
    "                   replaces the file's sweep of that key (said on stderr)\n"
    "  --backend NAME   auto, cpu or cuda (default: the scenario's run.backend); cuda fails\n"
    "                   at once where it cannot run (no GPU), auto says what it passed over\n"
    "  --verify         check after every synchronised step that each rank's gradients are\n"
    "                   exactly the average over ranks (slow on large models)\n"
    "  --no-record      run without storing spans (measures the profiler's own cost)\n"
    "  --spans-ranks LIST  above 64 ranks, the ranks whose spans are stored beside the chosen\n"
    "                   ones (slowest, fastest, median, quantiles, rank 0): 0,17,4095; all =\n"
    "                   every rank; every rank's statistics are kept (-s record.spans_ranks=LIST)\n"
    "  --json           print the report as JSON\n"
    "  --ranks all|LIST the report's per-rank tables show every rank, or these (0,5,8-11); default:\n"
    "                   every rank up to 32, above that min, median, p90, max, slowest and fastest\n"
    "  -q, --quiet      no report, no progress bar\n";

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

/* `run` on the scenario in file argv's FILE, or (text not NULL) on `text`, named `origin`. */
static int run_command(int argc, char **argv, const char *text, const char *origin, const atomic_int *interrupted)
{
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    const char *file = NULL, *db_path = "ddpprof.sqlite", *backend = NULL;
    const char **overrides = calloc((size_t)argc, sizeof *overrides);
    const char **sweeps = calloc((size_t)argc, sizeof *sweeps);
    /* The command each rank process runs when ddpprof starts them: this one. */
    char **self_argv = calloc((size_t)argc + 2, sizeof *self_argv);
    int noverrides = 0, nsweeps = 0;
    rank_select sel = {0};
    bool verify = false, record = true, json = false, quiet = false;
    char *spans_override = NULL; /* --spans-ranks as the -s it stands for */
    if (!overrides || !sweeps || !self_argv) {
        free(overrides);
        free(sweeps);
        free(self_argv);
        return EXIT_RUNTIME;
    }
    self_argv[0] = "ddpprof";
    for (int i = 0; i < argc; i++)
        self_argv[i + 1] = argv[i];
    int status = EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "-o") || !strcmp(a, "-s") || !strcmp(a, "--sweep") || !strcmp(a, "--backend") ||
             !strcmp(a, "--ranks") || !strcmp(a, "--spans-ranks")) &&
            i + 1 >= argc) {
            status = cli_usage_error(usage, "%s needs a value", a);
            goto out;
        }
        if (!strcmp(a, "-o"))
            db_path = argv[++i];
        else if (!strcmp(a, "-s"))
            overrides[noverrides++] = argv[++i];
        else if (!strcmp(a, "--sweep"))
            sweeps[nsweeps++] = argv[++i];
        else if (!strcmp(a, "--backend"))
            backend = argv[++i];
        else if (!strcmp(a, "--ranks")) {
            status = cli_parse_ranks(usage, argv[++i], &sel);
            if (status != EXIT_OK)
                goto out;
        } else if (!strcmp(a, "--spans-ranks")) {
            static const char key[] = "record.spans_ranks=";
            free(spans_override);
            spans_override = malloc(sizeof key + strlen(argv[++i]));
            if (!spans_override) {
                status = EXIT_RUNTIME;
                goto out;
            }
            snprintf(spans_override, sizeof key + strlen(argv[i]), "%s%s", key, argv[i]);
            overrides[noverrides++] = spans_override;
        }
        else if (!strcmp(a, "--verify"))
            verify = true;
        else if (!strcmp(a, "--no-record"))
            record = false;
        else if (!strcmp(a, "--json"))
            json = true;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
            quiet = true;
        else if (a[0] == '-' && a[1]) {
            status = cli_usage_error(usage, "unknown option '%s'", a);
            goto out;
        } else if (!file)
            file = a;
        else {
            status = cli_usage_error(usage, "one scenario file at a time ('%s' and '%s')", file, a);
            goto out;
        }
    }
    if (text && file) {
        status = cli_usage_error(usage, "one scenario at a time ('%s' and '%s')", origin, file);
        goto out;
    }
    if (text)
        file = origin; /* what messages name it by */
    if (!file) {
        status = cli_usage_error(usage, "no scenario file given");
        goto out;
    }

    /* Zeroed: each holds nothing until filled, so that scenario_free() suits every path. */
    scenario *sc = calloc(1, sizeof *sc);
    scenario *point = calloc(1, sizeof *point);
    char err[SCENARIO_ERR];
    if (!sc || !point) {
        free(sc);
        free(point);
        status = EXIT_RUNTIME;
        goto out;
    }
    if ((text ? scenario_load_text(text, origin, sc, err, sizeof err) : scenario_load_file(file, sc, err, sizeof err)) !=
        0) {
        fprintf(stderr, "%s\n", err);
        status = EXIT_USAGE;
        goto out_sc;
    }
    /* Said once, by the command the user typed, not again by each rank process. */
    status = cli_scenario_apply(sc, file, (const char *const *)overrides, noverrides, (const char *const *)sweeps,
                                nsweeps, backend, !getenv("DDPPROF_COORDINATOR"));
    if (status != EXIT_OK)
        goto out_sc;
    if (verify && real_training_applies(sc)) {
        fprintf(stderr, "ddpprof: --verify checks the synthetic gradients of compute = model; the mlp with compute "
                        "= real trains on real ones (tests/parity compares them with PyTorch)\n");
        status = EXIT_USAGE;
        goto out_sc;
    }
    char warnings[4096];
    if (scenario_warnings(sc, warnings, sizeof warnings) > 0)
        fputs(warnings, stderr);

    const backend_ops *be = resolve_backend(sc, quiet, &status);
    if (!be)
        goto out_sc;
    if (verify && be->run_ranks) {
        fprintf(stderr, "ddpprof: --verify needs gradients, and the %s backend only models time\n", be->name);
        status = EXIT_USAGE;
        goto out_sc;
    }

    /* Every point is checked before anything is written. */
    size_t npoints = scenario_sweep_count(sc);
    for (size_t p = 0; p < npoints; p++) {
        model m;
        char merr[256];
        if (interrupted && atomic_load(interrupted)) {
            fprintf(stderr, "ddpprof: interrupted while checking the sweep's points; nothing was written\n");
            status = EXIT_RUNTIME;
            goto out_sc;
        }
        if (scenario_sweep_point(sc, p, point, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            status = EXIT_USAGE;
            goto out_sc;
        }
        if (model_build(point, &m, merr, sizeof merr) != 0) {
            fprintf(stderr, "%s: %s\n", file, merr);
            status = EXIT_USAGE;
            goto out_sc;
        }
        if (be->max_world > 0 && point->world_size > be->max_world) {
            char at[320];
            if (scenario_key_where(point, "run.world_size", at, sizeof at) != 0)
                snprintf(at, sizeof at, "%s: ", file);
            fprintf(stderr, "%srun.world_size %d is more than the %s backend runs (at most %d ranks); "
                            "`ddpprof predict` models up to %d%s%s%s\n",
                    at, point->world_size, be->name, be->max_world, SCENARIO_MAX_WORLD,
                    npoints > 1 ? " (sweep point \"" : "", npoints > 1 ? point->name : "", npoints > 1 ? "\")" : "");
            model_free(&m);
            status = EXIT_USAGE;
            goto out_sc;
        }
        /* A backend in virtual time allocates no model memory. */
        int mem_rc = be->run_ranks ? 0 : check_memory(file, point, &m);
        model_free(&m);
        if (mem_rc != 0) {
            status = EXIT_USAGE;
            goto out_sc;
        }
    }

    /* Under a launcher (torchrun, srun, mpirun, or ddpprof's own processes) this process
     * is one rank; rank 0 alone writes the database when it hosts the coordinator. */
    launch_env env;
    char eerr[512];
    if (launch_env_detect(launch_env_getenv, NULL, &env, eerr, sizeof eerr) != 0) {
        fprintf(stderr, "ddpprof: %s\n", eerr);
        status = EXIT_USAGE;
        goto out_sc;
    }
    if (env.kind != LAUNCH_NONE && env.world_size != sc->world_size) {
        fprintf(stderr,
                "ddpprof: %s started %d ranks (%s) but the scenario's run.world_size is %d; make them agree "
                "(-s run.world_size=%d)\n",
                launch_kind_name(env.kind), env.world_size, env.world_var, sc->world_size, env.world_size);
        status = EXIT_USAGE;
        goto out_sc;
    }
    const char *coordinated = getenv("DDPPROF_COORDINATOR"), *only_point = getenv("DDPPROF_SWEEP_POINT");
    bool rank_mode = env.kind != LAUNCH_NONE, writer = !rank_mode || (!coordinated && env.rank == 0);
    store *st = NULL;
    if (writer && store_open(db_path, &st, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        status = EXIT_RUNTIME;
        goto out_sc;
    }
    if (sc->equivalence) {
        status = run_equivalence(sc, be, st, rank_mode, record, quiet, interrupted);
        store_close(st);
        goto out_sc;
    }
    int64_t *point_runs = calloc(npoints, sizeof *point_runs);
    int64_t sweep_first = -1; /* the first run of this sweep */
    size_t nrun_points = 0, points_done = 0, points_wanted = coordinated && only_point ? 1 : npoints;
    for (size_t p = 0; p < npoints && !(interrupted && atomic_load(interrupted)); p++) {
        if (coordinated && only_point && (size_t)atoll(only_point) != p)
            continue;
        model m;
        char merr[256], label[200];
        if (scenario_sweep_point(sc, p, point, err, sizeof err) != 0 || model_build(point, &m, merr, sizeof merr) != 0) {
            status = EXIT_RUNTIME; /* checked above; cannot happen */
            break;
        }
        snprintf(label, sizeof label, "%s (%zu/%zu)", point->name, p + 1, npoints);
        launch_options opt = {.verify = verify,
                              .record = record,
                              .progress = !quiet && writer,
                              .label = label,
                              .interrupted = interrupted,
                              .self_argv = self_argv,
                              .sweep_point = (int)p};
        launch_result res;
        int rc = run_point(point, &m, be, &env, coordinated != NULL, st, &opt, &res, err, sizeof err);
        model_free(&m);
        if (rc < 0) {
            fprintf(stderr, "ddpprof: %s: %s\n", writer ? db_path : "rank", err);
            status = EXIT_RUNTIME;
            break;
        }
        if (writer && res.run_id > 0) {
            /* What was run: the command line's settings, the sweep point, the verdict. */
            if (npoints > 1 && sweep_first < 0)
                sweep_first = res.run_id;
            bool oom;
            char *over = overrides_json((const char *const *)overrides, noverrides, sc, p, &oom);
            int verified = verify ? rc == 0 && res.complete : -1;
            char perr[256];
            if (oom || store_set_run_provenance(st, res.run_id, over, npoints > 1 ? sweep_first : -1, verified, perr,
                                                sizeof perr) != 0) {
                fprintf(stderr, "ddpprof: run %lld: %s\n", (long long)res.run_id, oom ? "out of memory" : perr);
                status = EXIT_RUNTIME;
            }
            free(over);
        }
        if (writer)
            print_outcome(st, point, &res, record, json, quiet, &sel);
        if (writer && verify)
            fprintf(json || quiet ? stderr : stdout, "%s\n",
                    rc == 0 && res.complete
                        ? "verify: every synchronised step checked: each rank's gradients were exactly the average"
                          " over ranks"
                        : "verify: not every synchronised step was checked and exact (the run did not complete)");
        if (point_runs && res.complete)
            point_runs[nrun_points++] = res.run_id;
        if (rc == 1) {
            if (writer)
                fprintf(stderr, "ddpprof: run %lld failed: %s\n", (long long)res.run_id, res.error);
            status = EXIT_RUNTIME;
        } else {
            points_done++;
        }
    }
    /* A sweep's answer: the step of each point and the best. */
    if (writer && record && !quiet && !json && npoints > 1 && nrun_points > 1 &&
        report_sweep_summary(st, point_runs, nrun_points, stdout, err, sizeof err) != 0)
        fprintf(stderr, "ddpprof: sweep summary: %s\n", err);
    free(point_runs);
    /* A signal fails the command when it cut work short: one landing after the last
     * point was recorded complete leaves nothing undone, and the exit status agrees with
     * the database. */
    if (interrupted && atomic_load(interrupted) && status == EXIT_OK && points_done < points_wanted)
        status = EXIT_RUNTIME;
    store_close(st);
out_sc:
    scenario_free(sc);
    scenario_free(point);
    free(sc);
    free(point);
out:
    rank_select_free(&sel);
    free(overrides);
    free(sweeps);
    free(self_argv);
    free(spans_override);
    return status;
}

int cli_run(int argc, char **argv, const atomic_int *interrupted)
{
    return run_command(argc, argv, NULL, NULL, interrupted);
}

int cli_run_text(int argc, char **argv, const char *text, const char *origin, const atomic_int *interrupted)
{
    return run_command(argc, argv, text, origin, interrupted);
}
