/* test_import_nsys.c — `ddpprof import` of Nsight Systems SQLite exports: files the test
 * builds to nsys's schema (tests/import/kineto_gen.py --format nsys: kernels named through
 * StringIds, memcpy and memset, runtime launches by correlationId, PyTorch's NVTX ranges,
 * the session's start on the wall clock), one per rank and one holding every rank's
 * process; and a real `nsys profile` + `nsys export --type sqlite` of a ddpprof run, whose
 * import must agree with ddpprof's own record of that run.  The real export is skipped
 * when Nsight Systems cannot be had (scripts/install-nsys.sh is tried first, as
 * test_nsys does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static void gen(const char *dir, const char *format, const char *world)
{
    char out[300];
    scratch_path(out, sizeof out, dir);
    cmd_result r;
    assert_int_equal(python_cmd(&r, "kineto_gen.py", "--out", out, "--format", format, "--world", world,
                                "--slow-rank", "1", NULL),
                     0);
    if (r.status != 0)
        fail_msg("kineto_gen.py: %s", r.err);
}

static void check_hta(const char *db, const char *dir)
{
    char p[400], rel[128];
    snprintf(rel, sizeof rel, "%.100s/expected.txt", dir);
    scratch_path(p, sizeof p, rel);
    json_error_t e;
    json_t *exp = json_load_file(p, 0, &e);
    assert_non_null(exp);
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(exp, "ranks"), key, v)
    {
        char sql[300];
        snprintf(sql, sizeof sql, "SELECT round(100.0 * comm_overlap_us / comm_us, 2) FROM hta_stat WHERE rank = %s",
                 key);
        double got = db_double(db, sql), want = json_number_value(json_object_get(v, "comm_overlap_pct"));
        if (fabs(got - want) > 0.005)
            fail_msg("rank %s comm_overlap_pct %.2f, want %.2f", key, got, want);
        snprintf(sql, sizeof sql, "SELECT round(100.0 * idle_us / kernel_us, 2) FROM hta_stat WHERE rank = %s", key);
        got = db_double(db, sql);
        want = json_number_value(json_object_get(v, "idle_pct"));
        if (fabs(got - want) > 0.005)
            fail_msg("rank %s idle_pct %.2f, want %.2f", key, got, want);
    }
    json_decref(exp);
}

static void test_export_per_rank(void **state)
{
    (void)state;
    gen("ranks", "nsys", "2");
    char in[300], db[300];
    scratch_path(in, sizeof in, "ranks");
    scratch_path(db, sizeof db, "a.sqlite");
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "import", in, "-o", db, NULL), 0);
    if (r.status != 0)
        fail_msg("import: %s", r.err);
    char text[200];
    db_text(db, "SELECT backend || ' ' || world_size || ' ' || iterations FROM run", text, sizeof text);
    assert_string_equal(text, "nsys 2 4");
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM source_file WHERE format = 'nsys-sqlite'"
                                " AND rank_from = 'file name'"),
                     2);
    /* Names through StringIds; the NCCL kernel's collective from its name alone. */
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM span WHERE kind = 'allreduce' AND name LIKE 'ncclKernel_AllReduce%'"),
                     2 * 4 * 2);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM span WHERE kind = 'copy_out' AND name LIKE 'Memcpy DtoD%'"),
                     2 * 4 * 2);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM span WHERE name = 'Memset (Device)'"), 2 * 4);
    /* PyTorch's ranges, their ", seq = N" cut: DDP's phases and buckets as from a Kineto trace. */
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM span WHERE name = 'DistributedDataParallel.forward'"), 2 * 4);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM bucket WHERE version = 0 AND nparams = 4"), 2);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM collective WHERE kind = 'allreduce' AND nranks = 2"), 4 * 2);
    assert_true(db_int(db, "SELECT time_base_unix_ns FROM run") > 1711964646000000000LL);
    check_hta(db, "ranks");
}

static void test_one_export_of_all_ranks(void **state)
{
    (void)state;
    gen("one", "nsys-one", "3");
    char in[300], db[300];
    scratch_path(in, sizeof in, "one/job.sqlite");
    scratch_path(db, sizeof db, "b.sqlite");
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "import", in, "-o", db, NULL), 0);
    if (r.status != 0)
        fail_msg("import: %s", r.err);
    assert_int_equal(db_int(db, "SELECT world_size FROM run"), 3);
    /* one file, three processes: the file holds no one rank */
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM source_file WHERE rank IS NULL"), 1);
    assert_int_equal(db_int(db, "SELECT COUNT(DISTINCT rank) FROM span"), 3);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM collective WHERE kind = 'allreduce' AND nranks = 3"), 4 * 2);
    check_hta(db, "one");
}

