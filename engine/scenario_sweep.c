/* scenario_sweep.c — sweeps: bounds of a [sweep], its point count (computed before
 * anything is expanded, with overflow checks), and expanding one point into a scenario
 * of its own (contract in scenario_sweep.h and scenario.h).
 *
 * A point is the base scenario with each swept key set from its axis; its name gets the
 * point's values so that runs in one database tell themselves apart.
 */
#include "scenario_sweep.h"

#include "scenario_keys.h"
#include "scenario_text.h"
#include "scenario_value.h"

#include <stdint.h>
#include <string.h>

int scn_sweep_shape(const scenario *sc, char *err)
{
    if (sc->nsweep < 0 || sc->nsweep > SCENARIO_MAX_SWEEP_KEYS)
        return scn_errf(err, "corrupt scenario: %d sweep axes", sc->nsweep);
    for (int a = 0; a < sc->nsweep; a++) {
        int n = sc->sweep[a].nvalues;
        if (n < 1 || n > SCENARIO_MAX_SWEEP_VALUES)
            return scn_errf(err, "corrupt scenario: sweep axis %d has %d values", a + 1, n);
        if (memchr(sc->sweep[a].key, '\0', sizeof sc->sweep[a].key) == NULL)
            return scn_errf(err, "corrupt scenario: sweep axis %d has no key", a + 1);
        for (int v = 0; v < n; v++)
            if (memchr(sc->sweep[a].values[v], '\0', SCENARIO_STR) == NULL)
                return scn_errf(err, "corrupt scenario: sweep axis %d value %d", a + 1, v + 1);
    }
    return 0;
}

int scn_sweep_product(const scenario *sc, int naxes, size_t *count)
{
    size_t n = 1;
    for (int a = 0; a < naxes && a < SCENARIO_MAX_SWEEP_KEYS; a++) {
        size_t v = sc->sweep[a].nvalues > 0 ? (size_t)sc->sweep[a].nvalues : 0;
        if (v != 0 && n > SIZE_MAX / v)
            return -1;
        n *= v;
    }
    *count = n;
    return 0;
}

int scn_sweep_over_limit(const scenario *sc, char *msg, size_t n, int *axis)
{
    int first_over = -1;
    size_t count = 1;
    bool overflow = false;
    for (int a = 0; a < sc->nsweep && a < SCENARIO_MAX_SWEEP_KEYS; a++) {
        size_t part;
        if (scn_sweep_product(sc, a + 1, &part) != 0) {
            overflow = true;
        } else {
            count = part;
        }
        if (first_over < 0 && (overflow || part > SCENARIO_MAX_SWEEP_POINTS))
            first_over = a;
    }
    if (first_over < 0)
        return 0;
    char sizes[160];
    size_t pos = 0;
    sizes[0] = '\0';
    for (int a = 0; a < sc->nsweep && a < SCENARIO_MAX_SWEEP_KEYS; a++)
        pos += scn_bprintf(sizes + pos, sizeof sizes - pos, "%s%d", a ? " x " : "",
                           sc->sweep[a].nvalues);
    if (overflow)
        scn_bprintf(msg, n, "[sweep] has more points than can be counted (%s); at most %d are "
                            "allowed",
                    sizes, SCENARIO_MAX_SWEEP_POINTS);
    else
        scn_bprintf(msg, n, "[sweep] has %zu points (%s); at most %d are allowed", count, sizes,
                    SCENARIO_MAX_SWEEP_POINTS);
    *axis = first_over;
    return -1;
}

size_t scenario_sweep_count(const scenario *sc)
{
    size_t n;
    if (sc->nsweep < 0 || sc->nsweep > SCENARIO_MAX_SWEEP_KEYS)
        return 0;
    return scn_sweep_product(sc, sc->nsweep, &n) == 0 ? n : SIZE_MAX;
}

int scn_sweep_apply(const scenario *base, size_t index, scenario *out, char *err)
{
    int choice[SCENARIO_MAX_SWEEP_KEYS];
    size_t rest = index;
    for (int a = base->nsweep - 1; a >= 0; a--) { /* last axis varies fastest */
        choice[a] = (int)(rest % (size_t)base->sweep[a].nvalues);
        rest /= (size_t)base->sweep[a].nvalues;
    }
    /* An earlier point may have marked other keys: start again from the base's marks,
     * which also makes device.preset fill peak_tflops exactly as in a fresh copy. */
    if (out != base) {
        memcpy(out->key_line, base->key_line, sizeof out->key_line);
        memcpy(out->swept, base->swept, sizeof out->swept);
    }
    const char *src = base->source[0] ? base->source : "defaults";
    for (int a = 0; a < base->nsweep; a++) {
        const sweep_axis *axis = &base->sweep[a];
        int ki = -1;
        char msg[SCENARIO_ERR];
        if (scn_find_dotted(axis->key, &ki, msg) != 0 ||
            scn_set_key(out, ki, axis->values[choice[a]], false, msg) != 0)
            return scn_errf(err, "%s:%d: [sweep] %s", src, axis->line, msg);
        out->key_line[ki] = axis->line > 0 ? axis->line : -1;
        out->swept[ki] = true;
    }
    return 0;
}

int scenario_sweep_point(const scenario *sc, size_t index, scenario *out, char err[SCENARIO_ERR])
{
    if (scn_sweep_shape(sc, err) != 0)
        return -1;
    size_t count = scenario_sweep_count(sc);
    if (index >= count)
        return scn_errf(err, "sweep point %zu does not exist (%zu points)", index, count);

    /* Taken before *out is written: out may be sc itself. */
    char base[sizeof sc->name];
    memcpy(base, sc->name, sizeof base);
    base[sizeof base - 1] = '\0';
    char label[2048];
    size_t pos = 0;
    size_t rest = index;
    int choice[SCENARIO_MAX_SWEEP_KEYS];
    for (int a = sc->nsweep - 1; a >= 0; a--) {
        choice[a] = (int)(rest % (size_t)sc->sweep[a].nvalues);
        rest /= (size_t)sc->sweep[a].nvalues;
    }
    for (int a = 0; a < sc->nsweep; a++)
        pos += scn_bprintf(label + pos, sizeof label - pos, "%s%s=%s", a ? ", " : "",
                           sc->sweep[a].key, sc->sweep[a].values[choice[a]]);
    int naxes = sc->nsweep;

    if (out != sc)
        *out = *sc;
    if (scn_sweep_apply(sc, index, out, err) != 0)
        return -1;
    if (naxes > 0) {
        size_t room = sizeof out->name - 1;
        if (strlen(base) + 3 + pos <= room) {
            scn_bprintf(out->name, sizeof out->name, "%s [%s]", base, label);
        } else {
            /* Too long for the name: still unique, and the values are in the INI. */
            char tag[64];
            size_t tlen = scn_bprintf(tag, sizeof tag, " [point %zu of %zu]", index + 1, count);
            size_t keep = scn_utf8_cut(base, strnlen(base, room - tlen));
            scn_bprintf(out->name, sizeof out->name, "%.*s%s", (int)keep, base, tag);
        }
    }
    memset(out->sweep, 0, sizeof out->sweep);
    out->nsweep = 0;

    if (scenario_validate(out, err) != 0) {
        size_t len = strlen(err);
        scn_bprintf(err + len, SCENARIO_ERR - len, " (sweep point \"%s\")", out->name);
        return -1;
    }
    return 0;
}
