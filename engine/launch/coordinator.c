/* coordinator.c — meets the rank processes, gathers their spans into the one database,
 * and ends the run when they are done or the first of them fails (see coordinator.h). */
#include "common/textcopy.h"
#include "engine/launch/coordinator.h"

#include "engine/ddp/ddp_collectives.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profiler/recorder.h"
#include "engine/launch/rendezvous.h"
#include "engine/launch/run_record.h"
#include "profiler/span_wire.h"

enum { RANK_RUNNING = 0, RANK_DONE, RANK_FAILED, RANK_GONE };

/* After a rank process dies, how long its peers get to leave on their own: one inside a
 * collective with it waits for the share it lent until run.timeout_s (its lease is never
 * returned), so after this the coordinator kills them; what they sent is kept. */
#define DEAD_PEER_GRACE_S 2.0

struct coordinator {
    coordinator_args a;
    int world;
    int64_t run_id;
    recorder *rec;
    backend_world *bw;
    rdv *rdv;
    span_wire_decoder **dec;
    int *state;
    int64_t *received;
    int attached; /* ranks that said they mapped the shared world */
    char failure[512];
    bool aborted;
    double abort_time;
    double death_time; /* when a running rank's process died (0: none) */
    bool peers_killed;
    bucket_assignment rebuilt;
    bool rebuilt_valid;
    double t_start;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The first failure names the run's end and stops every rank at once. */
static void fail_run(coordinator *c, const char *why)
{
    if (!c->failure[0])
        text_copy(c->failure, sizeof c->failure, why);
    if (!c->aborted) {
        c->aborted = true;
        c->abort_time = now_s();
        if (c->bw)
            c->a.be->world_abort(c->bw, why);
    }
}

/* Largest collective a rank stages: iteration 0 reduces the whole model as one bucket,
 * and the rebuild broadcasts one int32 per parameter. */
static size_t stage_bytes(const model *m)
{
    size_t grads = (size_t)m->total_numel * FP32_BYTES, other = (size_t)ddp_collectives_max_bytes(m);
    return grads > other ? grads : other;
}

int coordinator_open(const coordinator_args *a, coordinator **out, char *err, size_t errlen)
{
    coordinator *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->a = *a;
    c->world = a->sc->world_size;
    c->dec = calloc((size_t)c->world, sizeof *c->dec);
    c->state = calloc((size_t)c->world, sizeof *c->state);
    c->received = calloc((size_t)c->world, sizeof *c->received);
    if (!c->dec || !c->state || !c->received) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (int r = 0; r < c->world; r++)
        if (!(c->dec[r] = span_wire_decoder_create())) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
    /* Ranks as processes store every rank's spans (the statistics come from them). */
    if (run_record_begin(a->st, a->sc, a->m, a->be->name, NULL, &c->run_id, err, errlen) != 0)
        goto fail;
    char ranks_how[256] = "processes", note[200];
    if (a->be->placement_note && a->be->placement_note(a->sc, note, sizeof note))
        snprintf(ranks_how, sizeof ranks_how, "processes; %s", note);
    if (store_set_run_ranks(a->st, c->run_id, ranks_how, err, errlen) != 0)
        goto fail_run;
    if (recorder_create(a->opt->record ? a->st : NULL, c->run_id, c->world, &c->rec) != 0 ||
        recorder_start(c->rec) != 0) {
        snprintf(err, errlen, "cannot start the span writer");
        goto fail_run;
    }
    backend_world_args wa = {.sc = a->sc, .create_shared = true, .stage_bytes = stage_bytes(a->m)};
    if (a->be->world_create(&wa, &c->bw, err, errlen) != 0)
        goto fail_run;
    rdv_config cfg = {.bind_addr = a->bind_addr, .port = a->port, .rank = 0, .world = c->world + 1,
                      .timeout_s = a->sc->timeout_s, .stop = a->opt->interrupted};
    if (rdv_listen(&cfg, &c->rdv, err, errlen) != 0)
        goto fail_run;
    c->t_start = now_s();
    *out = c;
    return 0;
fail_run:;
    char ignored[256];
    run_record_finish(a->st, c->run_id, err, ignored, sizeof ignored);
fail:
    *out = NULL;
    launch_result res;
    coordinator_close(c, &res, NULL, 0);
    return -1;
}

int coordinator_port(const coordinator *c) { return rdv_port(c->rdv); }

void coordinator_fail(coordinator *c, const char *why) { fail_run(c, why); }

/* The rendezvous: who the ranks are, where the world is, the clock origin. */
static int meet(coordinator *c)
{
    char blob[RDV_BLOB_MAX], err[512];
    int64_t t0 = c->a.be->clock_ns();
    int n = snprintf(blob, sizeof blob, "run %lld\nt0 %lld\nworld %s\n", (long long)c->run_id, (long long)t0,
                     c->a.be->world_handle(c->bw));
    if (n < 0 || (size_t)n >= sizeof blob) {
        fail_run(c, "the shared world's name is too long for the rendezvous");
        return -1;
    }
    if (rdv_serve(c->rdv, blob, (size_t)n + 1, err, sizeof err) != 0) {
        char why[600];
        snprintf(why, sizeof why, "rendezvous of the rank processes failed: %s", err);
        fail_run(c, why);
        return -1;
    }
    for (int r = 0; r < c->world; r++) {
        rdv_clock clk;
        if (rdv_clock_of(c->rdv, r + 1, &clk) == 0 &&
            store_set_rank_clock(c->a.st, c->run_id, r, clk.offset_ns, clk.uncertainty_ns, err, sizeof err) != 0) {
            fail_run(c, err);
            return -1;
        }
    }
    return 0;
}

/* Rank 0's rebuilt assignment: version, nbuckets, then per bucket nbytes, size_limit,
 * nparams and the parameter indices. */
static void take_assignment(coordinator *c, const int64_t *v, int n)
{
    if (c->rebuilt_valid || n < 2 || v[1] < 0 || v[1] > c->a.m->nparams)
        return;
    bucket_assignment a = {.nbuckets = (int)v[1]};
    a.buckets = calloc((size_t)(a.nbuckets ? a.nbuckets : 1), sizeof *a.buckets);
    if (!a.buckets)
        return;
    int pos = 2;
    for (int b = 0; b < a.nbuckets; b++) {
        if (pos + 3 > n || v[pos + 2] < 0 || pos + 3 + v[pos + 2] > n)
            goto bad;
        bucket_def *bd = &a.buckets[b];
        bd->nbytes = v[pos];
        bd->size_limit = v[pos + 1];
        bd->nparams = (int)v[pos + 2];
        bd->params = calloc((size_t)(bd->nparams ? bd->nparams : 1), sizeof *bd->params);
        if (!bd->params)
            goto bad;
        for (int i = 0; i < bd->nparams; i++) {
            int64_t p = v[pos + 3 + i];
            if (p < 0 || p >= c->a.m->nparams)
                goto bad;
            bd->params[i] = (int)p;
        }
        pos += 3 + bd->nparams;
    }
    c->rebuilt = a;
    c->rebuilt_valid = true;
    return;
bad:
    bucket_assignment_free(&a);
}

static void on_message(coordinator *c, int r, const span_wire_msg *msg)
{
    char why[700];
    switch (msg->type) {
    case SPAN_WIRE_BATCH:
        for (int i = 0; i < msg->nspans; i++) {
            if (msg->spans[i].rank != r) {
                snprintf(why, sizeof why, "rank %d sent a span of rank %d", r, msg->spans[i].rank);
                fail_run(c, why);
                return;
            }
            span_ring_push(recorder_ring(c->rec, r), &msg->spans[i]);
        }
        c->received[r] += msg->nspans;
        break;
    case SPAN_WIRE_RANK_DONE:
        c->state[r] = RANK_DONE;
        if (msg->total_spans != c->received[r]) {
            snprintf(why, sizeof why, "rank %d sent %lld spans but %lld arrived", r, (long long)msg->total_spans,
                     (long long)c->received[r]);
            fail_run(c, why);
        }
        break;
    case SPAN_WIRE_RANK_FAILED:
        c->state[r] = RANK_FAILED;
        fail_run(c, msg->error);
        break;
    case SPAN_WIRE_INTS:
        if (r == 0)
            take_assignment(c, msg->ints, msg->nints);
        break;
    case SPAN_WIRE_HEARTBEAT:
        /* A rank's first heartbeat says it has mapped the shared world; once every
         * rank has, its name can go, so that nothing is left behind whatever happens. */
        if (msg->clock_ns == 0 && ++c->attached == c->world)
            c->a.be->world_unlink(c->bw);
        break;
    }
}

/* How child `pid` ended, if it has ("exited with status 1", "was killed by signal 9"). */
static void exit_text(pid_t pid, char *out, size_t outlen)
{
    out[0] = '\0';
    if (pid <= 0)
        return;
    int status;
    /* Give a dying child a moment to be reaped, so its cause of death is known. */
    for (int i = 0; i < 50; i++) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            if (WIFSIGNALED(status))
                snprintf(out, outlen, " (its process %d was killed by signal %d)", (int)pid, WTERMSIG(status));
            else
                snprintf(out, outlen, " (its process %d exited with status %d)", (int)pid, WEXITSTATUS(status));
            return;
        }
        if (w < 0)
            return;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

/* Reads what rank r sent.  Returns true once its stream has ended (closed, broken or
 * corrupt): it is never read again. */
static bool on_readable(coordinator *c, int r, const pid_t *children, int nchildren)
{
    char buf[65536], err[512];
    ssize_t n = read(rdv_socket(c->rdv, r + 1), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return false;
    if (n <= 0) {
        if (c->state[r] == RANK_RUNNING) {
            char how[128], why[400];
            exit_text(r < nchildren && children ? children[r] : 0, how, sizeof how);
            snprintf(why, sizeof why, "rank %d died without a word%s", r, how);
            fail_run(c, why);
            c->state[r] = RANK_GONE;
            if (c->death_time == 0)
                c->death_time = now_s();
        }
        return true;
    }
    size_t off = 0;
    while (off < (size_t)n) {
        off += span_wire_feed(c->dec[r], buf + off, (size_t)n - off);
        span_wire_msg msg;
        int got;
        while ((got = span_wire_next(c->dec[r], &msg, err, sizeof err)) == 1)
            on_message(c, r, &msg);
        if (got < 0) {
            char why[600];
            snprintf(why, sizeof why, "rank %d: %s", r, err);
            fail_run(c, why);
            if (c->state[r] == RANK_RUNNING)
                c->state[r] = RANK_GONE;
            return true;
        }
    }
    return false;
}

static void kill_children(const pid_t *children, int nchildren)
{
    for (int i = 0; i < nchildren; i++)
        if (children[i] > 0)
            kill(children[i], SIGKILL);
}

int coordinator_serve(coordinator *c, const pid_t *children, int nchildren)
{
    if (meet(c) != 0) {
        if (children)
            kill_children(children, nchildren);
        return 1;
    }
    struct pollfd *pfd = calloc((size_t)c->world, sizeof *pfd);
    int *who = calloc((size_t)c->world, sizeof *who);
    bool *closed = calloc((size_t)c->world, sizeof *closed);
    if (!pfd || !who || !closed) {
        fail_run(c, "out of memory watching the ranks");
        if (children)
            kill_children(children, nchildren);
    }
    while (pfd && who && closed) {
        int n = 0;
        for (int r = 0; r < c->world; r++)
            if (!closed[r]) {
                pfd[n] = (struct pollfd){.fd = rdv_socket(c->rdv, r + 1), .events = POLLIN};
                who[n++] = r;
            }
        if (n == 0)
            break;
        int rc = poll(pfd, (nfds_t)n, 50);
        if (rc < 0 && errno != EINTR) {
            fail_run(c, "poll failed watching the ranks");
            break;
        }
        for (int i = 0; rc > 0 && i < n; i++) {
            if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (on_readable(c, who[i], children, nchildren))
                closed[who[i]] = true;
        }
        char why[512];
        if (recorder_failed(c->rec, why, sizeof why))
            fail_run(c, why);
        if (c->a.opt->interrupted && atomic_load(c->a.opt->interrupted))
            fail_run(c, "interrupted by a signal");
        if (children && c->death_time > 0 && !c->peers_killed && now_s() - c->death_time > DEAD_PEER_GRACE_S) {
            kill_children(children, nchildren); /* the streams are read on to their ends */
            c->peers_killed = true;
        }
        if (c->aborted && now_s() - c->abort_time > c->a.sc->timeout_s + 2.0) {
            for (int r = 0; r < c->world; r++)
                if (!closed[r] && c->state[r] == RANK_RUNNING) {
                    char msg[256];
                    snprintf(msg, sizeof msg, "rank %d did not exit after the run was aborted; killed", r);
                    fail_run(c, msg);
                }
            if (children)
                kill_children(children, nchildren);
            break;
        }
    }
    free(pfd);
    free(who);
    free(closed);
    return c->failure[0] ? 1 : 0;
}

int coordinator_close(coordinator *c, launch_result *res, char *err, size_t errlen)
{
    char local[512];
    if (!err) {
        err = local;
        errlen = sizeof local;
    }
    memset(res, 0, sizeof *res);
    int out = 0;
    if (c->rec) {
        char rec_err[512];
        if (recorder_stop(c->rec, rec_err, sizeof rec_err) != 0 && !c->failure[0])
            text_copy(c->failure, sizeof c->failure, rec_err);
        res->spans = recorder_written(c->rec);
    }
    if (c->run_id) {
        if (c->rebuilt_valid && run_record_assignment(c->a.st, c->run_id, 1, &c->rebuilt, err, errlen) != 0 &&
            !c->failure[0])
            text_copy(c->failure, sizeof c->failure, err);
        if (run_record_finish(c->a.st, c->run_id, c->failure, err, errlen) != 0)
            out = -1;
        res->run_id = c->run_id;
        res->complete = !c->failure[0];
        text_copy(res->error, sizeof res->error, c->failure);
        res->wall_s = now_s() - c->t_start;
        if (out == 0 && !res->complete)
            out = 1;
    }
    if (c->rebuilt_valid)
        bucket_assignment_free(&c->rebuilt);
    rdv_close(c->rdv);
    if (c->bw)
        c->a.be->world_destroy(c->bw);
    recorder_destroy(c->rec);
    if (c->dec)
        for (int r = 0; r < c->world; r++)
            span_wire_decoder_destroy(c->dec[r]);
    free(c->dec);
    free(c->state);
    free(c->received);
    free(c);
    return out;
}
