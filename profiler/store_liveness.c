/* store_liveness.c — who writes a run, and whether that writer still lives.
 *
 * Contract (store.h): store_begin_run records the writing process (pid, host name,
 * start time, boot id, pid namespace); a reader asks store_run_liveness about a run
 * still marked 'running'.  A pid alone would be wrong in both directions: pids are
 * reused (hence the start time, field 22 of /proc/PID/stat, in clock ticks since
 * boot), a reboot restarts the tick count and kills every writer (hence the boot id),
 * and a pid names another process in another container on the same host (hence the
 * pid namespace).  Only what can be checked is concluded: a writer on another host
 * or in another namespace is UNKNOWN, never guessed.  Needs Linux's /proc; without it
 * the pid is checked with kill(pid, 0) and the start time cannot be.
 */
#include "common/errmsg.h"
#include "profiler/store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Reads a small /proc file whole; -1 with errno. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t got = read(fd, buf + n, cap - 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* State (field 3) and start time (field 22) of /proc/<who>/stat.  The command name
 * (field 2) may hold spaces and parentheses, so fields are counted from its last ')'.
 * Returns 0, or -1 with errno (ENOENT: no such process). */
static int proc_stat(const char *who, char *state, int64_t *start_ticks)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%s/stat", who);
    if (read_small(path, buf, sizeof buf) < 0)
        return -1;
    char *p = strrchr(buf, ')');
    if (!p) {
        errno = EINVAL;
        return -1;
    }
    p++;
    for (int field = 3; field <= 22; field++) {
        while (*p == ' ')
            p++;
        if (!*p) {
            errno = EINVAL;
            return -1;
        }
        if (field == 3)
            *state = *p;
        if (field == 22) {
            char *end;
            errno = 0;
            long long v = strtoll(p, &end, 10);
            if (errno || end == p || v < 0) {
                errno = EINVAL;
                return -1;
            }
            *start_ticks = v;
            return 0;
        }
        while (*p && *p != ' ')
            p++;
    }
    errno = EINVAL;
    return -1;
}

void store_writer_self(store_writer *w)
{
    memset(w, 0, sizeof *w);
    w->pid = getpid();
    if (gethostname(w->host, sizeof w->host) != 0)
        w->host[0] = '\0';
    w->host[sizeof w->host - 1] = '\0';
    char state;
    if (proc_stat("self", &state, &w->start_ticks) != 0)
        w->start_ticks = -1;
    char buf[64];
    if (read_small("/proc/sys/kernel/random/boot_id", buf, sizeof buf) > 0) {
        buf[strcspn(buf, "\n")] = '\0';
        snprintf(w->boot_id, sizeof w->boot_id, "%.39s", buf);
    }
    ssize_t n = readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = '\0';
        snprintf(w->pidns, sizeof w->pidns, "%.39s", buf);
    }
}

store_liveness store_writer_liveness(const store_writer *w, char *detail, size_t detaillen)
{
    if (w->pid <= 0) {
        set_err(detail, detaillen,
                "writer unknown: not recorded by the older ddpprof that wrote the run");
        return STORE_WRITER_UNKNOWN;
    }
    long long pid = (long long)w->pid;
    store_writer me;
    store_writer_self(&me);
    if (!w->host[0] || strcmp(w->host, me.host) != 0) {
        set_err(detail, detaillen,
                "writer unknown: pid %lld on host %s cannot be checked from %s", pid,
                w->host[0] ? w->host : "(unnamed)", me.host[0] ? me.host : "this host");
        return STORE_WRITER_UNKNOWN;
    }
    if (w->boot_id[0] && me.boot_id[0] && strcmp(w->boot_id, me.boot_id) != 0) {
        set_err(detail, detaillen, "%s rebooted after pid %lld started the run", w->host, pid);
        return STORE_WRITER_GONE;
    }
    if (w->pidns[0] && me.pidns[0] && strcmp(w->pidns, me.pidns) != 0) {
        set_err(detail, detaillen,
                "writer unknown: pid %lld in another pid namespace (a container) on %s", pid,
                w->host);
        return STORE_WRITER_UNKNOWN;
    }
    char who[32], state = '?';
    int64_t start = -1;
    snprintf(who, sizeof who, "%lld", pid);
    if (me.start_ticks >= 0) {
        /* /proc works here, so a missing entry means a missing process. */
        if (proc_stat(who, &state, &start) == 0) {
            if (state == 'Z' || state == 'X') {
                set_err(detail, detaillen, "pid %lld on %s exited without finishing the run",
                        pid, w->host);
                return STORE_WRITER_GONE;
            }
            if (w->start_ticks >= 0 && start != w->start_ticks) {
                set_err(detail, detaillen,
                        "pid %lld on %s exited without finishing the run (the pid now belongs"
                        " to another process)",
                        pid, w->host);
                return STORE_WRITER_GONE;
            }
            set_err(detail, detaillen, "pid %lld on %s is still running", pid, w->host);
            return STORE_WRITER_ALIVE;
        }
        if (errno == ENOENT || errno == ESRCH) {
            set_err(detail, detaillen, "pid %lld on %s exited without finishing the run", pid,
                    w->host);
            return STORE_WRITER_GONE;
        }
    }
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
        set_err(detail, detaillen, "pid %lld on %s exited without finishing the run", pid,
                w->host);
        return STORE_WRITER_GONE;
    }
    set_err(detail, detaillen,
            "writer unknown: pid %lld on %s exists, but cannot be checked to be the writer", pid,
            w->host);
    return STORE_WRITER_UNKNOWN;
}

static void copy_col(sqlite3_stmt *s, int col, char *dst, size_t cap)
{
    const char *v = (const char *)sqlite3_column_text(s, col);
    snprintf(dst, cap, "%s", v ? v : "");
}

int store_run_liveness(store *st, int64_t run_id, store_liveness *state, char *detail, size_t detaillen, char *err,
                       size_t errlen)
{
    sqlite3 *db = st->db;
    /* Schema 1 has no writer columns; the question is then only whether the run exists. */
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT COUNT(*) FROM pragma_table_info('run')"
                           " WHERE name = 'writer_pid'",
                           -1, &s, NULL) != SQLITE_OK)
        return store_db_fail(db, err, errlen, "reading run columns");
    int rc = sqlite3_step(s);
    bool recorded = rc == SQLITE_ROW && sqlite3_column_int(s, 0) > 0;
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW)
        return store_db_fail(db, err, errlen, "reading run columns");
    const char *sql = recorded ? "SELECT writer_pid, writer_host, writer_start, writer_boot,"
                                 " writer_pidns FROM run WHERE id = ?1"
                               : "SELECT NULL, NULL, NULL, NULL, NULL FROM run WHERE id = ?1";
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return store_db_fail(db, err, errlen, "reading run writer");
    if (sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(db, err, errlen, "binding run id");
    }
    rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        if (rc == SQLITE_DONE)
            set_err(err, errlen, "no run with id %lld", (long long)run_id);
        else
            store_db_fail(db, err, errlen, "reading run writer");
        sqlite3_finalize(s);
        return -1;
    }
    store_writer w = {0};
    w.pid = sqlite3_column_type(s, 0) == SQLITE_NULL ? 0 : sqlite3_column_int64(s, 0);
    copy_col(s, 1, w.host, sizeof w.host);
    w.start_ticks = sqlite3_column_type(s, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 2);
    copy_col(s, 3, w.boot_id, sizeof w.boot_id);
    copy_col(s, 4, w.pidns, sizeof w.pidns);
    sqlite3_finalize(s);
    *state = store_writer_liveness(&w, detail, detaillen);
    return 0;
}
