/* test_import.c — `ddpprof import` of Kineto-format GPU traces that the test writes
 * (tests/import/kineto_gen.py: a simulated DDP job written to the format PyTorch's
 * profiler writes): both NCCL kernel naming schemes and a lower-case one, both time
 * bases (float µs after baseTimeNanoseconds; 2022's integer µs since the epoch),
 * missing metadata (ranks from file names), missing collective arguments, orphan
 * kernels, gzip.  Checks the run against what the generator knows: ranks, iterations,
 * source files with size and SHA-256, DDP's buckets (bytes, parameters, launch order),
 * collectives matched across ranks with the fast ranks' wait for the slow one, spans on
 * their device streams, HTA's figures as HTA computes them, and that report (text,
 * JSON, HTML), export and compare work on the imported run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* Writes a job into tmp/<dir> with kineto_gen.py and the extra arguments (NULL-ended). */
static void gen(const char *dir, ...)
{
    char out[512], script[512];
    scratch_path(out, sizeof out, dir);
    repo_path(script, sizeof script, "tests/import/kineto_gen.py");
    const char *argv[40] = {"/usr/bin/python3", script, "--out", out};
    int n = 4;
    va_list ap;
    va_start(ap, dir);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && n < 39)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    cmd_result r;
    assert_int_equal(run_cmd(&r, argv), 0);
    if (r.status != 0)
        fail_msg("kineto_gen.py: %s", r.err);
}

static json_t *expected(const char *dir)
{
    char p[512], rel[300];
    snprintf(rel, sizeof rel, "%.200s/expected.txt", dir);
    scratch_path(p, sizeof p, rel);
    json_error_t e;
    json_t *j = json_load_file(p, 0, &e);
    if (!j)
        fail_msg("%s: %s", p, e.text);
    return j;
}

static void import_ok(const char *db, const char *what, const char *extra)
{
    char in[512];
    scratch_path(in, sizeof in, what);
    cmd_result r;
    assert_int_equal(extra ? ddpprof_cmd(&r, "import", in, "-o", db, extra, NULL)
                           : ddpprof_cmd(&r, "import", in, "-o", db, NULL),
                     0);
    if (r.status != 0)
        fail_msg("import %s: exit %d: %s", in, r.status, r.err);
    assert_non_null(strstr(r.out, "run 1: imported"));
}

