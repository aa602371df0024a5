/* test_rendezvous.c — ranks meeting over TCP on 127.0.0.1: as threads and as forked
 * processes, the blob, clock offsets with and without injected skew, rank 0 starting
 * late, and every refusal and timeout with the message that names the culprit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/launch/rendezvous.h"
#include "profiler/span_wire.h"

#define MS 1000000LL

static double now_s(void)
{
    struct timespec ts;
    assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static rdv_config config(int rank, int world, int port, double timeout_s)
{
    rdv_config c = {0};
    c.addr = "127.0.0.1";
    c.bind_addr = "127.0.0.1";
    c.port = port;
    c.rank = rank;
    c.world = world;
    c.timeout_s = timeout_s;
    return c;
}

/* Sends all of buf or fails, within 5 s. */
static int send_bounded(int fd, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    double end = now_s() + 5;
    while (len > 0) {
        struct pollfd pf = {fd, POLLOUT, 0};
        int n = poll(&pf, 1, 100);
        if (n < 0 && errno != EINTR)
            return -1;
        if (now_s() > end)
            return -1;
        if (n <= 0)
            continue;
        ssize_t w = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        if (w > 0) {
            p += w;
            len -= (size_t)w;
        }
    }
    return 0;
}

/* Reads one span_wire message within 5 s. */
static int recv_message(int fd, span_wire_msg *m)
{
    span_wire_decoder *d = span_wire_decoder_create();
    if (!d)
        return -1;
    double end = now_s() + 5;
    int rc = 0;
    char err[256];
    while (rc == 0 && now_s() < end) {
        struct pollfd pf = {fd, POLLIN, 0};
        int n = poll(&pf, 1, 100);
        if (n < 0 && errno != EINTR) {
            rc = -1;
            break;
        }
        if (n <= 0)
            continue;
        unsigned char buf[256];
        ssize_t got = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
            rc = -1;
            break;
        }
        if (got > 0 && span_wire_feed(d, buf, (size_t)got) != (size_t)got)
            rc = -1;
        else
            rc = span_wire_next(d, m, err, sizeof err);
    }
    span_wire_decoder_destroy(d);
    return rc == 1 ? 0 : -1;
}

typedef struct {
    rdv_config cfg;
    int delay_ms;
    bool talk; /* after joining: heartbeat to rank 0 and wait for its answer */
    int rc;
    char err[600];
    rdv_clock clock;
    unsigned char blob[RDV_BLOB_MAX];
    size_t blob_len;
    double elapsed_s;
    int talk_rc;
} joiner;

static void *join_main(void *arg)
{
    joiner *j = arg;
    if (j->delay_ms)
        sleep_ms(j->delay_ms);
    double t0 = now_s();
    rdv *r = NULL;
    j->rc = rdv_join(&j->cfg, &r, j->err, sizeof j->err);
    j->elapsed_s = now_s() - t0;
    if (j->rc != 0)
        return NULL;
    size_t len = 0;
    const void *blob = rdv_blob(r, &len);
    if (blob && len <= sizeof j->blob) {
        memcpy(j->blob, blob, len);
        j->blob_len = len;
    }
    j->rc = rdv_clock_of(r, j->cfg.rank, &j->clock);
    if (j->talk) {
        /* The socket outlives the rendezvous: it is where spans will flow. */
        unsigned char msg[64];
        size_t n = span_wire_encode_heartbeat(msg, sizeof msg, j->cfg.rank, rdv_now_ns(r));
        span_wire_msg reply;
        j->talk_rc = -1;
        if (n && send_bounded(rdv_socket(r, 0), msg, n) == 0 && recv_message(rdv_socket(r, 0), &reply) == 0 &&
            reply.type == SPAN_WIRE_RANK_DONE && reply.rank == 0 && reply.total_spans == j->cfg.rank)
            j->talk_rc = 0;
    }
    rdv_close(r);
    return NULL;
}

static void start(pthread_t *t, joiner *j) { assert_int_equal(pthread_create(t, NULL, join_main, j), 0); }
static void finish(pthread_t t) { assert_int_equal(pthread_join(t, NULL), 0); }

