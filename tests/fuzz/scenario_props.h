/* scenario_props.h — what must hold for ANY input to the scenario reader, checked by the
 * fuzz target (fuzz_scenario.c) and replayed over the seed corpus by test_bad_inputs.
 *
 * Contract: scenario_props_check(data, size, why, whylen) feeds the bytes to the library as a file
 * (through a memfd, so no file system is touched) or, when the first byte is 0x01, as a
 * list of -s overrides (one a line) on the defaults, each key also given to `explain`,
 * and returns 0 when every property
 * holds, or -1 with `why` saying which failed.  Properties: an error message is one line
 * of valid UTF-8; a loaded scenario validates, its warnings are valid UTF-8 lines, its
 * sweep has 1..SCENARIO_MAX_SWEEP_POINTS points, a few points expand, and the INI text of
 * the scenario and of each point that validates reads back without error (for a
 * scenario without warnings, to the same INI text).  Crashes, leaks and hangs are the
 * sanitizers' and libFuzzer's to find.
 */
#ifndef DDPPROF_SCENARIO_PROPS_H
#define DDPPROF_SCENARIO_PROPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/scenario/scenario.h"
#include "engine/scenario/scenario_text.h"

#define PROPS_WHY 1024

static int props_fail(char *why, size_t whylen, const char *what, const char *detail)
{
    snprintf(why, whylen, "%s: %.900s", what, detail ? detail : "");
    return -1;
}

static bool props_one_line(const char *msg)
{
    return msg[0] != '\0' && strchr(msg, '\n') == NULL &&
           scn_utf8_check(msg, strlen(msg), NULL) == 0;
}

/* Writes `len` bytes to a fresh memfd; its /proc path in `path`.  fd or -1. */
static int props_memfd(const void *data, size_t len, char *path, size_t n)
{
    int fd = memfd_create("scenario.ini", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    const char *p = data;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, n, "/proc/self/fd/%d", fd);
    return fd;
}

/* The INI text of sc with its source left out (it names the memfd); tmp (zeroed or a
 * scenario) is freed and becomes a copy of sc. */
static char *props_ini(const scenario *sc, scenario *tmp)
{
    scenario_free(tmp);
    if (scenario_copy(tmp, sc, NULL, 0) != 0)
        return NULL;
    tmp->source[0] = '\0';
    return scenario_to_ini(tmp);
}

/* Reads `ini` back; same_as != NULL: the reloaded scenario must export the same text. */
static int props_reload(const char *ini, const char *same_as, scenario *back, scenario *tmp,
                        char *why, size_t whylen)
{
    char path[64], err[SCENARIO_ERR];
    int fd = props_memfd(ini, strlen(ini), path, sizeof path);
    if (fd < 0)
        return props_fail(why, whylen, "memfd", NULL);
    scenario_free(back); /* a load fills a scenario that holds nothing */
    int rc = scenario_load_file(path, back, err, sizeof err);
    close(fd);
    if (rc != 0) {
        char detail[SCENARIO_ERR + 640];
        snprintf(detail, sizeof detail, "%s\n---\n%.600s", err, ini);
        return props_fail(why, whylen, "exported INI does not read back", detail);
    }
    if (same_as != NULL) {
        char *again = props_ini(back, tmp);
        if (again == NULL)
            return props_fail(why, whylen, "scenario_to_ini failed", NULL);
        bool same = strcmp(again, same_as) == 0;
        free(again);
        if (!same)
            return props_fail(why, whylen, "exported INI changes when read back", same_as);
    }
    return 0;
}

