/* scenario_sweep.c — sweeps: bounds of a [sweep], its point count (computed before
 * anything is expanded, with overflow checks), and applying one point's values
 * (contract in scenario_sweep.h); scenario_point.c makes a whole point of it.
 */
#include "engine/scenario/scenario_sweep.h"

#include "engine/scenario/scenario_keys.h"
#include "engine/scenario/scenario_text.h"
#include "engine/scenario/scenario_value.h"

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
        memcpy(out->key_include, base->key_include, sizeof out->key_include);
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
        out->key_include[ki] = 0;
        out->swept[ki] = true;
    }
    return 0;
}