static void expect_contains(const char *text, const char *frag)
{
    if (!strstr(text, frag))
        fail_msg("'%s' lacks '%s'", text, frag);
}

/* A TCP socket bound to a free port of 127.0.0.1 (its address in *sa) and not listening:
 * the tests take the port from it, to listen on later or to find connections refused. */
static int bound_probe(struct sockaddr_in *sa)
{
    int probe = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(probe >= 0);
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(probe, (struct sockaddr *)sa, sizeof *sa), 0);
    socklen_t sl = sizeof *sa;
    assert_int_equal(getsockname(probe, (struct sockaddr *)sa, &sl), 0);
    return probe;
}

/* Runs a world of `world` thread ranks with the given skews; returns rank 0's handle. */
static rdv *run_world(int world, const int64_t *skew, const void *blob, size_t blob_len, joiner *js)
{
    char err[600];
    rdv_config c0 = config(0, world, 0, 5.0);
    c0.clock_skew_ns = skew ? skew[0] : 0;
    rdv *r0 = NULL;
    assert_int_equal(rdv_listen(&c0, &r0, err, sizeof err), 0);
    int port = rdv_port(r0);
    assert_true(port > 0 && port <= 65535);
    pthread_t t[8];
    for (int k = 1; k < world; k++) {
        memset(&js[k], 0, sizeof js[k]);
        js[k].cfg = config(k, world, port, 5.0);
        js[k].cfg.clock_skew_ns = skew ? skew[k] : 0;
        js[k].talk = true;
        start(&t[k], &js[k]);
    }
    if (rdv_serve(r0, blob, blob_len, err, sizeof err) != 0)
        fail_msg("serve: %s", err);
    /* Answer each rank's heartbeat over the kept sockets. */
    for (int k = 1; k < world; k++) {
        span_wire_msg m;
        assert_int_equal(recv_message(rdv_socket(r0, k), &m), 0);
        assert_int_equal(m.type, SPAN_WIRE_HEARTBEAT);
        assert_int_equal(m.rank, k);
        unsigned char msg[64];
        size_t n = span_wire_encode_done(msg, sizeof msg, 0, k);
        assert_int_equal(send_bounded(rdv_socket(r0, k), msg, n), 0);
    }
    for (int k = 1; k < world; k++) {
        finish(t[k]);
        if (js[k].rc != 0)
            fail_msg("rank %d: %s", k, js[k].err);
        assert_int_equal(js[k].talk_rc, 0);
    }
    return r0;
}

static void test_four_ranks(void **state)
{
    (void)state;
    unsigned char blob[RDV_BLOB_MAX];
    for (size_t i = 0; i < sizeof blob; i++)
        blob[i] = (unsigned char)(i * 7 + 3);
    memcpy(blob, "run 42", 6);
    joiner js[4];
    rdv *r0 = run_world(4, NULL, blob, sizeof blob, js);
    size_t len = 0;
    const void *b0 = rdv_blob(r0, &len);
    assert_int_equal(len, sizeof blob);
    assert_memory_equal(b0, blob, sizeof blob);
    rdv_clock c;
    assert_int_equal(rdv_clock_of(r0, 0, &c), 0);
    assert_true(c.offset_ns == 0 && c.uncertainty_ns == 0);
    assert_int_equal(rdv_clock_of(r0, 4, &c), -1);
    assert_int_equal(rdv_socket(r0, 0), -1);
    for (int k = 1; k < 4; k++) {
        assert_int_equal(js[k].blob_len, sizeof blob);
        assert_memory_equal(js[k].blob, blob, sizeof blob);
        assert_int_equal(rdv_clock_of(r0, k, &c), 0);
        /* The same clock on both sides: the truth is 0, and must lie within the bound. */
        print_message("rank %d offset %+lld ns, uncertainty %lld ns (rtt %lld ns)\n", k,
                      (long long)c.offset_ns, (long long)c.uncertainty_ns, (long long)c.rtt_ns);
        assert_true(llabs(c.offset_ns) <= c.uncertainty_ns);
        assert_true(c.uncertainty_ns > 0 && c.uncertainty_ns < 5 * MS);
        /* Each rank was told the same figures. */
        assert_true(js[k].clock.offset_ns == c.offset_ns);
        assert_true(js[k].clock.uncertainty_ns == c.uncertainty_ns);
        assert_true(rdv_socket(r0, k) >= 0);
    }
    rdv_close(r0);
}

