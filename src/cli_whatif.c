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

typedef struct {
    long long run_id; /* -1: not given */
    const char *model, *scenario_out;
    bool quiet;
    rank_select ranks;
    /* -s and --sweep apart, to check them before anything is printed. */
    cli_strings overrides, sweeps;
    /* -s, --sweep and --spans-ranks as given, in order: the prediction's command line. */
    cli_strings prediction_args;
} whatif_args;

static int take_run(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    return cli_parse_run_id(cmd, value, &((whatif_args *)args)->run_id);
}

static int take_ranks(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    return cli_parse_ranks(cmd, value, &((whatif_args *)args)->ranks);
}

/* `flag value` onto the prediction's command line (and onto `also`, when given). */
static int pass_on(whatif_args *a, const char *flag, const char *value, cli_strings *also)
{
    if (cli_strings_add(&a->prediction_args, flag) && cli_strings_add(&a->prediction_args, value) &&
        (!also || cli_strings_add(also, value)))
        return EXIT_OK;
    fprintf(stderr, "ddpprof: out of memory\n");
    return EXIT_RUNTIME;
}

static int take_override(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)cmd;
    (void)opt;
    return pass_on(args, "-s", value, &((whatif_args *)args)->overrides);
}

static int take_sweep(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)cmd;
    (void)opt;
    return pass_on(args, "--sweep", value, &((whatif_args *)args)->sweeps);
}

static int take_spans_ranks(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)cmd;
    (void)opt;
    return pass_on(args, "--spans-ranks", value, NULL);
}

static const cli_option whatif_option_table[] = {
    {CLI_CALLBACK(0, "run", "N", take_run, "the run to derive from, recorded or imported"), .flags = CLI_OPT_OPERAND},
    {CLI_CALLBACK('s', NULL, "section.key=value", take_override,
                  "change a key, e.g. -s ddp.bucket_cap_mb=100, -s run.world_size=64"),
     .flags = CLI_OPT_REPEATABLE},
    {CLI_CALLBACK(0, "sweep", "section.key=a,b,...", take_sweep, "one prediction per value (repeatable)"),
     .flags = CLI_OPT_REPEATABLE},
    {CLI_STRING(0, "model", whatif_args, model, "NAME",
                "the zoo preset whose parameters the run's buckets hold (default: found)")},
    {CLI_STRING(0, "scenario-out", whatif_args, scenario_out, "FILE",
                "write the derived scenario (before -s and --sweep) to FILE")},
    {CLI_FLAG('q', "quiet", whatif_args, quiet, "the derivation's notes and the comparisons' step line only")},
    {CLI_CALLBACK(0, "ranks", "all|LIST", take_ranks,
                  "the comparisons' per-rank rows: every rank, or these (0,5,8-11); default:\n"
                  "every rank up to 32, above that min, median, p90, max, slowest and fastest")},
    {CLI_CALLBACK(0, "spans-ranks", "LIST", take_spans_ranks,
                  "the predictions' ranks whose spans are stored above 64 ranks, as\n"
                  "predict's (every rank's statistics are kept)")},
    {CLI_OPT_END},
};

const cli_command cli_whatif_command = {
    .name = "whatif",
    .forms = {{"DB --run N", "a run, recorded or imported, replayed and re-modelled with the changes"}},
    .description = "  derives a scenario from run N (recorded or imported): its measured compute between the\n"
                   "  gradient-ready points, each rank's speed, DDP's buckets, each bucket size's allreduce\n"
                   "  time from the last arrival; predicts it with the overrides into DB and prints the run\n"
                   "  beside each prediction (without overrides: the replay of the run)\n",
    .options = whatif_option_table,
};

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

/* The run derived from, checked: its scenario in *d (the caller frees it), the overrides
 * tried on a copy, and the first run id the predictions will take. */
