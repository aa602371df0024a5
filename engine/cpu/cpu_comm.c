/* cpu_comm.c — the communicator's life: in process memory for rank threads, or in a
 * shared file mapping for rank processes; its abort, and sleeps an abort cuts short
 * (see cpu_collectives.h). */
#include "common/textcopy.h"
#include "engine/cpu/cpu_comm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int64_t cpu_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void cpu_sleep_until(int64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

/* Mutex and conditions; `shared`: usable across processes, and robust, so that a
 * rank process killed while holding the lock does not leave the others blocked. */
static int init_sync(cpu_comm_state *st, bool shared)
{
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;
    if (pthread_mutexattr_init(&ma) != 0)
        return -1;
    int rc = 0;
    if (shared && (pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED) != 0 ||
                   pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST) != 0))
        rc = -1;
    if (rc == 0 && pthread_mutex_init(&st->mu, &ma) != 0)
        rc = -1;
    pthread_mutexattr_destroy(&ma);
    if (rc != 0)
        return -1;
    if (pthread_condattr_init(&ca) != 0)
        goto fail_mutex;
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        (shared && pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED) != 0) ||
        pthread_cond_init(&st->cv, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        goto fail_mutex;
    }
    pthread_condattr_destroy(&ca);
    return 0;
fail_mutex:
    pthread_mutex_destroy(&st->mu);
    return -1;
}

static void init_state(cpu_comm_state *st, int world_size, double timeout_s, const cpu_link_model *link)
{
    st->magic = CPU_COMM_MAGIC;
    st->world = world_size;
    st->timeout_s = timeout_s;
    st->link = *link;
}

int cpu_comm_create(int world_size, double timeout_s, const cpu_link_model *link, cpu_comm **out)
{
    if (world_size < 1 || world_size > CPU_COMM_MAX_WORLD)
        return -1;
    cpu_comm *c = calloc(1, sizeof *c);
    cpu_comm_state *st = calloc(1, sizeof *st);
    if (!c || !st || init_sync(st, false) != 0) {
        free(c);
        free(st);
        return -1;
    }
    init_state(st, world_size, timeout_s, link);
    c->st = st;
    *out = c;
    return 0;
}

static size_t mapping_bytes(int world, size_t stage_bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t head = (sizeof(cpu_comm_state) + page - 1) / page * page;
    return head + (size_t)world * stage_bytes;
}

static int map_file(int fd, size_t len, cpu_comm *c, char *err, size_t errlen)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the shared communicator (%zu bytes): %s", len, strerror(errno));
        return -1;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    c->st = p;
    c->stage = (char *)p + (sizeof(cpu_comm_state) + page - 1) / page * page;
    c->map_len = len;
    return 0;
}

int cpu_comm_create_shared(int world_size, double timeout_s, const cpu_link_model *link, size_t stage_bytes,
                           cpu_comm **out, char *err, size_t errlen)
{
    if (world_size < 1 || world_size > CPU_COMM_MAX_WORLD) {
        snprintf(err, errlen, "world size %d is outside [1, %d]", world_size, CPU_COMM_MAX_WORLD);
        return -1;
    }
    stage_bytes = (stage_bytes + 63) / 64 * 64;
    cpu_comm *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* /dev/shm keeps the pages in memory; a file in /tmp works where it is missing. */
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(c->path, sizeof c->path, "%s/ddpprof-comm-XXXXXX", dir);
    int fd = mkstemp(c->path);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create the shared communicator in %s: %s", dir, strerror(errno));
        free(c);
        return -1;
    }
    size_t len = mapping_bytes(world_size, stage_bytes);
    int rc = ftruncate(fd, (off_t)len);
    if (rc != 0)
        snprintf(err, errlen, "cannot size the shared communicator to %zu bytes in %s: %s", len, dir,
                 strerror(errno));
    else
        rc = map_file(fd, len, c, err, errlen);
    close(fd);
    if (rc == 0 && init_sync(c->st, true) != 0) {
        snprintf(err, errlen, "cannot initialise the shared communicator's lock");
        munmap(c->st, len);
        rc = -1;
    }
    if (rc != 0) {
        unlink(c->path);
        free(c);
        return -1;
    }
    init_state(c->st, world_size, timeout_s, link);
    c->st->processes = true;
    c->st->stage_bytes = stage_bytes;
    *out = c;
    return 0;
}

const char *cpu_comm_path(const cpu_comm *c) { return c->path; }

int cpu_comm_attach(const char *path, int world_size, cpu_comm **out, char *err, size_t errlen)
{
    cpu_comm *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat sb;
    int rc = -1;
    if (fd < 0)
        snprintf(err, errlen, "cannot open the shared communicator %s: %s", path, strerror(errno));
    else if (fstat(fd, &sb) != 0 || (size_t)sb.st_size < sizeof(cpu_comm_state))
        snprintf(err, errlen, "%s is not a shared communicator", path);
    else
        rc = map_file(fd, (size_t)sb.st_size, c, err, errlen);
    if (fd >= 0)
        close(fd);
    if (rc == 0 && (c->st->magic != CPU_COMM_MAGIC || !c->st->processes || c->st->world != world_size ||
                    mapping_bytes(world_size, c->st->stage_bytes) > c->map_len)) {
        snprintf(err, errlen, "%s is not a %d-rank shared communicator", path, world_size);
        munmap(c->st, c->map_len);
        rc = -1;
    }
    if (rc != 0) {
        free(c);
        return -1;
    }
    *out = c;
    return 0;
}