static void test_skew(void **state)
{
    (void)state;
    int64_t skew[4] = {0, 0, 250 * MS, 0};
    joiner js[4];
    rdv *r0 = run_world(4, skew, "x", 1, js);
    for (int k = 1; k < 4; k++) {
        rdv_clock c;
        assert_int_equal(rdv_clock_of(r0, k, &c), 0);
        print_message("skewed world: rank %d offset %+lld ns, uncertainty %lld ns\n", k,
                      (long long)c.offset_ns, (long long)c.uncertainty_ns);
        assert_true(llabs(c.offset_ns - skew[k]) <= c.uncertainty_ns + 1 * MS);
    }
    rdv_close(r0);

    /* A skew on rank 0 shows up, negated, on every other rank. */
    int64_t skew0[3] = {-40 * MS, 0, 10 * MS};
    joiner js2[3];
    r0 = run_world(3, skew0, NULL, 0, js2);
    for (int k = 1; k < 3; k++) {
        rdv_clock c;
        assert_int_equal(rdv_clock_of(r0, k, &c), 0);
        assert_true(llabs(c.offset_ns - (skew0[k] - skew0[0])) <= c.uncertainty_ns + 1 * MS);
    }
    size_t len = 99;
    assert_non_null(rdv_blob(r0, &len));
    assert_int_equal(len, 0);
    assert_int_equal(js2[1].blob_len, 0);
    rdv_close(r0);
}

/* Rank 0 arrives last: the others keep retrying on a port nobody listens on yet. */
static void test_rank0_late(void **state)
{
    (void)state;
    struct sockaddr_in sa;
    int probe = bound_probe(&sa);
    int port = ntohs(sa.sin_port);
    assert_int_equal(close(probe), 0);

    joiner js[3];
    pthread_t t[3];
    for (int k = 1; k < 3; k++) {
        memset(&js[k], 0, sizeof js[k]);
        js[k].cfg = config(k, 3, port, 5.0);
        start(&t[k], &js[k]);
    }
    sleep_ms(400);
    char err[600];
    rdv_config c0 = config(0, 3, port, 5.0);
    rdv *r0 = NULL;
    if (rdv_listen(&c0, &r0, err, sizeof err) != 0)
        fail_msg("listen: %s", err);
    assert_int_equal(rdv_port(r0), port);
    assert_int_equal(rdv_serve(r0, "late", 4, err, sizeof err), 0);
    for (int k = 1; k < 3; k++) {
        finish(t[k]);
        if (js[k].rc != 0)
            fail_msg("rank %d: %s", k, js[k].err);
        assert_true(js[k].elapsed_s > 0.3);
        assert_memory_equal(js[k].blob, "late", 4);
    }
    rdv_close(r0);
}

/* Starts joiners for the listed ranks (with their world sizes), serves with rank 0's
 * world and timeout, and returns rank 0's status; *elapsed is the serve's duration. */
static int serve_with(int world, double timeout_s, int n, const int *ranks, const int *worlds,
                      const int *delays, joiner *js, char *err, size_t errlen, double *elapsed)
{
    rdv_config c0 = config(0, world, 0, timeout_s);
    rdv *r0 = NULL;
    assert_int_equal(rdv_listen(&c0, &r0, err, errlen), 0);
    pthread_t t[8];
    for (int i = 0; i < n; i++) {
        memset(&js[i], 0, sizeof js[i]);
        js[i].cfg = config(ranks[i], worlds[i], rdv_port(r0), timeout_s);
        js[i].delay_ms = delays ? delays[i] : 0;
        start(&t[i], &js[i]);
    }
    double t0 = now_s();
    int rc = rdv_serve(r0, "b", 1, err, errlen);
    *elapsed = now_s() - t0;
    for (int i = 0; i < n; i++)
        finish(t[i]);
    rdv_close(r0);
    return rc;
}

