/* test_bad_inputs.c — the bad-input corpus: every case of tests/bad_inputs/cases.txt is
 * loaded through the library (scenario_load_file, scenario_override, scenario_validate)
 * and must fail with its expected `file:line:` message, or, for a warning case, load and
 * print its warning through scenario_warnings().  Inputs that cannot live in git (a
 * FIFO, a directory, a file over the size limit) are made at test time.
 *
 * The fuzz target's seeds (tests/fuzz/seeds/, which keep every input that ever crashed
 * the reader) are replayed here through the same property checks, so that a fixed crash
 * stays fixed without a fuzzer.
 *
 * The corpus folder is $DDPPROF_BAD_INPUTS, or bad_inputs/ next to this source file; the
 * seeds are fuzz/seeds/ next to it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/scenario_props.h"
#include "engine/scenario/scenario.h"
#include "engine/scenario/scenario_text.h"

#define MAX_OVERRIDES 8
#define CASE_TEXT 600

typedef struct {
    int line; /* in cases.txt */
    char name[96];
    char input[256];
    char overrides[CASE_TEXT];
    char expected[CASE_TEXT];
    const char *corpus; /* folder of the case files */
    const char *tmp;    /* folder of the inputs made at test time */
} bad_case;

/* ------------------------------------------------------------------ the manifest */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n'))
        s[--len] = '\0';
    return s;
}

/* Splits "a | b | c" (the last field may itself hold '|'); 0 or -1. */
static int parse_case(char *text, bad_case *c)
{
    char *bar1 = strstr(text, " | ");
    if (bar1 == NULL)
        return -1;
    char *bar2 = strstr(bar1 + 3, " | ");
    if (bar2 == NULL)
        return -1;
    *bar1 = '\0';
    *bar2 = '\0';
    const char *fields[3] = {trim(text), trim(bar1 + 3), trim(bar2 + 3)};
    char *dst[3] = {c->input, c->overrides, c->expected};
    size_t cap[3] = {sizeof c->input, sizeof c->overrides, sizeof c->expected};
    for (int i = 0; i < 3; i++) {
        if (fields[i][0] == '\0' || strlen(fields[i]) >= cap[i])
            return -1;
        memcpy(dst[i], fields[i], strlen(fields[i]) + 1);
    }
    snprintf(c->name, sizeof c->name, "cases.txt:%d %.60s", c->line, c->input);
    return 0;
}

static bad_case *read_manifest(const char *corpus, const char *tmp, int *ncases)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/cases.txt", corpus);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "test_bad_inputs: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    bad_case *cases = NULL;
    int n = 0, cap = 0, line = 0;
    char text[2048];
    bool ok = true;
    while (ok && fgets(text, sizeof text, f) != NULL) {
        line++;
        char *t = trim(text);
        if (*t == '\0' || *t == '#')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            bad_case *grown = realloc(cases, (size_t)cap * sizeof *grown);
            if (grown == NULL) {
                ok = false;
                break;
            }
            cases = grown;
        }
        bad_case *c = &cases[n];
        memset(c, 0, sizeof *c);
        c->line = line;
        c->corpus = corpus;
        c->tmp = tmp;
        if (parse_case(t, c) != 0) {
            fprintf(stderr, "test_bad_inputs: %s:%d: expected \"input | overrides | expected\"\n",
                    path, line);
            ok = false;
            break;
        }
        n++;
    }
    if (fclose(f) != 0 || !ok) {
        free(cases);
        return NULL;
    }
    *ncases = n;
    return cases;
}

/* Decodes \xHH in place, so that bytes a shell would pass can be written as text. */
static void decode_escapes(char *s)
{
    char *out = s;
    for (const char *p = s; *p;) {
        unsigned v;
        if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &v) == 1) {
            *out++ = (char)v;
            p += 4;
        } else {
            *out++ = *p++;
        }
    }
    *out = '\0';
}

static void replace_file(const char *in, const char *path, char *out, size_t n)
{
    const char *at = strstr(in, "{file}");
    if (at == NULL)
        snprintf(out, n, "%s", in);
    else
        snprintf(out, n, "%.*s%s%s", (int)(at - in), in, path, at + 6);
}

/* ------------------------------------------------------------------ running a case */

