/* store_read_run_row.c — one row of table run read back whole (store_read_run_row.h).
 *
 * The row is read as `SELECT *` and its columns matched by name, so that a file of any
 * schema reads with one query: a column it lacks is simply not among them. */
#include "profiler/store_read_run_row.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "profiler/store_internal.h"

static void empty_row(store_run_row *row)
{
    memset(row, 0, sizeof *row);
    row->bucket_cap_mb = NAN;
    row->verified = -1;
    row->sweep = -1;
}

void store_run_row_free(store_run_row *row)
{
    char *texts[] = {row->name,        row->status,    row->error,      row->backend,    row->model,
                     row->source,      row->scenario,  row->started_at, row->finished_at, row->placement,
                     row->clock_sync,  row->notes,     row->overrides};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        free(texts[i]);
    empty_row(row);
}

/* The text column's copy into *dst; -1 when out of memory. */
static int copy_text(sqlite3_stmt *s, int col, char **dst)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    if (!t)
        return 0;
    return (*dst = strdup((const char *)t)) ? 0 : -1;
}

/* Stores column `col`, named `name`, where the row keeps it; -1 when out of memory. */
static int take_column(sqlite3_stmt *s, int col, const char *name, store_run_row *row)
{
    static const struct {
        const char *name;
        size_t offset;
    } texts[] = {
        {"name", offsetof(store_run_row, name)},           {"status", offsetof(store_run_row, status)},
        {"error", offsetof(store_run_row, error)},         {"backend", offsetof(store_run_row, backend)},
        {"model", offsetof(store_run_row, model)},         {"source", offsetof(store_run_row, source)},
        {"scenario", offsetof(store_run_row, scenario)},   {"started_at", offsetof(store_run_row, started_at)},
        {"finished_at", offsetof(store_run_row, finished_at)}, {"ranks", offsetof(store_run_row, placement)},
        {"clock_sync", offsetof(store_run_row, clock_sync)}, {"notes", offsetof(store_run_row, notes)},
        {"overrides", offsetof(store_run_row, overrides)},
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        if (!strcmp(name, texts[i].name))
            return copy_text(s, col, (char **)((char *)row + texts[i].offset));
    bool null = sqlite3_column_type(s, col) == SQLITE_NULL;
    if (!strcmp(name, "id"))
        row->id = sqlite3_column_int64(s, col);
    else if (!strcmp(name, "world_size"))
        row->world_size = sqlite3_column_int(s, col);
    else if (!strcmp(name, "iterations"))
        row->iterations = sqlite3_column_int(s, col);
    else if (!strcmp(name, "warmup"))
        row->warmup = sqlite3_column_int(s, col);
    else if (!strcmp(name, "total_params"))
        row->total_params = sqlite3_column_int64(s, col);
    else if (!strcmp(name, "bucket_cap_mb") && !null)
        row->bucket_cap_mb = sqlite3_column_double(s, col);
    else if (!strcmp(name, "verified") && !null)
        row->verified = sqlite3_column_int(s, col) != 0;
    else if (!strcmp(name, "sweep") && !null)
        row->sweep = sqlite3_column_int64(s, col);
    return 0;
}

int store_read_run_row(store *st, int64_t run_id, store_run_row *row, bool *found, char *err, size_t errlen)
{
    empty_row(row);
    *found = false;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT * FROM run WHERE id = ?1", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading the run");
    }
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        return rc == SQLITE_DONE ? 0 : store_db_fail(st->db, err, errlen, "reading the run");
    }
    int ncol = sqlite3_column_count(s);
    for (int c = 0; c < ncol; c++) {
        const char *name = sqlite3_column_name(s, c);
        if (name && take_column(s, c, name, row) != 0) {
            sqlite3_finalize(s);
            store_run_row_free(row);
            set_err(err, errlen, "reading the run: out of memory");
            return -1;
        }
    }
    sqlite3_finalize(s);
    *found = true;
    return 0;
}
