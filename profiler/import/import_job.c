/* import_job.c — the ranks of one job put together into one run: which rank each trace
 * is, one clock for all, collectives matched across ranks, Holistic Trace Analysis's
 * figures, and the run written in one transaction.  Contract: import.h.
 *
 * Ranks: distributedInfo.rank, else --rank (one file), else the number ending the
 * file's name once its extensions are off ("rank3.json", "worker3.pt.trace.json.gz");
 * never a GPU's pid.  Two traces of one rank, disagreeing world sizes, or a rank
 * missing among several files are errors.
 *
 * Collectives are matched by (process group, Seq) where the trace numbers them, else by
 * (process group, iteration, kind, place among the group's collectives of that kind in
 * that iteration; a rank whose trace lost one all_to_all still matches its allreduces):
 * ProfilerStep#N is the same step on every rank, so a collective missing on one rank
 * shifts nothing beyond its own step.
 *
 * Clocks: traces on the wall clock (Kineto's baseTimeNanoseconds, or µs since the
 * epoch) are taken as they are; otherwise (PyTorch's list form starts each rank near
 * 0) each rank is moved onto the lowest rank's clock by the median, over the matched
 * collectives, of the difference of their ends: a collective ends on every rank at
 * nearly the same moment, whoever arrived last.  The uncertainty stored per rank is
 * the largest deviation of a matched end from that median (for wall clocks: from 0).
 */
#include "profiler/import/import_internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "common/strbuf.h"
#include "profiler/import/event_names.h"
#include "profiler/hta_figures.h"

/* µs since the epoch beyond this (2001-09-09) are wall-clock times, not times since the
 * profiler started. */
#define EPOCH_NS_THRESHOLD ((int64_t)1000000000 * 1000000000)
#define SPAN_BATCH 8192
/* The page cache of an import's one transaction (32 MiB; why: where it is set). */
#define IMPORT_PAGE_CACHE_KIB 32768

/* ---- ranks ---------------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The number ending a file's name once the trace extensions are off, or -1. */
static int rank_from_name(const char *path)
{
    char stem[256];
    snprintf(stem, sizeof stem, "%s", base_name(path));
    static const char *const ext[] = {".gz", ".json", ".trace", ".pt", ".sqlite", ".nsys-rep", ".qdrep"};
    for (bool again = true; again;) {
        again = false;
        for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
            size_t n = strlen(stem), m = strlen(ext[i]);
            if (n > m && strcmp(stem + n - m, ext[i]) == 0) {
                stem[n - m] = '\0';
                again = true;
            }
        }
    }
    /* "host_1234.1700000000000" (tensorboard_trace_handler's worker.timestamp) ends in a
     * time, not a rank. */
    if (strchr(stem, '.'))
        return -1;
    size_t n = strlen(stem), i = n;
    while (i > 0 && isdigit((unsigned char)stem[i - 1]))
        i--;
    if (i == n || n - i > 6)
        return -1;
    return atoi(stem + i);
}

/* Which rank each trace is, and the job's world size.  Any subset of one job's ranks
 * imports (users profile rank 0, or a few); a lone trace that names no rank anywhere is
 * rank 0 of a world of 1.  Traces that cannot be one job are refused here (world sizes,
 * process groups) and after the clocks (time ranges, collectives). */
static import_status resolve_ranks(const import_options *o, trace_rank **ranks, int nranks, int *world,
                                   strbuf *notes, char *err, size_t errlen)
{
    if (o->rank >= 0 && nranks != 1) {
        set_err(err, errlen, "--rank names the rank of a single trace; %d were given (their ranks come"
                             " from distributedInfo or their file names)", nranks);
        return IMPORT_BAD_INPUT;
    }
    int said_world = -1, said_pgs = -1;
    const char *said_by = NULL, *pgs_by = NULL;
    for (int i = 0; i < nranks; i++) {
        trace_rank *r = ranks[i];
        if (r->rank < 0 && o->rank >= 0) {
            r->rank = o->rank;
            r->rank_from = "--rank";
        } else if (r->rank >= 0 && o->rank >= 0 && r->rank != o->rank) {
            set_err(err, errlen, "%s: the trace says rank %d (distributedInfo), --rank says %d", r->path,
                    r->rank, o->rank);
            return IMPORT_BAD_INPUT;
        }
        if (r->rank < 0 && !r->label[0]) {
            int k = rank_from_name(r->path);
            if (k >= 0) {
                r->rank = k;
                r->rank_from = "file name";
            }
        }
        if (r->rank < 0 && nranks == 1 && r->world_size <= 1) {
            /* A single-GPU job's trace: nothing says a rank because there is one. */
            r->rank = 0;
            r->rank_from = "alone";
            strbuf_addf(notes, "the trace names no rank (no distributedInfo, no number ending its file name): taken"
                               " as rank 0 of a world of 1 (--rank N says otherwise)\n");
        }
        if (r->rank < 0) {
            /* Given with others, a single-GPU trace is most likely another job's: say
             * first that it imports by itself. */
            set_err(err, errlen,
                    "%s%s%s: which rank is this trace? Neither a distributedInfo.rank%s nor its file name"
                    " says.%s Give --rank N (one trace at a time), or name a job's files rank0.json,"
                    " rank1.json, ...",
                    r->path, r->label[0] ? " " : "", r->label, r->label[0] ? " (several processes)" : "",
                    nranks > 1 ? " The traces given together are read as the ranks of one job; a single-GPU"
                                 " job's trace imports by itself, as rank 0 of 1."
                               : "");
            return IMPORT_BAD_INPUT;
        }
        if (r->world_size > 0) {
            if (said_world > 0 && said_world != r->world_size) {
                set_err(err, errlen, "%s says world size %d, %s says %d: not one job", r->path, r->world_size,
                        said_by, said_world);
                return IMPORT_BAD_INPUT;
            }
            said_world = r->world_size;
            said_by = r->path;
        }
        if (r->pg_count >= 0) {
            if (said_pgs >= 0 && said_pgs != r->pg_count) {
                set_err(err, errlen, "%s says its job has %d process groups, %s says %d: not one job", r->path,
                        r->pg_count, pgs_by, said_pgs);
                return IMPORT_BAD_INPUT;
            }
            said_pgs = r->pg_count;
            pgs_by = r->path;
        }
    }
    for (int i = 0; i < nranks; i++)
        for (int j = i + 1; j < nranks; j++)
            if (ranks[i]->rank == ranks[j]->rank) {
                set_err(err, errlen, "%s%s%s and %s%s%s both hold rank %d", ranks[i]->path,
                        ranks[i]->label[0] ? " " : "", ranks[i]->label, ranks[j]->path,
                        ranks[j]->label[0] ? " " : "", ranks[j]->label, ranks[i]->rank);
                return IMPORT_BAD_INPUT;
            }
    int maxr = 0;
    for (int i = 0; i < nranks; i++)
        maxr = ranks[i]->rank > maxr ? ranks[i]->rank : maxr;
    if (said_world > 0 && maxr >= said_world) {
        set_err(err, errlen, "rank %d is beyond the world size of %d that the traces say", maxr, said_world);
        return IMPORT_BAD_INPUT;
    }
    int w = said_world > 0 ? said_world : maxr + 1;
    if (nranks < w) {
        strbuf_addstr(notes, nranks == 1 ? "rank " : "ranks ");
        int listed = 0;
        for (int k = 0; k < w && listed < nranks; k++)
            for (int i = 0; i < nranks; i++)
                if (ranks[i]->rank == k) {
                    strbuf_addf(notes, "%s%d", listed ? ", " : "", k);
                    listed++;
                }
        strbuf_addf(notes, " of a world of %d: the other ranks are not in this run; a collective's time on a"
                           " traced rank holds its wait for them as well as the transfer\n",
                    w);
    }
    *world = w;
    return IMPORT_OK;
}

