/* cli_common.c — helpers shared by the subcommands: sizes, --ranks, and the database
 * arguments of the commands that read one (run ids, opening). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/cli.h"
#include "profiler/store.h"
#include "profiler/store_read_run.h"
#include "reports/rank_select.h"

int cli_parse_size(const char *s, int64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0) || v > 1e15)
        return -1;
    double mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1024.0 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1024.0 * 1024 * 1024, end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    *out = (int64_t)(v * mult);
    return *out >= 4 ? 0 : -1;
}

int cli_database_operand(const cli_command *cmd, const cli_parsed *parsed, const char **db_path)
{
    *db_path = cli_operand(parsed, 0);
    if (!*db_path)
        return cli_usage_error(cmd, "no database given");
    if (parsed->operands.n > 1)
        return cli_usage_error(cmd, "one database at a time");
    return EXIT_OK;
}

/* Digits only: strtoll alone would take leading blanks, a sign, and clamp overflow. */
int cli_parse_run_id(const cli_command *cmd, const char *text, long long *id)
{
    if (text[0] < '0' || text[0] > '9')
        return cli_usage_error(cmd, "--run %s: want a positive run id", text);
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno == ERANGE)
        return cli_usage_error(cmd, "--run %s: run id out of range", text);
    if (*end || v < 1)
        return cli_usage_error(cmd, "--run %s: want a positive run id", text);
    *id = v;
    return EXIT_OK;
}

int cli_parse_ranks(const cli_command *cmd, const char *text, rank_select *sel)
{
    char err[256];
    rank_select_free(sel);
    if (rank_select_parse(text, sel, err, sizeof err) != 0)
        return cli_usage_error(cmd, "%s", err);
    return EXIT_OK;
}

int cli_check_run_exists(store *st, const char *db_path, long long id)
{
    bool exists;
    store_run_ids ids;
    char err[512];
    if (store_run_exists(st, id, &exists, err, sizeof err) != 0 || store_read_run_ids(st, &ids, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        return EXIT_RUNTIME;
    }
    long long lo = ids.min_id, hi = ids.max_id, count = ids.count;
    if (exists)
        return EXIT_OK;
    if (count == 0)
        fprintf(stderr, "ddpprof: no run %lld in %s (it holds no runs)\n", id, db_path);
    else if (count == hi - lo + 1)
        fprintf(stderr, "ddpprof: no run %lld in %s (runs %lld..%lld)\n", id, db_path, lo, hi);
    else
        fprintf(stderr, "ddpprof: no run %lld in %s (%lld runs between %lld and %lld)\n", id,
                db_path, count, lo, hi);
    return EXIT_USAGE;
}

/* Whether path holds something other than a ddpprof database: not SQLite at all (its
 * first 16 bytes are not SQLite's header), or SQLite that the store refused as not its
 * own (err, store_open_readonly's message). */
static bool is_foreign_file(const char *path, const char *err)
{
    if (strstr(err, "not a ddpprof database") || strstr(err, "not an SQLite database"))
        return true;
    static const char magic[16] = "SQLite format 3";
    char head[16];
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n > 0 && (n < sizeof head || memcmp(head, magic, sizeof head) != 0);
}

int cli_open_db_readonly(const char *db_path, store **st)
{
    if (access(db_path, R_OK) != 0) {
        if (errno == ENOENT) {
            fprintf(stderr, "ddpprof: %s: no such database (run `ddpprof run` first)\n", db_path);
            return EXIT_USAGE;
        }
        fprintf(stderr, "ddpprof: %s: cannot read: %s\n", db_path, strerror(errno));
        return EXIT_RUNTIME;
    }
    char err[512];
    if (store_open_readonly(db_path, st, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        /* A file that is not a ddpprof database (a scenario given where DB goes) is a
         * wrong argument, as a missing one is: bad usage, not a failure to read. */
        return is_foreign_file(db_path, err) ? EXIT_USAGE : EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* cli.h: the whole of `text` into `path`. */
int cli_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    int rc = fputs(text, f) < 0 ? -1 : 0;
    if (fclose(f) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "ddpprof: %s: write failed\n", path);
    return rc;
}
