/* test_export.c — the trace export (reports/trace_*.c, `ddpprof export`), parsed back
 * with jansson and checked against the database it came from.
 *
 * Contract checked: in the Chrome file every span is one "X" event on pid = rank and
 * the tid of its stream, with its name, kind, times (ns exact) and args, and nothing
 * else is; every collective has one s/f flow pair per rank that arrived before the
 * last one, from the last-arriving rank to the waiting rank at the last arrival; the
 * process and thread metadata name every rank and stream; names with quotes,
 * backslashes and control characters survive.  In each per-rank (Kineto) file:
 * HTA's rank regex finds the file's rank first, distributedInfo has rank and
 * world_size, every span of that rank is there once (host spans as cpu_op, stream
 * spans as kernels with stream ids and a correlated launch), allreduces are named as
 * NCCL kernels and no compute kernel matches HTA's non-compute patterns.  The
 * command: files written, and exit 2 for bad usage.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "profiler/store.h"
#include "harness.h"
#include "tmp_store.h"
#include "reports/trace_export.h"

#define WORLD 3
#define ITERS 3
#define NBUCKETS 2

typedef struct {
    store_fixture s; /* the store and its errors (tmp_store.h) */
    int64_t run_id;
} fixture;

/* Per iteration and rank: forward and backward per layer on compute, a copy_in per
 * bucket, an allreduce per bucket on comm (rank 2 arrives last at bucket 0, rank 0
 * at bucket 1), a wait on the host.  Names exercise JSON escaping and HTA's
 * patterns ("dma" would make a kernel non-compute). */
static int write_run(fixture *f)
{
    double speeds[WORLD] = {1.5, 1.0, 0.8};
    store_run_info info = {.name = "export \"test\"", .source = "t.ini", .scenario_ini = "",
                           .backend = "cpu", .model = "mlp", .world_size = WORLD,
                           .iterations = ITERS - 1, .warmup = 1, .total_params = 10,
                           .bucket_cap_mb = 25, .rank_speed = speeds};
    if (store_begin_run(f->s.st, &info, &f->run_id, f->s.err, sizeof f->s.err) != 0)
        return -1;
    span spans[512];
    size_t n = 0;
    for (int it = 0; it < ITERS; it++) {
        for (int r = 0; r < WORLD; r++) {
            int64_t t = it * 100000 + r * 700;
            for (int layer = 0; layer < 3; layer++) {
                span s = mk(r, it, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, t, t + 1000);
                s.layer = layer;
                snprintf(s.name, sizeof s.name, "%s", layer == 1 ? "fc\\\"1\"\t" : "dma_fc");
                spans[n++] = s;
                t += 1000;
            }
            for (int b = 0; b < NBUCKETS; b++) {
                span s = mk(r, it, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, t, t + 2000);
                s.layer = 2 - b;
                spans[n++] = s;
                spans[n++] = mk(r, it, STREAM_COMPUTE, SPAN_COPY_IN, b, -1, 4000, t + 2000, t + 2300);
                int64_t arrive = t + 2300 + (b == 0 ? r * 500 : (WORLD - 1 - r) * 1000);
                spans[n++] = mk(r, it, STREAM_COMM, SPAN_ALLREDUCE, b, it * NBUCKETS + b, 4000 * (b + 1),
                                arrive, it * 100000 + 20000 + b * 5000);
                t += 2300;
            }
            spans[n++] = mk(r, it, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, it * 100000 + 30000,
                            it * 100000 + 31000);
            spans[n++] = mk(r, it, STREAM_HOST, SPAN_WAIT, -1, -1, 0, t, it * 100000 + 30000);
        }
    }
    if (store_write_spans(f->s.st, f->run_id, spans, n, f->s.err, sizeof f->s.err) != 0)
        return -1;
    return store_finish_run(f->s.st, f->run_id, NULL, f->s.err, sizeof f->s.err);
}

static int setup(void **state)
{
    if (store_fixture_open(state, sizeof(fixture)) != 0)
        return -1;
    fixture *f = *state;
    if (write_run(f) != 0) {
        fprintf(stderr, "writing run: %s\n", f->s.err);
        store_fixture_teardown(state);
        return -1;
    }
    return 0;
}


/* ---- helpers ----------------------------------------------------------------------- */