static void input_path(const bad_case *c, char *path, size_t n)
{
    if (strcmp(c->input, "@dir") == 0)
        snprintf(path, n, "%s/dir.ini", c->tmp);
    else if (strcmp(c->input, "@fifo") == 0)
        snprintf(path, n, "%s/fifo.ini", c->tmp);
    else if (strcmp(c->input, "@big") == 0)
        snprintf(path, n, "%s/big.ini", c->tmp);
    else if (strcmp(c->input, "@missing") == 0)
        snprintf(path, n, "%s/missing.ini", c->tmp);
    else if (c->input[0] == '/')
        snprintf(path, n, "%s", c->input);
    else
        snprintf(path, n, "%s/%s", c->corpus, c->input);
}

static void assert_one_line_of_utf8(const char *msg)
{
    assert_null(strchr(msg, '\n'));
    assert_int_equal(scn_utf8_check(msg, strlen(msg), NULL), 0);
}

static void run_case(void **state)
{
    const bad_case *c = *state;
    char path[512], expected[CASE_TEXT + 512], err[SCENARIO_ERR] = "";
    input_path(c, path, sizeof path);
    replace_file(c->expected, path, expected, sizeof expected);
    bool warning = strstr(expected, ": warning: ") != NULL;

    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    /* A reader that blocked on the FIFO would hang the suite: fail it instead. */
    alarm(20);
    int rc = 0;
    if (strcmp(c->input, "@none") == 0)
        scenario_defaults(sc);
    else
        rc = scenario_load_file(path, sc, err, sizeof err);
    alarm(0);

    char overrides[CASE_TEXT];
    memcpy(overrides, c->overrides, sizeof overrides);
    if (rc == 0 && strcmp(overrides, "-") != 0) {
        char *p = overrides;
        for (int i = 0; rc == 0 && p != NULL && i < MAX_OVERRIDES; i++) {
            char *sep = strstr(p, " && ");
            if (sep != NULL)
                *sep = '\0';
            decode_escapes(p);
            rc = scenario_override(sc, p, err, sizeof err);
            p = sep ? sep + 4 : NULL;
        }
    }
    if (rc == 0)
        rc = scenario_validate(sc, err, sizeof err);

    if (warning) {
        if (rc != 0)
            fail_msg("%s: expected to load with a warning, failed: %s", c->name, err);
        char buf[8192];
        int n = scenario_warnings(sc, buf, sizeof buf);
        assert_true(n >= 1);
        if (strstr(buf, expected) == NULL)
            fail_msg("%s: warning\n  %s\nnot among\n%s", c->name, expected, buf);
        assert_one_line_of_utf8(strtok(buf, "\n"));
    } else {
        if (rc != -1)
            fail_msg("%s: loaded, but must fail with: %s", c->name, expected);
        if (strstr(err, expected) == NULL)
            fail_msg("%s:\n  expected ...%s...\n  got      %s", c->name, expected, err);
        assert_one_line_of_utf8(err);
    }
    scenario_free(sc);
    free(sc);
}

/* ------------------------------------------------------------------ corpus checks */

typedef struct {
    int ncases;
    int nfiles_used;
    int nwarnings;
} corpus_stats;

static void test_corpus_size(void **state)
{
    const corpus_stats *st = *state;
    assert_true(st->ncases >= 60);
    assert_true(st->nwarnings >= 5);
    assert_true(st->nfiles_used >= 50);
}

/* ------------------------------------------------------------------ fuzz seeds */

static void test_fuzz_seeds_replay(void **state)
{
    const char *seeds = *state;
    DIR *d = opendir(seeds);
    if (d == NULL)
        fail_msg("%s: %s", seeds, strerror(errno));
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", seeds, e->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static const size_t cap = 1 << 20;
        uint8_t *data = malloc(cap);
        assert_non_null(data);
        size_t len = fread(data, 1, cap, f);
        assert_int_equal(ferror(f), 0);
        assert_int_equal(fclose(f), 0);
        char why[PROPS_WHY];
        if (scenario_props_check(data, len, why, sizeof why) != 0)
            fail_msg("%s: %s", path, why);
        free(data);
        n++;
    }
    assert_int_equal(closedir(d), 0);
    assert_true(n >= 20);
}