static int64_t q(const char *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int64_t q(const char *db, const char *fmt, ...)
{
    char sql[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    int64_t v = db_int(db, sql);
    assert_true(v != INT64_MIN);
    return v;
}

/* HTA's four figures for every rank, as the generator computed them with HTA's
 * algorithms on the trace as written. */
static void check_hta(const char *db, json_t *exp)
{
    json_t *ranks = json_object_get(exp, "ranks");
    const char *key;
    json_t *v;
    json_object_foreach(ranks, key, v)
    {
        int rank = atoi(key);
        char sql[512];
        struct {
            const char *name, *expr;
        } f[] = {{"idle_pct", "100.0 * idle_us / kernel_us"},
                 {"compute_pct", "100.0 * compute_us / kernel_us"},
                 {"non_compute_pct", "100.0 * non_compute_us / kernel_us"},
                 {"comm_overlap_pct", "100.0 * comm_overlap_us / comm_us"}};
        for (size_t i = 0; i < 4; i++) {
            snprintf(sql, sizeof sql, "SELECT round(%s, 2) FROM hta_stat WHERE run_id = 1 AND rank = %d", f[i].expr,
                     rank);
            double got = db_double(db, sql), want = json_number_value(json_object_get(v, f[i].name));
            if (fabs(got - want) > 0.005)
                fail_msg("rank %d %s: %.2f, HTA's algorithm on the trace: %.2f", rank, f[i].name, got, want);
        }
    }
}

static void sha256_hex(const char *path, char out[65])
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    assert_int_equal(EVP_DigestInit_ex(c, EVP_sha256(), NULL), 1);
    unsigned char buf[65536], d[32];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        EVP_DigestUpdate(c, buf, n);
    unsigned dn = 0;
    EVP_DigestFinal_ex(c, d, &dn);
    EVP_MD_CTX_free(c);
    fclose(f);
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void reports_work(const char *db)
{
    cmd_result r;
    char out[512], dir[512];
    assert_int_equal(ddpprof_cmd(&r, "report", db, "--run", "1", NULL), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "pytorch-trace"));
    assert_non_null(strstr(r.out, "comm_overlap_pct"));
    assert_int_equal(ddpprof_cmd(&r, "report", db, "--json", NULL), 0);
    assert_int_equal(r.status, 0);
    json_error_t e;
    json_t *j = json_loads(r.out, 0, &e);
    if (!j)
        fail_msg("report --json: %s", e.text);
    json_decref(j);
    scratch_path(out, sizeof out, "report.html");
    assert_int_equal(ddpprof_cmd(&r, "report", db, "--html", "-o", out, NULL), 0);
    assert_int_equal(r.status, 0);
    char html[1 << 16];
    slurp_into(out, html, sizeof html);
    assert_non_null(strstr(html, "comm_<wbr>overlap_<wbr>pct (HTA)"));
    assert_non_null(strstr(html, "straggler: rank 1"));
    scratch_path(out, sizeof out, "trace.json");
    assert_int_equal(ddpprof_cmd(&r, "export", db, "--run", "1", "-o", out, NULL), 0);
    if (r.status != 0)
        fail_msg("export: %s", r.err);
    scratch_path(dir, sizeof dir, "per-rank");
    assert_int_equal(ddpprof_cmd(&r, "export", db, "--run", "1", "--per-rank", dir, NULL), 0);
    if (r.status != 0)
        fail_msg("export --per-rank: %s", r.err);
    /* The export reads back as a trace: the run's own spans again. */
    char db2[512];
    scratch_path(db2, sizeof db2, "reimported.sqlite");
    assert_int_equal(ddpprof_cmd(&r, "import", dir, "-o", db2, NULL), 0);
    if (r.status != 0)
        fail_msg("import of the export: %s", r.err);
    assert_int_equal(ddpprof_cmd(&r, "compare", db, "--run", "1", "--run", "1", NULL), 0);
    assert_int_equal(r.status, 0);
}

static void test_float_timebase_ncclkernel(void **state)
{
    (void)state;
    gen("job", "--world", "2", "--slow-rank", "1", "--orphans", "2", NULL);
    char db[512];
    scratch_path(db, sizeof db, "a.sqlite");
    import_ok(db, "job", NULL);
    json_t *exp = expected("job");
    char text[512];
    db_text(db, "SELECT backend || ' ' || world_size || ' ' || iterations || ' ' || status FROM run", text,
            sizeof text);
    assert_string_equal(text, "pytorch-trace 2 4 complete");
    /* Source files: paths, sizes, SHA-256, ranks from distributedInfo. */
    assert_int_equal(q(db, "SELECT COUNT(*) FROM source_file WHERE run_id = 1 AND format = 'kineto-json'"
                           " AND rank_from = 'distributedInfo'"),
                     2);
    char path[512], sha[65], stored[128];
    scratch_path(path, sizeof path, "job/rank1.json");
    sha256_hex(path, sha);
    db_text(db, "SELECT sha256 FROM source_file WHERE rank = 1", stored, sizeof stored);
    assert_string_equal(stored, sha);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(q(db, "SELECT bytes FROM source_file WHERE rank = 1"), (int64_t)sb.st_size);
    /* Iterations are ProfilerStep#3..#6. */
    assert_int_equal(q(db, "SELECT MIN(iter) * 100 + MAX(iter) FROM span"), 306);
    /* Spans on their device streams; NCCL kernels are communication, of their kind. */
    assert_int_equal(q(db, "SELECT COUNT(DISTINCT device_stream) FROM span WHERE device_stream IS NOT NULL"), 2);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE kind = 'allreduce' AND stream = 'comm'"
                           " AND device_stream = 40"),
                     2 * 4 * 2);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE kind = 'broadcast' AND device_stream = 40"), 2 * 4);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE kind = 'copy_out' AND name LIKE 'Memcpy DtoD%%'"),
                     2 * 4 * 2);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE kind = 'copy_in' AND device_stream = 7"
                           " AND bucket IS NOT NULL"),
                     2 * 4 * 8);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE kind = 'forward' AND device_stream = 7"), 2 * 4 * 4);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE name = 'void orphan_kernel(int)'"), 2 * 2);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE name = 'DistributedDataParallel.forward'"
                           " AND stream = 'host'"),
                     2 * 4);
    /* DDP's buckets: two of four parameters and 2 x (256 x 256 + 256) floats, bucket 0 the
     * last layers' (launched first). */
    assert_int_equal(q(db, "SELECT COUNT(*) FROM bucket WHERE run_id = 1 AND version = 0 AND nparams = 4"
                           " AND nbytes = 526336"),
                     2);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM bucket WHERE version = 1"), 0);
    /* Collectives matched across both ranks; the fast rank waits for the slow one. */
    assert_int_equal(q(db, "SELECT COUNT(*) FROM collective WHERE kind = 'allreduce' AND nranks = 2"), 4 * 2);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM collective_stat WHERE run_id = 1 AND kind = 'allreduce' AND nranks = 2"), 4 * 2);
    assert_true(q(db, "SELECT SUM(wait_ns) FROM iteration_stat WHERE rank = 0") > 0);
    assert_int_equal(q(db, "SELECT SUM(wait_ns) FROM iteration_stat WHERE rank = 1"), 0);
    /* Wall clocks (baseTimeNanoseconds): the run's zero on the wall clock, no correction. */
    assert_true(q(db, "SELECT time_base_unix_ns FROM run") > 1711964646000000000LL);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM rank WHERE clock_offset_ns = 0"), 2);
    check_hta(db, exp);
    json_decref(exp);
    reports_work(db);
}