static char *export_text(fixture *f, int rank, size_t *len)
{
    char *buf = NULL;
    FILE *out = open_memstream(&buf, len);
    assert_non_null(out);
    int rc = rank < 0 ? trace_export_chrome(f->s.st, f->run_id, out, f->s.err, sizeof f->s.err)
                      : trace_export_kineto(f->s.st, f->run_id, rank, out, f->s.err,
                                            sizeof f->s.err);
    assert_int_equal(fclose(out), 0);
    if (rc != 0)
        fail_msg("export: %s", f->s.err);
    return buf;
}

static json_t *parse(const char *text, size_t len)
{
    json_error_t je;
    json_t *doc = json_loadb(text, len, 0, &je);
    if (!doc)
        fail_msg("exported JSON does not parse: line %d: %s", je.line, je.text);
    return doc;
}

static int64_t us_to_ns(json_t *v)
{
    assert_true(json_is_number(v));
    return (int64_t)llround(json_number_value(v) * 1000.0);
}

/* "null" or the integer, as text, for comparing optional fields. */
static void opt_text(char *buf, size_t n, json_t *v)
{
    if (json_is_null(v))
        snprintf(buf, n, "null");
    else if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else
        fail_msg("optional field is neither null nor an integer");
}

static void col_text(char *buf, size_t n, sqlite3_stmt *s, int col)
{
    if (sqlite3_column_type(s, col) == SQLITE_NULL)
        snprintf(buf, n, "null");
    else
        snprintf(buf, n, "%lld", (long long)sqlite3_column_int64(s, col));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each span of the run (of one rank when rank >= 0) as one canonical line:
 * rank|stream|start|end|name|kind|iter|layer|bucket|bytes|seq, sorted. */
static char **db_span_lines(fixture *f, int rank, size_t *n)
{
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(store_db(f->s.st),
                                        "SELECT rank, stream, start_ns, end_ns, name, kind, iter,"
                                        " layer, bucket, bytes, seq FROM span WHERE run_id = ?1"
                                        " AND (?2 < 0 OR rank = ?2)",
                                        -1, &s, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(s, 1, f->run_id);
    sqlite3_bind_int(s, 2, rank);
    char **lines = NULL;
    *n = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        char layer[32], bucket[32], bytes[32], seq[32];
        col_text(layer, sizeof layer, s, 7);
        col_text(bucket, sizeof bucket, s, 8);
        col_text(bytes, sizeof bytes, s, 9);
        col_text(seq, sizeof seq, s, 10);
        lines = realloc(lines, (*n + 1) * sizeof *lines);
        assert_non_null(lines);
        assert_true(asprintf(&lines[*n], "%d|%s|%lld|%lld|%s|%s|%d|%s|%s|%s|%s",
                             sqlite3_column_int(s, 0), sqlite3_column_text(s, 1),
                             (long long)sqlite3_column_int64(s, 2),
                             (long long)sqlite3_column_int64(s, 3), sqlite3_column_text(s, 4),
                             sqlite3_column_text(s, 5), sqlite3_column_int(s, 6), layer, bucket,
                             bytes, seq) > 0);
        (*n)++;
    }
    sqlite3_finalize(s);
    qsort(lines, *n, sizeof *lines, cmp_str);
    return lines;
}

static void free_lines(char **lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

static void assert_same_lines(char **got, size_t ngot, char **want, size_t nwant)
{
    qsort(got, ngot, sizeof *got, cmp_str);
    assert_int_equal(ngot, nwant);
    for (size_t i = 0; i < nwant; i++)
        assert_string_equal(got[i], want[i]);
}

static char *event_line(json_t *ev, int rank, const char *stream, const char *name)
{
    json_t *args = json_object_get(ev, "args");
    int64_t ts = us_to_ns(json_object_get(ev, "ts")), dur = us_to_ns(json_object_get(ev, "dur"));
    char layer[32], bucket[32], bytes[32], seq[32];
    opt_text(layer, sizeof layer, json_object_get(args, "layer"));
    opt_text(bucket, sizeof bucket, json_object_get(args, "bucket"));
    opt_text(bytes, sizeof bytes, json_object_get(args, "bytes"));
    opt_text(seq, sizeof seq, json_object_get(args, "seq"));
    char *line;
    assert_true(asprintf(&line, "%d|%s|%lld|%lld|%s|%s|%d|%s|%s|%s|%s", rank, stream,
                         (long long)ts, (long long)(ts + dur), name,
                         json_string_value(json_object_get(args, "kind")),
                         (int)json_integer_value(json_object_get(args, "iter")), layer, bucket,
                         bytes, seq) > 0);
    return line;
}

/* Per collective: the rank that arrived last (ties: the lowest) and when. */
typedef struct {
    int last_rank;
    int64_t last_arrival;
    int nranks;
} collective_truth;

static void collectives_from_db(fixture *f, collective_truth *c, int nseq)
{
    for (int i = 0; i < nseq; i++)
        c[i] = (collective_truth){.last_rank = -1};
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(store_db(f->s.st),
                                        "SELECT seq, rank, MIN(start_ns) FROM span WHERE run_id = ?1"
                                        " AND kind = 'allreduce' GROUP BY seq, rank ORDER BY seq, rank",
                                        -1, &s, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(s, 1, f->run_id);
    while (sqlite3_step(s) == SQLITE_ROW) {
        int seq = sqlite3_column_int(s, 0);
        assert_true(seq >= 0 && seq < nseq);
        int64_t a = sqlite3_column_int64(s, 2);
        if (c[seq].last_rank < 0 || a > c[seq].last_arrival) {
            c[seq].last_rank = sqlite3_column_int(s, 1);
            c[seq].last_arrival = a;
        }
        c[seq].nranks++;
    }
    sqlite3_finalize(s);
}

/* ---- Chrome --------------------------------------------------------------------------- */

static void test_chrome_spans(void **state)
{
    fixture *f = *state;
    size_t len;
    char *text = export_text(f, -1, &len);
    json_t *doc = parse(text, len);
    free(text);
    static const char *const streams[] = {"host", "compute", "comm"};
    json_t *events = json_object_get(doc, "traceEvents");
    assert_true(json_is_array(events));
    char **got = NULL;
    size_t ngot = 0, i;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        if (strcmp(json_string_value(json_object_get(ev, "ph")), "X") != 0)
            continue;
        int tid = (int)json_integer_value(json_object_get(ev, "tid"));
        assert_in_range(tid, 0, 2);
        assert_string_equal(json_string_value(json_object_get(ev, "cat")),
                            json_string_value(json_object_get(json_object_get(ev, "args"), "kind")));
        got = realloc(got, (ngot + 1) * sizeof *got);
        assert_non_null(got);
        got[ngot++] = event_line(ev, (int)json_integer_value(json_object_get(ev, "pid")), streams[tid],
                                 json_string_value(json_object_get(ev, "name")));
    }
    size_t nwant;
    char **want = db_span_lines(f, -1, &nwant);
    assert_int_equal(nwant, (size_t)WORLD * ITERS * (3 + 3 * NBUCKETS + 2));
    assert_same_lines(got, ngot, want, nwant);
    free_lines(got, ngot);
    free_lines(want, nwant);
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "otherData"), "run_name")),
                        "export \"test\"");
    json_decref(doc);
}