static void test_rank_never_joins(void **state)
{
    (void)state;
    joiner js[3];
    char err[600];
    double el;
    int ranks[] = {1, 2}, worlds[] = {4, 4};
    assert_int_equal(serve_with(4, 1.0, 2, ranks, worlds, NULL, js, err, sizeof err, &el), -1);
    expect_contains(err, "rank 3 did not join within 1.0 s");
    assert_true(el >= 0.95 && el < 1.0 + 0.5);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(js[i].rc, -1);
        expect_contains(js[i].err, "rank 3 did not join within 1.0 s"); /* told, not left hanging */
        assert_true(js[i].elapsed_s < 1.0 + 0.5);
    }

    int one[] = {1}, w4[] = {4};
    assert_int_equal(serve_with(4, 0.5, 1, one, w4, NULL, js, err, sizeof err, &el), -1);
    expect_contains(err, "rank 2, 3 did not join within 0.5 s");
    assert_true(el < 0.5 + 0.5);

    int none[1] = {0};
    assert_int_equal(serve_with(8, 0.3, 0, none, none, NULL, js, err, sizeof err, &el), -1);
    expect_contains(err, "rank 1-7 did not join within 0.3 s");
}

/* A signal while the ranks join (cfg.stop set 200 ms in, rank 2 of three never coming,
 * a 30 s timeout): rank 0 gives up within RDV_STOP_POLL_MS of it, names the missing rank
 * and tells the one that had joined, instead of waiting out the timeout. */
typedef struct {
    atomic_int *flag;
    int after_ms;
} stopper;

static void *stop_later(void *p)
{
    stopper *s = p;
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)s->after_ms * 1000000};
    nanosleep(&ts, NULL);
    atomic_store(s->flag, 1);
    return NULL;
}

static void test_stop_while_joining(void **state)
{
    (void)state;
    char err[600];
    atomic_int flag = 0;
    rdv_config c0 = config(0, 3, 0, 30.0);
    c0.stop = &flag;
    rdv *r0 = NULL;
    assert_int_equal(rdv_listen(&c0, &r0, err, sizeof err), 0);
    joiner js;
    memset(&js, 0, sizeof js);
    js.cfg = config(1, 3, rdv_port(r0), 30.0);
    pthread_t t, st;
    start(&t, &js);
    stopper s = {.flag = &flag, .after_ms = 200};
    assert_int_equal(pthread_create(&st, NULL, stop_later, &s), 0);
    double t0 = now_s();
    assert_int_equal(rdv_serve(r0, "b", 1, err, sizeof err), -1);
    double el = now_s() - t0;
    assert_int_equal(pthread_join(st, NULL), 0);
    finish(t);
    rdv_close(r0);
    expect_contains(err, "interrupted by a signal while rank 2 had not joined");
    assert_true(el >= 0.19 && el < 0.2 + 2.0 * RDV_STOP_POLL_MS / 1000.0 + 0.5);
    assert_int_equal(js.rc, -1);
    expect_contains(js.err, "interrupted by a signal"); /* told, not left waiting */
}

