/* rendezvous.c — see rendezvous.h. */
#include "engine/launch/rendezvous.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/errmsg.h"

#define RDV_MAGIC 0x56524444u
#define RDV_VERSION 1
#define HELLO_BYTES 16
#define FRAME_HEADER 8
#define TEXT_MAX 512
#define MAX_STRAYS 64 /* half-open foreign connections kept at once */

enum { MSG_REJECT = 1, MSG_ABORT, MSG_WELCOME, MSG_PING, MSG_PONG, MSG_CLOCK };

struct rdv {
    int rank, world, port;
    double timeout_s;
    int64_t skew_ns;
    int rounds;
    const atomic_int *stop;
    int listen_fd;
    int *fds;          /* rank 0: world entries, fds[0] unused; rank k: fds[0] only */
    rdv_clock *clocks; /* rank 0: world entries; rank k: its own at [0] */
    bool have_blob;
    size_t blob_len;
    unsigned char blob[RDV_BLOB_MAX];
};

/* ---- time, bytes ---------------------------------------------------------------- */

static int64_t mono_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        abort(); /* CLOCK_MONOTONIC cannot fail on any system this runs on */
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t rdv_now_ns(const rdv *r) { return mono_ns() + r->skew_ns; }

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Rounded up, so a deadline a few microseconds away does not become a busy poll(0). */
static int poll_ms(int64_t deadline)
{
    int64_t left = deadline - mono_ns();
    if (left <= 0)
        return 0;
    int64_t ms = (left + 999999) / 1000000;
    return ms > 60000 ? 60000 : (int)ms;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_i64(unsigned char *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(u >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int32_t get_i32(const unsigned char *p)
{
    uint32_t u = get_u32(p);
    return u <= INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
}

static int64_t get_i64(const unsigned char *p)
{
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | p[i];
    return u <= INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

static const char *errtext(int e, char *buf, size_t len) { return strerror_r(e, buf, len); }

/* ---- bounded socket I/O --------------------------------------------------------- */

typedef enum { IO_OK = 0, IO_ERROR, IO_TIMEOUT, IO_EOF } io_status;

/* Every call is MSG_DONTWAIT and the waiting is poll's, so a socket's blocking mode
 * never decides how long we wait. */
static io_status wait_fd(int fd, short events, int64_t deadline, int *err_no)
{
    for (;;) {
        /* Past the deadline this still polls once with 0 ms: what is already there
         * (a refused connect, a last reply) counts. */
        int ms = poll_ms(deadline);
        struct pollfd p = {fd, events, 0};
        int n = poll(&p, 1, ms);
        if (n < 0 && errno != EINTR) {
            *err_no = errno;
            return IO_ERROR;
        }
        if (n > 0)
            return IO_OK; /* readable, writable, or an error the next call will report */
        if (ms == 0)
            return IO_TIMEOUT;
    }
}

static io_status send_all(int fd, const void *buf, size_t len, int64_t deadline, int *err_no)
{
    const unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            *err_no = errno;
            return errno == EPIPE || errno == ECONNRESET ? IO_EOF : IO_ERROR;
        }
        io_status st = wait_fd(fd, POLLOUT, deadline, err_no);
        if (st != IO_OK)
            return st;
    }
    return IO_OK;
}

static io_status recv_all(int fd, void *buf, size_t len, int64_t deadline, int *err_no)
{
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0)
            return IO_EOF;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            *err_no = errno;
            return errno == ECONNRESET ? IO_EOF : IO_ERROR;
        }
        io_status st = wait_fd(fd, POLLIN, deadline, err_no);
        if (st != IO_OK)
            return st;
    }
    return IO_OK;
}

/* Small frames go out in one send, so a clock ping is one segment, not two. */
static io_status send_frame(int fd, uint32_t type, const void *payload, size_t len, int64_t deadline,
                            int *err_no)
{
    unsigned char msg[FRAME_HEADER + 64];
    put_u32(msg, type);
    put_u32(msg + 4, (uint32_t)len);
    if (len <= sizeof msg - FRAME_HEADER) {
        if (len)
            memcpy(msg + FRAME_HEADER, payload, len);
        return send_all(fd, msg, FRAME_HEADER + len, deadline, err_no);
    }
    io_status st = send_all(fd, msg, FRAME_HEADER, deadline, err_no);
    return st == IO_OK ? send_all(fd, payload, len, deadline, err_no) : st;
}

