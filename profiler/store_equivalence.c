/* store_equivalence.c — table `equivalence`: created, written, read back, and the
 * timing figures of a run it records (store_equivalence.h). */
#include "profiler/store_equivalence.h"

#include <math.h>
#include <stdio.h>

#include "common/errmsg.h"
#include "profiler/store_internal.h"

/* Outside the versioned schema on purpose: added by the tools that write it, so that
 * older files and readers are unaffected. */
static const char EQUIVALENCE_TABLE[] =
    "CREATE TABLE IF NOT EXISTS equivalence("
    " group_id INTEGER NOT NULL,"
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    " variant TEXT NOT NULL,"
    " world_size INTEGER NOT NULL,"
    " nodes INTEGER,"
    " gpus_per_node INTEGER,"
    " loss_reduction TEXT NOT NULL,"
    " loss_scale REAL NOT NULL,"
    " lr REAL NOT NULL,"
    " steps INTEGER NOT NULL,"
    " max_abs_diff REAL,"
    " rel_to_update REAL,"
    " update_ratio REAL,"
    " replica_max_diff REAL,"
    " step_ms REAL,"
    " overlap_pct REAL,"
    " collectives_per_step REAL,"
    " verdict TEXT,"
    " PRIMARY KEY (group_id, run_id));";

int store_ensure_equivalence_table(store *st, char *err, size_t errlen)
{
    return store_exec(st->db, EQUIVALENCE_TABLE, "creating table equivalence", err, errlen);
}

int store_write_equivalence(store *st, const store_equivalence_row *row, char *err, size_t errlen)
{
    static const char sql[] =
        "INSERT OR REPLACE INTO equivalence(group_id, run_id, variant, world_size, nodes, gpus_per_node,"
        " loss_reduction, loss_scale, lr, steps, max_abs_diff, rel_to_update, update_ratio, replica_max_diff,"
        " step_ms, overlap_pct, collectives_per_step, verdict)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return store_db_fail(st->db, err, errlen, "writing table equivalence");
    const double nums[] = {row->max_abs_diff, row->rel_to_update, row->update_ratio,       row->replica_max_diff,
                           row->step_ms,      row->overlap_pct,   row->collectives_per_step};
    bool ok = sqlite3_bind_int64(s, 1, row->group_id) == SQLITE_OK && sqlite3_bind_int64(s, 2, row->run_id) == SQLITE_OK &&
              sqlite3_bind_text(s, 3, row->variant, -1, SQLITE_STATIC) == SQLITE_OK &&
              sqlite3_bind_int(s, 4, row->world_size) == SQLITE_OK &&
              (row->nodes <= 0 || (sqlite3_bind_int(s, 5, row->nodes) == SQLITE_OK &&
                                   sqlite3_bind_int(s, 6, row->gpus_per_node) == SQLITE_OK)) &&
              sqlite3_bind_text(s, 7, row->loss_reduction, -1, SQLITE_STATIC) == SQLITE_OK &&
              sqlite3_bind_double(s, 8, row->loss_scale) == SQLITE_OK && sqlite3_bind_double(s, 9, row->lr) == SQLITE_OK &&
              sqlite3_bind_int(s, 10, row->steps) == SQLITE_OK &&
              sqlite3_bind_text(s, 18, row->verdict, -1, SQLITE_TRANSIENT) == SQLITE_OK;
    for (int i = 0; ok && i < (int)(sizeof nums / sizeof nums[0]); i++)
        ok = isnan(nums[i]) || sqlite3_bind_double(s, 11 + i, nums[i]) == SQLITE_OK;
    int rc = ok ? sqlite3_step(s) : SQLITE_ERROR;
    if (rc != SQLITE_DONE)
        store_db_fail(st->db, err, errlen, "writing table equivalence");
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Whether the file has table `equivalence`. */
static int has_table(store *st, bool *yes, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    *yes = false;
    if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'equivalence'", -1,
                           &s, NULL) != SQLITE_OK)
        return store_db_fail(st->db, err, errlen, "reading equivalence");
    int rc = sqlite3_step(s);
    *yes = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        store_db_fail(st->db, err, errlen, "reading equivalence");
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* A REAL column, NAN for NULL. */
static double real_or_nan(sqlite3_stmt *s, int col)
{
    return sqlite3_column_type(s, col) == SQLITE_NULL ? NAN : sqlite3_column_double(s, col);
}

