/* report_equivalence.c — prints table `equivalence` (see report_equivalence.h). */
#include "reports/report_equivalence.h"

#include <stdbool.h>

static int has_table(sqlite3 *db, bool *yes, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'equivalence'", -1, &s,
                           NULL) != SQLITE_OK) {
        snprintf(err, errlen, "reading equivalence: %s", sqlite3_errmsg(db));
        return -1;
    }
    int rc = sqlite3_step(s);
    *yes = rc == SQLITE_ROW;
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        snprintf(err, errlen, "reading equivalence: %s", sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}

static void cell(FILE *out, sqlite3_stmt *s, int col, const char *fmt, int width)
{
    if (sqlite3_column_type(s, col) == SQLITE_NULL)
        fprintf(out, " %*s", width, "-");
    else
        fprintf(out, fmt, width, sqlite3_column_double(s, col));
}

int report_equivalence_text(sqlite3 *db, int64_t run_id, FILE *out, char *err, size_t errlen)
{
    bool yes = false;
    if (has_table(db, &yes, err, errlen) != 0)
        return -1;
    if (!yes)
        return 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT group_id, run_id, variant, world_size, nodes, gpus_per_node, loss_reduction,"
                           " loss_scale, lr, steps, max_abs_diff, rel_to_update, update_ratio, replica_max_diff,"
                           " step_ms, overlap_pct, collectives_per_step, verdict FROM equivalence"
                           " WHERE ?1 < 0 OR group_id IN (SELECT group_id FROM equivalence WHERE run_id = ?1)"
                           " ORDER BY group_id, run_id",
                           -1, &s, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "reading equivalence: %s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_int64(s, 1, run_id);
    int64_t group = -1;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (sqlite3_column_int64(s, 0) != group) {
            group = sqlite3_column_int64(s, 0);
            fprintf(out,
                    "\n  equivalence (group %lld: %d steps, %s loss, weights compared with the reference)\n"
                    "  %4s  %-14s %5s %7s %11s %11s %8s %11s %9s %9s %8s  %s\n",
                    (long long)group, sqlite3_column_int(s, 9), (const char *)sqlite3_column_text(s, 6), "run",
                    "variant", "ranks", "nodes", "max |dw|", "dw/update", "update", "replicas", "step ms",
                    "overlap %", "colls", "verdict");
        }
        char topo[32] = "-";
        if (sqlite3_column_type(s, 4) != SQLITE_NULL)
            snprintf(topo, sizeof topo, "%dx%d", sqlite3_column_int(s, 4), sqlite3_column_int(s, 5));
        fprintf(out, "  %4lld  %-14s %5d %7s", (long long)sqlite3_column_int64(s, 1),
                (const char *)sqlite3_column_text(s, 2), sqlite3_column_int(s, 3), topo);
        cell(out, s, 10, " %*.3e", 11);
        cell(out, s, 11, " %*.3e", 11);
        cell(out, s, 12, " %*.4f", 8);
        cell(out, s, 13, " %*.3e", 11);
        cell(out, s, 14, " %*.3f", 9);
        cell(out, s, 15, " %*.1f", 9);
        cell(out, s, 16, " %*.1f", 8);
        fprintf(out, "  %s\n", (const char *)sqlite3_column_text(s, 17));
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "reading equivalence: %s", sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}
