/* custom_model.c — reading a custom model's parameter-list file (custom_model.h).
 *
 * One tensor a line, "NAME KIND SHAPE", '#' to the end of a line a comment, blank lines
 * skipped.  SHAPE is the dimensions joined by 'x' ("64x3x7x7"), or "()" for a scalar
 * (num_batches_tracked).  Each kind's number of dimensions is checked where PyTorch
 * fixes it (a Linear weight has two), so that a typo does not silently change the
 * shape broadcast at construction. */
#include "engine/workload/custom_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const KIND_NAMES[CT_KIND_COUNT] = {
    "linear.weight", "linear.bias", "norm.weight", "norm.bias", "conv.weight",
    "conv.bias",     "embedding",   "param",       "buffer",    "buffer.int64",
};

const char *custom_kind_name(custom_kind k) { return k >= 0 && k < CT_KIND_COUNT ? KIND_NAMES[k] : "?"; }

/* Dimensions a kind must have: exactly `lo` .. `hi`. */
static void kind_dims(custom_kind k, int *lo, int *hi)
{
    switch (k) {
    case CT_LINEAR_WEIGHT:
    case CT_EMBEDDING:
        *lo = *hi = 2;
        break;
    case CT_LINEAR_BIAS:
    case CT_NORM_WEIGHT:
    case CT_NORM_BIAS:
    case CT_CONV_BIAS:
        *lo = *hi = 1;
        break;
    case CT_CONV_WEIGHT:
        *lo = 3, *hi = MODEL_MAX_DIMS;
        break;
    case CT_BUFFER:
    case CT_BUFFER_I64:
        *lo = 0, *hi = MODEL_MAX_DIMS;
        break;
    default:
        *lo = 1, *hi = MODEL_MAX_DIMS;
        break;
    }
}

static int parse_shape(const char *s, custom_tensor *t)
{
    t->ndims = 0;
    t->numel = 1;
    if (strcmp(s, "()") == 0)
        return 0;
    const char *p = s;
    for (;;) {
        if (t->ndims == MODEL_MAX_DIMS || *p < '0' || *p > '9')
            return -1;
        errno = 0;
        char *end = NULL;
        long long v = strtoll(p, &end, 10);
        if (errno != 0 || v <= 0 || __builtin_mul_overflow(t->numel, (int64_t)v, &t->numel))
            return -1;
        t->shape[t->ndims++] = v;
        if (*end == '\0')
            return 0;
        if (*end != 'x')
            return -1;
        p = end + 1;
    }
}

/* One line's tensor; 1 when the line holds none, -1 with err on a bad one. */
static int parse_line(char *line, const char *path, int lineno, custom_tensor *t, char *err, size_t errlen)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *save = NULL, *f[4];
    int nf = 0;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (nf == 3) {
            snprintf(err, errlen, "%s:%d: more than three fields (expected: NAME KIND SHAPE)", path, lineno);
            return -1;
        }
        f[nf++] = tok;
    }
    if (nf == 0)
        return 1;
    if (nf < 3) {
        snprintf(err, errlen, "%s:%d: expected three fields, NAME KIND SHAPE (e.g. fc.weight linear.weight 10x512)",
                 path, lineno);
        return -1;
    }
    memset(t, 0, sizeof *t);
    if (strlen(f[0]) >= sizeof t->name) {
        snprintf(err, errlen, "%s:%d: name longer than %d characters", path, lineno, MODEL_NAME - 1);
        return -1;
    }
    memcpy(t->name, f[0], strlen(f[0]) + 1);
    int k = 0;
    while (k < CT_KIND_COUNT && strcmp(f[1], KIND_NAMES[k]) != 0)
        k++;
    if (k == CT_KIND_COUNT) {
        snprintf(err, errlen,
                 "%s:%d: unknown kind \"%s\" (expected linear.weight, linear.bias, norm.weight, norm.bias, "
                 "conv.weight, conv.bias, embedding, param, buffer or buffer.int64)",
                 path, lineno, f[1]);
        return -1;
    }
    t->kind = (custom_kind)k;
    if (parse_shape(f[2], t) != 0) {
        snprintf(err, errlen,
                 "%s:%d: bad shape \"%s\" (expected up to %d positive sizes joined by 'x', e.g. 64x3x7x7, or () "
                 "for a scalar)",
                 path, lineno, f[2], MODEL_MAX_DIMS);
        return -1;
    }
    int lo, hi;
    kind_dims(t->kind, &lo, &hi);
    if (t->ndims < lo || t->ndims > hi) {
        if (lo == hi)
            snprintf(err, errlen, "%s:%d: a %s has %d dimension%s, not %d", path, lineno, f[1], lo, lo == 1 ? "" : "s",
                     t->ndims);
        else
            snprintf(err, errlen, "%s:%d: a %s has %d to %d dimensions, not %d", path, lineno, f[1], lo, hi,
                     t->ndims);
        return -1;
    }
    return 0;
}

int custom_model_read(const char *path, custom_tensor **out, int *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(err, errlen, "%s: cannot open the parameter list: %s", path, strerror(errno));
        return -1;
    }
    custom_tensor *v = NULL;
    int len = 0, cap = 0, lineno = 0, rc = 0;
    char line[1024];
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(fp)) {
            snprintf(err, errlen, "%s:%d: line longer than %zu characters", path, lineno, sizeof line - 2);
            rc = -1;
            break;
        }
        custom_tensor t;
        int r = parse_line(line, path, lineno, &t, err, errlen);
        if (r < 0) {
            rc = -1;
            break;
        }
        if (r > 0)
            continue;
        for (int i = 0; i < len; i++)
            if (strcmp(v[i].name, t.name) == 0) {
                snprintf(err, errlen, "%s:%d: %s is listed twice", path, lineno, t.name);
                rc = -1;
                break;
            }
        if (rc != 0)
            break;
        if (len == cap) {
            int ncap = cap ? 2 * cap : 64;
            custom_tensor *nv = ncap <= SCENARIO_MAX_CUSTOM_PARAMS * 4 ? realloc(v, (size_t)ncap * sizeof *v) : NULL;
            if (!nv) {
                snprintf(err, errlen, "%s:%d: too many tensors (at most %d)", path, lineno,
                         SCENARIO_MAX_CUSTOM_PARAMS * 4);
                rc = -1;
                break;
            }
            v = nv;
            cap = ncap;
        }
        v[len++] = t;
    }
    if (rc == 0 && ferror(fp)) {
        snprintf(err, errlen, "%s: read error", path);
        rc = -1;
    }
    if (fclose(fp) != 0 && rc == 0) {
        snprintf(err, errlen, "%s: read error", path);
        rc = -1;
    }
    if (rc == 0) {
        int nparams = 0;
        for (int i = 0; i < len; i++)
            nparams += v[i].kind != CT_BUFFER && v[i].kind != CT_BUFFER_I64;
        if (nparams == 0) {
            snprintf(err, errlen, "%s: the parameter list has no parameter", path);
            rc = -1;
        }
    }
    if (rc != 0) {
        free(v);
        return -1;
    }
    *out = v;
    *n = len;
    return 0;
}
