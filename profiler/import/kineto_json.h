/* kineto_json.h — the PyTorch profiler's trace JSON, read streaming (yajl) into one
 * trace_rank.
 *
 * Contract: reads both forms: Kineto's object ({"traceEvents": [...],
 * "distributedInfo": {...}, "baseTimeNanoseconds": N, ...}; float µs since the base,
 * or 2022-era integer µs since the epoch) and the list ([{...}, ...]) that PyTorch
 * builds without Kineto write (µs since the profiler started; no metadata).  Complete
 * events ("ph": "X") become records by category: kernel, gpu_memcpy, gpu_memset,
 * cuda_runtime/cuda_driver, and host ops (cpu_op, user_annotation, and the list form's
 * uncategorised ops); anything else (metadata, flows, instants, python_function,
 * gpu_user_annotation) is skipped.  ts and dur are parsed from their decimal text, to
 * the nanosecond.  Only what the records need is kept, so memory follows the event
 * count, never the text's size.  Errors: "PATH:LINE: what" (LINE of the decompressed
 * text; in a file of one line, "PATH: byte N: what"), returned as -1.
 *
 * Ownership: `in` is borrowed (read, not closed).  Events go into *out, which the caller
 * has set up with trace_rank_init() and frees with trace_rank_free() whatever the result
 * (what was read before an error stays in it); a NULL out->format becomes a string
 * constant.  The parser's own memory is freed before the call returns.
 */
#ifndef DDPPROF_KINETO_JSON_H
#define DDPPROF_KINETO_JSON_H

#include <stddef.h>

#include "profiler/import/source_input.h"
#include "profiler/import/trace_model.h"

int kineto_json_read(source_input *in, trace_rank *out, char *err, size_t errlen);

#endif