/* Best effort and never waits: used on the way out of a failure. */
static void send_text_now(int fd, uint32_t type, const char *text)
{
    size_t len = strnlen(text, TEXT_MAX);
    unsigned char msg[FRAME_HEADER + TEXT_MAX];
    put_u32(msg, type);
    put_u32(msg + 4, (uint32_t)len);
    memcpy(msg + FRAME_HEADER, text, len);
    ssize_t n = send(fd, msg, FRAME_HEADER + len, MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)n; /* the peer may be gone already; its own timeout then tells it */
}

static void close_fd(int *fd)
{
    if (*fd < 0)
        return;
    int rc = close(*fd);
    /* Linux releases the descriptor even when close() reports EINTR or EIO, and nothing
     * unsent on these sockets could be recovered by trying again. */
    (void)rc;
    *fd = -1;
}

static int socket_setup(int fd, char *err, size_t errlen, const char *what)
{
    char eb[128];
    int one = 1;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        set_err(err, errlen, "%s: fcntl: %s", what, errtext(errno, eb, sizeof eb));
        return -1;
    }
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
        set_err(err, errlen, "%s: TCP_NODELAY: %s", what, errtext(errno, eb, sizeof eb));
        return -1;
    }
    return 0;
}

static const char *io_text(io_status st, int err_no, char *buf, size_t len)
{
    switch (st) {
    case IO_TIMEOUT: return "timed out";
    case IO_EOF: return "connection closed by the peer";
    case IO_ERROR: return errtext(err_no, buf, len);
    case IO_OK: break;
    }
    return "ok";
}

/* ---- handle --------------------------------------------------------------------- */

static int check_config(const rdv_config *c, char *err, size_t errlen)
{
    if (!c) {
        set_err(err, errlen, "rendezvous: no configuration");
        return -1;
    }
    if (c->world < 1 || c->world > RDV_MAX_WORLD) {
        set_err(err, errlen, "rendezvous: world size %d is not in 1..%d", c->world, RDV_MAX_WORLD);
        return -1;
    }
    if (c->rank < 0 || c->rank >= c->world) {
        set_err(err, errlen, "rendezvous: rank %d is not in 0..%d", c->rank, c->world - 1);
        return -1;
    }
    if (c->port < (c->rank == 0 ? 0 : 1) || c->port > 65535) {
        set_err(err, errlen, "rendezvous: port %d is not in %d..65535", c->port, c->rank == 0 ? 0 : 1);
        return -1;
    }
    if (!(c->timeout_s > 0) || !isfinite(c->timeout_s) || c->timeout_s > 86400 * 7) {
        set_err(err, errlen, "rendezvous: timeout %g s is not a positive duration", c->timeout_s);
        return -1;
    }
    if (c->clock_rounds < 0 || c->clock_rounds > 10000) {
        set_err(err, errlen, "rendezvous: %d clock rounds is not in 0..10000", c->clock_rounds);
        return -1;
    }
    return 0;
}

static rdv *rdv_alloc(const rdv_config *c, int nslots, char *err, size_t errlen)
{
    rdv *r = calloc(1, sizeof *r);
    if (r) {
        r->fds = malloc((size_t)nslots * sizeof *r->fds);
        r->clocks = calloc((size_t)nslots, sizeof *r->clocks);
    }
    if (!r || !r->fds || !r->clocks) {
        if (r) {
            free(r->fds);
            free(r->clocks);
        }
        free(r);
        set_err(err, errlen, "rendezvous: out of memory");
        return NULL;
    }
    for (int i = 0; i < nslots; i++)
        r->fds[i] = -1;
    r->rank = c->rank;
    r->world = c->world;
    r->port = c->port;
    r->timeout_s = c->timeout_s;
    r->skew_ns = c->clock_skew_ns;
    r->rounds = c->clock_rounds ? c->clock_rounds : RDV_DEFAULT_CLOCK_ROUNDS;
    r->stop = c->stop;
    r->listen_fd = -1;
    return r;
}

void rdv_close(rdv *r)
{
    if (!r)
        return;
    close_fd(&r->listen_fd);
    int n = r->rank == 0 ? r->world : 1;
    for (int i = 0; i < n; i++)
        close_fd(&r->fds[i]);
    free(r->fds);
    free(r->clocks);
    free(r);
}

int rdv_port(const rdv *r) { return r->port; }

const void *rdv_blob(const rdv *r, size_t *len)
{
    if (len)
        *len = r->have_blob ? r->blob_len : 0;
    return r->have_blob ? r->blob : NULL;
}