/* Traces on the wall clock whose times do not overlap were not recorded by one job. */
static import_status check_time_ranges(rank_result *rr, int n, char *err, size_t errlen)
{
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            const rank_result *x = &rr[a], *y = &rr[b];
            if (!x->tr->abs_clock || !y->tr->abs_clock || x->nsp == 0 || y->nsp == 0)
                continue;
            int64_t x0 = INT64_MAX, x1 = INT64_MIN, y0 = INT64_MAX, y1 = INT64_MIN;
            for (size_t i = 0; i < x->nsp; i++) {
                x0 = x->sp[i].start < x0 ? x->sp[i].start : x0;
                x1 = x->sp[i].end > x1 ? x->sp[i].end : x1;
            }
            for (size_t i = 0; i < y->nsp; i++) {
                y0 = y->sp[i].start < y0 ? y->sp[i].start : y0;
                y1 = y->sp[i].end > y1 ? y->sp[i].end : y1;
            }
            if (x1 < y0 || y1 < x0) {
                const rank_result *early = x1 < y0 ? x : y, *late = x1 < y0 ? y : x;
                int64_t gap = (x1 < y0 ? y0 - x1 : x0 - y1);
                set_err(err, errlen,
                        "%s (rank %d) ends %.3f s before %s (rank %d) begins, on the wall clock both"
                        " traces keep: not one job's traces",
                        early->tr->path, early->tr->rank, (double)gap / 1e9, late->tr->path, late->tr->rank);
                return IMPORT_BAD_INPUT;
            }
        }
    return IMPORT_OK;
}

static int cmp_rank_ptr(const void *a, const void *b)
{
    const rank_result *x = a, *y = b;
    return (x->tr->rank > y->tr->rank) - (x->tr->rank < y->tr->rank);
}

/* ---- collectives across ranks --------------------------------------------------------- */

typedef struct {
    const char *pg; /* "" when the trace names none */
    int64_t a, b;   /* (Seq, 0) or (iteration, ordinal) */
    int kind;       /* matched by ordinal: the collective's kind (its ordinal counts its kind) */
    bool by_seq;
    int rank_idx;
    size_t span;
} coll_key;

static int cmp_key(const void *x, const void *y)
{
    const coll_key *p = x, *q = y;
    if (p->by_seq != q->by_seq)
        return p->by_seq ? -1 : 1;
    if (!p->by_seq && p->a != q->a)
        return p->a < q->a ? -1 : 1;
    int c = strcmp(p->pg, q->pg);
    if (c)
        return c;
    if (p->kind != q->kind)
        return p->kind < q->kind ? -1 : 1;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->rank_idx - q->rank_idx;
}

static bool same_key(const coll_key *p, const coll_key *q)
{
    return p->by_seq == q->by_seq && p->a == q->a && p->b == q->b && p->kind == q->kind && !strcmp(p->pg, q->pg);
}

static int cmp_ordinal(const void *x, const void *y, void *arg)
{
    const pspan *sp = arg;
    const pspan *p = &sp[*(const size_t *)x], *q = &sp[*(const size_t *)y];
    if (p->pg != q->pg)
        return p->pg < q->pg ? -1 : 1;
    if (p->iter != q->iter)
        return p->iter < q->iter ? -1 : 1;
    if (p->kind != q->kind)
        return p->kind < q->kind ? -1 : 1;
    if (p->start != q->start)
        return p->start < q->start ? -1 : 1;
    return (p->end > q->end) - (p->end < q->end);
}

