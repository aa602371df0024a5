/* cli_whatif.c — `ddpprof whatif DB --run N [-s key=value]... [--sweep key=a,b,...]...
 * [--model NAME] [--scenario-out FILE] [-q]`: derives a scenario from run N, recorded or
 * imported (engine/predict/whatif.h), predicts it with the overrides into the same
 * database (the sim backend, as `predict` does), and prints the source beside each
 * prediction (`compare`'s table).
 *
 * Contract: exit 0 when every prediction ran; 2 for bad usage, a missing database or
 * run, a run whatif cannot derive from (said why) or a bad override; 1 for a database
 * that cannot be read or a prediction that failed.  Without overrides the prediction
 * replays the source.  --scenario-out keeps the derived scenario (before the
 * overrides) as an INI file a user can edit and run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/predict/whatif.h"
#include "profiler/store.h"
#include "profiler/store_read_run.h"
#include "reports/compare.h"
#include "reports/run_config.h"
#include "src/cli.h"

static const char *const usage =
    "usage: ddpprof whatif DB --run N [-s section.key=value]... [--sweep section.key=a,b,...]...\n"
    "                      [--model NAME] [--scenario-out FILE] [-q] [--ranks all|LIST] [--spans-ranks LIST]\n"
    "  derives a scenario from run N (recorded or imported): its measured compute between the\n"
    "  gradient-ready points, each rank's speed, DDP's buckets, each bucket size's allreduce\n"
    "  time from the last arrival; predicts it with the overrides into DB and prints the run\n"
    "  beside each prediction (without overrides: the replay of the run)\n"
    "  -s KEY=VALUE     change a key, e.g. -s ddp.bucket_cap_mb=100, -s run.world_size=64\n"
    "  --sweep KEY=A,B  one prediction per value (repeatable)\n"
    "  --model NAME     the zoo preset whose parameters the run's buckets hold (default: found)\n"
    "  --scenario-out FILE  write the derived scenario (before -s and --sweep) to FILE\n"
    "  --spans-ranks LIST  the predictions' ranks whose spans are stored above 64 ranks, as\n"
    "                   predict's (every rank's statistics are kept)\n"
    "  -q               the derivation's notes and the comparisons' step line only\n"
    "  --ranks all|LIST the comparisons' per-rank rows: every rank, or these (0,5,8-11); default:\n"
    "                   every rank up to 32, above that min, median, p90, max, slowest and fastest\n";

/* What print_comparison needs of each prediction. */
typedef struct {
    store *st;
    const char *db_path;
    long long source;
    bool quiet;
    const rank_select *sel;
} comparison;

/* The source beside prediction `id`, in full or (quiet) the job step line: 0, or
 * EXIT_RUNTIME with the reason said, which ends the listing. */
