/* cli_options.h — one table of options per command, from which its parsing, its
 * `--help` and its usage text all come (after git's parse_options).
 *
 * Contract: a command declares one static const cli_command: its name, its forms (the
 * operands each takes, and a one-line summary for `ddpprof --help`), a description, and a
 * table of options ended by CLI_OPT_END, each writing at an offset into the command's own
 * argument struct (CLI_STRING and the other macros below check the field's type).
 * cli_options_parse() fills that struct from argv (argv[0] is the command's name; the
 * struct holds the defaults beforehand), collects the operands, and says every bad usage
 * the way every command does: "ddpprof: <message>" and the usage on stderr, EXIT_USAGE.
 * --help or -h anywhere prints the usage on stdout instead (CLI_HELP_SHOWN).  An option's
 * value is the next argument, whatever it looks like; an argument starting with '-' (but
 * "-" alone) is an option.  cli_options_free() frees what parsing allocated (the string
 * lists and the operands); what a callback allocates, its command frees.
 */
#ifndef DDPPROF_CLI_OPTIONS_H
#define DDPPROF_CLI_OPTIONS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/strbuf.h"

typedef enum {
    CLI_OPT_END = 0,     /* ends a table */
    CLI_OPT_FLAG,        /* bool, set true */
    CLI_OPT_INT,         /* int in [min, max] */
    CLI_OPT_DOUBLE,      /* double in [min, max] */
    CLI_OPT_STRING,      /* const char *: the last one given */
    CLI_OPT_STRING_LIST, /* cli_strings: every one given, in order */
    CLI_OPT_CALLBACK,    /* the callback's: with a value when argh is set, else none */
} cli_option_kind;

/* Option flags. */
enum {
    CLI_OPT_HIDDEN = 1u << 0,     /* accepted, but in neither synopsis nor help (a callback refusing it) */
    CLI_OPT_OPERAND = 1u << 1,    /* written in its form's operands ("DB --run N"), not as [--run N] */
    CLI_OPT_REPEATABLE = 1u << 2, /* a callback taking it again and again: "[-s KEY=VALUE]..." */
};

/* Strings argv holds (not copied): a list option's values, or the operands. */
typedef struct {
    const char **items;
    int n;
} cli_strings;

typedef struct cli_command cli_command;
typedef struct cli_option cli_option;

/* A CLI_OPT_CALLBACK's work on `value` (NULL for one without argh), into the command's
 * argument struct `args`: EXIT_OK, or an exit status with the reason said (bad usage
 * through cli_usage_error(cmd, ...)). */
typedef int (*cli_option_callback)(const cli_command *cmd, const cli_option *opt, const char *value, void *args);

struct cli_option {
    cli_option_kind kind;
    char short_name;       /* 'o' for -o; 0: none */
    const char *long_name; /* "run" for --run; NULL: none */
    size_t offset;         /* where in the argument struct the value goes (not callbacks) */
    const char *argh;      /* the value's name in usage ("DB"); NULL for flags */
    const char *help;      /* lines separated by '\n', without the option's own column */
    double min, max;       /* CLI_OPT_INT, CLI_OPT_DOUBLE: the values accepted */
    cli_option_callback callback;
    unsigned flags; /* CLI_OPT_HIDDEN, ... */
    unsigned forms; /* bit i: the option belongs to forms[i]; 0: to every form */
};

/* One way of calling a command: what follows its name, and what it does. */
typedef struct {
    const char *operands; /* "FILE", "DB --run N", "" (NULL after the last form) */
    const char *summary;  /* one line for `ddpprof --help` */
} cli_form;

#define CLI_MAX_FORMS 2

struct cli_command {
    const char *name;
    cli_form forms[CLI_MAX_FORMS];
    const char *description; /* lines under the synopsis, before the options; NULL: none */
    const cli_option *options;
};