static int props_loaded(scenario *sc, scenario *work, scenario *back, char *why, size_t whylen)
{
    char err[SCENARIO_ERR];
    if (scenario_validate(sc, err, sizeof err) != 0)
        return props_fail(why, whylen, "loaded scenario does not validate", err);
    char warnings[4096];
    int nw = scenario_warnings(sc, warnings, sizeof warnings);
    if (nw < 0)
        return props_fail(why, whylen, "scenario_warnings failed", NULL);
    for (char *line = warnings; *line;) {
        char *nl = strchr(line, '\n');
        if (nl == NULL)
            return props_fail(why, whylen, "warning without newline", line);
        *nl = '\0';
        if (!props_one_line(line) || strstr(line, ": warning: ") == NULL)
            return props_fail(why, whylen, "bad warning line", line);
        line = nl + 1;
    }
    size_t count = scenario_sweep_count(sc);
    if (count < 1 || count > SCENARIO_MAX_SWEEP_POINTS)
        return props_fail(why, whylen, "sweep count out of bounds", NULL);

    char *ini = props_ini(sc, work);
    if (ini == NULL)
        return props_fail(why, whylen, "scenario_to_ini failed", NULL);
    int rc = props_reload(ini, nw == 0 ? ini : NULL, back, work, why, whylen);
    free(ini);
    if (rc != 0)
        return rc;

    size_t picks[3] = {0, count / 2, count - 1};
    for (int i = 0; i < 3; i++) {
        if (scenario_sweep_point(sc, picks[i], work, err, sizeof err) != 0) {
            if (!props_one_line(err))
                return props_fail(why, whylen, "bad sweep point message", err);
            continue;
        }
        if (work->nsweep != 0 || !props_one_line(work->name))
            return props_fail(why, whylen, "bad sweep point", work->name);
        char *pini = scenario_to_ini(work);
        if (pini == NULL)
            return props_fail(why, whylen, "scenario_to_ini failed", NULL);
        scenario *tmp = calloc(1, sizeof *tmp);
        rc = tmp ? props_reload(pini, NULL, back, tmp, why, whylen) : props_fail(why, whylen, "no memory", NULL);
        scenario_free(tmp);
        free(tmp);
        free(pini);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int props_overrides(const uint8_t *data, size_t size, scenario *sc, char *why, size_t whylen)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return props_fail(why, whylen, "no memory", NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    FILE *sink = fopen("/dev/null", "w");
    if (sink == NULL) {
        free(text);
        return props_fail(why, whylen, "/dev/null", NULL);
    }
    scenario_defaults(sc);
    char err[SCENARIO_ERR];
    int rc = 0;
    for (char *line = text; line != NULL && rc == 0;) {
        char *nl = strchr(line, '\n');
        if (nl != NULL)
            *nl = '\0';
        char *eq = strchr(line, '=');
        if (eq != NULL) {
            *eq = '\0';
            (void)scenario_explain(sink, line); /* unknown keys are fine: no crash is the test */
            *eq = '=';
        }
        rc = scenario_override(sc, line, err, sizeof err);
        line = nl ? nl + 1 : NULL;
    }
    fclose(sink);
    if (rc == 0)
        rc = scenario_validate(sc, err, sizeof err);
    free(text);
    if (rc != 0)
        return props_one_line(err) ? 1 : props_fail(why, whylen, "bad override message", err);
    return 0;
}

static int scenario_props_check(const uint8_t *data, size_t size, char *why, size_t whylen)
{
    scenario *sc = calloc(1, sizeof *sc), *work = calloc(1, sizeof *work), *back = calloc(1, sizeof *back);
    int rc = 0;
    if (sc == NULL || work == NULL || back == NULL) {
        rc = props_fail(why, whylen, "no memory", NULL);
    } else if (size > 0 && data[0] == 0x01) {
        rc = props_overrides(data + 1, size - 1, sc, why, whylen);
        if (rc == 0)
            rc = props_loaded(sc, work, back, why, whylen);
        else if (rc > 0)
            rc = 0; /* refused with a good message */
    } else {
        char path[64], err[SCENARIO_ERR];
        int fd = props_memfd(data, size, path, sizeof path);
        if (fd < 0) {
            rc = props_fail(why, whylen, "memfd", NULL);
        } else {
            if (scenario_load_file(path, sc, err, sizeof err) == 0)
                rc = props_loaded(sc, work, back, why, whylen);
            else if (!props_one_line(err))
                rc = props_fail(why, whylen, "bad error message", err);
            close(fd);
        }
    }
    scenario_free(sc);
    free(sc);
    scenario_free(work);
    free(work);
    scenario_free(back);
    free(back);
    return rc;
}

#endif