static int derive_checked(const char *db_path, whatif_args *a, whatif_derived *d, int64_t *first_new,
                          bool *phase_detail)
{
    store *st = NULL;
    int status = cli_open_db_readonly(db_path, &st);
    if (status != EXIT_OK)
        return status;
    status = cli_check_run_exists(st, db_path, a->run_id);
    char err[512];
    if (status == EXIT_OK) {
        whatif_options o = {.model = a->model};
        if (whatif_derive(st, a->run_id, &o, d, err, sizeof err) != 0) {
            fprintf(stderr, "ddpprof: whatif: %s: %s\n", db_path, err);
            status = EXIT_USAGE;
        }
    }
    if (status == EXIT_OK) {
        /* The overrides are checked on a copy before anything is printed: a typo'd key is
         * the only thing said.  The prediction applies them again, and says what they
         * replace. */
        scenario *checked = malloc(sizeof *checked);
        if (!checked || scenario_copy(checked, d->sc, NULL, 0) != 0) {
            free(checked);
            status = EXIT_RUNTIME;
        } else {
            status = cli_scenario_apply(checked, db_path, a->overrides.items, a->overrides.n, a->sweeps.items,
                                        a->sweeps.n, "sim", false);
            scenario_free(checked);
            free(checked);
        }
    }
    *phase_detail = status == EXIT_OK &&
                    needs_phase_detail(a->overrides.items, a->overrides.n, a->sweeps.items, a->sweeps.n);
    if (*phase_detail && pass_on(a, "-s", "record.detail=phase", NULL) != EXIT_OK)
        status = EXIT_RUNTIME;
    store_run_ids ids = {0};
    if (status == EXIT_OK && store_read_run_ids(st, &ids, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: whatif: %s: %s\n", db_path, err);
        status = EXIT_RUNTIME;
    }
    *first_new = ids.max_id + 1;
    store_close(st);
    return status;
}

/* Without message sizes a bucket is its time's equivalent bytes: a change that moves
 * parameters between buckets would be a guess, and is refused before anything runs. */
static int refuse_rebucketing(const whatif_derived *d, const whatif_args *a, const char *db_path)
{
    const cli_strings *run_argv = &a->prediction_args;
    for (int i = 0; d->sizes_unknown && i + 1 < run_argv->n; i += 2) {
        const char *kv = run_argv->items[i + 1];
        if (!strncmp(kv, "ddp.bucket_cap_mb", 17) || !strncmp(kv, "ddp.first_bucket_mb", 19)) {
            fprintf(stderr,
                    "ddpprof: whatif: %s: run %lld: %s %s: the trace gives no message sizes, so its buckets cannot be"
                    " re-formed (world size, skew and speed can change; profile with record_shapes=True for the"
                    " sizes)\n",
                    db_path, a->run_id, run_argv->items[i], kv);
            return EXIT_USAGE;
        }
    }
    return EXIT_OK;
}

/* The prediction: `run -o DB --backend sim -q` with the user's -s and --sweep, on the
 * derived scenario's text, which `origin` names. */
static int predict(const char *ini, const char *origin, const char *db_path, const whatif_args *a,
                   const atomic_int *interrupted)
{
    const cli_strings *run_argv = &a->prediction_args;
    char **args = calloc((size_t)run_argv->n + 8, sizeof *args);
    if (!args)
        return EXIT_RUNTIME;
    int n = 0;
    args[n++] = "run";
    args[n++] = "-o";
    args[n++] = (char *)db_path;
    args[n++] = "--backend";
    args[n++] = "sim";
    args[n++] = "-q";
    for (int i = 0; i < run_argv->n; i++)
        args[n++] = (char *)run_argv->items[i];
    int status = cli_run_text(n, args, ini, origin, interrupted);
    free(args);
    return status;
}

/* The prediction runs the derived scenario as its INI text reads back, the same scenario
 * --scenario-out's file gives `ddpprof run` (written there when asked). */
static int write_and_predict(const whatif_derived *d, const char *db_path, const whatif_args *a,
                             const atomic_int *interrupted)
{
    char *ini = scenario_to_ini(d->sc);
    if (!ini) {
        fprintf(stderr, "ddpprof: out of memory writing the derived scenario\n");
        return EXIT_RUNTIME;
    }
    int status = EXIT_OK;
    if (a->scenario_out) {
        status = cli_write_text(a->scenario_out, ini) == 0 ? EXIT_OK : EXIT_RUNTIME;
        if (status == EXIT_OK)
            printf("whatif: the derived scenario is in %s\n", a->scenario_out);
    }
    char origin[64];
    snprintf(origin, sizeof origin, "whatif of run %lld", a->run_id);
    if (status == EXIT_OK)
        status = predict(ini, a->scenario_out ? a->scenario_out : origin, db_path, a, interrupted);
    free(ini);
    return status;
}

static int whatif_command(const char *db_path, whatif_args *a, const atomic_int *interrupted)
{
    whatif_derived d = {0};
    int64_t first_new;
    bool phase_detail;
    int status = derive_checked(db_path, a, &d, &first_new, &phase_detail);
    if (status == EXIT_OK)
        status = refuse_rebucketing(&d, a, db_path);
    if (status != EXIT_OK) {
        whatif_free(&d);
        return status;
    }
    printf("whatif: run %lld derived\n%s", a->run_id, d.notes);
    if (phase_detail)
        printf("whatif: above %d ranks the predictions record spans per phase (-s record.detail=op keeps every op)\n",
               WHATIF_PHASE_DETAIL_RANKS);
    status = write_and_predict(&d, db_path, a, interrupted);
    whatif_free(&d);
    if (status == EXIT_OK)
        status = print_comparisons(db_path, a->run_id, first_new, a->quiet, &a->ranks);
    return status;
}

int cli_whatif(int argc, char **argv, const atomic_int *interrupted)
{
    whatif_args a = {.run_id = -1};
    cli_parsed parsed;
    int status = cli_options_parse(&cli_whatif_command, argc, argv, &a, &parsed);
    const char *db_path = NULL;
    if (status == EXIT_OK)
        status = cli_database_operand(&cli_whatif_command, &parsed, &db_path);
    if (status == EXIT_OK && a.run_id < 0)
        status = cli_usage_error(&cli_whatif_command, "--run N: which run to derive from");
    if (status == EXIT_OK)
        status = whatif_command(db_path, &a, interrupted);
    cli_options_free(&cli_whatif_command, &a, &parsed);
    cli_strings_free(&a.overrides);
    cli_strings_free(&a.sweeps);
    cli_strings_free(&a.prediction_args);
    rank_select_free(&a.ranks);
    return cli_parse_exit(status);
}