static void test_chrome_flows(void **state)
{
    fixture *f = *state;
    size_t len;
    char *text = export_text(f, -1, &len);
    json_t *doc = parse(text, len);
    free(text);
    enum { NSEQ = ITERS * NBUCKETS };
    collective_truth truth[NSEQ];
    collectives_from_db(f, truth, NSEQ);
    /* seen[seq][rank]: 1 for the s, 2 for the f of the pair joining rank to the last. */
    int seen[NSEQ][WORLD] = {{0}};
    json_t *starts = json_object(); /* id -> s event */
    size_t i, npairs = 0;
    json_t *ev;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        if (strcmp(ph, "s") && strcmp(ph, "f"))
            continue;
        char id[32];
        snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(ev, "id")));
        int seq = -1;
        assert_int_equal(sscanf(json_string_value(json_object_get(ev, "name")), "allreduce seq %d", &seq), 1);
        assert_in_range(seq, 0, NSEQ - 1);
        int pid = (int)json_integer_value(json_object_get(ev, "pid"));
        assert_int_equal(json_integer_value(json_object_get(ev, "tid")), 2);
        assert_int_equal(us_to_ns(json_object_get(ev, "ts")), truth[seq].last_arrival);
        if (!strcmp(ph, "s")) {
            assert_int_equal(pid, truth[seq].last_rank);
            assert_null(json_object_get(starts, id));
            json_object_set(starts, id, ev);
        } else {
            json_t *s = json_object_get(starts, id);
            assert_non_null(s); /* written after its start */
            assert_string_equal(json_string_value(json_object_get(ev, "bp")), "e");
            assert_int_not_equal(pid, truth[seq].last_rank);
            assert_int_equal(seen[seq][pid], 0);
            seen[seq][pid] = 2;
            npairs++;
        }
    }
    size_t want_pairs = 0;
    for (int s = 0; s < NSEQ; s++) {
        assert_int_equal(truth[s].nranks, WORLD);
        for (int r = 0; r < WORLD; r++)
            if (r != truth[s].last_rank) {
                assert_int_equal(seen[s][r], 2);
                want_pairs++;
            }
    }
    assert_int_equal(npairs, want_pairs);
    assert_int_equal(json_object_size(starts), want_pairs);
    /* The arrows do not all come from one rank: bucket 0 waits for rank 2, bucket 1 for 0. */
    assert_int_equal(truth[0].last_rank, 2);
    assert_int_equal(truth[1].last_rank, 0);
    json_decref(starts);
    json_decref(doc);
}