/* Many scattered absentees: the list collapses runs and is cut short, never overflows. */
static void test_many_missing(void **state)
{
    (void)state;
    enum { WORLD = 400, JOINERS = 64 };
    char err[600];
    rdv_config c0 = config(0, WORLD, 0, 1.0);
    rdv *r0 = NULL;
    assert_int_equal(rdv_listen(&c0, &r0, err, sizeof err), 0);
    joiner *js = calloc(JOINERS, sizeof *js);
    pthread_t t[JOINERS];
    assert_non_null(js);
    for (int i = 0; i < JOINERS; i++) {
        js[i].cfg = config(201 + 2 * i, WORLD, rdv_port(r0), 1.0); /* 201, 203, .. 327 */
        start(&t[i], &js[i]);
    }
    assert_int_equal(rdv_serve(r0, NULL, 0, err, sizeof err), -1);
    for (int i = 0; i < JOINERS; i++) {
        finish(t[i]);
        assert_int_equal(js[i].rc, -1);
    }
    expect_contains(err, "rank 1-200, 202, 204, 206, ");
    expect_contains(err, ", ... did not join within 1.0 s");
    assert_null(strstr(err, "328-399")); /* cut before the tail */
    free(js);
    rdv_close(r0);

    /* Runs collapse; a pair stays a pair. */
    c0 = config(0, 12, 0, 0.3);
    assert_int_equal(rdv_listen(&c0, &r0, err, sizeof err), 0);
    int ranks[] = {4, 7, 10};
    pthread_t t3[3];
    joiner j3[3];
    for (int i = 0; i < 3; i++) {
        memset(&j3[i], 0, sizeof j3[i]);
        j3[i].cfg = config(ranks[i], 12, rdv_port(r0), 0.3);
        start(&t3[i], &j3[i]);
    }
    assert_int_equal(rdv_serve(r0, NULL, 0, err, sizeof err), -1);
    for (int i = 0; i < 3; i++)
        finish(t3[i]);
    expect_contains(err, "rank 1-3, 5, 6, 8, 9, 11 did not join within 0.3 s");
    rdv_close(r0);
}

static void test_world_mismatch(void **state)
{
    (void)state;
    joiner js[2];
    char err[600];
    double el;
    /* Rank 1 joins first and must hear why the rendezvous failed. */
    int ranks[] = {1, 2}, worlds[] = {3, 4}, delays[] = {0, 300};
    assert_int_equal(serve_with(3, 5.0, 2, ranks, worlds, delays, js, err, sizeof err, &el), -1);
    expect_contains(err, "rank 2 says the world has 4 ranks, rank 0 says 3");
    assert_true(el < 2.0);
    assert_int_equal(js[1].rc, -1);
    expect_contains(js[1].err, "rank 0 refused rank 2");
    expect_contains(js[1].err, "world has 4 ranks");
    assert_int_equal(js[0].rc, -1);
    expect_contains(js[0].err, "rank 0 gave up");
    expect_contains(js[0].err, "world has 4 ranks");

}

/* A hand-made hello, for what rdv_join itself would never send. */
static int raw_hello(int port, int rank, int world, int version)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)port);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    unsigned char h[16] = {'D', 'D', 'R', 'V', (unsigned char)version, 0, 0, 0,
                           (unsigned char)rank, 0, 0, 0, (unsigned char)world, 0, 0, 0};
    assert_int_equal(send_bounded(fd, h, sizeof h), 0);
    return fd;
}

/* Reads rank 0's answer to a refused hello: a REJECT frame (type 1) and its text. */
static void expect_reject(int fd, const char *frag)
{
    unsigned char buf[700];
    size_t have = 0;
    double end = now_s() + 5;
    while (now_s() < end) {
        struct pollfd pf = {fd, POLLIN, 0};
        int n = poll(&pf, 1, 100);
        assert_true(n >= 0 || errno == EINTR);
        if (n <= 0)
            continue;
        ssize_t got = recv(fd, buf + have, sizeof buf - 1 - have, 0);
        assert_true(got >= 0);
        if (got == 0)
            break;
        have += (size_t)got;
    }
    assert_true(have >= 8);
    assert_int_equal(buf[0], 1);
    assert_int_equal(buf[4] | buf[5] << 8, have - 8);
    buf[have] = '\0';
    expect_contains((const char *)buf + 8, frag);
    assert_int_equal(close(fd), 0);
}