void cpu_comm_unlink(cpu_comm *c)
{
    if (c->path[0]) {
        unlink(c->path);
        c->path[0] = '\0';
    }
}

void cpu_comm_destroy(cpu_comm *c)
{
    if (!c)
        return;
    if (c->map_len) {
        /* The state lives on in the other processes' mappings: only this view goes. */
        cpu_comm_unlink(c);
        munmap(c->st, c->map_len);
    } else {
        pthread_cond_destroy(&c->st->cv);
        pthread_mutex_destroy(&c->st->mu);
        free(c->st);
    }
    free(c);
}

void cpu_comm_abort_locked(cpu_comm *c, const char *why)
{
    cpu_comm_state *st = c->st;
    if (!st->aborted) {
        st->aborted = true;
        text_copy(st->why, sizeof st->why, why);
    }
    cpu_comm_notify(c, &st->cv);
    atomic_store(&st->abort_word, 1);
    syscall(SYS_futex, &st->abort_word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void cpu_comm_lock(cpu_comm *c)
{
    int rc = pthread_mutex_lock(&c->st->mu);
    if (rc == EOWNERDEAD) {
        /* A rank process died holding the lock: the state it was changing cannot be
         * trusted, so the world ends here, with the lock usable for the others. */
        pthread_mutex_consistent(&c->st->mu);
        cpu_comm_abort_locked(c, "a rank process died inside a collective");
    }
}

void cpu_comm_unlock(cpu_comm *c) { pthread_mutex_unlock(&c->st->mu); }

void cpu_comm_abort(cpu_comm *c, const char *why)
{
    cpu_comm_lock(c);
    cpu_comm_abort_locked(c, why);
    cpu_comm_unlock(c);
}

bool cpu_comm_aborted(cpu_comm *c) { return atomic_load(&c->st->aborted); }

void cpu_comm_abort_reason(cpu_comm *c, char *out, size_t outlen)
{
    cpu_comm_lock(c);
    snprintf(out, outlen, "%s", c->st->aborted ? c->st->why : "");
    cpu_comm_unlock(c);
}

/* Between processes a futex on a shared counter replaces the condition variables:
 * glibc's process-shared conditions wedge when a waiter is killed inside a wait (a
 * later broadcast waits for it to leave, for ever), whereas the kernel forgets a dead
 * futex waiter.  Every notification bumps the counter under the lock; a waiter reads it
 * under the lock, so none is missed. */
static long futex_wait_until(_Atomic uint32_t *word, uint32_t seen, const struct timespec *deadline)
{
    return syscall(SYS_futex, word, FUTEX_WAIT_BITSET, seen, deadline, NULL, FUTEX_BITSET_MATCH_ANY);
}

void cpu_comm_notify(cpu_comm *c, pthread_cond_t *cv)
{
    if (c->st->processes) {
        atomic_fetch_add(&c->st->epoch, 1);
        syscall(SYS_futex, &c->st->epoch, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    } else {
        pthread_cond_broadcast(cv);
    }
}

static int wait_processes(cpu_comm *c, const struct timespec *deadline)
{
    uint32_t seen = atomic_load(&c->st->epoch);
    cpu_comm_unlock(c);
    long rc = futex_wait_until(&c->st->epoch, seen, deadline);
    int saved = errno;
    cpu_comm_lock(c);
    return rc != 0 && saved == ETIMEDOUT ? ETIMEDOUT : 0;
}

int cpu_comm_wait(cpu_comm *c, pthread_cond_t *cv, const struct timespec *deadline)
{
    if (c->st->processes)
        return wait_processes(c, deadline);
    int rc = deadline ? pthread_cond_timedwait(cv, &c->st->mu, deadline) : pthread_cond_wait(cv, &c->st->mu);
    if (rc != 0 && rc != ETIMEDOUT && rc != EINTR)
        cpu_comm_abort_locked(c, "pthread_cond_wait failed in the communicator");
    return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}

/* A futex of its own, outside the lock: sleeping on the lock's condition (between
 * processes, the one epoch every notification bumps) woke each sleeping op of every
 * rank at each collective's barriers, to queue for the lock behind the niced comm
 * workers.  That held modelled ops up past their deadlines, in the steps with
 * collectives only. */
int cpu_comm_sleep_until(cpu_comm *c, int64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
    while (atomic_load(&c->st->abort_word) == 0) {
        if (cpu_clock_ns() >= deadline_ns)
            return 0;
        /* Returns at the deadline, on the abort's wake-up, or at once once the word
         * is 1 (EAGAIN); EINTR simply loops. */
        futex_wait_until(&c->st->abort_word, 0, &ts);
    }
    return -1;
}
