/* fuzz_scenario.c — libFuzzer target for the scenario reader: every input is loaded as
 * a scenario file (or, after a 0x01 byte, applied as -s overrides), validated, its sweep
 * expanded at a few points and its INI export read back (scenario_props.h lists the
 * properties).  A property that fails aborts, so that libFuzzer keeps the input.
 *
 * Built and run by `make fuzz` (FUZZ_SECONDS) and `make fuzz-short`; seeds are in
 * tests/fuzz/seeds/, which also holds every input that once crashed the reader.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "scenario_props.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[PROPS_WHY];
    if (scenario_props_check(data, size, why, sizeof why) != 0) {
        fprintf(stderr, "scenario property failed: %s\n", why);
        abort();
    }
    return 0;
}