/* What rdv_join never sends (it checks its own configuration) rank 0 refuses anyway. */
static void test_foreign_hello(void **state)
{
    (void)state;
    char err[600];
    rdv_config c0 = config(0, 3, 0, 5.0);
    rdv *r0 = NULL;
    assert_int_equal(rdv_listen(&c0, &r0, err, sizeof err), 0);
    int fd = raw_hello(rdv_port(r0), 5, 3, 1);
    assert_int_equal(rdv_serve(r0, NULL, 0, err, sizeof err), -1);
    expect_contains(err, "claims rank 5, outside 1..2");
    expect_reject(fd, "claims rank 5, outside 1..2");
    rdv_close(r0);

    assert_int_equal(rdv_listen(&c0, &r0, err, sizeof err), 0);
    fd = raw_hello(rdv_port(r0), 1, 3, 2);
    assert_int_equal(rdv_serve(r0, NULL, 0, err, sizeof err), -1);
    expect_contains(err, "speaks rendezvous version 2, rank 0 speaks 1");
    expect_reject(fd, "version 2");
    rdv_close(r0);

    assert_int_equal(rdv_listen(&c0, &r0, err, sizeof err), 0);
    fd = raw_hello(rdv_port(r0), 0, 3, 1);
    assert_int_equal(rdv_serve(r0, NULL, 0, err, sizeof err), -1);
    expect_contains(err, "claims rank 0");
    expect_reject(fd, "claims rank 0");
    rdv_close(r0);
}

static void test_duplicate_rank(void **state)
{
    (void)state;
    joiner js[2];
    char err[600];
    double el;
    int ranks[] = {1, 1}, worlds[] = {3, 3}, delays[] = {0, 300};
    assert_int_equal(serve_with(3, 5.0, 2, ranks, worlds, delays, js, err, sizeof err, &el), -1);
    expect_contains(err, "rank 1 joined twice (again from 127.0.0.1:");
    assert_int_equal(js[1].rc, -1);
    expect_contains(js[1].err, "rank 0 refused rank 1: rank 1 joined twice");
    assert_int_equal(js[0].rc, -1);
    expect_contains(js[0].err, "joined twice");
}

