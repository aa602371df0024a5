/* rank_process.c — one rank in its own process: rendezvous, run, stream (see
 * rank_process.h). */
#include "common/textcopy.h"
#include "engine/launch/rank_process.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "engine/launch/launch_threads.h"
#include "profiler/recorder.h"
#include "engine/launch/rendezvous.h"
#include "profiler/span_wire.h"

typedef struct {
    int fd;
    unsigned char *buf; /* SPAN_WIRE_MAX_MSG bytes */
} stream_sink;

/* Writes all of a message; MSG_NOSIGNAL: a coordinator that went away is an error
 * here, not a SIGPIPE. */
static int send_all(int fd, const unsigned char *p, size_t n, char *err, size_t errlen)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(err, errlen, "the run's coordinator went away: %s", w < 0 ? strerror(errno) : "closed");
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int stream_spans(void *user, const span *spans, size_t n, char *err, size_t errlen)
{
    stream_sink *s = user;
    for (size_t off = 0; off < n; off += SPAN_WIRE_MAX_BATCH) {
        int k = n - off < SPAN_WIRE_MAX_BATCH ? (int)(n - off) : SPAN_WIRE_MAX_BATCH;
        size_t len = span_wire_encode_batch(s->buf, SPAN_WIRE_MAX_MSG, spans + off, k);
        if (len == 0) {
            snprintf(err, errlen, "cannot encode a batch of %d spans", k);
            return -1;
        }
        if (send_all(s->fd, s->buf, len, err, errlen) != 0)
            return -1;
    }
    return 0;
}

typedef struct {
    int64_t run_id, t0;
    char world[512]; /* the backend's world handle: a path, an NCCL id */
} blob_info;

static int parse_blob(const char *blob, size_t len, blob_info *b)
{
    long long run, t0;
    if (!blob || len == 0 || blob[len - 1] != '\0' ||
        sscanf(blob, "run %lld\nt0 %lld\nworld %511s", &run, &t0, b->world) != 3)
        return -1;
    b->run_id = run;
    b->t0 = t0;
    return 0;
}

/* Rank 0's rebuilt assignment as INTS: version, nbuckets, then per bucket nbytes,
 * size_limit, nparams, params. */
static int send_assignment(int fd, unsigned char *buf, const bucket_assignment *a, char *err, size_t errlen)
{
    int n = 2;
    for (int b = 0; b < a->nbuckets; b++)
        n += 3 + a->buckets[b].nparams;
    if (n > SPAN_WIRE_MAX_INTS) {
        snprintf(err, errlen, "the rebuilt bucket assignment is too large to send (%d values)", n);
        return -1;
    }
    int64_t *v = malloc((size_t)n * sizeof *v);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int pos = 0;
    v[pos++] = 1;
    v[pos++] = a->nbuckets;
    for (int b = 0; b < a->nbuckets; b++) {
        v[pos++] = a->buckets[b].nbytes;
        v[pos++] = a->buckets[b].size_limit;
        v[pos++] = a->buckets[b].nparams;
        for (int i = 0; i < a->buckets[b].nparams; i++)
            v[pos++] = a->buckets[b].params[i];
    }
    size_t len = span_wire_encode_ints(buf, SPAN_WIRE_MAX_MSG, 0, v, n);
    free(v);
    return len ? send_all(fd, buf, len, err, errlen) : -1;
}

static int join(const rank_process_args *a, rdv **r, blob_info *b, int64_t *t0_device, char *err, size_t errlen)
{
    rdv_config cfg = {.addr = a->master_addr,
                      .port = a->master_port,
                      .rank = a->rank + 1,
                      .world = a->sc->world_size + 1,
                      .timeout_s = a->sc->timeout_s,
                      .clock_skew_ns = a->clock_skew_ns};
    char why[512];
    if (rdv_join(&cfg, r, why, sizeof why) != 0) {
        snprintf(err, errlen, "rank %d cannot join the run at %s:%d: %s", a->rank, a->master_addr, a->master_port,
                 why);
        return -1;
    }
    size_t len;
    const char *blob = rdv_blob(*r, &len);
    rdv_clock clk;
    if (parse_blob(blob, len, b) != 0 || rdv_clock_of(*r, a->rank + 1, &clk) != 0) {
        snprintf(err, errlen, "rank %d: the coordinator's welcome is not understood", a->rank);
        rdv_close(*r);
        return -1;
    }
    /* A reading t on this clock is t - offset on the run's: spans measured against
     * t0 + offset land on the run's clock.  The device reads the unshifted clock, so the
     * injected skew comes off its origin. */
    *t0_device = b->t0 + clk.offset_ns - a->clock_skew_ns;
    return 0;
}

