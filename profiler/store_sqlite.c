/* store_sqlite.c — the two SQLite wrappers that every file of the store uses
 * (store_internal.h): a failed call's reason put into (err, errlen), and SQL run for
 * its effect alone (no rows back), failing the same way. */
#include "common/errmsg.h"
#include "profiler/store_internal.h"

int store_db_fail(sqlite3 *db, char *err, size_t errlen, const char *what)
{
    set_err(err, errlen, "%s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
    return -1;
}

int store_exec(sqlite3 *db, const char *sql, const char *what, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        set_err(err, errlen, "%s: %s", what, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}