static void test_chrome_metadata(void **state)
{
    fixture *f = *state;
    size_t len;
    char *text = export_text(f, -1, &len);
    json_t *doc = parse(text, len);
    free(text);
    int process_named[WORLD] = {0}, thread_named[WORLD][3] = {{0}};
    static const char *const streams[] = {"host", "compute", "comm"};
    size_t i;
    json_t *ev;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, ev) {
        if (strcmp(json_string_value(json_object_get(ev, "ph")), "M"))
            continue;
        const char *what = json_string_value(json_object_get(ev, "name"));
        int pid = (int)json_integer_value(json_object_get(ev, "pid"));
        int tid = (int)json_integer_value(json_object_get(ev, "tid"));
        assert_in_range(pid, 0, WORLD - 1);
        const char *name = json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
        if (!strcmp(what, "process_name")) {
            char want[32];
            snprintf(want, sizeof want, "rank %d", pid);
            assert_string_equal(name, want);
            process_named[pid]++;
        } else if (!strcmp(what, "thread_name")) {
            assert_in_range(tid, 0, 2);
            assert_string_equal(name, streams[tid]);
            thread_named[pid][tid]++;
        }
    }
    for (int r = 0; r < WORLD; r++) {
        assert_int_equal(process_named[r], 1);
        for (int t = 0; t < 3; t++)
            assert_int_equal(thread_named[r][t], 1);
    }
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "otherData"), "world_size")),
                     WORLD);
    json_decref(doc);
}

/* ---- Kineto, per rank ------------------------------------------------------------------ */

/* HTA's rank: the first match of "rank":\s+(\d+) in the file's text. */
static int hta_rank(const char *text)
{
    regex_t re;
    assert_int_equal(regcomp(&re, "\"rank\":[[:space:]]+([0-9]+)", REG_EXTENDED), 0);
    regmatch_t m[2];
    int rank = -1;
    if (regexec(&re, text, 2, m, 0) == 0)
        rank = atoi(text + m[1].rm_so);
    regfree(&re);
    return rank;
}