int rdv_clock_of(const rdv *r, int rank, rdv_clock *out)
{
    if (r->rank == 0 && rank >= 0 && rank < r->world) {
        *out = r->clocks[rank];
        return 0;
    }
    if (r->rank != 0 && rank == r->rank) {
        *out = r->clocks[0];
        return 0;
    }
    return -1;
}

int rdv_socket(const rdv *r, int rank)
{
    if (r->rank == 0)
        return rank >= 1 && rank < r->world ? r->fds[rank] : -1;
    return rank == 0 ? r->fds[0] : -1;
}

/* ---- rank 0 --------------------------------------------------------------------- */

int rdv_listen(const rdv_config *cfg, rdv **out, char *err, size_t errlen)
{
    *out = NULL;
    if (check_config(cfg, err, errlen))
        return -1;
    if (cfg->rank != 0) {
        set_err(err, errlen, "rendezvous: only rank 0 listens (this is rank %d)", cfg->rank);
        return -1;
    }
    rdv *r = rdv_alloc(cfg, cfg->world, err, errlen);
    if (!r)
        return -1;
    char port[16], eb[128];
    snprintf(port, sizeof port, "%d", cfg->port);
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    const char *host = cfg->bind_addr && *cfg->bind_addr ? cfg->bind_addr : NULL;
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai != 0) {
        set_err(err, errlen, "rendezvous: cannot resolve %s: %s", host ? host : "the wildcard address",
                gai_strerror(gai));
        rdv_close(r);
        return -1;
    }
    int last = 0;
    const char *step = "socket";
    for (struct addrinfo *a = ai; a && r->listen_fd < 0; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            last = errno;
            step = "socket";
            continue;
        }
        int one = 1, zero = 0;
        /* SO_REUSEADDR: a rank 0 restarted on a fixed port must not wait out TIME_WAIT. */
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) {
            last = errno, step = "SO_REUSEADDR";
        } else if (a->ai_family == AF_INET6 && !host &&
                   setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) != 0) {
            last = errno, step = "IPV6_V6ONLY"; /* the wildcard must take IPv4 ranks too */
        } else if (bind(fd, a->ai_addr, a->ai_addrlen) != 0) {
            last = errno, step = "bind";
        } else if (listen(fd, SOMAXCONN) != 0) {
            last = errno, step = "listen";
        } else {
            r->listen_fd = fd;
            break;
        }
        close_fd(&fd);
    }
    freeaddrinfo(ai);
    if (r->listen_fd < 0) {
        set_err(err, errlen, "rendezvous: cannot listen on %s:%d: %s: %s", host ? host : "*", cfg->port,
                step, errtext(last, eb, sizeof eb));
        rdv_close(r);
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(r->listen_fd, (struct sockaddr *)&ss, &sl) != 0) {
        set_err(err, errlen, "rendezvous: getsockname: %s", errtext(errno, eb, sizeof eb));
        rdv_close(r);
        return -1;
    }
    r->port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                       : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    *out = r;
    return 0;
}

/* "2, 3, 7-12, 20": runs of three or more collapse, and a long list is cut short. */
static void format_ranks(const bool *missing, int world, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 1; i < world; i++) {
        if (!missing[i])
            continue;
        if (n + 32 >= len) { /* room left for ", ..." and no more */
            snprintf(buf + n, len - n, ", ...");
            return;
        }
        int j = i;
        while (j + 1 < world && missing[j + 1])
            j++;
        const char *sep = n ? ", " : "";
        int w = j - i >= 2 ? snprintf(buf + n, len - n, "%s%d-%d", sep, i, j)
                : j > i    ? snprintf(buf + n, len - n, "%s%d, %d", sep, i, j)
                           : snprintf(buf + n, len - n, "%s%d", sep, i);
        if (w > 0)
            n += (size_t)w < len - n ? (size_t)w : len - n - 1;
        i = j;
    }
}

typedef struct {
    int fd;
    size_t have;
    unsigned char hello[HELLO_BYTES];
    char peer[80];
} pending_conn;

