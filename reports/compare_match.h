/* compare_match.h — what of two runs is compared (compare.h states the rules): the
 * rank and bucket pairs, the notes on what is left out, and the figures compared with
 * their relative difference.  Both formatters (compare.c, compare_json.c) print from
 * it. */
#ifndef DDPPROF_COMPARE_MATCH_H
#define DDPPROF_COMPARE_MATCH_H

#include <stddef.h>

#include "reports/analysis.h"

#define COMPARE_MAX_NOTES 8

typedef struct {
    size_t nranks;
    size_t (*rank_pairs)[2]; /* indices into a->ranks, b->ranks */
    size_t nbuckets;
    size_t (*bucket_pairs)[2];
    int nnotes;
    char notes[COMPARE_MAX_NOTES][160];
} compare_match_t;

/* 0, or -1 with err (out of memory).  Free with compare_match_free. */
int compare_match(const analysis_run *a, const analysis_run *b, compare_match_t *m, char *err, size_t errlen);
void compare_match_free(compare_match_t *m);

/* (b - a) / |a| in %, NAN when undefined. */
double compare_rel_pct(double a, double b);

/* The figures compared, for both formatters: name (unit-suffixed) and where it is. */
typedef struct {
    const char *name;
    size_t offset; /* of a double in analysis_rank / analysis_bucket */
} compare_metric;

extern const compare_metric compare_rank_metrics[];
extern const size_t compare_nrank_metrics;
extern const compare_metric compare_bucket_metrics[]; /* doubles; bytes is apart */
extern const size_t compare_nbucket_metrics;

#endif
