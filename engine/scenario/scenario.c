/* scenario.c — the defaults of a scenario, setting keys by name (scenario_set, the
 * command line's -s overrides) and the effective speed of a rank.
 *
 * The rest of the scenario API lives next to it, one responsibility per file:
 * scenario_keys.c (the key table), scenario_value.c (typed values), scenario_read.c
 * (files), scenario_check.c (cross-key checks and warnings), scenario_sweep.c (sweep
 * points), scenario_own.c (freeing and copying what a scenario owns), scenario_ini.c
 * (INI export) and scenario_explain.c (`ddpprof explain`).
 */
#include "engine/scenario/scenario.h"

#include "engine/scenario/scenario_keys.h"
#include "engine/scenario/scenario_text.h"
#include "engine/scenario/scenario_value.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void scenario_defaults(scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    for (size_t i = 0; i < scn_nkeys; i++) {
        char err[SCENARIO_ERR];
        if (scn_set_key(sc, (int)i, scn_keys[i].def, false, err, sizeof err) != 0) {
            /* A default the table's own range rejects is a bug in the table. */
            fprintf(stderr, "ddpprof: bad default in the scenario key table: %s\n", err);
            abort();
        }
    }
    memset(sc->key_line, 0, sizeof sc->key_line);
}

int scenario_reset_section(scenario *sc, const char *section)
{
    int n = 0;
    for (size_t i = 0; i < scn_nkeys; i++) {
        if (strcmp(scn_keys[i].section, section) != 0)
            continue;
        char err[SCENARIO_ERR];
        if (scn_set_key(sc, (int)i, scn_keys[i].def, false, err, sizeof err) != 0)
            return -1; /* unreachable: scenario_defaults() checked every default */
        sc->key_line[i] = 0;
        sc->key_include[i] = 0;
        sc->swept[i] = false;
        n++;
    }
    return n;
}

int scenario_set(scenario *sc, const char *dotted_key, const char *value, char *err, size_t errlen)
{
    char *key = scn_trimmed_copy(dotted_key);
    char *text = scn_trimmed_copy(value);
    int rc = -1;
    int ki = -1;
    if (key == NULL || text == NULL) {
        scn_errf(err, errlen, "out of memory");
    } else if (scn_utf8_check(key, strlen(key), NULL) != 0) {
        scn_errf(err, errlen, "the key name is not valid UTF-8");
    } else if (scn_find_dotted(key, &ki, err, errlen) == 0 && scn_set_key(sc, ki, text, false, err, errlen) == 0) {
        sc->key_line[ki] = -1;
        sc->key_include[ki] = 0;
        sc->swept[ki] = false;
        rc = 0;
    }
    free(key);
    free(text);
    return rc;
}

int scenario_reskew(scenario *sc, const char *assignment, char *was, size_t n)
{
    static const char *const describe_anew[] = {"skew.slow_ranks=", "skew.slow_fraction="};
    bool anew = false;
    for (size_t i = 0; i < sizeof describe_anew / sizeof describe_anew[0]; i++)
        anew |= strncmp(assignment, describe_anew[i], strlen(describe_anew[i])) == 0;
    int ki = scn_key_index("skew", "speed");
    if (!anew || ki < 0 || sc->key_line[ki] <= 0 || sc->nspeed <= 1)
        return 0;
    size_t pos = scn_bprintf(was, n, "skew.speed = ");
    for (int i = 0; i < sc->nspeed && pos < n; i++)
        pos += scn_bprintf(was + pos, n - pos, "%s%g", i ? ", " : "", sc->speed[i]);
    char err[SCENARIO_ERR];
    if (scn_set_key(sc, ki, scn_keys[ki].def, false, err, sizeof err) != 0)
        return 0; /* unreachable: scenario_defaults() checked every default */
    sc->key_line[ki] = 0;
    sc->key_include[ki] = 0;
    return 1;
}

int scenario_override(scenario *sc, const char *assignment, char *err, size_t errlen)
{
    /* The assignment is quoted in every message below: it must be printable text. */
    size_t len = strlen(assignment), bad = 0;
    char shown[SCENARIO_ERR / 2];
    scn_escape(assignment, shown, sizeof shown);
    if (scn_utf8_check(assignment, len, &bad) != 0)
        return scn_errf(err, errlen, "-s %s: not valid UTF-8 (byte %zu is 0x%02X)", shown, bad + 1,
                        (unsigned char)assignment[bad]);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)assignment[i];
        if (c < 0x20 || c == 0x7F)
            return scn_errf(err, errlen, "-s %s: control character 0x%02X at byte %zu", shown, c, i + 1);
    }
    const char *eq = strchr(assignment, '=');
    if (eq == NULL)
        return scn_errf(err, errlen, "-s %s: expected section.key=value (e.g. ddp.bucket_cap_mb=25)",
                        shown);
    char *key = strndup(assignment, (size_t)(eq - assignment));
    if (key == NULL)
        return scn_errf(err, errlen, "-s %s: out of memory", shown);
    char msg[SCENARIO_ERR];
    int rc = scenario_set(sc, key, eq + 1, msg, sizeof msg);
    free(key);
    if (rc != 0)
        return scn_errf(err, errlen, "-s %s: %s", shown, msg);
    return 0;
}

/* A uniform draw in (0, 1) that depends only on (seed, rank, stream): per-rank rules
 * cost O(1) per rank and never depend on the order ranks are asked in. */
static double rank_uniform(uint64_t seed, int rank, uint64_t stream)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)rank * 0xbf58476d1ce4e5b9ULL + stream;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

int scenario_host_ranks(const scenario *sc)
{
    return sc->gpus_per_node > 0 && sc->gpus_per_node < sc->world_size ? sc->gpus_per_node : sc->world_size;
}

double scenario_rank_speed(const scenario *sc, int rank)
{
    double s = rank >= 0 && sc->nspeed > 0 && (sc->speed_repeat || sc->nspeed == 1) ? sc->speed[rank % sc->nspeed]
               : rank >= 0 && rank < sc->nspeed                                     ? sc->speed[rank]
                                                                                    : 1.0;
    if (sc->speed_sigma > 0) {
        /* Box-Muller from two draws of this rank alone. */
        double n = sqrt(-2.0 * log(rank_uniform(sc->seed, rank, 1))) * cos(2.0 * M_PI * rank_uniform(sc->seed, rank, 2));
        s *= exp(sc->speed_sigma * n);
    }
    if (sc->slow_fraction > 0 && rank_uniform(sc->seed, rank, 3) < sc->slow_fraction)
        return s / sc->slowdown;
    for (int i = 0; i < sc->nslow; i++)
        if (sc->slow_ranks[i] == rank)
            return s / sc->slowdown;
    return s;
}
