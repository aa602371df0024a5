/* test_cli_options.c — src/cli_options.h: a command's one option table parses flags,
 * numbers, strings, repeated -s in order and callbacks; refuses an unknown option, a
 * missing value and a number out of range the way every command says bad usage (exit 2,
 * "ddpprof: <message>" and the usage on stderr); answers --help with the usage drawn
 * from the table; and the real commands' synopses are the README's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "src/cli.h"
#include "src/cli_commands.h"
#include "src/cli_options.h"

typedef struct {
    bool quiet, json;
    int iters;
    double ratio;
    const char *out;
    cli_strings settings;
    int runs[4];
    int nruns;
} demo_args;

/* --run N: kept in order, at most four (a callback's own usage error). */
static int take_run(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    demo_args *a = args;
    if (a->nruns == 4)
        return cli_usage_error(cmd, "at most four runs");
    a->runs[a->nruns++] = atoi(value);
    return EXIT_OK;
}

static int refuse(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)value;
    (void)args;
    return cli_usage_error(cmd, "--%s is refused here", opt->long_name);
}

enum { FORM_A = 1, FORM_B = 2 };

static const cli_option demo_table[] = {
    {CLI_STRING('o', NULL, demo_args, out, "FILE", "where to write")},
    {CLI_STRING_LIST('s', NULL, demo_args, settings, "KEY=VALUE", "a setting (repeatable)")},
    {CLI_INT(0, "iters", demo_args, iters, "N", 1, 100, "iterations\nin [1, 100]"), .forms = FORM_A},
    {CLI_DOUBLE(0, "ratio", demo_args, ratio, "R", 0, 1, "a fraction"), .forms = FORM_A},
    {CLI_FLAG('q', "quiet", demo_args, quiet, "say nothing")},
    {CLI_FLAG(0, "json", demo_args, json, "as JSON")},
    {CLI_CALLBACK(0, "run", "N", take_run, "a run"), .flags = CLI_OPT_OPERAND | CLI_OPT_REPEATABLE, .forms = FORM_B},
    {CLI_CALLBACK(0, "old", NULL, refuse, ""), .flags = CLI_OPT_HIDDEN},
    {CLI_OPT_END},
};

static const cli_command demo = {
    .name = "demo",
    .forms = {{"FILE", "does the demo"}, {"DB --run N...", "the other way"}},
    .description = "  a demonstration\n",
    .options = demo_table,
};

/* What a call printed on one stream (fd 1 or 2), captured in a file. */
typedef struct {
    int fd, saved;
    FILE *file;
    char text[8192];
} capture;

static void capture_start(capture *c, int fd)
{
    c->fd = fd;
    fflush(fd == 1 ? stdout : stderr);
    c->file = tmpfile();
    assert_non_null(c->file);
    c->saved = dup(fd);
    assert_true(c->saved >= 0);
    assert_true(dup2(fileno(c->file), fd) >= 0);
}

static void capture_end(capture *c)
{
    fflush(c->fd == 1 ? stdout : stderr);
    assert_true(dup2(c->saved, c->fd) >= 0);
    close(c->saved);
    rewind(c->file);
    size_t n = fread(c->text, 1, sizeof c->text - 1, c->file);
    c->text[n] = '\0';
    fclose(c->file);
}

/* Parses the NULL-terminated args (after the command's name) with stderr captured. */
static int parse(demo_args *a, cli_parsed *parsed, capture *err, const char **args)
{
    char *argv[32] = {"demo"};
    int argc = 1;
    for (; args[argc - 1]; argc++)
        argv[argc] = (char *)args[argc - 1];
    *a = (demo_args){.iters = 7, .ratio = 0.5, .out = "default.out"};
    capture_start(err, 2);
    int rc = cli_options_parse(&demo, argc, argv, a, parsed);
    capture_end(err);
    return rc;
}

static void test_values_flags_and_operands(void **state)
{
    (void)state;
    demo_args a;
    cli_parsed parsed;
    capture err;
    int rc = parse(&a, &parsed, &err,
                   (const char *[]){"in.ini", "-s", "a.b=1", "--iters", "42", "-q", "-s", "-c.d=2", "--ratio", "0.25",
                                    "-", "-o", "--json", "--run", "3", "-s", "e.f=3", "--run", "5", NULL});
    assert_int_equal(rc, EXIT_OK);
    assert_string_equal(err.text, "");
    assert_true(a.quiet);
    assert_false(a.json); /* "--json" was -o's value, taken whatever it looks like */
    assert_string_equal(a.out, "--json");
    assert_int_equal(a.iters, 42);
    assert_true(a.ratio == 0.25);
    /* -s again and again: every value, in the order given. */
    assert_int_equal(a.settings.n, 3);
    assert_string_equal(a.settings.items[0], "a.b=1");
    assert_string_equal(a.settings.items[1], "-c.d=2");
    assert_string_equal(a.settings.items[2], "e.f=3");
    assert_int_equal(a.nruns, 2);
    assert_int_equal(a.runs[0], 3);
    assert_int_equal(a.runs[1], 5);
    /* "-" alone is an operand, as a file name standing for standard input would be. */
    assert_int_equal(parsed.operands.n, 2);
    assert_string_equal(cli_operand(&parsed, 0), "in.ini");
    assert_string_equal(cli_operand(&parsed, 1), "-");
    assert_null(cli_operand(&parsed, 2));
    assert_int_equal(parsed.forms_used, FORM_A | FORM_B);
    cli_options_free(&demo, &a, &parsed);
    assert_int_equal(a.settings.n, 0);
    assert_null(a.settings.items);
}

