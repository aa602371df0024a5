/* test_import_bad.c — what `ddpprof import` does with input that is not a good trace:
 * not a trace at all, empty, truncated or corrupt JSON and gzip, an event without a
 * time, a trace with no GPU or collective events, ranks that do not make one job (one
 * missing, two files of one rank, disagreeing world sizes), a 10 GB file, too many
 * events.  Each: exit status 2, a message naming the file (and the line, where there is
 * one), and the database exactly as it was: a run imported before is still the only
 * one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <stdlib.h>
#include <unistd.h>

#include "harness.h"

static char db[300];

static int setup(void **state)
{
    (void)state;
    if (scratch_setup("ddpprof-test-import-bad-") < 0)
        return -1;
    scratch_path(db, sizeof db, "db.sqlite");
    /* One good job, imported first: whatever fails later must leave it alone. */
    char out[300], script[512];
    scratch_path(out, sizeof out, "good");
    repo_path(script, sizeof script, "tests/import/kineto_gen.py");
    const char *argv[] = {"/usr/bin/python3", script, "--out", out, "--world", "3", "--steps", "2", NULL};
    cmd_result r;
    if (run_cmd(&r, argv) < 0 || r.status != 0)
        return -1;
    if (ddpprof_cmd(&r, "import", out, "-o", db, NULL) < 0 || r.status != 0)
        return -1;
    return 0;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    assert_true(len >= 0);
    rewind(f);
    char *buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    buf[len] = '\0';
    *n = (size_t)len;
    return buf;
}

/* Imports the paths (NULL-ended) and expects exit 2 with `want` in the message, and
 * the database holding its one good run. */
static void refused(const char *want, ...)
{
    const char *argv[32] = {getenv("DDPPROF"), "import"};
    int n = 2;
    va_list ap;
    va_start(ap, want);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && n < 28)
        argv[n++] = a;
    va_end(ap);
    argv[n++] = "-o";
    argv[n++] = db;
    argv[n] = NULL;
    cmd_result r;
    assert_int_equal(run_cmd(&r, argv), 0);
    if (r.status != 2 || !strstr(r.err, want))
        fail_msg("want exit 2 and \"%s\"; got exit %d: %s", want, r.status, r.err);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM run"), 1);
    assert_int_equal(db_int(db, "SELECT COUNT(DISTINCT run_id) FROM span"), 1);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM source_file WHERE run_id <> 1"), 0);
}

static void test_not_a_trace(void **state)
{
    (void)state;
    char p[300];
    scratch_path(p, sizeof p, "notes.json");
    write_bytes(p, "hello, world\n", 13);
    refused("not a trace", p, NULL);
    scratch_path(p, sizeof p, "empty.json");
    write_bytes(p, "", 0);
    refused("empty", p, NULL);
    scratch_path(p, sizeof p, "object.json");
    write_bytes(p, "{\"schemaVersion\": 1}\n", 21);
    refused("without \"traceEvents\"", p, NULL);
    scratch_path(p, sizeof p, "scalar.json");
    write_bytes(p, "42\n", 3);
    refused("not a trace", p, NULL);
    scratch_path(p, sizeof p, "report.nsys-rep");
    write_bytes(p, "\x01\x02NSYS", 6);
    refused("nsys export --type sqlite", p, NULL);
    /* A results database is not a trace either. */
    refused("not an Nsight Systems export", db, NULL);
}

static void test_truncated_and_corrupt(void **state)
{
    (void)state;
    char src[300], p[300];
    scratch_path(src, sizeof src, "good/rank0.json");
    size_t n;
    char *text = read_all(src, &n);
    scratch_path(p, sizeof p, "rank0.json");
    write_bytes(p, text, n / 2);
    refused("truncated JSON", p, NULL);
    refused("rank0.json:", p, NULL); /* file:line */
    /* A stray byte in the middle: invalid JSON, at its line. */
    char *mid = strstr(text + n / 2, "\"name\"");
    assert_non_null(mid);
    mid[0] = '#';
    write_bytes(p, text, n);
    refused("invalid JSON", p, NULL);
    long long line = 1;
    for (char *c = text; c < mid; c++)
        line += *c == '\n';
    char want[64];
    snprintf(want, sizeof want, "rank0.json:%lld:", line);
    refused(want, p, NULL);
    free(text);

    /* An event without its time. */
    scratch_path(p, sizeof p, "rank1.json");
    const char *no_ts = "{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"dur\": 3}\n]}\n";
    write_bytes(p, no_ts, strlen(no_ts));
    refused("rank1.json:2: a complete event (\"ph\": \"X\") without \"ts\"", p, NULL);

    /* gzip: cut short, and corrupted. */
    cmd_result r;
    char gz[300];
    scratch_path(gz, sizeof gz, "good/rank2.json");
    const char *gzip_argv[] = {"/bin/gzip", "-k", "-f", gz, NULL};
    assert_int_equal(run_cmd(&r, gzip_argv), 0);
    assert_int_equal(r.status, 0);
    scratch_path(gz, sizeof gz, "good/rank2.json.gz");
    char *z = read_all(gz, &n);
    scratch_path(p, sizeof p, "rank2.json.gz");
    write_bytes(p, z, n * 2 / 3);
    refused("truncated gzip", p, NULL);
    for (size_t i = n / 3; i < n / 3 + 64 && i < n; i++)
        z[i] ^= 0x5a;
    write_bytes(p, z, n);
    refused("rank2.json.gz", p, NULL);
    free(z);
    assert_int_equal(unlink(gz), 0);
}

