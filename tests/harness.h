/* harness.h — what the tests share: a scratch directory, running ddpprof (or any command)
 * with its output captured, one-value queries on a results database, and whole files
 * read and written.  harness.c is linked into every test binary (the Makefile's test rule).
 *
 * The contract:
 *  - Scratch directory: one per test binary.  scratch_setup(prefix) makes /tmp/<prefix>XXXXXX
 *    with mkdtemp; scratch_teardown() removes it and everything under it (nftw, no shell).
 *    scratch_dir() is its path ("" before setup), scratch_path() a name inside it.  Both
 *    return 0, or -1 with the reason on stderr, so that they can be a cmocka (group) setup's
 *    and teardown's result; scratch_group_setup/teardown are that setup and teardown (the
 *    prefix "ddpprof-test-<program>-").  tmpdir_make()/tmpdir_remove() do the same for a
 *    directory of the caller's (a test's own, in a buffer it owns).
 *  - Commands: run_cmd() runs argv[0] (a path, or a name looked up in PATH) with stdin
 *    /dev/null, stdout and stderr captured into the caller's cmd_result (fixed buffers,
 *    NUL-terminated, cut at their size: nothing to free), in files of its own that are gone
 *    before it returns.  status is the exit status, 128 + the signal when a signal ended it
 *    (then signal is that signal, else 0).
 *    It returns 0, or -1 when the command could not be started (the reason on stderr).
 *    ddpprof_cmd() / ddpprof_argv() run $DDPPROF; python_cmd() /usr/bin/python3 on a script
 *    of tests/import/.  ddpprof_run() is ddpprof_argv() that fails the test (cmocka) when
 *    ddpprof could not be started or was killed by a signal.
 *  - Databases: db_int(), db_double() and db_text() open the file read-only, run one query
 *    and return the first column of its first row.  A database that does not open or a
 *    query that does not prepare fails the test with the file, the query and SQLite's
 *    reason; so does a query of db_int or db_double that returns no row.  db_text writes
 *    "" when there is no row or the value is NULL.
 *  - Files: slurp_into() reads a file into the caller's buffer ("" when it cannot be read);
 *    slurp_file() returns the whole file malloc'd (the caller frees it), failing the test
 *    when it cannot be read; write_file() writes text, failing the test when it cannot, and
 *    write_file_in() the same in a directory, giving back the file's path.
 *
 * Needs DDPPROF (the binary) and SCENARIOS (the scenarios folder; the repository is its
 * parent) in the environment where it runs them, as `make test` sets them. */
#ifndef DDPPROF_TESTS_HARNESS_H
#define DDPPROF_TESTS_HARNESS_H

#include <stddef.h>
#include <stdint.h>

/* --- scratch directories ---------------------------------------------------------------- */

int scratch_setup(const char *prefix);
int scratch_teardown(void);
const char *scratch_dir(void);
/* The same as a cmocka setup and teardown: /tmp/ddpprof-test-<program>-XXXXXX. */
int scratch_group_setup(void **state);
int scratch_group_teardown(void **state);
/* <scratch dir>/<name> into out. */
void scratch_path(char *out, size_t n, const char *name);

/* mkdtemp of /tmp/<prefix>XXXXXX into dir (n >= strlen(prefix) + 12); 0 or -1. */
int tmpdir_make(char *dir, size_t n, const char *prefix);
/* Removes dir and everything under it, without following links; 0, or -1 when something
 * was left (each failure said on stderr).  A directory that is not there is no failure. */
int tmpdir_remove(const char *dir);

/* The repository's root (the parent of $SCENARIOS) joined with rel, into out. */
void repo_path(char *out, size_t n, const char *rel);

/* --- commands --------------------------------------------------------------------------- */

typedef struct {
    int status; /* exit status; 128 + signal when killed */
    int signal; /* the signal that ended it; 0 when it exited */
    char out[1 << 16];
    char err[1 << 14];
} cmd_result;

/* argv NULL-terminated; argv[0] the program.  0, or -1 when it could not be started. */
int run_cmd(cmd_result *r, const char *const *argv);
/* $DDPPROF with the arguments (NULL-terminated after r). */
int ddpprof_cmd(cmd_result *r, ...);
/* $DDPPROF with args (a NULL-terminated array, the binary not included). */
int ddpprof_argv(cmd_result *r, const char *const *args);
/* ddpprof_argv, failing the test when ddpprof did not start or did not exit by itself. */
void ddpprof_run(cmd_result *r, const char *const *args);
/* /usr/bin/python3 tests/import/<script> with the arguments (NULL-terminated). */
int python_cmd(cmd_result *r, const char *script, ...);

/* --- databases -------------------------------------------------------------------------- */

int64_t db_int(const char *db_path, const char *sql);
double db_double(const char *db_path, const char *sql);
void db_text(const char *db_path, const char *sql, char *out, size_t n);

/* --- files ------------------------------------------------------------------------------ */

void slurp_into(const char *path, char *buf, size_t len);
char *slurp_file(const char *path, size_t *len);
void write_file(const char *path, const char *text);
/* write_file of <dir>/<name>, that path written into path. */
void write_file_in(const char *dir, const char *name, const char *text, char *path, size_t pathlen);

#endif