/* Numbers each rank's collectives within (group, iteration), in start order. */
static int number_ordinals(rank_result *rr, char *err, size_t errlen)
{
    size_t n = 0;
    for (size_t i = 0; i < rr->nsp; i++)
        n += rr->sp[i].stream == STREAM_COMM;
    size_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < rr->nsp; i++)
        if (rr->sp[i].stream == STREAM_COMM)
            v[k++] = i;
    if (n > 1)
        qsort_r(v, n, sizeof *v, cmp_ordinal, rr->sp);
    int32_t ord = 0;
    for (size_t i = 0; i < n; i++) {
        const pspan *p = &rr->sp[v[i]];
        if (i > 0 && (rr->sp[v[i - 1]].pg != p->pg || rr->sp[v[i - 1]].iter != p->iter ||
                      rr->sp[v[i - 1]].kind != p->kind))
            ord = 0;
        rr->sp[v[i]].ordinal = ord++;
    }
    free(v);
    return 0;
}

/* Gives every comm span its run-wide seq (the same on every rank for one collective),
 * and collects the keys for the clock alignment. */
static int match_collectives(rank_result *rr, int n, coll_key **keys_out, size_t *nkeys_out, char *err,
                             size_t errlen)
{
    size_t total = 0;
    for (int r = 0; r < n; r++) {
        if (number_ordinals(&rr[r], err, errlen) < 0)
            return -1;
        for (size_t i = 0; i < rr[r].nsp; i++)
            total += rr[r].sp[i].stream == STREAM_COMM;
    }
    coll_key *k = malloc((total ? total : 1) * sizeof *k);
    if (!k) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    size_t m = 0;
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < rr[r].nsp; i++) {
            const pspan *p = &rr[r].sp[i];
            if (p->stream != STREAM_COMM)
                continue;
            coll_key *q = &k[m++];
            q->pg = p->pg >= 0 ? strtab_str(&rr[r].tr->names, p->pg) : "";
            q->by_seq = p->coll_seq >= 0;
            q->a = q->by_seq ? p->coll_seq : p->iter;
            q->b = q->by_seq ? 0 : p->ordinal;
            q->kind = q->by_seq ? 0 : p->kind;
            q->rank_idx = r;
            q->span = i;
        }
    if (m > 1)
        qsort(k, m, sizeof *k, cmp_key);
    int64_t seq = -1;
    for (size_t i = 0; i < m; i++) {
        if (i == 0 || !same_key(&k[i - 1], &k[i]))
            seq++;
        rr[k[i].rank_idx].sp[k[i].span].seq = seq;
    }
    *keys_out = k;
    *nkeys_out = m;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Each rank's clock against the reference (rr[0], the lowest rank). */
static int align_clocks(rank_result *rr, int n, const coll_key *k, size_t m, bool wall, strbuf *how, char *err,
                        size_t errlen)
{
    int64_t *d = malloc((m ? m : 1) * sizeof *d);
    if (!d) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    int fallback = 0, min_matched = -1;
    int64_t max_unc = 0;
    rr[0].offset = 0;
    rr[0].uncertainty = 0;
    rr[0].clock_how = wall ? "wall clock" : "reference";
    for (int r = 1; r < n; r++) {
        size_t nd = 0;
        /* keys are sorted, so a collective's spans on each rank sit side by side */
        for (size_t i = 0; i < m;) {
            size_t j = i;
            const pspan *ref = NULL, *mine = NULL;
            for (; j < m && same_key(&k[i], &k[j]); j++) {
                const pspan *p = &rr[k[j].rank_idx].sp[k[j].span];
                if (k[j].rank_idx == 0 && !ref)
                    ref = p;
                if (k[j].rank_idx == r && !mine)
                    mine = p;
            }
            if (ref && mine)
                d[nd++] = ref->end - mine->end;
            i = j;
        }
        rr[r].matched = (int)nd;
        if (min_matched < 0 || (int)nd < min_matched)
            min_matched = (int)nd;
        if (nd > 0) {
            qsort(d, nd, sizeof *d, cmp_i64);
            int64_t med = wall ? 0 : d[nd / 2];
            /* How far apart one collective's ends are on two ranks, typically: half the
             * interquartile range of the differences (robust to a few late wake-ups);
             * on wall clocks, the median distance from agreement. */
            int64_t unc;
            if (wall) {
                for (size_t i = 0; i < nd; i++)
                    d[i] = d[i] < 0 ? -d[i] : d[i];
                qsort(d, nd, sizeof *d, cmp_i64);
                unc = d[nd / 2];
            } else {
                unc = (d[(3 * nd) / 4 < nd ? (3 * nd) / 4 : nd - 1] - d[nd / 4]) / 2;
            }
            rr[r].offset = med;
            rr[r].uncertainty = unc;
            rr[r].clock_how = wall ? "wall clock" : "collective ends";
            max_unc = unc > max_unc ? unc : max_unc;
            continue;
        }
        rr[r].uncertainty = -1;
        if (wall) {
            rr[r].offset = 0;
            rr[r].clock_how = "wall clock";
            continue;
        }
        /* No collective in common: the starts of the first step both have, else the
         * first events. */
        fallback++;
        bool done = false;
        for (size_t a = 0; a < rr[0].nsteps && !done; a++)
            for (size_t b = 0; b < rr[r].nsteps && !done; b++)
                if (rr[0].step_n[a] == rr[r].step_n[b]) {
                    rr[r].offset = rr[0].step_start[a] - rr[r].step_start[b];
                    rr[r].clock_how = "step start";
                    done = true;
                }
        if (!done) {
            int64_t t0 = INT64_MAX, t1 = INT64_MAX;
            for (size_t i = 0; i < rr[0].nsp; i++)
                t0 = rr[0].sp[i].start < t0 ? rr[0].sp[i].start : t0;
            for (size_t i = 0; i < rr[r].nsp; i++)
                t1 = rr[r].sp[i].start < t1 ? rr[r].sp[i].start : t1;
            rr[r].offset = t0 != INT64_MAX && t1 != INT64_MAX ? t0 - t1 : 0;
            rr[r].clock_how = "first event";
        }
    }
    free(d);
    if (n == 1)
        strbuf_addstr(how, wall ? "the trace's wall clock" : "the trace's own clock");
    else if (wall)
        strbuf_addf(how,
                    "each rank's wall clock as its trace has it (not corrected); matched collectives'"
                    " ends differ from rank %d's by %.3f ms (median, worst rank)",
                    rr[0].tr->rank, (double)max_unc / 1e6);
    else
        strbuf_addf(how,
                    "ranks aligned on the ends of matched collectives (median difference from rank %d's,"
                    " at least %d collectives per rank); uncertainty %.3f ms (half the interquartile range"
                    " of the differences, worst rank)%s",
                    rr[0].tr->rank, min_matched < 0 ? 0 : min_matched, (double)max_unc / 1e6,
                    fallback ? "; ranks without a matched collective aligned on a step's start" : "");
    return 0;
}

