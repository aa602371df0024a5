/* cli_options.c — parsing a command's arguments by its option table, and its usage
 * and help drawn from the same table (contract: cli_options.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/cli.h"
#include "src/cli_options.h"

/* A synopsis line holds at most this many columns after "usage: ", the README's width. */
#define SYNOPSIS_WIDTH 104
/* The column where an option's help starts (two spaces further when the option is longer). */
#define HELP_COLUMN 19
/* The column of a command's summary in the top-level usage. */
#define SUMMARY_COLUMN 21

bool cli_strings_add(cli_strings *list, const char *item)
{
    const char **grown = realloc(list->items, ((size_t)list->n + 1) * sizeof *grown);
    if (!grown)
        return false;
    grown[list->n++] = item;
    list->items = grown;
    return true;
}

void cli_strings_free(cli_strings *list)
{
    free(list->items);
    list->items = NULL;
    list->n = 0;
}

static void *field_of(const cli_option *opt, void *args) { return (char *)args + opt->offset; }

static bool takes_value(const cli_option *opt) { return opt->kind != CLI_OPT_FLAG && opt->argh != NULL; }

/* The option `arg` names: --long, or -x for a short one. */
static const cli_option *find_option(const cli_option *table, const char *arg)
{
    bool is_long = arg[1] == '-';
    for (const cli_option *o = table; o->kind != CLI_OPT_END; o++) {
        if (is_long ? o->long_name && !strcmp(arg + 2, o->long_name) : o->short_name == arg[1] && !arg[2])
            return o;
    }
    return NULL;
}

/* [-]digits in [min, max] (strtol alone would take blanks, '+' and clamp overflow). */
static int parse_int(const cli_command *cmd, const cli_option *opt, const char *name, const char *text, int *out)
{
    const char *digits = text[0] == '-' ? text + 1 : text;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*digits < '0' || *digits > '9' || *end || errno == ERANGE || v < opt->min || v > opt->max)
        return cli_usage_error(cmd, "%s %s: want an integer in [%.0f, %.0f]", name, text, opt->min, opt->max);
    *out = (int)v;
    return EXIT_OK;
}

static int parse_double(const cli_command *cmd, const cli_option *opt, const char *name, const char *text,
                        double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !(v >= opt->min && v <= opt->max))
        return cli_usage_error(cmd, "%s %s: want a number in [%.15g, %.15g]", name, text, opt->min, opt->max);
    *out = v;
    return EXIT_OK;
}

/* The option `opt`, given as `name`, with its value (NULL for a flag), into args. */
static int apply_option(const cli_command *cmd, const cli_option *opt, const char *name, const char *value,
                        void *args)
{
    switch (opt->kind) {
    case CLI_OPT_FLAG:
        *(bool *)field_of(opt, args) = true;
        return EXIT_OK;
    case CLI_OPT_INT:
        return parse_int(cmd, opt, name, value, field_of(opt, args));
    case CLI_OPT_DOUBLE:
        return parse_double(cmd, opt, name, value, field_of(opt, args));
    case CLI_OPT_STRING:
        *(const char **)field_of(opt, args) = value;
        return EXIT_OK;
    case CLI_OPT_STRING_LIST:
        if (cli_strings_add(field_of(opt, args), value))
            return EXIT_OK;
        fprintf(stderr, "ddpprof: out of memory\n");
        return EXIT_RUNTIME;
    case CLI_OPT_CALLBACK:
        return opt->callback(cmd, opt, value, args);
    case CLI_OPT_END:
        break;
    }
    return EXIT_RUNTIME; /* not reached: find_option never returns the end */
}

/* --help or -h anywhere, as every command has always taken it (even as a value). */
static bool wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return true;
    return false;
}

int cli_options_parse(const cli_command *cmd, int argc, char **argv, void *args, cli_parsed *parsed)
{
    memset(parsed, 0, sizeof *parsed);
    if (wants_help(argc, argv)) {
        strbuf sb = STRBUF_INIT;
        cli_options_usage(cmd, &sb);
        fputs(sb.buf, stdout);
        strbuf_release(&sb);
        return CLI_HELP_SHOWN;
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || !arg[1]) {
            if (!cli_strings_add(&parsed->operands, arg)) {
                fprintf(stderr, "ddpprof: out of memory\n");
                return EXIT_RUNTIME;
            }
            continue;
        }
        const cli_option *opt = find_option(cmd->options, arg);
        if (!opt)
            return cli_usage_error(cmd, "unknown option '%s'", arg);
        const char *value = NULL;
        if (takes_value(opt)) {
            if (i + 1 >= argc)
                return cli_usage_error(cmd, "%s needs a value (%s)", arg, opt->argh);
            value = argv[++i];
        }
        parsed->forms_used |= opt->forms;
        int rc = apply_option(cmd, opt, arg, value, args);
        if (rc != EXIT_OK)
            return rc;
    }
    return EXIT_OK;
}

void cli_options_free(const cli_command *cmd, void *args, cli_parsed *parsed)
{
    for (const cli_option *o = cmd->options; o->kind != CLI_OPT_END; o++)
        if (o->kind == CLI_OPT_STRING_LIST)
            cli_strings_free(field_of(o, args));
    if (parsed)
        cli_strings_free(&parsed->operands);
}

const char *cli_operand(const cli_parsed *parsed, int i)
{
    return i >= 0 && i < parsed->operands.n ? parsed->operands.items[i] : NULL;
}