static void test_nothing_to_analyse(void **state)
{
    (void)state;
    char p[300];
    scratch_path(p, sizeof p, "cpu0.json");
    const char *cpu = "[{\"name\": \"ProfilerStep#1\", \"ph\": \"X\", \"ts\": 1, \"dur\": 100, \"tid\": 1, \"pid\": 1},\n"
                      " {\"name\": \"aten::add\", \"ph\": \"X\", \"ts\": 2, \"dur\": 10, \"tid\": 1, \"pid\": 1}]\n";
    write_bytes(p, cpu, strlen(cpu));
    refused("no GPU events and no collectives", p, NULL);
    scratch_path(p, sizeof p, "meta0.json");
    const char *meta = "{\"traceEvents\": [{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"args\": {}}]}";
    write_bytes(p, meta, strlen(meta));
    refused("nothing to analyse", p, NULL);
}

/* A copy of a trace's text whose distributedInfo says pg_count `digit`, into path. */
static void with_pg_count(const char *text, size_t n, char digit, const char *path)
{
    const char *info = strstr(text, "\"world_size\": 3}");
    assert_non_null(info);
    size_t at = (size_t)(info - text) + 15;
    char *out = malloc(n + 16);
    assert_non_null(out);
    memcpy(out, text, at);
    memcpy(out + at, ", \"pg_count\": 0", 15);
    out[at + 14] = digit;
    memcpy(out + at + 15, text + at, n - at + 1);
    write_bytes(path, out, n + 15);
    free(out);
}

/* Traces that cannot be one job's: ranks twice, world sizes or process groups that
 * disagree, wall clocks that never meet; --rank where it cannot apply. */
static void test_ranks_that_are_not_one_job(void **state)
{
    (void)state;
    char r0[300], r1[300], r2[300], dup[300];
    scratch_path(r0, sizeof r0, "good/rank0.json");
    scratch_path(r1, sizeof r1, "good/rank1.json");
    scratch_path(r2, sizeof r2, "good/rank2.json");
    scratch_path(dup, sizeof dup, "rank7.json");
    size_t n;
    char *text = read_all(r0, &n);
    /* Rank 1 of the job recorded a day later: its wall clock does not meet rank 0's. */
    char *b = strstr(text, "\"baseTimeNanoseconds\": 1711964646");
    assert_non_null(b);
    char *later = malloc(n + 1);
    assert_non_null(later);
    memcpy(later, text, n + 1);
    const char *day_later = "\"baseTimeNanoseconds\": 1712051046"; /* + 86400 s */
    memcpy(later + (b - text), day_later, strlen(day_later));
    char *rk = strstr(later, "\"rank\": 0");
    assert_non_null(rk);
    rk[strlen("\"rank\": ")] = '1';
    scratch_path(dup, sizeof dup, "rank1.json");
    write_bytes(dup, later, n);
    refused("not one job's traces", r0, dup, NULL);
    /* The same job's process groups counted differently: rank 0 says 2, rank 1 says 1. */
    char pg0[300], pg1[300];
    scratch_path(pg0, sizeof pg0, "pg");
    assert_int_equal(mkdir(pg0, 0700), 0);
    scratch_path(pg0, sizeof pg0, "pg/rank0.json");
    scratch_path(pg1, sizeof pg1, "pg/rank1.json");
    with_pg_count(text, n, '2', pg0);
    size_t n1;
    char *text1 = read_all(r1, &n1);
    with_pg_count(text1, n1, '1', pg1);
    refused("process groups", pg0, pg1, NULL);
    free(text1);
    free(later);
    scratch_path(dup, sizeof dup, "rank7.json");
    write_bytes(dup, text, n);
    refused("both hold rank 0", r0, r1, r2, dup, NULL);
    char *w = strstr(text, "\"world_size\": 3");
    assert_non_null(w);
    w[14] = '4';
    write_bytes(dup, text, n);
    refused("world size", r1, r2, dup, NULL);
    free(text);
    refused("--rank names the rank of a single trace", r0, r1, "--rank", "1", NULL);
    refused("distributedInfo", r0, "--rank", "2", NULL);
}

static void test_too_large(void **state)
{
    (void)state;
    char p[300];
    scratch_path(p, sizeof p, "huge.json");
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs("{\"traceEvents\": [", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(truncate(p, 10LL * 1000 * 1000 * 1000), 0); /* sparse: no disk used */
    refused("larger than", p, NULL);
    char r0[300];
    scratch_path(r0, sizeof r0, "good/rank0.json");
    refused("more than 100 events", r0, "--max-events", "100", NULL);
    refused("larger than the 4096 bytes", r0, "--max-size", "4K", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_a_trace),
        cmocka_unit_test(test_truncated_and_corrupt),
        cmocka_unit_test(test_nothing_to_analyse),
        cmocka_unit_test(test_ranks_that_are_not_one_job),
        cmocka_unit_test(test_too_large),
    };
    return cmocka_run_group_tests(tests, setup, scratch_group_teardown);
}
