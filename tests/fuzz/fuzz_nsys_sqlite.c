/* fuzz_nsys_sqlite.c — libFuzzer target for the Nsight Systems SQLite reader
 * (profiler/import/nsys_sqlite.c): each input is opened as an export and, when it is
 * one, each rank found in it is analysed into spans (fuzz_import.h says what must hold).
 * Built and run by `make fuzz` and `make fuzz-short`; seeds: small exports `make` writes
 * with tests/import/kineto_gen.py --format nsys. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_import.h"
#include "profiler/import/nsys_sqlite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input fi;
    if (fuzz_input_open(&fi, data, size) != 0)
        return 0;
    trace_rank **ranks = NULL;
    int n = 0;
    if (nsys_sqlite_read(fi.path, 0, &fi.lim, &ranks, &n, fi.err, sizeof fi.err) == 0) {
        for (int i = 0; i < n; i++) {
            fuzz_check_rank(ranks[i], true);
            trace_rank_free(ranks[i]);
            free(ranks[i]);
        }
        free(ranks);
    }
    close(fi.fd);
    return 0;
}