/* ---- the job's period ------------------------------------------------------------------ */

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Appends a host-stream span of kind `kind` to rr (names: interned `name`). */
static int add_host_span(rank_result *rr, int kind, int32_t iter, int64_t start, int64_t end, const char *name,
                         char *err, size_t errlen)
{
    int32_t id = trace_rank_name(rr->tr, name, strlen(name));
    if (id < 0) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    pspan *p = rank_span_new(rr, err, errlen);
    if (!p)
        return -1;
    *p = (pspan){.start = start, .end = end, .launch = start, .bytes = -1, .coll_seq = -1, .seq = -1,
                 .name = id, .iter = iter, .launch_iter = iter, .bucket = -1, .pg = -1, .stream = STREAM_HOST,
                 .kind = (uint8_t)kind};
    return 0;
}

/* Each iteration's step as the job ran it: its period on the device timeline, from
 * the iteration's start to the next's, so that whatever kept the device idle between
 * them (the input pipeline, launch gaps, the host's own stalls) counts, as it does for
 * throughput.  An iteration starts at its first forward op on the device (DDP's
 * forward), else at its first op there (a CPU-only job: its compute and collectives).
 * The host runs ahead of the device, so a device op launched in one step may run in
 * the next one's period (an input copy issued early): device ops outside DDP's phases
 * and the collectives belong to the period they run in; DDP's phases (forward,
 * backward, bucket copies, optimizer) and the collectives stay with the step that
 * launched them, as DDP's buckets are per step.  The statistics clip each span to
 * its iteration's period, so the parts of a step add up to it.  The last iteration has no next
 * start: its period is its host ProfilerStep's length (the host's period, which the
 * device's follows in a steady state; the device's tail past it overlaps the next
 * period, which the trace does not hold), or, without one, up to its last op's end.  The host's ProfilerStep#N ranges are kept beside, as profiler_step spans. */
static int add_periods(rank_result *rr, char *err, size_t errlen)
{
    size_t n0 = rr->nsp;
    int32_t *iters = malloc((n0 ? n0 : 1) * sizeof *iters);
    int64_t *anchor = malloc((n0 ? n0 : 1) * 3 * sizeof *anchor);
    if (!iters || !anchor) {
        free(iters);
        free(anchor);
        set_err(err, errlen, "out of memory");
        return -1;
    }
    size_t ni = 0;
    for (size_t i = 0; i < n0; i++)
        if (rr->sp[i].stream != STREAM_HOST)
            iters[ni++] = rr->sp[i].iter;
    qsort(iters, ni, sizeof *iters, cmp_i32);
    size_t nu = 0;
    for (size_t i = 0; i < ni; i++)
        if (nu == 0 || iters[nu - 1] != iters[i])
            iters[nu++] = iters[i];
    int64_t *first_any = anchor + nu, *last_end = anchor + 2 * nu;
    for (size_t k = 0; k < nu; k++) {
        anchor[k] = first_any[k] = INT64_MAX;
        last_end[k] = INT64_MIN;
    }
    for (size_t i = 0; i < n0; i++) {
        const pspan *p = &rr->sp[i];
        if (p->stream == STREAM_HOST)
            continue;
        size_t k = (size_t)((int32_t *)bsearch(&p->iter, iters, nu, sizeof *iters, cmp_i32) - iters);
        first_any[k] = p->start < first_any[k] ? p->start : first_any[k];
        if (p->kind == SPAN_FORWARD && p->start < anchor[k])
            anchor[k] = p->start;
    }
    for (size_t k = 0; k < nu; k++)
        if (anchor[k] == INT64_MAX)
            anchor[k] = first_any[k];
    /* Device ops by the period they run in (anchors in order only: a trace whose
     * iterations' starts do not increase keeps its launch steps). */
    bool ordered = true;
    for (size_t k = 1; k < nu; k++)
        ordered &= anchor[k] > anchor[k - 1];
    for (size_t i = 0; i < n0 && ordered && nu > 1; i++) {
        pspan *p = &rr->sp[i];
        if (!p->on_device || p->stream == STREAM_COMM || p->start < anchor[0] ||
            (p->kind != SPAN_KERNEL && p->kind != SPAN_MEMCPY && p->kind != SPAN_MEMSET))
            continue;
        size_t lo = 0, hi = nu; /* the last anchor at or before its start */
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (anchor[mid] <= p->start)
                lo = mid;
            else
                hi = mid;
        }
        p->iter = iters[lo];
    }
    for (size_t i = 0; i < n0; i++) {
        const pspan *p = &rr->sp[i];
        if (p->stream == STREAM_HOST)
            continue;
        size_t k = (size_t)((int32_t *)bsearch(&p->iter, iters, nu, sizeof *iters, cmp_i32) - iters);
        last_end[k] = p->end > last_end[k] ? p->end : last_end[k];
    }
    int ret = 0;
    for (size_t k = 0; k < nu && ret == 0; k++) {
        int64_t start = anchor[k], end = last_end[k];
        if (k + 1 < nu && anchor[k + 1] > start) {
            end = anchor[k + 1];
        } else {
            for (size_t s = 0; s < rr->nsteps; s++)
                if (rr->step_n[s] == iters[k])
                    end = start + (rr->step_end[s] - rr->step_start[s]);
        }
        ret = add_host_span(rr, SPAN_STEP, iters[k], start, end > start ? end : start, "step (the job's period)", err,
                            errlen);
    }
    for (size_t s = 0; s < rr->nsteps && ret == 0; s++) {
        char name[48];
        snprintf(name, sizeof name, "ProfilerStep#%lld", (long long)rr->step_n[s]);
        ret = add_host_span(rr, SPAN_PROFILER_STEP, (int32_t)rr->step_n[s], rr->step_start[s], rr->step_end[s], name,
                            err, errlen);
    }
    free(anchor);
    free(iters);
    return ret;
}

