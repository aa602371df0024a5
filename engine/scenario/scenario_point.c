/* scenario_point.c — one point of a [sweep] as a scenario of its own, checked
 * (scenario_sweep_point, contract in scenario.h).
 *
 * A point is the base scenario with each swept key set from its axis; its name gets the
 * point's values ("base [bucket_cap_mb 5]", keys as scenario_short_key() writes them) so
 * that runs in one database tell themselves apart.  It sits above both
 * the sweep arithmetic and the cross-key checks, which it uses.
 */
#include "engine/scenario/scenario_own.h"
#include "engine/scenario/scenario_sweep.h"

#include "engine/scenario/scenario_text.h"

#include <string.h>

int scenario_sweep_point(const scenario *sc, size_t index, scenario *out, char *err, size_t errlen)
{
    if (scn_sweep_shape(sc, err, errlen) != 0)
        return -1;
    size_t count = scenario_sweep_count(sc);
    if (index >= count)
        return scn_errf(err, errlen, "sweep point %zu does not exist (%zu points)", index, count);

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
    /* "bucket_cap_mb 5, world_size 16": short enough for a list of runs to show whole. */
    for (int a = 0; a < sc->nsweep; a++) {
        char key[sizeof sc->sweep[a].key];
        scenario_short_key(sc->sweep[a].key, key, sizeof key);
        pos += scn_bprintf(label + pos, sizeof label - pos, "%s%s %s", a ? ", " : "", key,
                           sc->sweep[a].values[choice[a]]);
    }
    int naxes = sc->nsweep;

    if (out != sc) {
        scenario_free(out);
        if (scenario_copy(out, sc, err, errlen) != 0)
            return -1;
    }
    if (scn_sweep_apply(sc, index, out, err, errlen) != 0)
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
    scn_sweep_clear(out);

    if (scenario_validate(out, err, errlen) != 0) {
        size_t len = err != NULL && errlen > 0 ? strlen(err) : 0;
        if (len + 1 < errlen)
            scn_bprintf(err + len, errlen - len, " (sweep point \"%s\")", out->name);
        return -1;
    }
    return 0;
}