static void test_defaults_stay_and_long_names(void **state)
{
    (void)state;
    demo_args a;
    cli_parsed parsed;
    capture err;
    assert_int_equal(parse(&a, &parsed, &err, (const char *[]){"--quiet", "x", NULL}), EXIT_OK);
    assert_true(a.quiet);
    assert_int_equal(a.iters, 7);
    assert_true(a.ratio == 0.5);
    assert_string_equal(a.out, "default.out");
    assert_int_equal(a.settings.n, 0);
    assert_int_equal(parsed.forms_used, 0); /* -q belongs to every form */
    cli_options_free(&demo, &a, &parsed);
}

static void test_unknown_option(void **state)
{
    (void)state;
    const char *unknown[][3] = {{"--bogus", NULL}, {"-x", NULL}, {"-qq", NULL}, {"--", NULL}, {"--quiet=1", NULL}};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        demo_args a;
        cli_parsed parsed;
        capture err;
        assert_int_equal(parse(&a, &parsed, &err, unknown[i]), EXIT_USAGE);
        char want[64];
        snprintf(want, sizeof want, "ddpprof: unknown option '%s'\nusage: ddpprof demo FILE", unknown[i][0]);
        assert_memory_equal(err.text, want, strlen(want));
        cli_options_free(&demo, &a, &parsed);
    }
}

static void test_missing_and_bad_values(void **state)
{
    (void)state;
    struct {
        const char *args[4];
        const char *said;
    } cases[] = {
        {{"in.ini", "-s", NULL}, "ddpprof: -s needs a value (KEY=VALUE)\n"},
        {{"--iters", NULL}, "ddpprof: --iters needs a value (N)\n"},
        {{"--iters", "0", NULL}, "ddpprof: --iters 0: want an integer in [1, 100]\n"},
        {{"--iters", "12x", NULL}, "ddpprof: --iters 12x: want an integer in [1, 100]\n"},
        {{"--iters", " 5", NULL}, "ddpprof: --iters  5: want an integer in [1, 100]\n"},
        {{"--iters", "99999999999999999999", NULL},
         "ddpprof: --iters 99999999999999999999: want an integer in [1, 100]\n"},
        {{"--ratio", "1.5", NULL}, "ddpprof: --ratio 1.5: want a number in [0, 1]\n"},
        {{"--ratio", "nan", NULL}, "ddpprof: --ratio nan: want a number in [0, 1]\n"},
        {{"--old", NULL}, "ddpprof: --old is refused here\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        demo_args a;
        cli_parsed parsed;
        capture err;
        assert_int_equal(parse(&a, &parsed, &err, cases[i].args), EXIT_USAGE);
        assert_memory_equal(err.text, cases[i].said, strlen(cases[i].said));
        assert_non_null(strstr(err.text, "usage: ddpprof demo FILE"));
        cli_options_free(&demo, &a, &parsed);
    }
    /* A callback's own refusal stops the parse there. */
    demo_args a;
    cli_parsed parsed;
    capture err;
    const char *five[] = {"--run", "1", "--run", "2", "--run", "3", "--run", "4", "--run", "5", "-q", NULL};
    assert_int_equal(parse(&a, &parsed, &err, five), EXIT_USAGE);
    assert_int_equal(a.nruns, 4);
    assert_false(a.quiet);
    assert_non_null(strstr(err.text, "ddpprof: at most four runs\n"));
    cli_options_free(&demo, &a, &parsed);
}

static const char demo_usage[] =
    "usage: ddpprof demo FILE [-o FILE] [-s KEY=VALUE]... [--iters N] [--ratio R] [-q] [--json]\n"
    "       ddpprof demo DB --run N... [-o FILE] [-s KEY=VALUE]... [-q] [--json]\n"
    "  a demonstration\n"
    "  -o FILE          where to write\n"
    "  -s KEY=VALUE     a setting (repeatable)\n"
    "  --iters N        iterations\n"
    "                   in [1, 100]\n"
    "  --ratio R        a fraction\n"
    "  -q, --quiet      say nothing\n"
    "  --json           as JSON\n"
    "  --run N          a run\n";

/* --help anywhere, even after a bad option or as a value: the usage on stdout. */
static void test_help_from_the_table(void **state)
{
    (void)state;
    strbuf usage = STRBUF_INIT;
    cli_options_usage(&demo, &usage);
    assert_string_equal(usage.buf, demo_usage);
    strbuf_release(&usage);
    const char *helps[][4] = {{"--help", NULL}, {"-h", NULL}, {"--bogus", "-h", NULL}, {"-o", "--help", NULL}};
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        demo_args a;
        cli_parsed parsed;
        capture err, out;
        capture_start(&out, 1);
        int rc = parse(&a, &parsed, &err, helps[i]);
        capture_end(&out);
        assert_int_equal(rc, CLI_HELP_SHOWN);
        assert_int_equal(cli_parse_exit(rc), EXIT_OK);
        assert_string_equal(out.text, demo_usage);
        assert_string_equal(err.text, "");
        cli_options_free(&demo, &a, &parsed);
    }
    strbuf summary = STRBUF_INIT;
    cli_options_summary(&demo, &summary);
    assert_string_equal(summary.buf, "  demo FILE [options]\n"
                                     "                     does the demo\n"
                                     "  demo DB --run N... [options]\n"
                                     "                     the other way\n");
    strbuf_release(&summary);
}