int cli_parse_exit(int parse_rc) { return parse_rc == CLI_HELP_SHOWN ? EXIT_OK : parse_rc; }

/* ---- usage ---------------------------------------------------------------------- */

static bool in_form(const cli_option *o, int form) { return o->forms == 0 || (o->forms & (1u << form)); }

static bool in_synopsis(const cli_option *o, int form)
{
    return in_form(o, form) && !(o->flags & (CLI_OPT_HIDDEN | CLI_OPT_OPERAND));
}

static int nforms(const cli_command *cmd)
{
    int n = 1;
    while (n < CLI_MAX_FORMS && cmd->forms[n].operands)
        n++;
    return n;
}

static const char *operands_of(const cli_command *cmd, int form)
{
    return cmd->forms[form].operands ? cmd->forms[form].operands : "";
}

/* "[-o DB]", "[-s KEY=VALUE]...", "[--verify]". */
static void synopsis_token(const cli_option *o, strbuf *tok)
{
    strbuf_reset(tok);
    if (o->short_name)
        strbuf_addf(tok, "[-%c", o->short_name);
    else
        strbuf_addf(tok, "[--%s", o->long_name);
    if (takes_value(o))
        strbuf_addf(tok, " %s", o->argh);
    strbuf_addstr(tok, o->kind == CLI_OPT_STRING_LIST || (o->flags & CLI_OPT_REPEATABLE) ? "]..." : "]");
}

/* One form's synopsis, wrapped at SYNOPSIS_WIDTH with the options aligned after the
 * command's name. */
static void form_synopsis(const cli_command *cmd, int form, strbuf *out)
{
    static const char lead[] = "usage: ";
    size_t line_start = out->len;
    strbuf_addf(out, "%sddpprof %s", form == 0 ? lead : "       ", cmd->name);
    size_t indent = out->len - line_start + 1;
    if (*operands_of(cmd, form))
        strbuf_addf(out, " %s", operands_of(cmd, form));
    strbuf tok = STRBUF_INIT;
    for (const cli_option *o = cmd->options; o->kind != CLI_OPT_END; o++) {
        if (!in_synopsis(o, form))
            continue;
        synopsis_token(o, &tok);
        if (out->len - line_start + 1 + tok.len > SYNOPSIS_WIDTH + sizeof lead - 1) {
            strbuf_addch(out, '\n');
            line_start = out->len;
            strbuf_addf(out, "%*s%s", (int)indent, "", tok.buf);
        } else {
            strbuf_addf(out, " %s", tok.buf);
        }
    }
    strbuf_release(&tok);
    strbuf_addch(out, '\n');
}

/* "  -q, --quiet      no report", the help's later lines under its first. */
static void option_help(const cli_option *o, strbuf *out)
{
    size_t start = out->len;
    strbuf_addstr(out, "  ");
    if (o->short_name)
        strbuf_addf(out, "-%c%s", o->short_name, o->long_name ? ", " : "");
    if (o->long_name)
        strbuf_addf(out, "--%s", o->long_name);
    if (takes_value(o))
        strbuf_addf(out, " %s", o->argh);
    size_t width = out->len - start;
    strbuf_addf(out, "%*s", width + 2 <= HELP_COLUMN ? (int)(HELP_COLUMN - width) : 2, "");
    /* Each line of the help, the later ones in its column; an empty help still ends the line. */
    const char *line = o->help;
    do {
        size_t n = strcspn(line, "\n");
        strbuf_add(out, line, n);
        strbuf_addch(out, '\n');
        line += n;
        if (*line == '\n' && *++line)
            strbuf_addf(out, "%*s", HELP_COLUMN, "");
    } while (*line);
}

void cli_options_usage(const cli_command *cmd, strbuf *out)
{
    for (int f = 0; f < nforms(cmd); f++)
        form_synopsis(cmd, f, out);
    if (cmd->description)
        strbuf_addstr(out, cmd->description);
    for (const cli_option *o = cmd->options; o->kind != CLI_OPT_END; o++)
        if (!(o->flags & CLI_OPT_HIDDEN))
            option_help(o, out);
}

void cli_options_summary(const cli_command *cmd, strbuf *out)
{
    for (int f = 0; f < nforms(cmd); f++) {
        size_t start = out->len;
        strbuf_addf(out, "  %s", cmd->name);
        if (*operands_of(cmd, f))
            strbuf_addf(out, " %s", operands_of(cmd, f));
        bool has_options = false;
        for (const cli_option *o = cmd->options; o->kind != CLI_OPT_END; o++)
            has_options |= in_synopsis(o, f);
        if (has_options)
            strbuf_addstr(out, " [options]");
        size_t width = out->len - start;
        if (width + 2 <= SUMMARY_COLUMN)
            strbuf_addf(out, "%*s", (int)(SUMMARY_COLUMN - width), "");
        else
            strbuf_addf(out, "\n%*s", SUMMARY_COLUMN, "");
        strbuf_addf(out, "%s\n", cmd->forms[f].summary);
    }
}

int cli_usage_errorv(void (*usage)(const void *ctx, strbuf *out), const void *ctx, const char *fmt, va_list ap)
{
    strbuf text = STRBUF_INIT;
    usage(ctx, &text);
    fputs("ddpprof: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    fputs(text.buf, stderr);
    strbuf_release(&text);
    return EXIT_USAGE;
}

static void command_usage(const void *cmd, strbuf *out) { cli_options_usage(cmd, out); }

int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_usage_errorv(command_usage, cmd, fmt, ap);
    va_end(ap);
    return rc;
}