static void test_int_timebase_devkernel(void **state)
{
    (void)state;
    gen("job3", "--world", "3", "--timebase", "int", "--scheme", "devkernel", "--slow-rank", "0", NULL);
    char db[512];
    scratch_path(db, sizeof db, "b.sqlite");
    import_ok(db, "job3", NULL);
    json_t *exp = expected("job3");
    check_hta(db, exp);
    json_decref(exp);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE kind = 'allreduce' AND name LIKE 'ncclDevKernel_%%'"),
                     3 * 4 * 2);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM collective WHERE kind = 'allreduce' AND nranks = 3"), 4 * 2);
    /* Integer µs since the epoch are wall-clock times too. */
    assert_true(q(db, "SELECT time_base_unix_ns FROM run") > 1669783687000000000LL);
    assert_int_equal(q(db, "SELECT SUM(wait_ns) FROM iteration_stat WHERE rank = 0"), 0);
    assert_true(q(db, "SELECT SUM(wait_ns) FROM iteration_stat WHERE rank = 2") > 0);
}

/* 2022-era traces carry no collective arguments; a lower-case kernel name is still NCCL's. */
static void test_lowercase_without_args(void **state)
{
    (void)state;
    gen("lower", "--scheme", "lower", "--no-args", "--world", "2", NULL);
    char db[512];
    scratch_path(db, sizeof db, "c.sqlite");
    import_ok(db, "lower", NULL);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE kind = 'allreduce' AND bytes IS NULL"), 2 * 4 * 2);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE kind = 'broadcast'"), 2 * 4);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM bucket WHERE version = 0 AND nparams = 4 AND nbytes = 0"), 2);
    assert_int_equal(q(db, "SELECT instr(notes, 'message sizes unknown') > 0 FROM run"), 1);
    json_t *exp = expected("lower");
    check_hta(db, exp);
    json_decref(exp);
}

