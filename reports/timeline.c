/* timeline.c — one iteration's spans for drawing (timeline.h). */
#include "common/errmsg.h"
#include "reports/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int stream_index(const char *s)
{
    if (!s)
        return 0;
    return !strcmp(s, "compute") ? 1 : !strcmp(s, "comm") ? 2 : 0;
}

static int cmp_seq(const void *a, const void *b)
{
    const timeline_span *x = *(const timeline_span *const *)a, *y = *(const timeline_span *const *)b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The last arrival of each collective, given to every rank's span of it. */
static int mark_arrivals(timeline *tl, char *err, size_t errlen)
{
    size_t n = 0;
    timeline_span **ar = malloc((tl->n ? tl->n : 1) * sizeof *ar);
    if (!ar) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < tl->n; i++)
        if (!strcmp(tl->spans[i].kind, "allreduce") && tl->spans[i].seq >= 0)
            ar[n++] = &tl->spans[i];
    qsort(ar, n, sizeof *ar, cmp_seq);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        int64_t last = ar[i]->start_ns;
        for (; j < n && ar[j]->seq == ar[i]->seq; j++)
            if (ar[j]->start_ns > last)
                last = ar[j]->start_ns;
        for (size_t k = i; k < j; k++)
            ar[k]->last_arrival_ns = last < ar[k]->end_ns ? last : ar[k]->end_ns;
        i = j;
    }
    free(ar);
    return 0;
}

static void copy_text(char *dst, size_t n, const unsigned char *v)
{
    snprintf(dst, n, "%s", v ? (const char *)v : "");
}

int timeline_load(sqlite3 *db, int64_t run_id, int iter, const int *ranks, size_t nranks,
                  timeline *tl, char *err, size_t errlen)
{
    memset(tl, 0, sizeof *tl);
    tl->iter = iter;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT stream, kind, name, bucket, seq, start_ns, end_ns FROM span"
                           " WHERE run_id = ?1 AND rank = ?2 AND iter = ?3",
                           -1, &s, NULL) != SQLITE_OK) {
        set_err(err, errlen, "reading the timeline: %s", sqlite3_errmsg(db));
        return -1;
    }
    size_t cap = 0;
    int ret = 0;
    for (size_t r = 0; r < nranks && ret == 0; r++) {
        if (sqlite3_reset(s) != SQLITE_OK || sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK ||
            sqlite3_bind_int(s, 2, ranks[r]) != SQLITE_OK || sqlite3_bind_int(s, 3, iter) != SQLITE_OK) {
            set_err(err, errlen, "reading the timeline: %s", sqlite3_errmsg(db));
            ret = -1;
            break;
        }
        int rc;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            if (tl->n == cap) {
                cap = cap ? 2 * cap : 256;
                timeline_span *grown = realloc(tl->spans, cap * sizeof *grown);
                if (!grown) {
                    set_err(err, errlen, "out of memory");
                    ret = -1;
                    break;
                }
                tl->spans = grown;
            }
            timeline_span *t = &tl->spans[tl->n++];
            t->rank = ranks[r];
            t->stream = stream_index((const char *)sqlite3_column_text(s, 0));
            copy_text(t->kind, sizeof t->kind, sqlite3_column_text(s, 1));
            copy_text(t->name, sizeof t->name, sqlite3_column_text(s, 2));
            t->bucket = sqlite3_column_type(s, 3) == SQLITE_NULL ? -1 : sqlite3_column_int(s, 3);
            t->seq = sqlite3_column_type(s, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 4);
            t->start_ns = sqlite3_column_int64(s, 5);
            t->end_ns = sqlite3_column_int64(s, 6);
            t->last_arrival_ns = -1;
            if (tl->n == 1 || t->start_ns < tl->t0_ns)
                tl->t0_ns = t->start_ns;
            if (tl->n == 1 || t->end_ns > tl->t1_ns)
                tl->t1_ns = t->end_ns;
        }
        if (ret == 0 && rc != SQLITE_DONE) {
            set_err(err, errlen, "reading the timeline: %s", sqlite3_errmsg(db));
            ret = -1;
        }
    }
    sqlite3_finalize(s);
    if (ret == 0)
        ret = mark_arrivals(tl, err, errlen);
    if (ret < 0)
        timeline_free(tl);
    return ret;
}

void timeline_free(timeline *tl)
{
    free(tl->spans);
    tl->spans = NULL;
    tl->n = 0;
}