static void peer_name(const struct sockaddr_storage *ss, socklen_t sl, char *buf, size_t len)
{
    char host[64], serv[16];
    if (getnameinfo((const struct sockaddr *)ss, sl, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        snprintf(buf, len, "an unknown address");
    else
        snprintf(buf, len, "%s:%s", host, serv);
}

/* Rank 0 gives up: every rank that joined hears why, then the sockets close. */
static int serve_fail(rdv *r, pending_conn *pend, int npend, const char *why, char *err, size_t errlen)
{
    for (int i = 1; i < r->world; i++) {
        if (r->fds[i] >= 0)
            send_text_now(r->fds[i], MSG_ABORT, why);
        close_fd(&r->fds[i]);
    }
    for (int i = 0; i < npend; i++)
        close_fd(&pend[i].fd);
    close_fd(&r->listen_fd);
    set_err(err, errlen, "rendezvous: %s", why);
    return -1;
}

/* A complete hello: 1 = joined, 0 = not ours (dropped), -1 = refused (fatal, why set). */
static int take_hello(rdv *r, pending_conn *pc, char *why, size_t whylen)
{
    uint32_t magic = get_u32(pc->hello);
    unsigned version = (unsigned)pc->hello[4] | (unsigned)pc->hello[5] << 8;
    int32_t rank = get_i32(pc->hello + 8), world = get_i32(pc->hello + 12);
    if (magic != RDV_MAGIC)
        return 0;
    if (version != RDV_VERSION)
        snprintf(why, whylen, "a process at %s speaks rendezvous version %u, rank 0 speaks %d",
                 pc->peer, version, RDV_VERSION);
    else if (world != r->world)
        snprintf(why, whylen, "rank %d says the world has %d ranks, rank 0 says %d", (int)rank,
                 (int)world, r->world);
    else if (rank < 1 || rank >= r->world)
        snprintf(why, whylen, "a process at %s claims rank %d, outside 1..%d", pc->peer, (int)rank,
                 r->world - 1);
    else if (r->fds[rank] >= 0)
        snprintf(why, whylen, "rank %d joined twice (again from %s)", (int)rank, pc->peer);
    else {
        char setup[200];
        if (socket_setup(pc->fd, setup, sizeof setup, "accepted socket")) {
            snprintf(why, whylen, "rank %d: %s", (int)rank, setup);
            return -1;
        }
        r->fds[rank] = pc->fd;
        pc->fd = -1;
        return 1;
    }
    send_text_now(pc->fd, MSG_REJECT, why);
    return -1;
}

/* Rank 0's side of the hellos: the connections that have not said theirs yet, and what
 * one round of poll watches (the listening socket, those, the ranks that joined). */
typedef struct {
    pending_conn *pend;
    int npend, cap;
    struct pollfd *pfd;
    int *who; /* per pfd entry: >= 0 an index in pend, < 0 minus a joined rank */
    int nfds, npend_polled;
    bool *missing;
    int joined, strays;
} hello_state;

/* The ranks that have not joined, as "3, 5-7". */
static void missing_ranks(const rdv *r, hello_state *g, char *list, size_t len)
{
    for (int i = 1; i < r->world; i++)
        g->missing[i] = r->fds[i] < 0;
    format_ranks(g->missing, r->world, list, len);
}

/* Why the rendezvous ran out of time. */
static void why_timed_out(const rdv *r, hello_state *g, char *why, size_t whylen)
{
    char list[300];
    missing_ranks(r, g, list, sizeof list);
    /* Both parts fit: the list is under 300 bytes and the timeout at most a week, some
     * 430 bytes in all of TEXT_MAX; were the second cut, only its end would be lost. */
    int w = snprintf(why, whylen, "rank %s did not join within %.1f s", list, r->timeout_s);
    if (g->strays > 0 && w > 0 && (size_t)w < whylen)
        snprintf(why + w, whylen - (size_t)w,
                 " (%d connection%s that did not speak the rendezvous protocol %s dropped)", g->strays, g->strays == 1 ? "" : "s", g->strays == 1 ? "was" : "were");
}

/* This round's poll set: the listening socket, the pending connections, the joined ranks. */
static void fill_poll_set(const rdv *r, hello_state *g)
{
    int n = 0;
    g->pfd[n] = (struct pollfd){r->listen_fd, POLLIN, 0};
    g->who[n++] = 0;
    for (int i = 0; i < g->npend; i++) {
        g->pfd[n] = (struct pollfd){g->pend[i].fd, POLLIN, 0};
        g->who[n++] = i;
    }
    for (int k = 1; k < r->world; k++) {
        if (r->fds[k] >= 0) {
            g->pfd[n] = (struct pollfd){r->fds[k], POLLIN, 0};
            g->who[n++] = -k;
        }
    }
    g->nfds = n;
    g->npend_polled = g->npend;
}

/* A rank that already joined must stay silent until WELCOME: any byte or EOF means it
 * died or is not following the protocol.  -1 with why when one did, else 0. */
static int check_joined_silent(const rdv *r, const hello_state *g, char *why, size_t whylen)
{
    char eb[128];
    for (int j = 1 + g->npend_polled; j < g->nfds; j++) {
        if (!g->pfd[j].revents)
            continue;
        int k = -g->who[j];
        unsigned char byte;
        ssize_t m = recv(r->fds[k], &byte, 1, MSG_DONTWAIT);
        if (m < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (m == 0 || m < 0)
            snprintf(why, whylen, "rank %d disconnected during the rendezvous%s%s", k, m < 0 ? ": " : "",
                     m < 0 ? errtext(errno, eb, sizeof eb) : "");
        else
            snprintf(why, whylen, "rank %d sent data before the rendezvous was complete", k);
        return -1;
    }
    return 0;
}

/* Reads what the pending connections sent; a complete hello joins its rank or is
 * dropped as a stray.  -1 with why when a hello is refused, else 0. */
static int read_hellos(rdv *r, hello_state *g, char *why, size_t whylen)
{
    for (int j = 1; j < 1 + g->npend_polled; j++) {
        if (!g->pfd[j].revents)
            continue;
        pending_conn *pc = &g->pend[g->who[j]];
        ssize_t m = recv(pc->fd, pc->hello + pc->have, HELLO_BYTES - pc->have, MSG_DONTWAIT);
        if (m < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (m <= 0) {
            close_fd(&pc->fd); /* left before finishing its hello: it will retry or time out */
            continue;
        }
        pc->have += (size_t)m;
        if (pc->have < HELLO_BYTES)
            continue;
        int t = take_hello(r, pc, why, whylen);
        if (t < 0)
            return -1;
        if (t == 0)
            g->strays++;
        else
            g->joined++;
        close_fd(&pc->fd);
    }
    /* Compact after the loop above: its indices refer to this round's layout. */
    int w = 0;
    for (int i = 0; i < g->npend; i++)
        if (g->pend[i].fd >= 0)
            g->pend[w++] = g->pend[i];
    g->npend = w;
    return 0;
}

/* Accepts every connection waiting on the listening socket as a pending one. */
static void accept_pending(rdv *r, hello_state *g)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(r->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            /* EMFILE and the like: the kernel keeps the connection queued; pause
             * rather than spin, and let the deadline bound the retries. */
            sleep_ns(10 * 1000000LL);
            break;
        }
        if (g->npend == g->cap) {
            /* Ranks say hello as soon as they connect, so the oldest silent
             * connection is the likeliest not to be one: it makes room. */
            g->strays++;
            close_fd(&g->pend[0].fd);
            memmove(g->pend, g->pend + 1, (size_t)(g->npend - 1) * sizeof *g->pend);
            g->npend--;
        }
        pending_conn *pc = &g->pend[g->npend++];
        memset(pc, 0, sizeof *pc);
        pc->fd = fd;
        peer_name(&ss, sl, pc->peer, sizeof pc->peer);
    }
}

/* One round: waits up to the deadline (or the stop flag's next look) and handles what
 * came.  0 to go on, or -1 with why: interrupted, timed out, a failed poll, a refused
 * hello or a joined rank that spoke. */
static int gather_round(rdv *r, hello_state *g, int64_t deadline, char *why, size_t whylen)
{
    int ms = poll_ms(deadline);
    if (r->stop && atomic_load(r->stop)) {
        char list[300];
        missing_ranks(r, g, list, sizeof list);
        snprintf(why, whylen, "interrupted by a signal while rank %s had not joined", list);
        return -1;
    }
    /* A signal may land on another thread and leave poll asleep: look again soon. */
    if (r->stop && ms > RDV_STOP_POLL_MS)
        ms = RDV_STOP_POLL_MS;
    if (ms == 0) {
        why_timed_out(r, g, why, whylen);
        return -1;
    }
    fill_poll_set(r, g);
    int got = poll(g->pfd, (nfds_t)g->nfds, ms);
    if (got < 0) {
        if (errno == EINTR)
            return 0;
        char eb[128];
        snprintf(why, whylen, "poll: %s", errtext(errno, eb, sizeof eb));
        return -1;
    }
    if (got == 0)
        return 0;
    if (check_joined_silent(r, g, why, whylen) < 0 || read_hellos(r, g, why, whylen) < 0)
        return -1;
    if (g->pfd[0].revents)
        accept_pending(r, g);
    return 0;
}

/* Waits until ranks 1..world-1 have all said hello, or the deadline. */
static int gather(rdv *r, int64_t deadline, char *err, size_t errlen)
{
    hello_state g = {.cap = r->world - 1 + MAX_STRAYS};
    g.pend = calloc((size_t)g.cap, sizeof *g.pend);
    g.pfd = calloc((size_t)(1 + g.cap + r->world), sizeof *g.pfd);
    g.who = calloc((size_t)(1 + g.cap + r->world), sizeof *g.who);
    g.missing = calloc((size_t)r->world, sizeof *g.missing);
    char why[TEXT_MAX];
    int rc = -1;
    if (!g.pend || !g.pfd || !g.who || !g.missing) {
        set_err(err, errlen, "rendezvous: out of memory");
        goto out;
    }
    while (g.joined < r->world - 1)
        if (gather_round(r, &g, deadline, why, sizeof why) < 0) {
            rc = serve_fail(r, g.pend, g.npend, why, err, errlen);
            goto out;
        }
    rc = 0;
out:
    if (g.pend)
        for (int i = 0; i < g.npend; i++)
            close_fd(&g.pend[i].fd);
    free(g.pend);
    free(g.pfd);
    free(g.who);
    free(g.missing);
    return rc;
}

/* Reads one frame's header; the caller decides whether its type and size are acceptable. */
static io_status read_frame(int fd, uint32_t *type, uint32_t *len, int64_t deadline, int *err_no)
{
    unsigned char hdr[FRAME_HEADER];
    io_status st = recv_all(fd, hdr, sizeof hdr, deadline, err_no);
    if (st == IO_OK) {
        *type = get_u32(hdr);
        *len = get_u32(hdr + 4);
    }
    return st;
}

static int measure(rdv *r, int k, int64_t deadline, char *why, size_t whylen)
{
    int fd = r->fds[k], e = 0;
    char eb[128];
    rdv_clock best = {0, 0, INT64_MAX};
    for (int i = 0; i < r->rounds; i++) {
        unsigned char ping[4], pong[12];
        put_u32(ping, (uint32_t)i);
        int64_t t0 = rdv_now_ns(r);
        io_status st = send_frame(fd, MSG_PING, ping, sizeof ping, deadline, &e);
        uint32_t type = 0, len = 0;
        if (st == IO_OK)
            st = read_frame(fd, &type, &len, deadline, &e);
        if (st == IO_OK && (type != MSG_PONG || len != sizeof pong)) {
            snprintf(why, whylen, "rank %d answered a clock ping with message %u of %u bytes", k, type, len);
            return -1;
        }
        if (st == IO_OK)
            st = recv_all(fd, pong, sizeof pong, deadline, &e);
        int64_t t1 = rdv_now_ns(r);
        if (st != IO_OK) {
            snprintf(why, whylen, "clock measurement of rank %d: %s", k, io_text(st, e, eb, sizeof eb));
            return -1;
        }
        if (get_u32(pong) != (uint32_t)i) {
            snprintf(why, whylen, "rank %d answered clock ping %d with %u", k, i, get_u32(pong));
            return -1;
        }
        int64_t tk = get_i64(pong + 4), rtt = t1 - t0;
        if (rtt < best.rtt_ns) {
            best.rtt_ns = rtt;
            best.offset_ns = tk - (t0 + rtt / 2);
            best.uncertainty_ns = (rtt + 1) / 2;
        }
    }
    r->clocks[k] = best;
    unsigned char res[24];
    put_i64(res, best.offset_ns);
    put_i64(res + 8, best.uncertainty_ns);
    put_i64(res + 16, best.rtt_ns);
    io_status st = send_frame(fd, MSG_CLOCK, res, sizeof res, deadline, &e);
    if (st != IO_OK) {
        snprintf(why, whylen, "sending rank %d its clock offset: %s", k, io_text(st, e, eb, sizeof eb));
        return -1;
    }
    return 0;
}

int rdv_serve(rdv *r, const void *blob, size_t blob_len, char *err, size_t errlen)
{
    if (r->rank != 0 || r->listen_fd < 0) {
        set_err(err, errlen, "rendezvous: rdv_serve needs rank 0's handle from rdv_listen, once");
        return -1;
    }
    if (blob_len > RDV_BLOB_MAX || (blob_len > 0 && !blob)) {
        set_err(err, errlen, "rendezvous: the shared blob has %zu bytes, at most %d fit", blob_len,
                RDV_BLOB_MAX);
        return -1;
    }
    int64_t timeout_ns = (int64_t)(r->timeout_s * 1e9);
    if (gather(r, mono_ns() + timeout_ns, err, errlen))
        return -1;
    close_fd(&r->listen_fd); /* everyone is here: a late connection is refused, not queued */
    if (blob_len)
        memcpy(r->blob, blob, blob_len);
    r->blob_len = blob_len;
    r->have_blob = true;
    int64_t deadline = mono_ns() + timeout_ns;
    char why[TEXT_MAX], eb[128];
    for (int k = 1; k < r->world; k++) {
        int e = 0;
        io_status st = send_frame(r->fds[k], MSG_WELCOME, r->blob, blob_len, deadline, &e);
        if (st != IO_OK) {
            snprintf(why, sizeof why, "sending rank %d the shared blob: %s", k, io_text(st, e, eb, sizeof eb));
            return serve_fail(r, NULL, 0, why, err, errlen);
        }
    }
    for (int k = 1; k < r->world; k++)
        if (measure(r, k, deadline, why, sizeof why))
            return serve_fail(r, NULL, 0, why, err, errlen);
    return 0;
}

/* ---- ranks > 0 ------------------------------------------------------------------ */

/* One connection attempt to any address of addr:port; -1 with *err_no on failure. */
static int try_connect(const char *addr, int port, int64_t deadline, int *err_no, int *gai)
{
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    *gai = getaddrinfo(addr, ps, &hints, &ai);
    if (*gai != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            *err_no = errno;
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        if (errno != EINPROGRESS) {
            *err_no = errno;
            close_fd(&fd);
            continue;
        }
        io_status st = wait_fd(fd, POLLOUT, deadline, err_no);
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (st == IO_TIMEOUT) {
            *err_no = ETIMEDOUT;
        } else if (st == IO_OK && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0) {
            *err_no = errno;
        } else if (st == IO_OK && soerr == 0) {
            break;
        } else if (st == IO_OK) {
            *err_no = soerr;
        }
        close_fd(&fd);
    }
    freeaddrinfo(ai);
    return fd;
}

/* Connecting over and over to a port of this host in the ephemeral range while nothing
 * listens there, one attempt in tens of thousands gets that very port as its own and
 * TCP's simultaneous open joins the socket to itself: the joining rank then read its own
 * hello back ("an unexpected message" from rank 0, seen once under torchrun). */
bool rdv_socket_is_self_connected(int fd)
{
    struct sockaddr_storage self, peer;
    socklen_t ls = sizeof self, lp = sizeof peer;
    if (getsockname(fd, (struct sockaddr *)&self, &ls) != 0 || getpeername(fd, (struct sockaddr *)&peer, &lp) != 0)
        return false;
    if (self.ss_family != peer.ss_family)
        return false;
    if (self.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&self, *b = (const struct sockaddr_in *)&peer;
        return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
    }
    if (self.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&self, *b = (const struct sockaddr_in6 *)&peer;
        return a->sin6_port == b->sin6_port && memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
    }
    return false;
}

static int connect_rank0(const rdv_config *c, int64_t deadline, char *err, size_t errlen)
{
    int64_t backoff = 10 * 1000000LL;
    char eb[128];
    int last = 0; /* the most telling error so far: a refusal beats our own deadline */
    for (;;) {
        int e = 0, gai = 0;
        int fd = try_connect(c->addr, c->port, deadline, &e, &gai);
        if (fd >= 0 && !rdv_socket_is_self_connected(fd))
            return fd;
        if (fd >= 0) {
            close_fd(&fd);
            e = ECONNREFUSED; /* nobody listens yet */
        }
        if (e != 0 && (e != ETIMEDOUT || last == 0))
            last = e;
        if (gai != 0 && gai != EAI_AGAIN) {
            set_err(err, errlen, "rendezvous: rank %d cannot resolve rank 0's address %s: %s", c->rank,
                    c->addr, gai_strerror(gai));
            return -1;
        }
        int64_t left = deadline - mono_ns();
        if (left <= 0) {
            set_err(err, errlen, "rendezvous: rank %d could not reach rank 0 at %s:%d within %.1f s: %s",
                    c->rank, c->addr, c->port, c->timeout_s,
                    gai ? gai_strerror(gai) : errtext(last ? last : ETIMEDOUT, eb, sizeof eb));
            return -1;
        }
        /* Rank 0 may not be listening yet: back off, but not past the deadline. */
        sleep_ns(backoff < left ? backoff : left);
        backoff = backoff * 2 > 500 * 1000000LL ? 500 * 1000000LL : backoff * 2;
    }
}

int rdv_join(const rdv_config *cfg, rdv **out, char *err, size_t errlen)
{
    *out = NULL;
    if (check_config(cfg, err, errlen))
        return -1;
    if (cfg->rank == 0) {
        set_err(err, errlen, "rendezvous: rank 0 listens (rdv_listen), it does not join");
        return -1;
    }
    if (!cfg->addr || !*cfg->addr) {
        set_err(err, errlen, "rendezvous: rank %d has no address for rank 0", cfg->rank);
        return -1;
    }
    rdv *r = rdv_alloc(cfg, 1, err, errlen);
    if (!r)
        return -1;
    int64_t timeout_ns = (int64_t)(cfg->timeout_s * 1e9);
    int fd = connect_rank0(cfg, mono_ns() + timeout_ns, err, errlen);
    if (fd < 0) {
        rdv_close(r);
        return -1;
    }
    r->fds[0] = fd;
    char eb[128];
    if (socket_setup(fd, err, errlen, "rendezvous: connected socket")) {
        rdv_close(r);
        return -1;
    }
    /* Rank 0 takes up to timeout_s for everyone to join, then up to timeout_s for the
     * clocks; the extra third covers it starting rdv_serve a little after we connected. */
    int64_t deadline = mono_ns() + 3 * timeout_ns;
    unsigned char hello[HELLO_BYTES] = {0};
    put_u32(hello, RDV_MAGIC);
    hello[4] = RDV_VERSION & 0xff;
    hello[5] = (RDV_VERSION >> 8) & 0xff;
    put_u32(hello + 8, (uint32_t)cfg->rank);
    put_u32(hello + 12, (uint32_t)cfg->world);
    int e = 0;
    io_status st = send_all(fd, hello, sizeof hello, deadline, &e);
    const char *phase = "saying hello";
    bool welcomed = false;
    while (st == IO_OK) {
        uint32_t type = 0, len = 0;
        phase = welcomed ? "waiting for the clock measurement" : "waiting for the other ranks";
        st = read_frame(fd, &type, &len, deadline, &e);
        if (st != IO_OK)
            break;
        unsigned char buf[RDV_BLOB_MAX > TEXT_MAX ? RDV_BLOB_MAX : TEXT_MAX];
        bool ok = (type == MSG_REJECT || type == MSG_ABORT) ? len <= TEXT_MAX
                  : type == MSG_WELCOME                      ? !welcomed && len <= RDV_BLOB_MAX
                  : type == MSG_PING                         ? welcomed && len == 4
                  : type == MSG_CLOCK                        ? welcomed && len == 24
                                                             : false;
        if (!ok) {
            set_err(err, errlen, "rendezvous: rank %d got an unexpected message %u of %u bytes from rank 0",
                    cfg->rank, type, len);
            rdv_close(r);
            return -1;
        }
        st = recv_all(fd, buf, len, deadline, &e);
        if (st != IO_OK)
            break;
        if (type == MSG_REJECT || type == MSG_ABORT) {
            set_err(err, errlen, "rendezvous: %s rank %d: %.*s",
                    type == MSG_REJECT ? "rank 0 refused" : "rank 0 gave up, telling", cfg->rank,
                    (int)len, (const char *)buf);
            rdv_close(r);
            return -1;
        }
        if (type == MSG_WELCOME) {
            memcpy(r->blob, buf, len);
            r->blob_len = len;
            r->have_blob = true;
            welcomed = true;
        } else if (type == MSG_PING) {
            unsigned char pong[12];
            memcpy(pong, buf, 4);
            put_i64(pong + 4, rdv_now_ns(r));
            st = send_frame(fd, MSG_PONG, pong, sizeof pong, deadline, &e);
        } else { /* MSG_CLOCK */
            r->clocks[0].offset_ns = get_i64(buf);
            r->clocks[0].uncertainty_ns = get_i64(buf + 8);
            r->clocks[0].rtt_ns = get_i64(buf + 16);
            *out = r;
            return 0;
        }
    }
    if (st == IO_TIMEOUT)
        set_err(err, errlen, "rendezvous: rank %d: rank 0 did not complete the rendezvous within %.1f s (%s)",
                cfg->rank, 3 * cfg->timeout_s, phase);
    else
        set_err(err, errlen, "rendezvous: rank %d, %s: %s", cfg->rank, phase, io_text(st, e, eb, sizeof eb));
    rdv_close(r);
    return -1;
}
