/* cli.h — the ddpprof subcommands; each returns the process exit status
 * (0 success, 1 runtime failure, 2 bad usage or a bad scenario). */
#ifndef DDPPROF_CLI_H
#define DDPPROF_CLI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "reports/rank_select.h"
#include "src/cli_options.h"

#define DDPPROF_VERSION "0.1.0"

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* Each command's option table (its file's), which cli_commands.c lists for main. */
extern const cli_command cli_run_command, cli_predict_command, cli_whatif_command, cli_runs_command,
    cli_report_command, cli_export_command, cli_import_command, cli_explain_command, cli_bench_command,
    cli_calibrate_command, cli_compare_command;

int cli_run(int argc, char **argv, const atomic_int *interrupted);
/* `run` on a scenario held as text (whatif's derived one) instead of a file: argv as
 * cli_run's without FILE; `origin` names the text in messages and becomes its source.
 * The scenario never reaches a rank process, so the backend must run its ranks here
 * (whatif's sim does). */
int cli_run_text(int argc, char **argv, const char *text, const char *origin, const atomic_int *interrupted);
int cli_report(int argc, char **argv);
int cli_runs(int argc, char **argv);
int cli_explain(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_calibrate(int argc, char **argv);
/* calibrate --from DB --run ID...: the model learned from recorded runs (cli_calibrate_from.c). */
int cli_calibrate_from(const char *db_path, const int64_t *runs, int nruns, double host_cores, double cache_mb,
                       const char *out);
int cli_compare(int argc, char **argv);
int cli_predict(int argc, char **argv, const atomic_int *interrupted);
int cli_whatif(int argc, char **argv, const atomic_int *interrupted);
int cli_export(int argc, char **argv);
int cli_import(int argc, char **argv);

/* The command line's -s, --sweep and --backend (NULL: none) on a scenario read from
 * `file`, then validated (cli_scenario.c); `say` tells on stderr what they replace of
 * the file's.  EXIT_OK, or EXIT_USAGE with the error printed. */
struct scenario;
int cli_scenario_apply(struct scenario *sc, const char *file, const char *const *overrides, int noverrides,
                       const char *const *sweeps, int nsweeps, const char *backend, bool say);

/* A size in bytes with an optional binary K/M/G suffix and B ("64K", "25M", "1GB"):
 * 0 with *out >= 4, or -1. */
int cli_parse_size(const char *s, int64_t *out);
/* Writes `text` to the file `path` (created or truncated); 0, or -1 with the reason on stderr. */
int cli_write_text(const char *path, const char *text);
/* The one operand of a command on a database: EXIT_OK with *db_path, or EXIT_USAGE (none
 * given, or more than one: said with cmd's usage). */
int cli_database_operand(const cli_command *cmd, const cli_parsed *parsed, const char **db_path);
/* --run ID: digits only, >= 1; EXIT_OK or EXIT_USAGE (said with cmd's usage). */
int cli_parse_run_id(const cli_command *cmd, const char *text, long long *id);
/* --ranks all | 0,5,8-11: the ranks the text tables show (reports/rank_select.h), into
 * *sel (freed first; rank_select_free frees it); EXIT_OK or EXIT_USAGE (said with cmd's usage). */
int cli_parse_ranks(const cli_command *cmd, const char *text, rank_select *sel);
struct store;
/* EXIT_OK when run `id` is in the store; otherwise says which ids it holds (EXIT_USAGE),
 * or EXIT_RUNTIME when it cannot be read (said). */
int cli_check_run_exists(struct store *st, const char *db_path, long long id);
/* Opens an existing database read-only: EXIT_USAGE when it does not exist or is not a
 * ddpprof database (a scenario file, another program's SQLite), EXIT_RUNTIME when it
 * cannot be read (said). */
int cli_open_db_readonly(const char *db_path, struct store **st);

#endif