/* No distributedInfo: the ranks come from the files' names, gzip or not. */
static void test_no_metadata_names_and_gzip(void **state)
{
    (void)state;
    gen("named", "--no-metadata", "--name-fmt", "worker{r}.pt.trace.json", "--gz", "--world", "2", NULL);
    char db[512];
    scratch_path(db, sizeof db, "d.sqlite");
    import_ok(db, "named", NULL);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM source_file WHERE rank_from = 'file name'"), 2);
    char path[512];
    scratch_path(path, sizeof path, "named/worker1.pt.trace.json.gz");
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(q(db, "SELECT bytes FROM source_file WHERE rank = 1"), (int64_t)sb.st_size);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM collective WHERE kind = 'allreduce' AND nranks = 2"), 4 * 2);

    /* One such file whose name says nothing: rank 0 of a world of 1, said in a note;
     * --rank says otherwise. */
    char one[512], db2[512];
    scratch_path(one, sizeof one, "named/trace.json.gz");
    assert_int_equal(rename(path, one), 0);
    scratch_path(db2, sizeof db2, "e.sqlite");
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "import", one, "-o", db2, NULL), 0);
    if (r.status != 0)
        fail_msg("import of a trace naming no rank: %s", r.err);
    assert_int_equal(q(db2, "SELECT world_size FROM run WHERE id = 1"), 1);
    assert_int_equal(q(db2, "SELECT COUNT(*) FROM source_file WHERE rank = 0 AND rank_from = 'alone'"), 1);
    assert_int_equal(q(db2, "SELECT COUNT(*) FROM run WHERE id = 1 AND notes LIKE '%%taken as rank 0 of a world of 1%%'"),
                     1);
    assert_int_equal(ddpprof_cmd(&r, "import", one, "-o", db2, "--rank", "1", NULL), 0);
    if (r.status != 0)
        fail_msg("import --rank 1: %s", r.err);
    assert_int_equal(q(db2, "SELECT COUNT(*) FROM source_file WHERE rank = 1 AND rank_from = '--rank'"), 1);
    /* Two files naming no rank are one job's only with their ranks said. */
    char other[512];
    scratch_path(other, sizeof other, "named/other.json.gz");
    scratch_path(path, sizeof path, "named/worker0.pt.trace.json.gz");
    assert_int_equal(rename(path, other), 0);
    assert_int_equal(ddpprof_cmd(&r, "import", one, other, "-o", db2, NULL), 0);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "which rank is this trace?"));
}

/* Ranks 0 and 2 of a job of 3, as users profile a few ranks of many: the run holds
 * those two (no rows for rank 1), says so in the report, runs and JSON, shows no
 * transfer or bus bandwidth (a traced rank's collective holds its wait for rank 1),
 * its step is the job's period on the device timeline, and whatif replays it with
 * rank 1 taking the traced ranks' speeds. */