/* ---- HTA's figures ---------------------------------------------------------------------- */

/* One rank's figures, as HTA computes them from the trace: the device ops it keeps
 * (launched by a host event before the last ProfilerStep starts, with
 * include_last_profiler_step=False, its default: in a trace of one step, those
 * launched before it), times in whole µs (start rounded up, end down). */
static int hta_rank(store *st, int64_t run_id, int rank, const rank_result *rr, char *err, size_t errlen)
{
    size_t n = 0;
    for (size_t i = 0; i < rr->nsp; i++)
        n += rr->sp[i].on_device;
    if (n == 0)
        return 0;
    hta_op *ops = malloc(n * sizeof *ops);
    if (!ops) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    int64_t last = rr->nsteps ? rr->step_n[rr->nsteps - 1] : -1;
    int64_t last_start = rr->nsteps ? rr->step_start[rr->nsteps - 1] : INT64_MAX;
    size_t k = 0;
    for (size_t i = 0; i < rr->nsp; i++) {
        const pspan *p = &rr->sp[i];
        if (!p->on_device || (rr->nsteps && (!p->launched || p->launch >= last_start)))
            continue;
        ops[k++] = (hta_op){hta_us_up(p->start), hta_us_down(p->end),
                            p->hta == HTA_COMMUNICATION ? HTA_OP_COMMUNICATION
                            : p->hta == HTA_MEMORY      ? HTA_OP_MEMORY
                            : p->hta == HTA_OTHER       ? HTA_OP_OTHER
                                                        : HTA_OP_COMPUTATION};
    }
    char steps[160];
    if (rr->nsteps > 1)
        snprintf(steps, sizeof steps, "ProfilerStep#%" PRId64 "-#%" PRId64 " (the last, #%" PRId64 ", left out as HTA does)",
                 rr->step_n[0], rr->step_n[rr->nsteps - 2], last);
    else if (rr->nsteps == 1)
        snprintf(steps, sizeof steps, "the device ops launched before ProfilerStep#%" PRId64 " (the only step, left out as HTA does)", last);
    else
        snprintf(steps, sizeof steps, "every device op (the trace has no ProfilerStep#N)");
    store_hta_stat h = {.rank = rank, .steps = steps};
    int rc = hta_figures_compute(ops, k, &h);
    free(ops);
    if (rc < 0) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    return rc == 0 ? store_write_hta_stat(st, run_id, &h, err, errlen) : 0;
}

/* ---- writing ---------------------------------------------------------------------------- */

static int write_spans(store *st, int64_t run_id, const rank_result *rr, int64_t t0, size_t *count, char *err,
                       size_t errlen)
{
    span *batch = malloc(SPAN_BATCH * sizeof *batch);
    const char **names = malloc(SPAN_BATCH * sizeof *names);
    if (!batch || !names) {
        free(batch);
        free(names);
        set_err(err, errlen, "out of memory");
        return -1;
    }
    int ret = 0;
    size_t k = 0;
    for (size_t i = 0; i <= rr->nsp && ret == 0; i++) {
        if (k == SPAN_BATCH || (i == rr->nsp && k > 0)) {
            ret = store_write_spans_named(st, run_id, batch, names, k, err, errlen);
            *count += k;
            k = 0;
        }
        if (i == rr->nsp)
            break;
        const pspan *p = &rr->sp[i];
        span *s = &batch[k];
        memset(s, 0, sizeof *s);
        s->rank = rr->tr->rank;
        s->iter = p->iter;
        s->stream = p->stream;
        s->kind = p->kind;
        s->layer = -1;
        s->bucket = p->bucket;
        s->seq = p->seq;
        s->bytes = p->bytes;
        s->start_ns = p->start + rr->offset - t0;
        s->end_ns = p->end + rr->offset - t0;
        s->on_device = p->on_device;
        s->device_stream = (int32_t)p->dev_stream;
        names[k] = strtab_str(&rr->tr->names, p->name);
        k++;
    }
    free(batch);
    free(names);
    return ret;
}

static int write_buckets(store *st, int64_t run_id, const ddp_bucket *b, int n, int version, char *err,
                         size_t errlen)
{
    if (n <= 0)
        return 0;
    store_bucket *sb = calloc((size_t)n, sizeof *sb);
    if (!sb) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++)
        sb[i] = (store_bucket){.nbytes = b[i].bytes < 0 ? 0 : b[i].bytes, .size_limit = -1,
                               .nparams = b[i].nparams, .params = NULL};
    int rc = store_write_buckets(st, run_id, version, sb, n, err, errlen);
    free(sb);
    return rc;
}