int rank_process_run(const rank_process_args *a, launch_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    rdv *r = NULL;
    blob_info b;
    int64_t t0_device;
    if (join(a, &r, &b, &t0_device, err, errlen) != 0)
        return -1;
    res->run_id = b.run_id;
    int fd = rdv_socket(r, 0);
    stream_sink sink = {.fd = fd, .buf = malloc(SPAN_WIRE_MAX_MSG)};
    recorder *rec = NULL;
    backend_world *bw = NULL;
    prof_nvtx nvtx;
    prof_nvtx_init(&nvtx);
    char failure[512] = "";
    bucket_assignment rebuilt;
    bool rebuilt_valid = false;
    if (!sink.buf || recorder_create_sink(stream_spans, &sink, BACKEND_RINGS_PER_RANK, &rec) != 0 ||
        recorder_start(rec) != 0) {
        snprintf(failure, sizeof failure, "rank %d: cannot start its span stream", a->rank);
    } else {
        backend_world_args wa = {
            .sc = a->sc, .rec = rec, .nvtx = &nvtx, .first_rank = a->rank, .attach_to = b.world, .t0_ns = t0_device};
        char why[512];
        size_t hb = 0;
        if (a->be->world_create(&wa, &bw, why, sizeof why) != 0) {
            snprintf(failure, sizeof failure, "rank %d: %.480s", a->rank, why);
        } else if ((hb = span_wire_encode_heartbeat(sink.buf, SPAN_WIRE_MAX_MSG, a->rank, 0)) == 0 ||
                   send_all(fd, sink.buf, hb, why, sizeof why) != 0) {
            /* The first heartbeat (clock 0) tells the coordinator the world is mapped. */
            snprintf(failure, sizeof failure, "rank %d: %.480s", a->rank, why);
        } else {
            launch_threads_args la = {.sc = a->sc, .m = a->m, .be = a->be, .rec = rec, .nvtx = &nvtx, .opt = a->opt,
                                      .first_rank = a->rank, .nranks = 1, .world = bw};
            launch_threads(&la, failure, sizeof failure, &rebuilt, &rebuilt_valid);
            if (failure[0])
                a->be->world_abort(bw, failure);
        }
    }
    char why[512];
    if (rec && recorder_stop(rec, why, sizeof why) != 0 && !failure[0])
        text_copy(failure, sizeof failure, why);
    int64_t sent = rec ? recorder_written(rec) : 0;
    size_t len;
    int out = 0;
    if (sink.buf && !failure[0] && rebuilt_valid && a->rank == 0 &&
        send_assignment(fd, sink.buf, &rebuilt, why, sizeof why) != 0)
        text_copy(failure, sizeof failure, why);
    if (sink.buf) {
        len = failure[0] ? span_wire_encode_failed(sink.buf, SPAN_WIRE_MAX_MSG, a->rank, failure)
                         : span_wire_encode_done(sink.buf, SPAN_WIRE_MAX_MSG, a->rank, sent);
        if (len == 0 || send_all(fd, sink.buf, len, why, sizeof why) != 0) {
            if (!failure[0])
                text_copy(failure, sizeof failure, why);
            out = -1;
        }
    }
    res->spans = sent;
    res->complete = !failure[0];
    text_copy(res->error, sizeof res->error, failure);
    if (out == 0 && failure[0])
        out = 1;
    if (out < 0)
        text_copy(err, errlen, failure);
    if (rebuilt_valid)
        bucket_assignment_free(&rebuilt);
    if (bw)
        a->be->world_destroy(bw);
    recorder_destroy(rec);
    prof_nvtx_destroy(&nvtx);
    free(sink.buf);
    rdv_close(r);
    return out;
}