/* Connections that do not speak the protocol are dropped without harming the rest. */
static void test_stray_connections(void **state)
{
    (void)state;
    char err[600];
    rdv_config c0 = config(0, 2, 0, 5.0);
    rdv *r0 = NULL;
    assert_int_equal(rdv_listen(&c0, &r0, err, sizeof err), 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)rdv_port(r0));
    int junk = socket(AF_INET, SOCK_STREAM, 0), quiet = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(junk >= 0 && quiet >= 0);
    assert_int_equal(connect(junk, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(connect(quiet, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(send_bounded(junk, "GET / HTTP/1.0\r\n\r\n", 18), 0);
    joiner j;
    memset(&j, 0, sizeof j);
    j.cfg = config(1, 2, rdv_port(r0), 5.0);
    j.delay_ms = 100;
    pthread_t t;
    start(&t, &j);
    int rc = rdv_serve(r0, "ok", 2, err, sizeof err);
    finish(t);
    if (rc != 0 || j.rc != 0)
        fail_msg("serve: %s / rank 1: %s", err, j.err);
    assert_memory_equal(j.blob, "ok", 2);
    /* The foreign client was hung up on (reset: it had sent more than rank 0 read). */
    char buf[8];
    struct pollfd pf = {junk, POLLIN, 0};
    assert_int_equal(poll(&pf, 1, 2000), 1);
    ssize_t got = recv(junk, buf, sizeof buf, 0);
    assert_true(got == 0 || (got < 0 && errno == ECONNRESET));
    assert_int_equal(close(junk), 0);
    assert_int_equal(close(quiet), 0);
    rdv_close(r0);

    /* Strays are mentioned when the rendezvous then times out. */
    c0.timeout_s = 0.3;
    assert_int_equal(rdv_listen(&c0, &r0, err, sizeof err), 0);
    sa.sin_port = htons((uint16_t)rdv_port(r0));
    junk = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(junk >= 0);
    assert_int_equal(connect(junk, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(send_bounded(junk, "0123456789abcdef", 16), 0);
    assert_int_equal(rdv_serve(r0, NULL, 0, err, sizeof err), -1);
    expect_contains(err, "rank 1 did not join within 0.3 s (1 connection that did not speak");
    assert_int_equal(close(junk), 0);
    rdv_close(r0);
}

static void test_unreachable(void **state)
{
    (void)state;
    struct sockaddr_in sa;
    int probe = bound_probe(&sa);
    int port = ntohs(sa.sin_port); /* bound but not listening: connections are refused */
    rdv_config c = config(2, 3, port, 0.5);
    rdv *r = NULL;
    char err[600], want[128];
    double t0 = now_s();
    assert_int_equal(rdv_join(&c, &r, err, sizeof err), -1);
    double el = now_s() - t0;
    assert_null(r);
    snprintf(want, sizeof want, "rank 2 could not reach rank 0 at 127.0.0.1:%d within 0.5 s", port);
    expect_contains(err, want);
    expect_contains(err, "refused");
    assert_true(el >= 0.45 && el < 0.5 + 0.3);
    assert_int_equal(close(probe), 0);

    /* Without a resolver the lookup fails as "temporary" and is retried until the
     * deadline; with one it fails at once.  Either way the message names the host. */
    c.addr = "no-such-host.invalid";
    assert_int_equal(rdv_join(&c, &r, err, sizeof err), -1);
    if (!strstr(err, "cannot resolve rank 0's address no-such-host.invalid"))
        expect_contains(err, "could not reach rank 0 at no-such-host.invalid");
}

static void test_bad_config(void **state)
{
    (void)state;
    char err[600];
    rdv *r = NULL;
    rdv_config c = config(1, 4, 0, 1.0);
    assert_int_equal(rdv_join(&c, &r, err, sizeof err), -1);
    expect_contains(err, "port 0 is not in 1..65535");
    c = config(0, 4, 1234, 1.0);
    assert_int_equal(rdv_join(&c, &r, err, sizeof err), -1);
    expect_contains(err, "rank 0 listens");
    c = config(1, 4, 1234, 1.0);
    assert_int_equal(rdv_listen(&c, &r, err, sizeof err), -1);
    expect_contains(err, "only rank 0 listens");
    c = config(0, 0, 0, 1.0);
    assert_int_equal(rdv_listen(&c, &r, err, sizeof err), -1);
    expect_contains(err, "world size 0");
    c = config(0, 2, 0, 0.0);
    assert_int_equal(rdv_listen(&c, &r, err, sizeof err), -1);
    expect_contains(err, "timeout");
    c = config(0, 2, 70000, 1.0);
    assert_int_equal(rdv_listen(&c, &r, err, sizeof err), -1);
    expect_contains(err, "port 70000");
    c = config(1, 2, 1234, 1.0);
    c.addr = NULL;
    assert_int_equal(rdv_join(&c, &r, err, sizeof err), -1);
    expect_contains(err, "no address");
    assert_null(r);

    /* A blob too large is refused before anyone is waited for. */
    c = config(0, 2, 0, 1.0);
    assert_int_equal(rdv_listen(&c, &r, err, sizeof err), 0);
    unsigned char *big = calloc(1, RDV_BLOB_MAX + 1);
    assert_non_null(big);
    double t0 = now_s();
    assert_int_equal(rdv_serve(r, big, RDV_BLOB_MAX + 1, err, sizeof err), -1);
    free(big);
    assert_true(now_s() - t0 < 0.5);
    expect_contains(err, "4097 bytes");
    rdv_close(r);

    /* Listening twice on one port fails with the reason. */
    c = config(0, 1, 0, 1.0);
    rdv *a = NULL, *b = NULL;
    assert_int_equal(rdv_listen(&c, &a, err, sizeof err), 0);
    /* A world of one needs nobody. */
    assert_int_equal(rdv_serve(a, "solo", 4, err, sizeof err), 0);
    rdv_config c2 = config(0, 2, 0, 1.0);
    rdv *held = NULL;
    assert_int_equal(rdv_listen(&c2, &held, err, sizeof err), 0);
    c2.port = rdv_port(held);
    assert_int_equal(rdv_listen(&c2, &b, err, sizeof err), -1);
    expect_contains(err, "cannot listen on 127.0.0.1");
    expect_contains(err, "bind");
    rdv_close(held);
    rdv_close(a);
}

/* Ranks as real processes: three children join a parent rank 0. */
static void test_processes(void **state)
{
    (void)state;
    char err[600];
    rdv_config c0 = config(0, 4, 0, 5.0);
    rdv *r0 = NULL;
    assert_int_equal(rdv_listen(&c0, &r0, err, sizeof err), 0);
    int port = rdv_port(r0);
    pid_t pid[4] = {0};
    for (int k = 1; k < 4; k++) {
        pid[k] = fork();
        assert_true(pid[k] >= 0);
        if (pid[k] == 0) {
            rdv_close(r0); /* the child's copy of rank 0's listener */
            rdv_config c = config(k, 4, port, 5.0);
            c.clock_skew_ns = k == 3 ? -100 * MS : 0;
            rdv *r = NULL;
            char e[600];
            int code = 0;
            rdv_clock clk;
            size_t len = 0;
            if (rdv_join(&c, &r, e, sizeof e) != 0) {
                fprintf(stderr, "child rank %d: %s\n", k, e);
                code = 1;
            } else if (!rdv_blob(r, &len) || len != 7 || memcmp(rdv_blob(r, NULL), "procs!", 7) != 0) {
                code = 2;
            } else if (rdv_clock_of(r, k, &clk) != 0 ||
                       llabs(clk.offset_ns - c.clock_skew_ns) > clk.uncertainty_ns + 1 * MS) {
                code = 3;
            }
            rdv_close(r);
            _exit(code);
        }
    }
    int rc = rdv_serve(r0, "procs!", 7, err, sizeof err);
    /* Reap every child within a bound, killing any that hangs. */
    double end = now_s() + 10;
    int status[4] = {0};
    for (int k = 1; k < 4; k++) {
        pid_t w;
        while ((w = waitpid(pid[k], &status[k], WNOHANG)) == 0 && now_s() < end)
            sleep_ms(10);
        if (w == 0) {
            assert_int_equal(kill(pid[k], SIGKILL), 0);
            assert_int_equal(waitpid(pid[k], &status[k], 0), pid[k]);
        }
    }
    if (rc != 0)
        fail_msg("serve: %s", err);
    for (int k = 1; k < 4; k++) {
        assert_true(WIFEXITED(status[k]));
        assert_int_equal(WEXITSTATUS(status[k]), 0);
        rdv_clock c;
        assert_int_equal(rdv_clock_of(r0, k, &c), 0);
        int64_t want = k == 3 ? -100 * MS : 0;
        print_message("processes: rank %d offset %+lld ns, uncertainty %lld ns\n", k,
                      (long long)c.offset_ns, (long long)c.uncertainty_ns);
        assert_true(llabs(c.offset_ns - want) <= c.uncertainty_ns + 1 * MS);
    }
    rdv_close(r0);
}

/* A socket bound to a port and connected to that same port is connected to itself (TCP's
 * simultaneous open); one connected to a listener is not. */
static void test_self_connection(void **state)
{
    (void)state;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(listener >= 0);
    assert_int_equal(bind(listener, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(listener, 1), 0);
    assert_int_equal(getsockname(listener, (struct sockaddr *)&a, &al), 0);
    int client = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(client >= 0);
    assert_int_equal(connect(client, (struct sockaddr *)&a, sizeof a), 0);
    assert_false(rdv_socket_is_self_connected(client));
    close(client);
    close(listener);

    /* The port is free again: bind to it and connect to it. */
    int self = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(self >= 0);
    int on = 1;
    assert_int_equal(setsockopt(self, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on), 0);
    assert_int_equal(bind(self, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(connect(self, (struct sockaddr *)&a, sizeof a), 0);
    assert_true(rdv_socket_is_self_connected(self));
    close(self);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_ranks),
        cmocka_unit_test(test_skew),
        cmocka_unit_test(test_rank0_late),
        cmocka_unit_test(test_rank_never_joins),
        cmocka_unit_test(test_stop_while_joining),
        cmocka_unit_test(test_many_missing),
        cmocka_unit_test(test_world_mismatch),
        cmocka_unit_test(test_duplicate_rank),
        cmocka_unit_test(test_foreign_hello),
        cmocka_unit_test(test_stray_connections),
        cmocka_unit_test(test_unreachable),
        cmocka_unit_test(test_self_connection),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_processes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