static void test_subset_of_ranks(void **state)
{
    (void)state;
    gen("job", "--world", "3", "--steps", "5", "--layers", "6", NULL);
    char sub[512], from[512], to[512];
    scratch_path(sub, sizeof sub, "sub");
    assert_int_equal(mkdir(sub, 0700), 0);
    for (int r = 0; r <= 2; r += 2) {
        char rel[64];
        snprintf(rel, sizeof rel, "job/rank%d.json", r);
        scratch_path(from, sizeof from, rel);
        snprintf(rel, sizeof rel, "sub/rank%d.json", r);
        scratch_path(to, sizeof to, rel);
        assert_int_equal(link(from, to), 0);
    }
    char db[512];
    scratch_path(db, sizeof db, "s.sqlite");
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "import", sub, "-o", db, NULL), 0);
    if (r.status != 0)
        fail_msg("import of ranks 0 and 2 of 3: %s", r.err);
    assert_non_null(strstr(r.out, "imported 2 ranks of 3"));
    assert_int_equal(q(db, "SELECT world_size FROM run WHERE id = 1"), 3);
    assert_int_equal(q(db, "SELECT group_concat(rank) = '0,2' FROM (SELECT rank FROM rank ORDER BY rank)"), 1);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE rank = 1"), 0);
    /* The step is the period: each rank-iteration's step span, from the first forward
     * op on the device to the next iteration's. */
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE kind = 'step'"), 2 * 5);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span WHERE kind = 'profiler_step'"), 2 * 5);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM iteration_stat i JOIN span s ON s.run_id = i.run_id AND s.rank = i.rank"
                           " AND s.iter = i.iter AND s.kind = 'step' WHERE i.step_ns = s.end_ns - s.start_ns"),
                     2 * 5);
    assert_int_equal(q(db, "SELECT COUNT(*) FROM span s JOIN span n ON n.rank = s.rank AND n.iter = s.iter + 1"
                           " AND n.kind = 'step' WHERE s.kind = 'step' AND s.end_ns <> n.start_ns"),
                     0);
    assert_int_equal(ddpprof_cmd(&r, "report", db, NULL), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "(traced: ranks 0, 2 of 3)"));
    assert_null(strstr(r.out, "\n     1   "));
    assert_non_null(strstr(r.out, "transfer + untraced ranks' wait"));
    assert_non_null(strstr(r.out, "host steps  mean"));
    assert_int_equal(ddpprof_cmd(&r, "runs", db, NULL), 0);
    assert_non_null(strstr(r.out, "2 of 3"));
    assert_int_equal(ddpprof_cmd(&r, "report", db, "--json", NULL), 0);
    json_error_t je;
    json_t *doc = json_loads(r.out, 0, &je);
    if (!doc)
        fail_msg("report --json: %s", je.text);
    json_t *run = json_array_get(json_object_get(doc, "runs"), 0);
    json_t *traced = json_object_get(run, "ranks_traced");
    assert_int_equal(json_array_size(traced), 2);
    assert_int_equal(json_integer_value(json_array_get(traced, 1)), 2);
    json_t *bucket = json_array_get(json_object_get(run, "buckets"), 0);
    assert_true(json_is_null(json_object_get(bucket, "transfer_ms")));
    assert_true(json_is_null(json_object_get(bucket, "busbw_gbps")));
    json_t *attr = json_object_get(json_array_get(json_object_get(run, "ranks"), 0), "attribution");
    assert_true(json_is_null(json_object_get(attr, "exposed_transfer_ms")));
    assert_true(json_is_number(json_object_get(attr, "exposed_transfer_or_untraced_wait_ms")));
    double measured = json_number_value(json_object_get(run, "step_ms_mean"));
    json_decref(doc);
    /* whatif: rank 1 as the traced ranks; the replay within 5 %. */
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", "-q", NULL), 0);
    if (r.status != 0)
        fail_msg("whatif: %s", r.err);
    assert_non_null(strstr(r.out, "ranks: 2 of 3 traced"));
    assert_int_equal(q(db, "SELECT world_size FROM run WHERE id = 2"), 3);
    double replayed = (double)q(db, "SELECT CAST(AVG(step_ns) AS INTEGER) FROM (SELECT iter, MAX(step_ns) AS step_ns"
                                    " FROM iteration_stat WHERE run_id = 2 AND warmup = 0 GROUP BY iter)") / 1e6;
    if (fabs(replayed - measured) > 0.05 * measured)
        fail_msg("replay %.3f ms, measured %.3f ms", replayed, measured);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_float_timebase_ncclkernel, scratch_group_setup, scratch_group_teardown),
        cmocka_unit_test_setup_teardown(test_int_timebase_devkernel, scratch_group_setup, scratch_group_teardown),
        cmocka_unit_test_setup_teardown(test_lowercase_without_args, scratch_group_setup, scratch_group_teardown),
        cmocka_unit_test_setup_teardown(test_no_metadata_names_and_gzip, scratch_group_setup, scratch_group_teardown),
        cmocka_unit_test_setup_teardown(test_subset_of_ranks, scratch_group_setup, scratch_group_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
