/* cli_scenario.c — the command line's -s and --sweep applied to a scenario read from a
 * file, and the result checked, the way run, predict and whatif all take them.
 *
 * Contract: cli_scenario_apply() (cli.h) applies each -s in order (after taking the key
 * out of the file's [sweep], and after dropping a per-rank skew.speed that a new
 * description of the slow ranks replaces), then each --sweep, then --backend, then
 * validates; every change the command line makes to what the file said is said on
 * stderr when `say` is true.  Returns EXIT_OK, or EXIT_USAGE with the error printed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "engine/scenario/scenario.h"
#include "src/cli.h"

int cli_scenario_apply(scenario *sc, const char *file, const char *const *overrides, int noverrides,
                       const char *const *sweeps, int nsweeps, const char *backend, bool say)
{
    char err[SCENARIO_ERR];
    for (int i = 0; i < noverrides; i++) {
        char was[SCENARIO_ERR], skew[SCENARIO_ERR];
        int unswept = scenario_unsweep(sc, overrides[i], was, sizeof was);
        int reskewed = scenario_reskew(sc, overrides[i], skew, sizeof skew);
        if (scenario_override(sc, overrides[i], err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return EXIT_USAGE;
        }
        if (unswept && say)
            fprintf(stderr, "ddpprof: -s %s replaces the sweep of %s: %s is not swept\n", overrides[i], file, was);
        if (reskewed && say)
            fprintf(stderr, "ddpprof: -s %s describes the skew anew: %s's %s is left out\n", overrides[i], file,
                    skew);
    }
    for (int i = 0; i < nsweeps; i++) {
        char was[SCENARIO_ERR];
        int replaced = scenario_sweep_override(sc, sweeps[i], was, sizeof was, err, sizeof err);
        if (replaced < 0) {
            fprintf(stderr, "%s\n", err);
            return EXIT_USAGE;
        }
        if (replaced && say)
            fprintf(stderr, "ddpprof: --sweep %s replaces the sweep of %s: %s\n", sweeps[i], file, was);
    }
    if (backend && scenario_set(sc, "run.backend", backend, err, sizeof err) != 0) {
        fprintf(stderr, "--backend %s: %s\n", backend, err);
        return EXIT_USAGE;
    }
    if (scenario_validate(sc, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}