/* What parsing found besides the options. */
typedef struct {
    cli_strings operands; /* the arguments that are no option, in order */
    unsigned forms_used;  /* the forms bits of every option given that belongs to some forms only */
} cli_parsed;

/* A return of cli_options_parse(): the usage went to stdout; the command exits 0. */
enum { CLI_HELP_SHOWN = -1 };

/* The table macros: each expands to designators, so a table entry may add .flags or
 * .forms: {CLI_FLAG('q', "quiet", run_args, quiet, "no report"), .flags = CLI_OPT_HIDDEN}.
 * The sizeof term compares the field's address with the kind's C type: a field of
 * another type does not compile (-Werror). */
#define CLI_FIELD_(type, field, ctype) (offsetof(type, field) + 0 * sizeof(&((type *)0)->field == (ctype *)0))
#define CLI_FLAG(s, l, type, field, h) \
    .kind = CLI_OPT_FLAG, .short_name = (s), .long_name = (l), .offset = CLI_FIELD_(type, field, bool), .help = (h)
#define CLI_INT(s, l, type, field, a, lo, hi, h)                                                                   \
    .kind = CLI_OPT_INT, .short_name = (s), .long_name = (l), .offset = CLI_FIELD_(type, field, int), .argh = (a), \
    .min = (lo), .max = (hi), .help = (h)
#define CLI_DOUBLE(s, l, type, field, a, lo, hi, h)                                                       \
    .kind = CLI_OPT_DOUBLE, .short_name = (s), .long_name = (l), .offset = CLI_FIELD_(type, field, double), \
    .argh = (a), .min = (lo), .max = (hi), .help = (h)
#define CLI_STRING(s, l, type, field, a, h)                                                                    \
    .kind = CLI_OPT_STRING, .short_name = (s), .long_name = (l), .offset = CLI_FIELD_(type, field, const char *), \
    .argh = (a), .help = (h)
#define CLI_STRING_LIST(s, l, type, field, a, h)                                          \
    .kind = CLI_OPT_STRING_LIST, .short_name = (s), .long_name = (l),                     \
    .offset = CLI_FIELD_(type, field, cli_strings), .argh = (a), .help = (h)
#define CLI_CALLBACK(s, l, a, fn, h) \
    .kind = CLI_OPT_CALLBACK, .short_name = (s), .long_name = (l), .argh = (a), .callback = (fn), .help = (h)

/* Parses argv[1..argc-1] by cmd's table into args, the rest into parsed->operands:
 * EXIT_OK, CLI_HELP_SHOWN, EXIT_USAGE (said, with the usage), or EXIT_RUNTIME (out of
 * memory, or a callback's).  *parsed is zeroed first; free it with cli_options_free()
 * whatever this returns. */
int cli_options_parse(const cli_command *cmd, int argc, char **argv, void *args, cli_parsed *parsed);
/* Frees the string lists of args that cmd's table names, and parsed's operands. */
void cli_options_free(const cli_command *cmd, void *args, cli_parsed *parsed);
/* Operand i, or NULL when there are fewer. */
const char *cli_operand(const cli_parsed *parsed, int i);
/* The exit status a command returns for a parse's result (CLI_HELP_SHOWN: 0). */
int cli_parse_exit(int parse_rc);

/* Appends an item to a list; false when out of memory (the list is unchanged). */
bool cli_strings_add(cli_strings *list, const char *item);
void cli_strings_free(cli_strings *list);

/* cmd's usage: its synopsis (a line per form, wrapped), description and options. */
void cli_options_usage(const cli_command *cmd, strbuf *out);
/* One line per form for the top-level usage: "  run FILE [options]" and the summary. */
void cli_options_summary(const cli_command *cmd, strbuf *out);
/* Prints "ddpprof: <message>" and cmd's usage to stderr; returns EXIT_USAGE. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with any usage text (the top-level one): `usage(ctx, out)` writes it. */
int cli_usage_errorv(void (*usage)(const void *ctx, strbuf *out), const void *ctx, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