/* nsys on PATH, or after scripts/install-nsys.sh; NULL when it cannot be had. */
static const char *find_nsys(char *buf, size_t n)
{
    const char *cands[] = {"/usr/bin/nsys", "/usr/local/bin/nsys", "/opt/nvidia/nsight-systems/bin/nsys"};
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
            if (access(cands[i], X_OK) == 0) {
                snprintf(buf, n, "%s", cands[i]);
                return buf;
            }
        if (pass == 0) {
            char script[400];
            repo_path(script, sizeof script, "scripts/install-nsys.sh");
            const char *argv[] = {"/bin/sh", script, NULL};
            cmd_result r;
            if (run_cmd(&r, argv) < 0)
                return NULL;
        }
    }
    return NULL;
}

static void test_real_export_of_a_ddpprof_run(void **state)
{
    (void)state;
    char nsys[300];
    if (!find_nsys(nsys, sizeof nsys)) {
        fprintf(stderr, "skipped: no Nsight Systems here\n");
        skip();
    }
    char scenario[400], base[300], rep[300], qd[300], exported[300], rundb[300], db[300];
    repo_path(scenario, sizeof scenario, "scenarios/nvtx_small.ini");
    scratch_path(base, sizeof base, "trace");
    scratch_path(rep, sizeof rep, "trace.nsys-rep");
    scratch_path(qd, sizeof qd, "trace.qdstrm");
    scratch_path(exported, sizeof exported, "trace.sqlite");
    scratch_path(rundb, sizeof rundb, "run.sqlite");
    scratch_path(db, sizeof db, "imported.sqlite");
    const char *profile[] = {nsys, "profile", "-t", "nvtx", "-s", "none", "--cpuctxsw", "none", "-o", base,
                             "--force-overwrite", "true", getenv("DDPPROF"), "run", scenario, "-o", rundb, "-q", NULL};
    cmd_result r;
    assert_int_equal(run_cmd(&r, profile), 0);
    if (access(rep, F_OK) != 0 && access(qd, F_OK) == 0) {
        /* Some installs leave the raw stream for the importer to turn into a report. */
        glob_t g;
        if (glob("/usr/lib/nsight-systems*/host-linux-x64/QdstrmImporter", 0, NULL, &g) == 0 && g.gl_pathc > 0) {
            const char *imp[] = {g.gl_pathv[g.gl_pathc - 1], "-i", qd, NULL};
            assert_int_equal(run_cmd(&r, imp), 0);
        }
        globfree(&g);
    }
    if (access(rep, F_OK) != 0)
        fail_msg("nsys profile wrote no report: %s", r.err);
    const char *exp[] = {nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o", exported, rep, NULL};
    assert_int_equal(run_cmd(&r, exp), 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(ddpprof_cmd(&r, "import", exported, "-o", db, NULL), 0);
    if (r.status != 0)
        fail_msg("import of the nsys export: %s", r.err);
    /* The ranks are ddpprof's ranges' own; iterations from its forward phases. */
    assert_int_equal(db_int(db, "SELECT world_size FROM run"), 2);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM span WHERE rank = 0 AND kind = 'allreduce'"),
                     db_int(rundb, "SELECT COUNT(*) FROM span WHERE rank = 0 AND kind = 'allreduce'"));
    assert_int_equal(db_int(db, "SELECT COUNT(DISTINCT iter) FROM span"),
                     db_int(rundb, "SELECT COUNT(DISTINCT iter) FROM span"));
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM bucket WHERE version = 1"),
                     db_int(rundb, "SELECT COUNT(*) FROM bucket WHERE version = 1"));
    /* The same steps, as ddpprof timed them: an imported step is the job's
     * period (one iteration's first forward to the next's; the last, to its last op), so the
     * recorded run's are taken alike. */
    double a = db_double(db, "SELECT MAX(s) FROM (SELECT MAX(step_ns) AS s FROM iteration_stat GROUP BY iter)");
    double b = db_double(rundb, "SELECT MAX(s) FROM (SELECT MAX(COALESCE((SELECT n.step_start_ns FROM iteration_stat n"
                                " WHERE n.run_id = i.run_id AND n.rank = i.rank AND n.iter = i.iter + 1),"
                                " i.step_end_ns) - i.step_start_ns) AS s FROM iteration_stat i GROUP BY iter)");
    /* 0.05 ms, or 0.5 % of a step slowed by a sanitizer: where a phase's range starts
     * before its first op differs a little from one iteration to the next. */
    if (fabs(a - b) > fmax(50e3, 0.005 * b))
        fail_msg("slowest step: %.0f ns imported, %.0f ns recorded", a, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_export_per_rank, scratch_group_setup, scratch_group_teardown),
        cmocka_unit_test_setup_teardown(test_one_export_of_all_ranks, scratch_group_setup, scratch_group_teardown),
        cmocka_unit_test_setup_teardown(test_real_export_of_a_ddpprof_run, scratch_group_setup, scratch_group_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