int store_each_equivalence(store *st, int64_t run_id, store_equivalence_fn fn, void *ctx, char *err,
                           size_t errlen)
{
    bool yes;
    if (has_table(st, &yes, err, errlen) != 0)
        return -1;
    if (!yes)
        return 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT group_id, run_id, variant, world_size, nodes, gpus_per_node, loss_reduction,"
                           " loss_scale, lr, steps, max_abs_diff, rel_to_update, update_ratio, replica_max_diff,"
                           " step_ms, overlap_pct, collectives_per_step, verdict FROM equivalence"
                           " WHERE ?1 < 0 OR group_id IN (SELECT group_id FROM equivalence WHERE run_id = ?1)"
                           " ORDER BY group_id, run_id",
                           -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        store_db_fail(st->db, err, errlen, "reading equivalence");
        sqlite3_finalize(s);
        return -1;
    }
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        bool topo = sqlite3_column_type(s, 4) != SQLITE_NULL;
        store_equivalence_row row = {
            .group_id = sqlite3_column_int64(s, 0),
            .run_id = sqlite3_column_int64(s, 1),
            .variant = (const char *)sqlite3_column_text(s, 2),
            .world_size = sqlite3_column_int(s, 3),
            .nodes = topo ? sqlite3_column_int(s, 4) : 0,
            .gpus_per_node = topo ? sqlite3_column_int(s, 5) : 0,
            .loss_reduction = (const char *)sqlite3_column_text(s, 6),
            .loss_scale = sqlite3_column_double(s, 7),
            .lr = sqlite3_column_double(s, 8),
            .steps = sqlite3_column_int(s, 9),
            .max_abs_diff = real_or_nan(s, 10),
            .rel_to_update = real_or_nan(s, 11),
            .update_ratio = real_or_nan(s, 12),
            .replica_max_diff = real_or_nan(s, 13),
            .step_ms = real_or_nan(s, 14),
            .overlap_pct = real_or_nan(s, 15),
            .collectives_per_step = real_or_nan(s, 16),
            .verdict = (const char *)sqlite3_column_text(s, 17),
        };
        if ((ret = fn(&row, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading equivalence");
    sqlite3_finalize(s);
    return ret;
}

/* The one value of sql (?1 the run), NAN for NULL. */
static int query_double(store *st, const char *sql, int64_t run_id, double *v, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    *v = NAN;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW) {
        store_db_fail(st->db, err, errlen, "reading the run's timing");
        sqlite3_finalize(s);
        return -1;
    }
    *v = real_or_nan(s, 0);
    sqlite3_finalize(s);
    return 0;
}

int store_read_equivalence_timing(store *st, int64_t run_id, store_equivalence_timing *t, char *err, size_t errlen)
{
    t->step_ms = t->overlap_pct = t->collectives_per_step = NAN;
    const char *stats = store_view_select("iteration_stats", true);
    char step[16384], overlap[16384];
    int n = snprintf(step, sizeof step,
                     "SELECT AVG(s) / 1e6 FROM (SELECT MAX(step_ns) AS s FROM (%s) WHERE NOT warmup GROUP BY iter)",
                     stats);
    int m = snprintf(overlap, sizeof overlap,
                     "SELECT 100.0 * SUM(overlap_ns) / NULLIF(SUM(comm_ns), 0) FROM (%s) WHERE NOT warmup", stats);
    if (n < 0 || (size_t)n >= sizeof step || m < 0 || (size_t)m >= sizeof overlap) {
        set_err(err, errlen, "reading the run's timing: the view's text is too long");
        return -1;
    }
    return query_double(st, step, run_id, &t->step_ms, err, errlen) != 0 ||
                   query_double(st, overlap, run_id, &t->overlap_pct, err, errlen) != 0 ||
                   query_double(st,
                                "SELECT COUNT(DISTINCT seq) * 1.0 / COUNT(DISTINCT iter) FROM span WHERE run_id = ?1 "
                                "AND kind = 'allreduce' AND iter >= (SELECT warmup FROM run WHERE id = ?1)",
                                run_id, &t->collectives_per_step, err, errlen) != 0
               ? -1
               : 0;
}