/* A synopsis longer than the README's width goes on under the command's name. */
static void test_synopsis_wraps(void **state)
{
    (void)state;
    strbuf usage = STRBUF_INIT;
    cli_options_usage(&cli_run_command, &usage);
    const char *second = strchr(usage.buf, '\n') + 1, *third = strchr(second, '\n') + 1;
    assert_memory_equal(usage.buf, "usage: ddpprof run FILE [-o DB] ", 32);
    assert_memory_equal(second, "                   [--verify]", 29);
    assert_true((size_t)(second - usage.buf) - 1 <= 7 + 104);
    assert_true((size_t)(third - second) - 1 <= 7 + 104);
    assert_memory_equal(third, "  -o DB ", 8);
    strbuf_release(&usage);
}

/* The top-level usage lists every command (from their tables), said on bad usage. */
static void test_top_level_usage(void **state)
{
    (void)state;
    strbuf usage = STRBUF_INIT;
    cli_commands_usage(&usage);
    const char *names[] = {"run",  "predict", "whatif", "runs",      "report", "export",
                           "import", "explain", "bench", "calibrate", "compare"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const cli_entry *e = cli_command_find(names[i]);
        assert_non_null(e);
        assert_true((e->run != NULL) != (e->run_interruptible != NULL));
        char line[64];
        snprintf(line, sizeof line, "\n  %s ", names[i]);
        assert_non_null(strstr(usage.buf, line));
    }
    assert_null(cli_command_find("frobnicate"));
    assert_non_null(strstr(usage.buf, "  calibrate --from DB --run ID [--run ID ...] [options]\n"));
    capture err;
    capture_start(&err, 2);
    int rc = cli_commands_usage_error("unknown command '%s'", "frobnicate");
    capture_end(&err);
    assert_int_equal(rc, EXIT_USAGE);
    const char *want = "ddpprof: unknown command 'frobnicate'\nusage: ddpprof <command>";
    assert_memory_equal(err.text, want, strlen(want));
    strbuf_release(&usage);
}

/* README's "Commands" block shows each synopsis as the usage prints it (without
 * "usage: ", so each later line is indented 7 columns less), behind four spaces. */
static void test_readme_shows_the_synopses(void **state)
{
    (void)state;
    const char *path = getenv("README") ? getenv("README") : "README.md";
    FILE *f = fopen(path, "r");
    if (!f) {
        print_message("no %s here (run from the repository's root, or set README)\n", path);
        fail();
    }
    static char readme[1 << 17];
    size_t n = fread(readme, 1, sizeof readme - 1, f);
    readme[n] = '\0';
    fclose(f);
    const cli_command *cmds[] = {&cli_run_command,    &cli_predict_command, &cli_runs_command,
                                 &cli_report_command, &cli_export_command,  &cli_explain_command,
                                 &cli_bench_command,  &cli_calibrate_command, &cli_compare_command,
                                 &cli_import_command, &cli_whatif_command};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        strbuf usage = STRBUF_INIT, shown = STRBUF_INIT;
        cli_options_usage(cmds[i], &usage);
        /* The synopsis: the lines up to the first that is not one ("  " and a letter or '-'). */
        for (const char *line = usage.buf; *line && !(line[0] == ' ' && line[1] == ' ' && line[2] != ' ');) {
            size_t len = strcspn(line, "\n");
            strbuf_addf(&shown, "    %.*s\n", (int)(len - 7), line + 7);
            line += len + 1;
        }
        if (!strstr(readme, shown.buf))
            fail_msg("README.md does not show `ddpprof %s`'s synopsis as it is:\n%s", cmds[i]->name, shown.buf);
        strbuf_release(&usage);
        strbuf_release(&shown);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_flags_and_operands),
        cmocka_unit_test(test_defaults_stay_and_long_names),
        cmocka_unit_test(test_unknown_option),
        cmocka_unit_test(test_missing_and_bad_values),
        cmocka_unit_test(test_help_from_the_table),
        cmocka_unit_test(test_synopsis_wraps),
        cmocka_unit_test(test_top_level_usage),
        cmocka_unit_test(test_readme_shows_the_synopses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