static bool same_buckets(const ddp_bucket *a, int na, const ddp_bucket *b, int nb)
{
    if (na != nb)
        return false;
    for (int i = 0; i < na; i++)
        if (a[i].bytes != b[i].bytes || a[i].nparams != b[i].nparams)
            return false;
    return true;
}

static void run_name(const import_options *o, char *out, size_t n)
{
    if (o->name) {
        snprintf(out, n, "%s", o->name);
        return;
    }
    char p[512];
    snprintf(p, sizeof p, "%s", o->paths[0]);
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/')
        p[--len] = '\0';
    snprintf(out, n, "%.200s%s", base_name(p), o->npaths > 1 ? " ..." : "");
}

static bool imported_backend_nsys(const trace_rank *const *ranks, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(ranks[i]->format, "nsys-sqlite") != 0)
            return false;
    return n > 0;
}

/* ---- the import --------------------------------------------------------------------------- */

/* Each trace's times in ns on its own clock: Kineto's base added; µs since the epoch
 * recognised as the wall clock.  *wall: every trace is on the wall clock; *device_job:
 * some trace holds device work (a kernel, copy or memset). */
static void to_own_clocks(trace_rank **ranks, int nranks, bool *wall, bool *device_job)
{
    *wall = true;
    *device_job = false;
    for (int i = 0; i < nranks; i++) {
        trace_rank *t = ranks[i];
        int64_t lo = INT64_MAX;
        for (size_t e = 0; e < t->nev; e++) {
            t->ev[e].ts_ns += t->base_ns;
            lo = t->ev[e].ts_ns < lo ? t->ev[e].ts_ns : lo;
            *device_job |= t->ev[e].type == TEV_KERNEL || t->ev[e].type == TEV_MEMCPY || t->ev[e].type == TEV_MEMSET;
        }
        if (!t->abs_clock && t->nev > 0 && lo >= EPOCH_NS_THRESHOLD)
            t->abs_clock = true;
        *wall &= t->abs_clock;
    }
}

/* Every rank's spans (*rr, nranks of them in rank order; the caller frees them with
 * rank_result_free), each trace's events dropped once its spans are built.  0, or -1
 * with err (*rr then holds what was built, to be freed all the same). */
static int build_rank_spans(trace_rank **ranks, int nranks, bool device_job, rank_result **rr, char *err,
                            size_t errlen)
{
    *rr = nranks > 0 ? calloc((size_t)nranks, sizeof **rr) : NULL;
    if (!*rr) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < nranks; i++) {
        if (rank_spans_build(&(*rr)[i], ranks[i], device_job, err, errlen) < 0)
            return -1;
        /* The spans hold what is needed from here on (with the names): the events'
         * memory goes back before the next rank is analysed. */
        trace_rank_drop_events(ranks[i]);
    }
    qsort(*rr, (size_t)nranks, sizeof **rr, cmp_rank_ptr);
    return 0;
}

/* Refuses traces with nothing of a DDP job in them (IMPORT_BAD_INPUT), else adds each
 * rank's iteration periods (IMPORT_RUNTIME when that fails).  *any_comm, *any_steps:
 * some rank has a collective, a ProfilerStep. */
static import_status check_analysable(rank_result *rr, int nranks, bool device_job, bool *any_comm,
                                      bool *any_steps, char *err, size_t errlen)
{
    *any_comm = *any_steps = false;
    for (int i = 0; i < nranks; i++) {
        *any_comm |= rr[i].has_comm;
        *any_steps |= rr[i].nsteps > 0;
        if (rr[i].nsp == 0) {
            set_err(err, errlen,
                    "%s: rank %d: nothing to analyse: no GPU kernel, copy or memset, and no host op of"
                    " training or of gloo",
                    rr[i].tr->path, rr[i].tr->rank);
            return IMPORT_BAD_INPUT;
        }
    }
    for (int i = 0; i < nranks; i++)
        if (add_periods(&rr[i], err, errlen) < 0)
            return IMPORT_RUNTIME;
    if (!device_job && !*any_comm) {
        set_err(err, errlen,
                "%s: no GPU events and no collectives (gloo:*) in the trace%s: nothing of a DDP job to"
                " analyse (was the profiler given ProfilerActivity.CUDA, and the job"
                " torch.distributed?)",
                rr[0].tr->path, nranks > 1 ? "s" : "");
        return IMPORT_BAD_INPUT;
    }
    return IMPORT_OK;
}

/* The run's notes on what the traces lack or what was left out of them. */
static void note_gaps(const rank_result *rr, int nranks, bool device_job, bool any_comm, bool any_steps,
                      strbuf *notes)
{
    if (!any_steps)
        strbuf_addf(notes, "no ProfilerStep#N in the trace%s: the whole trace is one iteration (0)\n",
                    nranks > 1 ? "s" : "");
    if (!device_job)
        strbuf_addf(notes, "no device work in the trace: its host ops are the compute, its collectives (gloo's,"
                           " or ranges naming them) the communication\n");
    if (!any_comm)
        strbuf_addf(notes, "no collective in the trace%s\n", nranks > 1 ? "s" : "");
    size_t before = 0;
    for (int i = 0; i < nranks; i++)
        before += rr[i].launched_before;
    if (before > 0)
        strbuf_addf(notes,
                    "%zu device op%s launched before the trace's first recorded launch (in the profiler's warm-up"
                    " step) left out: they belong to no traced iteration\n",
                    before, before == 1 ? "" : "s");
    bool any_bytes = false;
    for (int i = 0; i < nranks; i++)
        for (size_t k = 0; k < rr[i].nsp && !any_bytes; k++)
            any_bytes = rr[i].sp[k].stream == STREAM_COMM && rr[i].sp[k].bytes >= 0;
    if (any_comm && !any_bytes)
        strbuf_addf(notes, "message sizes unknown: the trace records none (bucket sizes show as 0)\n");
}