/* ------------------------------------------------------------------ inputs made here */

static int make_inputs(const char *tmp)
{
    char path[512];
    snprintf(path, sizeof path, "%s/dir.ini", tmp);
    if (mkdir(path, 0700) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/fifo.ini", tmp);
    if (mkfifo(path, 0600) != 0)
        return -1;
    /* One byte over the limit, and otherwise a valid file: only the size is wrong. */
    snprintf(path, sizeof path, "%s/big.ini", tmp);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    long written = fprintf(f, "[run]\n");
    char comment[101];
    memset(comment, 'x', sizeof comment - 1);
    comment[0] = ';';
    comment[sizeof comment - 2] = '\n';
    comment[sizeof comment - 1] = '\0';
    while (written + 100 <= SCENARIO_MAX_FILE_BYTES)
        written += fprintf(f, "%s", comment);
    while (written < SCENARIO_MAX_FILE_BYTES + 1L)
        written += fprintf(f, "\n");
    if (fclose(f) != 0)
        return -1;
    struct stat sb;
    if (stat(path, &sb) != 0 || sb.st_size != SCENARIO_MAX_FILE_BYTES + 1L)
        return -1;
    return 0;
}

static void remove_inputs(const char *tmp)
{
    const char *names[] = {"fifo.ini", "big.ini"};
    char path[512];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%.400s/%s", tmp, names[i]);
        if (unlink(path) != 0)
            fprintf(stderr, "test_bad_inputs: %s: %s\n", path, strerror(errno));
    }
    snprintf(path, sizeof path, "%s/dir.ini", tmp);
    if (rmdir(path) != 0 || rmdir(tmp) != 0)
        fprintf(stderr, "test_bad_inputs: %s: %s\n", tmp, strerror(errno));
}

int main(void)
{
    char corpus[512], seeds[512];
    const char *slash = strrchr(__FILE__, '/');
    int dirlen = slash ? (int)(slash - __FILE__) : 1;
    const char *here = slash ? __FILE__ : ".";
    const char *env = getenv("DDPPROF_BAD_INPUTS");
    if (env != NULL && env[0] != '\0')
        snprintf(corpus, sizeof corpus, "%s", env);
    else
        snprintf(corpus, sizeof corpus, "%.*s/bad_inputs", dirlen, here);
    snprintf(seeds, sizeof seeds, "%.*s/fuzz/seeds", dirlen, here);
    char tmp[] = "/tmp/test_bad_inputs.XXXXXX";
    if (mkdtemp(tmp) == NULL || make_inputs(tmp) != 0) {
        fprintf(stderr, "test_bad_inputs: cannot make the test inputs in %s: %s\n", tmp,
                strerror(errno));
        return 1;
    }
    int ncases = 0;
    bad_case *cases = read_manifest(corpus, tmp, &ncases);
    if (cases == NULL) {
        remove_inputs(tmp);
        return 1;
    }
    corpus_stats stats = {.ncases = ncases};
    struct CMUnitTest *tests = calloc((size_t)ncases + 2, sizeof *tests);
    if (tests == NULL) {
        free(cases);
        remove_inputs(tmp);
        return 1;
    }
    for (int i = 0; i < ncases; i++) {
        tests[i].name = cases[i].name;
        tests[i].test_func = run_case;
        tests[i].initial_state = &cases[i];
        if (strstr(cases[i].expected, ": warning: ") != NULL)
            stats.nwarnings++;
        bool first = true;
        for (int j = 0; j < i; j++)
            if (strcmp(cases[j].input, cases[i].input) == 0)
                first = false;
        stats.nfiles_used += first && strstr(cases[i].input, ".ini") != NULL;
    }
    tests[ncases].name = "corpus_size";
    tests[ncases].test_func = test_corpus_size;
    tests[ncases].initial_state = &stats;
    tests[ncases + 1].name = "fuzz_seeds_replay";
    tests[ncases + 1].test_func = test_fuzz_seeds_replay;
    tests[ncases + 1].initial_state = seeds;

    int failed = _cmocka_run_group_tests("bad_inputs", tests, (size_t)ncases + 2, NULL, NULL);
    free(tests);
    free(cases);
    remove_inputs(tmp);
    return failed;
}
