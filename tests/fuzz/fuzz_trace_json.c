/* fuzz_trace_json.c — libFuzzer target for the PyTorch profiler JSON reader
 * (profiler/import/kineto_json.c), gzip included: each input is read as a trace file
 * and, when it is one, analysed into spans (fuzz_import.h says what must hold).
 * Built and run by `make fuzz` and `make fuzz-short`; seeds: tests/fuzz/seeds_trace_json/
 * and the small traces `make` writes with tests/import/kineto_gen.py. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_import.h"
#include "profiler/import/kineto_json.h"
#include "profiler/import/source_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input fi;
    if (fuzz_input_open(&fi, data, size) != 0)
        return 0;
    source_input *in = NULL;
    source_kind kind;
    if (source_open(fi.path, fi.lim.max_file_bytes, &in, &kind, fi.err, sizeof fi.err) == 0 &&
        kind != SOURCE_EMPTY && kind != SOURCE_SQLITE) {
        trace_rank tr;
        trace_rank_init(&tr, fi.path, 0, NULL, &fi.lim);
        if (kineto_json_read(in, &tr, fi.err, sizeof fi.err) == 0) {
            bool device = false;
            for (size_t i = 0; i < tr.nev; i++)
                device |= tr.ev[i].type == TEV_KERNEL || tr.ev[i].type == TEV_MEMCPY || tr.ev[i].type == TEV_MEMSET;
            fuzz_check_rank(&tr, device);
        }
        trace_rank_free(&tr);
    }
    source_close(in);
    close(fi.fd);
    return 0;
}
