/* custom_model.h — a custom model's parameter-list file: each tensor's name, kind and
 * shape, and the module buffers, so that a model described by hand behaves in DDP like
 * the same model in PyTorch (construction's shape broadcast, buffer broadcasts, the
 * order autograd makes gradients ready).  Format: docs/custom_model.md.
 *
 * Contract: custom_model_read() reads the whole file or nothing: on a bad line it
 * returns -1 with err = "path:line: message" and *out == NULL.  The caller frees *out.
 */
#ifndef DDPPROF_CUSTOM_MODEL_H
#define DDPPROF_CUSTOM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/workload/model_zoo.h"

typedef enum {
    CT_LINEAR_WEIGHT = 0, /* nn.Linear weight [out, in] */
    CT_LINEAR_BIAS,       /* nn.Linear bias [out]: ready before its weight */
    CT_NORM_WEIGHT,       /* batch / layer / group norm weight [c] */
    CT_NORM_BIAS,         /* its bias [c]: ready after the weight */
    CT_CONV_WEIGHT,       /* nn.Conv*d weight [out, in, k...] */
    CT_CONV_BIAS,         /* its bias [out]: ready after the weight */
    CT_EMBEDDING,         /* nn.Embedding weight [num, dim] */
    CT_PARAM,             /* any other parameter (nn.Parameter of a module) */
    CT_BUFFER,            /* a float32 buffer (running_mean, running_var) */
    CT_BUFFER_I64,        /* an int64 buffer (num_batches_tracked) */
    CT_KIND_COUNT
} custom_kind;

typedef struct {
    char name[MODEL_NAME];
    custom_kind kind;
    int ndims; /* 0: a scalar */
    int64_t shape[MODEL_MAX_DIMS];
    int64_t numel;
} custom_tensor;

/* The kinds as the file spells them, in custom_kind order. */
const char *custom_kind_name(custom_kind k);

int custom_model_read(const char *path, custom_tensor **out, int *n, char *err, size_t errlen);

#endif