static int print_comparison(int64_t id, const char *overrides, void *ctx)
{
    const comparison *c = ctx;
    char err[512];
    /* Each prediction says what it changed: its -s settings and sweep point. */
    char point[256];
    run_config_point_text(overrides, point, sizeof point);
    printf("\n== run %lld (source) beside run %lld (prediction)%s%s\n", c->source, (long long)id, point[0] ? ": " : "",
           point);
    if (!c->quiet) {
        if (compare_write_ranks(c->st, c->source, id, REPORT_TEXT, c->sel, stdout, err, sizeof err) == 0)
            return EXIT_OK;
        fprintf(stderr, "ddpprof: %s: %s\n", c->db_path, err);
        return EXIT_RUNTIME;
    }
    analysis_run *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    int rc = EXIT_OK;
    if (analysis_load(c->st, c->source, &a, &na, err, sizeof err) != 0 ||
        analysis_load(c->st, id, &b, &nb, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", c->db_path, err);
        rc = EXIT_RUNTIME;
    } else {
        printf("step ms  %.3f  %.3f  %+.1f %%;  overlap %%  %.1f  %.1f\n", a->step_ms_mean, b->step_ms_mean,
               compare_rel_pct(a->step_ms_mean, b->step_ms_mean), analysis_mean_overlap_pct(a),
               analysis_mean_overlap_pct(b));
    }
    if (a)
        analysis_free(a, na);
    if (b)
        analysis_free(b, nb);
    return rc;
}

/* The source beside each prediction made (runs from first_new on). */
static int print_comparisons(const char *db_path, long long source, int64_t first_new, bool quiet,
                             const rank_select *sel)
{
    store *st = NULL;
    int rc = cli_open_db_readonly(db_path, &st);
    if (rc != EXIT_OK)
        return rc;
    comparison c = {st, db_path, source, quiet, sel};
    char err[512];
    rc = store_each_run_from(st, first_new, print_comparison, &c, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        rc = EXIT_RUNTIME;
    }
    store_close(st);
    return rc;
}

/* Above this many ranks a prediction records spans per phase, not per op, unless the
 * user says record.detail: tens of thousands of ranks' op spans would cost twice the
 * memory and time for figures nobody reads per op. */
#define WHATIF_PHASE_DETAIL_RANKS 4096

/* Whether -s or --sweep asks for more than WHATIF_PHASE_DETAIL_RANKS ranks without
 * setting record.detail. */
static bool needs_phase_detail(const char **overrides, int noverrides, const char **sweeps, int nsweeps)
{
    bool many = false;
    for (int k = 0; k < noverrides + nsweeps; k++) {
        const char *kv = k < noverrides ? overrides[k] : sweeps[k - noverrides];
        if (!strncmp(kv, "record.detail=", 14))
            return false;
        if (strncmp(kv, "run.world_size=", 15) != 0)
            continue;
        const char *v = kv + 15; /* one value, or a sweep's list */
        while (*v) {
            char *end;
            long n = strtol(v, &end, 10);
            if (end == v)
                break; /* not a number: the scenario's check says so */
            many |= n > WHATIF_PHASE_DETAIL_RANKS;
            if (*end != ',')
                break;
            v = end + 1;
        }
    }
    return many;
}

int cli_whatif(int argc, char **argv, const atomic_int *interrupted)
{
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    const char *db_path = NULL, *scenario_out = NULL, *model = NULL;
    long long run_id = -1;
    bool quiet = false;
    /* The prediction's command line: run FILE -o DB --backend sim -q, then -s and --sweep. */
    char **run_argv = calloc((size_t)argc + 8, sizeof *run_argv);
    /* The same -s and --sweep apart, to check them before anything is printed. */
    const char **overrides = calloc((size_t)argc, sizeof *overrides), **sweeps = calloc((size_t)argc, sizeof *sweeps);
    int nrun = 0, noverrides = 0, nsweeps = 0;
    rank_select sel = {0};
    if (!run_argv || !overrides || !sweeps) {
        free(run_argv);
        free(overrides);
        free(sweeps);
        return EXIT_RUNTIME;
    }
    int status = EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool valued = !strcmp(a, "--run") || !strcmp(a, "-s") || !strcmp(a, "--sweep") || !strcmp(a, "--model") ||
                      !strcmp(a, "--scenario-out") || !strcmp(a, "--ranks") || !strcmp(a, "--spans-ranks");
        if (valued && i + 1 >= argc) {
            status = cli_usage_error(usage, "%s needs a value", a);
            goto out;
        }
        if (!strcmp(a, "--run")) {
            status = cli_parse_run_id(usage, argv[++i], &run_id);
            if (status != EXIT_OK)
                goto out;
        } else if (!strcmp(a, "-s") || !strcmp(a, "--sweep") || !strcmp(a, "--spans-ranks")) {
            if (!strcmp(a, "-s"))
                overrides[noverrides++] = argv[i + 1];
            else if (!strcmp(a, "--sweep"))
                sweeps[nsweeps++] = argv[i + 1];
            run_argv[nrun++] = argv[i];
            run_argv[nrun++] = argv[++i];
        } else if (!strcmp(a, "--model")) {
            model = argv[++i];
        } else if (!strcmp(a, "--ranks")) {
            status = cli_parse_ranks(usage, argv[++i], &sel);
            if (status != EXIT_OK)
                goto out;
        } else if (!strcmp(a, "--scenario-out")) {
            scenario_out = argv[++i];
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (a[0] == '-' && a[1]) {
            status = cli_usage_error(usage, "unknown option '%s'", a);
            goto out;
        } else if (!db_path) {
            db_path = a;
        } else {
            status = cli_usage_error(usage, "one database at a time");
            goto out;
        }
    }
    if (!db_path || run_id < 0) {
        status = cli_usage_error(usage, !db_path ? "no database given" : "--run N: which run to derive from");
        goto out;
    }

    store *st = NULL;
    status = cli_open_db_readonly(db_path, &st);
    if (status != EXIT_OK)
        goto out;
    status = cli_check_run_exists(st, db_path, run_id);
    whatif_derived d = {0};
    char err[512];
    if (status == EXIT_OK) {
        whatif_options o = {.model = model};
        if (whatif_derive(st, run_id, &o, &d, err, sizeof err) != 0) {
            fprintf(stderr, "ddpprof: whatif: %s: %s\n", db_path, err);
            status = EXIT_USAGE;
        }
    }
    if (status == EXIT_OK) {
        /* The overrides are checked on a copy before anything is printed: a typo'd key is
         * the only thing said.  The prediction applies them again, and says what they
         * replace. */
        scenario *checked = malloc(sizeof *checked);
        if (!checked || scenario_copy(checked, d.sc, NULL, 0) != 0) {
            free(checked);
            status = EXIT_RUNTIME;
        } else {
            status = cli_scenario_apply(checked, db_path, overrides, noverrides, sweeps, nsweeps, "sim", false);
            scenario_free(checked);
            free(checked);
        }
    }
    bool phase_detail = status == EXIT_OK && needs_phase_detail(overrides, noverrides, sweeps, nsweeps);
    if (phase_detail) {
        run_argv[nrun++] = "-s";
        run_argv[nrun++] = "record.detail=phase";
    }
    store_run_ids ids = {0};
    if (status == EXIT_OK && store_read_run_ids(st, &ids, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: whatif: %s: %s\n", db_path, err);
        status = EXIT_RUNTIME;
    }
    int64_t first_new = ids.max_id + 1;
    store_close(st);
    if (status != EXIT_OK) {
        whatif_free(&d);
        goto out;
    }
    /* Without message sizes a bucket is its time's equivalent bytes: a change that moves
     * parameters between buckets would be a guess, and is refused before anything runs. */
    for (int i = 0; d.sizes_unknown && i + 1 < nrun; i += 2) {
        const char *kv = run_argv[i + 1];
        if (!strncmp(kv, "ddp.bucket_cap_mb", 17) || !strncmp(kv, "ddp.first_bucket_mb", 19)) {
            fprintf(stderr,
                    "ddpprof: whatif: %s: run %lld: %s %s: the trace gives no message sizes, so its buckets cannot be"
                    " re-formed (world size, skew and speed can change; profile with record_shapes=True for the"
                    " sizes)\n",
                    db_path, run_id, run_argv[i], kv);
            whatif_free(&d);
            status = EXIT_USAGE;
            goto out;
        }
    }
    printf("whatif: run %lld derived\n%s", run_id, d.notes);
    if (phase_detail)
        printf("whatif: above %d ranks the predictions record spans per phase (-s record.detail=op keeps every op)\n",
               WHATIF_PHASE_DETAIL_RANKS);

    /* The prediction runs the derived scenario as its INI text reads back, the same
     * scenario --scenario-out's file gives `ddpprof run`. */
    char *ini = scenario_to_ini(d.sc);
    whatif_free(&d);
    if (!ini) {
        fprintf(stderr, "ddpprof: out of memory writing the derived scenario\n");
        status = EXIT_RUNTIME;
        goto out;
    }
    if (scenario_out) {
        status = cli_write_text(scenario_out, ini) == 0 ? EXIT_OK : EXIT_RUNTIME;
        if (status == EXIT_OK)
            printf("whatif: the derived scenario is in %s\n", scenario_out);
    }
    if (status == EXIT_OK) {
        /* The prediction: `run -o DB --backend sim -q` with the user's -s and --sweep. */
        char origin[64];
        snprintf(origin, sizeof origin, "whatif of run %lld", run_id);
        char **args = calloc((size_t)nrun + 8, sizeof *args);
        if (!args) {
            status = EXIT_RUNTIME;
        } else {
            int n = 0;
            args[n++] = "run";
            args[n++] = "-o";
            args[n++] = (char *)db_path;
            args[n++] = "--backend";
            args[n++] = "sim";
            args[n++] = "-q";
            for (int i = 0; i < nrun; i++)
                args[n++] = run_argv[i];
            status = cli_run_text(n, args, ini, scenario_out ? scenario_out : origin, interrupted);
            free(args);
        }
    }
    free(ini);
    if (status == EXIT_OK)
        status = print_comparisons(db_path, run_id, first_new, quiet, &sel);
out:
    rank_select_free(&sel);
    free(run_argv);
    free(overrides);
    free(sweeps);
    return status;
}