/* Traces of one job share collectives: IMPORT_BAD_INPUT when a rank with collectives
 * matched none of the lowest rank's. */
static import_status check_one_job(const rank_result *rr, int nranks, char *err, size_t errlen)
{
    for (int i = 1; i < nranks; i++)
        if (rr[0].has_comm && rr[i].has_comm && rr[i].matched == 0) {
            set_err(err, errlen,
                    "%s (rank %d) and %s (rank %d) share no collective (none has the same process group and"
                    " sequence number, or step and place in it): not one job's traces",
                    rr[0].tr->path, rr[0].tr->rank, rr[i].tr->path, rr[i].tr->rank);
            return IMPORT_BAD_INPUT;
        }
    return IMPORT_OK;
}

/* What import_traces has made of a job's traces, to be written as one run. */
typedef struct {
    const import_options *o;
    const import_file *files;
    int nfiles;
    trace_rank *const *ranks; /* in the order read */
    int nranks, world;
    const rank_result *rr; /* in rank order, on one clock */
    bool wall;             /* the traces' clock is the wall clock */
    int64_t t0;            /* the first span's start */
    int32_t iter_lo, iter_hi;
    const strbuf *notes, *how;
} import_job;

/* The first span's start, and the lowest and highest iteration. */
static void span_extent(import_job *job)
{
    job->t0 = INT64_MAX;
    job->iter_lo = INT32_MAX;
    job->iter_hi = INT32_MIN;
    for (int i = 0; i < job->nranks; i++)
        for (size_t k = 0; k < job->rr[i].nsp; k++) {
            const pspan *p = &job->rr[i].sp[k];
            int64_t start = p->start + job->rr[i].offset;
            job->t0 = start < job->t0 ? start : job->t0;
            job->iter_lo = p->iter < job->iter_lo ? p->iter : job->iter_lo;
            job->iter_hi = p->iter > job->iter_hi ? p->iter : job->iter_hi;
        }
}

/* Opens the one transaction and begins the run in it (its name, backend and ranks).
 * 0 with *run_id, or -1 with err (the transaction, once open, is the caller's to end:
 * *bulk says whether it is). */
static int begin_imported_run(store *st, const import_job *job, import_summary *sum, bool *bulk, int64_t *run_id,
                              char *err, size_t errlen)
{
    char name[256];
    run_name(job->o, name, sizeof name);
    bool nsys = imported_backend_nsys((const trace_rank *const *)job->ranks, job->nranks);
    snprintf(sum->backend, sizeof sum->backend, "%s", nsys ? "nsys" : "pytorch-trace");
    snprintf(sum->clock_sync, sizeof sum->clock_sync, "%.511s", job->how->buf);
    int *held = malloc((size_t)job->nranks * sizeof *held);
    if (!held) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < job->nranks; i++)
        held[i] = job->rr[i].tr->rank; /* rr is in rank order */
    store_run_info info = {.name = name,
                           .ranks = job->nranks < job->world ? held : NULL,
                           .nranks = job->nranks,
                           .source = job->o->paths[0],
                           .backend = sum->backend,
                           .world_size = job->world,
                           .iterations = job->iter_hi - job->iter_lo + 1,
                           .warmup = 0};
    /* One transaction holds every page it writes until it commits, in the page cache
     * up to its size (the store's is large, for recording): a smaller one lets SQLite
     * spill to the WAL instead, so memory stays bounded whatever the trace's size. */
    int rc = -1;
    if (store_set_page_cache_kib(st, IMPORT_PAGE_CACHE_KIB, err, errlen) == 0 &&
        store_begin_bulk(st, err, errlen) >= 0) {
        *bulk = true;
        rc = store_begin_run(st, &info, run_id, err, errlen) < 0 ? -1 : 0;
    }
    free(held);
    return rc;
}

/* Where the run came from: how its ranks were found, its clock, its notes, and one row
 * per file read (with the rank of a file that holds one). */
