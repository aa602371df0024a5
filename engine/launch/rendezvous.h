/* rendezvous.h — how rank processes meet over TCP before a run: rank 0 listens, every
 * other rank connects, rank 0 hands everyone a shared blob and measures each rank's
 * clock offset.  The sockets stay open afterwards, to carry spans and failure notices.
 *
 * Contract:
 *   rank 0     rdv_listen() binds and listens (port 0: the kernel picks a free port,
 *              rdv_port() tells it, so ddpprof can start the ranks with it), then
 *              rdv_serve() waits for ranks 1..world-1, which must all join within
 *              timeout_s of the call; call it right after starting them.  It then sends
 *              the blob to every rank and measures the clocks, within another timeout_s.
 *   rank k > 0 rdv_join() connects to addr:port, retrying until timeout_s has passed
 *              (rank 0 may start later), says who it is, and waits (at most 3 × timeout_s
 *              after connecting) for the blob, answers rank 0's clock pings and learns
 *              its own offset.
 * Every wait is a poll with a deadline; nothing blocks longer than the timeouts say
 * (host name resolution excepted: getaddrinfo has no timeout of its own).
 * Rank 0 refuses a handshake whose rank is a duplicate or out of range, whose world size
 * or protocol version differs from its own: the offending process gets the reason, the
 * rendezvous fails on rank 0 with it, and every rank that had joined is told.  A
 * connection that does not speak the protocol at all (a port scanner) is just dropped.
 * On a timeout the error names the ranks that never arrived ("rank 2, 3 did not join
 * within 5.0 s").  With cfg.stop, rank 0 looks at it at least every RDV_STOP_POLL_MS while
 * the ranks join and gives up once it is set ("interrupted by a signal while rank 2, 3
 * had not joined"), telling every rank that had.
 * Clock: rank 0 runs clock_rounds ping-pongs with each rank and keeps the one with the
 * shortest round trip: offset = t_rank - (t0_send + t0_recv) / 2, uncertainty = rtt / 2.
 * Both clocks are CLOCK_MONOTONIC (plus clock_skew_ns, the test hook), so a time t read
 * on rank k is t - offset_ns on rank 0's clock, give or take uncertainty_ns.
 * Afterwards rank 0 holds one connected socket per rank (rdv_socket(r, k)) and rank k
 * holds one to rank 0 (rdv_socket(r, 0)): blocking mode, TCP_NODELAY, close-on-exec,
 * owned by the handle (rdv_close closes them).  A handle is used by one thread at a time;
 * there is no global state, so several rendezvous may run in one process (tests do).
 * Functions returning int give 0 on success, -1 with err set on failure.
 *
 * Wire (all little-endian): the joining rank first sends a 16-byte hello
 *   u32 magic "DDRV" (0x56524444)  u16 version (1)  u16 0  i32 rank  i32 world
 * then both sides exchange frames: u32 type, u32 payload bytes, payload:
 *   1 REJECT  text  (rank 0 -> the refused process)     4 PING  u32 seq      (0 -> k)
 *   2 ABORT   text  (rank 0 -> ranks that had joined)   5 PONG  u32 seq, i64 t_k (k -> 0)
 *   3 WELCOME blob  (0 -> k, once all have joined)      6 CLOCK i64 offset, i64 uncertainty,
 *                                                               i64 rtt (0 -> k, last)
 */
#ifndef DDPPROF_RENDEZVOUS_H
#define DDPPROF_RENDEZVOUS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RDV_BLOB_MAX 4096
#define RDV_DEFAULT_CLOCK_ROUNDS 32
#define RDV_MAX_WORLD 65536
#define RDV_STOP_POLL_MS 50

typedef struct {
    const char *addr;      /* ranks > 0: rank 0's host name or address */
    const char *bind_addr; /* rank 0: NULL = every interface (as torch's TCPStore does) */
    int port;              /* rank 0 may give 0: any free port */
    int rank;
    int world;
    double timeout_s;
    int64_t clock_skew_ns; /* added to every clock reading of this rank (tests) */
    int clock_rounds;      /* ping-pongs per rank; 0 = RDV_DEFAULT_CLOCK_ROUNDS */
    const atomic_int *stop; /* rank 0: set by a signal handler, rdv_serve gives up (NULL: never) */
} rdv_config;

typedef struct {
    int64_t offset_ns;      /* the rank's clock minus rank 0's */
    int64_t uncertainty_ns; /* the true offset is within offset_ns ± this */
    int64_t rtt_ns;         /* the round trip the estimate came from */
} rdv_clock;

typedef struct rdv rdv;

/* Rank 0. */
int rdv_listen(const rdv_config *cfg, rdv **out, char *err, size_t errlen);
int rdv_serve(rdv *r, const void *blob, size_t blob_len, char *err, size_t errlen);
/* Ranks > 0.  *out is set on success only. */
int rdv_join(const rdv_config *cfg, rdv **out, char *err, size_t errlen);

/* The port rank 0 listens on (the one picked, when cfg.port was 0). */
int rdv_port(const rdv *r);
/* The blob rank 0 served (on rank 0 too); NULL before it arrived. */
const void *rdv_blob(const rdv *r, size_t *len);
/* Rank 0: any rank's clock (rank 0's own is all zero); rank k: its own only. */
int rdv_clock_of(const rdv *r, int rank, rdv_clock *out);
/* Rank 0: the socket to rank k (k >= 1); rank k: rdv_socket(r, 0).  -1 otherwise. */
int rdv_socket(const rdv *r, int rank);
/* This rank's clock as the rendezvous reads it (CLOCK_MONOTONIC + clock_skew_ns). */
int64_t rdv_now_ns(const rdv *r);
void rdv_close(rdv *r);
/* Whether a connected TCP socket is connected to itself (its own address and port at
 * both ends): what a join that keeps connecting to a port of this host where nobody
 * listens yet gets, now and then, from TCP's simultaneous open; rdv_join retries then. */
bool rdv_socket_is_self_connected(int fd);

#endif