static void test_kineto_rank_files(void **state)
{
    fixture *f = *state;
    regex_t non_compute;
    assert_int_equal(regcomp(&non_compute,
                             "^nccl|Memcpy|Memset|dma|Sync|^Stream Wait Event|cuda.*LaunchKernel|"
                             "^runFunction|^hip|^job_exe|^packet|^pe_exe|^cpum_exe_subgraph|^hccl|"
                             "^collective_subgraph_execution",
                             REG_EXTENDED | REG_NOSUB),
                     0);
    for (int rank = 0; rank < WORLD; rank++) {
        size_t len;
        char *text = export_text(f, rank, &len);
        assert_int_equal(hta_rank(text), rank);
        json_t *doc = parse(text, len);
        free(text);
        json_t *di = json_object_get(doc, "distributedInfo");
        assert_int_equal(json_integer_value(json_object_get(di, "rank")), rank);
        assert_int_equal(json_integer_value(json_object_get(di, "world_size")), WORLD);
        json_t *launches = json_object(); /* correlation -> 1 */
        char **got = NULL;
        size_t ngot = 0, nsteps = 0, nkernels = 0, i;
        json_t *ev;
        json_array_foreach(json_object_get(doc, "traceEvents"), i, ev) {
            if (strcmp(json_string_value(json_object_get(ev, "ph")), "X"))
                continue;
            const char *cat = json_string_value(json_object_get(ev, "cat"));
            const char *name = json_string_value(json_object_get(ev, "name"));
            json_t *args = json_object_get(ev, "args");
            int pid = (int)json_integer_value(json_object_get(ev, "pid"));
            char corr[32];
            snprintf(corr, sizeof corr, "%lld",
                     (long long)json_integer_value(json_object_get(args, "correlation")));
            if (!strcmp(cat, "user_annotation")) {
                assert_int_equal(strncmp(name, "ProfilerStep#", 13), 0);
                nsteps++;
            } else if (!strcmp(cat, "cuda_runtime")) {
                assert_int_equal(pid, TRACE_KINETO_HOST_PID_BASE + rank);
                json_object_set_new(launches, corr, json_true());
            } else if (!strcmp(cat, "cpu_op")) {
                assert_int_equal(pid, TRACE_KINETO_HOST_PID_BASE + rank);
                got = realloc(got, (ngot + 1) * sizeof *got);
                got[ngot++] = event_line(ev, rank, "host", name);
            } else {
                assert_string_equal(cat, "kernel");
                assert_int_equal(pid, rank);
                int stream = (int)json_integer_value(json_object_get(args, "stream"));
                assert_int_equal(json_integer_value(json_object_get(ev, "tid")), stream);
                const char *kind = json_string_value(json_object_get(args, "kind"));
                if (!strcmp(kind, "allreduce")) {
                    assert_int_equal(stream, TRACE_KINETO_COMM_STREAM);
                    assert_string_equal(name, TRACE_KINETO_ALLREDUCE_KERNEL);
                    assert_int_equal(json_integer_value(json_object_get(args, "Group size")), WORLD);
                } else {
                    assert_int_equal(stream, TRACE_KINETO_COMPUTE_STREAM);
                    if (regexec(&non_compute, name, 0, NULL, 0) == 0)
                        fail_msg("compute kernel '%s' would not count as computation in HTA", name);
                }
                assert_non_null(json_object_get(launches, corr)); /* launched before */
                got = realloc(got, (ngot + 1) * sizeof *got);
                got[ngot++] = event_line(ev, rank, stream == TRACE_KINETO_COMM_STREAM ? "comm" : "compute",
                                         json_string_value(json_object_get(args, "span name")));
                nkernels++;
            }
        }
        assert_int_equal(nsteps, ITERS);
        assert_int_equal(json_object_size(launches), nkernels);
        size_t nwant;
        char **want = db_span_lines(f, rank, &nwant);
        assert_same_lines(got, ngot, want, nwant);
        free_lines(got, ngot);
        free_lines(want, nwant);
        json_decref(launches);
        json_decref(doc);
    }
    regfree(&non_compute);
}

/* ---- the command -------------------------------------------------------------------------- */

static int run_export(const char *const *args)
{
    const char *argv[16] = {"export"};
    int n = 1;
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    cmd_result *r = malloc(sizeof *r);
    assert_non_null(r);
    ddpprof_run(r, argv);
    int status = r->status;
    free(r);
    return status;
}

static void test_command(void **state)
{
    fixture *f = *state;
    char dir[] = "/tmp/ddpprof_test_exportXXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[128], ranks[128], rank_file[160];
    snprintf(out, sizeof out, "%s/trace.json", dir);
    snprintf(ranks, sizeof ranks, "%s/ranks", dir);
    assert_int_equal(run_export((const char *[]){f->s.path, "--format", "chrome", "-o", out,
                                                 "--per-rank", ranks, NULL}),
                     0);
    json_error_t je;
    json_t *doc = json_load_file(out, 0, &je);
    assert_non_null(doc);
    json_decref(doc);
    for (int r = 0; r < WORLD; r++) {
        snprintf(rank_file, sizeof rank_file, "%s/rank%d.json", ranks, r);
        doc = json_load_file(rank_file, 0, &je);
        assert_non_null(doc);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "distributedInfo"), "rank")), r);
        json_decref(doc);
        unlink(rank_file);
    }
    assert_int_equal(rmdir(ranks), 0);
    unlink(out);
    assert_int_equal(run_export((const char *[]){f->s.path, NULL}), 2);                          /* no output */
    assert_int_equal(run_export((const char *[]){f->s.path, "--run", "99", "-o", out, NULL}), 2); /* no such run */
    assert_int_equal(access(out, F_OK), -1);
    assert_int_equal(run_export((const char *[]){f->s.path, "--format", "svg", "-o", out, NULL}), 2);
    assert_int_equal(run_export((const char *[]){"/nonexistent/db", "-o", out, NULL}), 2);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_chrome_spans, setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_chrome_flows, setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_chrome_metadata, setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_kineto_rank_files, setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_command, setup, store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