static int write_provenance(store *st, int64_t run_id, const import_job *job, char *err, size_t errlen)
{
    char ranks_how[128];
    snprintf(ranks_how, sizeof ranks_how, "imported: %d trace%s from %d file%s", job->nranks,
             job->nranks > 1 ? "s" : "", job->nfiles, job->nfiles > 1 ? "s" : "");
    int64_t base = job->wall ? job->t0 : 0;
    if (store_set_run_ranks(st, run_id, ranks_how, err, errlen) < 0 ||
        store_set_run_source(st, run_id, job->how->len ? job->how->buf : NULL, job->wall ? &base : NULL,
                             job->notes->len ? job->notes->buf : NULL, err, errlen) < 0)
        return -1;
    for (int i = 0; i < job->nfiles; i++) {
        const import_file *f = &job->files[i];
        int frank = -1;
        const char *from = NULL;
        for (int r = 0; r < job->nranks; r++)
            if (job->ranks[r]->file_idx == i && f->nranks_in_file == 1) {
                frank = job->ranks[r]->rank;
                from = job->ranks[r]->rank_from;
            }
        store_source_file sf = {.idx = i, .path = f->path, .bytes = f->bytes, .sha256 = f->sha256,
                                .format = f->format, .rank = frank, .rank_from = from};
        if (store_write_source_file(st, run_id, &sf, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* Each rank's clock, spans and HTA figures, then DDP's buckets as the lowest rank
 * launched them: first, and rebuilt if they changed.  *spans counts the spans written. */
static int write_ranks(store *st, int64_t run_id, const import_job *job, size_t *spans, char *err, size_t errlen)
{
    const rank_result *rr = job->rr;
    for (int i = 0; i < job->nranks; i++) {
        if (store_set_rank_clock(st, run_id, rr[i].tr->rank, rr[i].offset, rr[i].uncertainty, err, errlen) < 0 ||
            write_spans(st, run_id, &rr[i], job->t0, spans, err, errlen) < 0 ||
            hta_rank(st, run_id, rr[i].tr->rank, &rr[i], err, errlen) < 0)
            return -1;
    }
    const rank_result *r0 = &rr[0];
    if (r0->nfirst > 0 && write_buckets(st, run_id, r0->first_buckets, r0->nfirst, 0, err, errlen) < 0)
        return -1;
    if (r0->nlast > 0 && !same_buckets(r0->first_buckets, r0->nfirst, r0->last_buckets, r0->nlast) &&
        write_buckets(st, run_id, r0->last_buckets, r0->nlast, 1, err, errlen) < 0)
        return -1;
    return 0;
}

/* The job as one run, in one transaction (rolled back on failure): 0 with the summary
 * filled, or -1 with err. */
static int write_run(store *st, const import_job *job, import_summary *sum, char *err, size_t errlen)
{
    bool bulk = false;
    int64_t run_id;
    if (begin_imported_run(st, job, sum, &bulk, &run_id, err, errlen) < 0 ||
        write_provenance(st, run_id, job, err, errlen) < 0 ||
        write_ranks(st, run_id, job, &sum->spans, err, errlen) < 0 ||
        store_finish_run(st, run_id, NULL, err, errlen) < 0) {
        if (bulk) {
            char ignored[128];
            store_end_bulk(st, false, ignored, sizeof ignored); /* the first error is the one to report */
        }
        return -1;
    }
    if (store_end_bulk(st, true, err, errlen) < 0)
        return -1;
    sum->run_id = run_id;
    sum->world_size = job->world;
    sum->nranks = job->nranks;
    sum->iterations = job->iter_hi - job->iter_lo + 1;
    return 0;
}

/* The traces read, analysed and checked to be one job's, on one clock (everything but
 * the writing).  IMPORT_OK with *job filled (its pieces the caller's to free), else the
 * status with err. */
static import_status analyse_job(const import_options *o, import_job *job, import_file **files, trace_rank ***ranks,
                                 rank_result **rr, coll_key **keys, strbuf *notes, strbuf *how, char *err,
                                 size_t errlen)
{
    size_t used = 0, nkeys = 0;
    trace_limits lim = {.max_events = o->max_events ? o->max_events : IMPORT_DEFAULT_MAX_EVENTS,
                        .max_file_bytes = o->max_file_bytes ? o->max_file_bytes : IMPORT_DEFAULT_MAX_FILE_BYTES,
                        .events_used = &used};
    *job = (import_job){.o = o, .notes = notes, .how = how};
    import_status status = import_read_files(o, files, &job->nfiles, ranks, &job->nranks, &lim, err, errlen);
    if (status != IMPORT_OK)
        return status;
    job->files = *files;
    job->ranks = *ranks;
    if (job->nranks == 0) {
        set_err(err, errlen, "%s: no process in the trace did any GPU work or holds any range", (*files)[0].path);
        return IMPORT_BAD_INPUT;
    }
    if ((status = resolve_ranks(o, *ranks, job->nranks, &job->world, notes, err, errlen)) != IMPORT_OK)
        return status;
    bool device_job, any_comm, any_steps;
    to_own_clocks(*ranks, job->nranks, &job->wall, &device_job);
    if (build_rank_spans(*ranks, job->nranks, device_job, rr, err, errlen) < 0)
        return IMPORT_RUNTIME;
    job->rr = *rr;
    if ((status = check_analysable(*rr, job->nranks, device_job, &any_comm, &any_steps, err, errlen)) != IMPORT_OK)
        return status;
    note_gaps(*rr, job->nranks, device_job, any_comm, any_steps, notes);
    if ((status = check_time_ranges(*rr, job->nranks, err, errlen)) != IMPORT_OK)
        return status;
    if (match_collectives(*rr, job->nranks, keys, &nkeys, err, errlen) < 0 ||
        align_clocks(*rr, job->nranks, *keys, nkeys, job->wall, how, err, errlen) < 0)
        return IMPORT_RUNTIME;
    if ((status = check_one_job(*rr, job->nranks, err, errlen)) != IMPORT_OK)
        return status;
    if (notes->failed || how->failed) {
        set_err(err, errlen, "out of memory");
        return IMPORT_RUNTIME;
    }
    span_extent(job);
    return IMPORT_OK;
}

import_status import_traces(store *st, const import_options *o, import_summary *sum, char *err, size_t errlen)
{
    memset(sum, 0, sizeof *sum);
    import_file *files = NULL;
    trace_rank **ranks = NULL;
    rank_result *rr = NULL;
    coll_key *keys = NULL;
    strbuf notes = STRBUF_INIT, how = STRBUF_INIT;
    import_job job;
    import_status status = analyse_job(o, &job, &files, &ranks, &rr, &keys, &notes, &how, err, errlen);
    if (status == IMPORT_OK && write_run(st, &job, sum, err, errlen) < 0)
        status = IMPORT_RUNTIME;
    if (rr)
        for (int i = 0; i < job.nranks; i++)
            rank_result_free(&rr[i]);
    free(rr);
    free(keys);
    strbuf_release(&notes);
    strbuf_release(&how);
    import_files_free(files, job.nfiles, ranks, job.nranks);
    return status;
}
