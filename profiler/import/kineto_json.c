/* kineto_json.c — see kineto_json.h.
 *
 * yajl calls back for each token; a stack of open containers, each with its role
 * (the top level, the event list, one event, its args, distributedInfo, or a value to
 * skip), says what a key or value means.  An event's fields are collected as they come
 * (keys may be in any order) and the record is pushed when its map closes.
 *
 * Position for messages: the text is fed to yajl a line at a time (at most
 * PIECE bytes), so a callback knows the line it is in; a syntax error's exact byte
 * comes from yajl_get_bytes_consumed. */
#include "profiler/import/kineto_json.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "common/errmsg.h"

#define READ_CHUNK (256 * 1024)
#define PIECE 4096
/* Deeper than any trace nests (args hold arrays of arrays of shapes); bounds the
 * stack's memory on hostile input. */
#define MAX_DEPTH 256
#define SHORT 128

/* R_DIMS: args' "Input Dims" (one entry per input: a tensor's shape, or a list of
 * shapes for a tensor list); R_DIMS_ENTRY one input; R_DIMS_SHAPE a shape inside a
 * list.  R_TYPES: args' "Input type", one name per input. */
typedef enum {
    R_SKIP = 0, R_TOP, R_EVENTS, R_EVENT, R_ARGS, R_DIST, R_DIMS, R_DIMS_ENTRY, R_DIMS_SHAPE, R_TYPES
} role;

typedef enum {
    K_NONE = 0,
    /* event */
    K_NAME, K_PH, K_CAT, K_TS, K_DUR, K_PID, K_TID, K_ARGS,
    /* args */
    K_CORRELATION, K_DEVICE, K_STREAM, K_BYTES, K_COLL_NAME, K_IN_NELEMS, K_DTYPE, K_PG_NAME, K_SEQ,
    K_INPUT_DIMS, K_INPUT_TYPE,
    /* top */
    K_TRACE_EVENTS, K_DIST_INFO, K_BASE_TIME,
    /* distributedInfo */
    K_RANK, K_WORLD, K_PG_COUNT,
} key_id;

typedef struct {
    bool set;
    int64_t v;
} opt_i64;

/* The inputs a record_function saw (record_shapes=True): per input, its elements (the
 * product of its shape, summed over a tensor list's shapes) and its element size. */
#define MAX_INPUTS 16
typedef struct {
    int n, ntypes;
    int64_t elems[MAX_INPUTS];
    int elem_bytes[MAX_INPUTS]; /* 0: not a tensor type we know */
    int64_t shape;              /* the product of the shape being read */
    bool shape_has_dim, overflow;
} input_shapes;

typedef struct {
    char *name;
    size_t name_len, name_cap;
    input_shapes in;
    bool has_name;
    char ph[8], cat[32], coll[SHORT], pg[SHORT], dtype[32];
    bool has_ts, has_coll, has_pg, has_dtype;
    int64_t ts_ns;
    opt_i64 dur_ns, pid, tid, correlation, device, stream, bytes, nelems, seq;
} event_fields;

typedef struct {
    trace_rank *r;
    const char *path;
    uint8_t roles[MAX_DEPTH];
    int depth;          /* open containers */
    key_id key;         /* the key whose value comes next, in the innermost map */
    bool top_seen;
    bool has_events;    /* a traceEvents list, or the list form */
    event_fields ev;
    long long line;     /* of the piece being parsed */
    int64_t piece_off;  /* its first byte's offset */
    bool multiline;
    char msg[512];      /* a callback's reason to stop */
    char err_extra[64];
} parser;

/* ---- messages ------------------------------------------------------------------------ */

static int stop(parser *p, const char *fmt, const char *what)
{
    char m[400];
    snprintf(m, sizeof m, fmt, what);
    if (p->multiline || p->line > 1)
        snprintf(p->msg, sizeof p->msg, "%s:%lld: %s", p->path, p->line, m);
    else
        snprintf(p->msg, sizeof p->msg, "%s: byte %lld: %s", p->path, (long long)p->piece_off, m);
    return 0;
}

/* ---- numbers ------------------------------------------------------------------------- */

/* A JSON number (or a numeric string) of microseconds as integer ns: the digits are
 * read exactly (a 16-digit µs value with decimals is past a double's precision); an
 * exponent, which no profiler writes, goes through long double. */
static bool us_to_ns(const char *s, size_t n, int64_t *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (strpbrk(buf, "eE")) {
        char *end;
        errno = 0;
        long double v = strtold(buf, &end);
        if (*end || errno || !(v * 1000.0L > -9.2e18L && v * 1000.0L < 9.2e18L))
            return false;
        long double ns = v * 1000.0L;
        *out = (int64_t)(ns < 0 ? ns - 0.5L : ns + 0.5L);
        return true;
    }
    size_t i = 0;
    bool neg = false;
    if (buf[i] == '-' || buf[i] == '+')
        neg = buf[i++] == '-';
    int64_t whole = 0;
    size_t digits = 0;
    for (; buf[i] >= '0' && buf[i] <= '9'; i++, digits++) {
        if (whole > (INT64_MAX / 1000 - 9) / 10)
            return false;
        whole = whole * 10 + (buf[i] - '0');
    }
    int64_t frac = 0;
    int fd = 0;
    bool round_up = false;
    if (buf[i] == '.') {
        i++;
        for (; buf[i] >= '0' && buf[i] <= '9'; i++, digits++) {
            if (fd < 3)
                frac = frac * 10 + (buf[i] - '0'), fd++;
            else if (fd == 3)
                round_up = buf[i] >= '5', fd++;
        }
    }
    if (buf[i] != '\0' || digits == 0)
        return false;
    while (fd < 3)
        frac *= 10, fd++;
    int64_t ns = whole * 1000 + frac + (round_up ? 1 : 0);
    *out = neg ? -ns : ns;
    return true;
}

static bool parse_i64(const char *s, size_t n, int64_t *out)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (*end == '.') { /* 3.0: an integer written as a float */
        char *e2;
        double d = strtod(buf, &e2);
        /* In range first: converting a double beyond int64 is undefined. */
        if (*e2 || !(d >= -9.2e18 && d <= 9.2e18) || d != (double)(long long)d)
            return false;
        v = (long long)d;
    } else if (*end || errno) {
        return false;
    }
    *out = v;
    return true;
}

/* ---- keys ---------------------------------------------------------------------------- */

static bool key_is(const unsigned char *k, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(k, want, n) == 0;
}

static key_id event_key(const unsigned char *k, size_t n)
{
    static const struct { const char *s; key_id id; } keys[] = {
        {"name", K_NAME}, {"ph", K_PH}, {"cat", K_CAT}, {"ts", K_TS}, {"dur", K_DUR},
        {"pid", K_PID},   {"tid", K_TID}, {"args", K_ARGS}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (key_is(k, n, keys[i].s))
            return keys[i].id;
    return K_NONE;
}

static key_id args_key(const unsigned char *k, size_t n)
{
    static const struct { const char *s; key_id id; } keys[] = {
        {"correlation", K_CORRELATION}, {"device", K_DEVICE}, {"stream", K_STREAM},
        {"bytes", K_BYTES}, {"Collective name", K_COLL_NAME}, {"In msg nelems", K_IN_NELEMS},
        {"In msg size", K_IN_NELEMS}, {"dtype", K_DTYPE}, {"Process Group Name", K_PG_NAME},
        {"Seq", K_SEQ}, {"Input Dims", K_INPUT_DIMS}, {"Input type", K_INPUT_TYPE}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (key_is(k, n, keys[i].s))
            return keys[i].id;
    return K_NONE;
}

/* ---- the event record ------------------------------------------------------------------ */

static void reset_event(event_fields *e)
{
    char *name = e->name;
    size_t cap = e->name_cap;
    memset(e, 0, sizeof *e);
    e->name = name;
    e->name_cap = cap;
}

static int set_name(parser *p, const unsigned char *s, size_t n)
{
    event_fields *e = &p->ev;
    if (n + 1 > e->name_cap) {
        size_t cap = n + 1 > 256 ? n + 1 : 256;
        char *grown = realloc(e->name, cap);
        if (!grown)
            return stop(p, "%s", "out of memory");
        e->name = grown;
        e->name_cap = cap;
    }
    memcpy(e->name, s, n);
    e->name[n] = '\0';
    e->name_len = n;
    e->has_name = true;
    return 1;
}

static void copy_short(char *dst, size_t cap, const unsigned char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Bytes per element of PyTorch's dtype names: record_param_comms's `dtype` (ScalarType
 * names: "Float", "BFloat16") and a record_function's `Input type` (TypeMeta names:
 * "float", "c10::BFloat16", "long int", "signed char").  0: not a tensor type known. */
static int dtype_size(const char *d)
{
    static const struct { const char *s; int n; } t[] = {
        {"Float", 4}, {"float", 4}, {"float32", 4}, {"Half", 2}, {"BFloat16", 2}, {"Double", 8},
        {"double", 8}, {"Long", 8}, {"long", 8}, {"long int", 8}, {"int64_t", 8}, {"Int", 4},
        {"int", 4}, {"Short", 2}, {"short", 2}, {"short int", 2}, {"Byte", 1}, {"unsigned char", 1},
        {"Char", 1}, {"signed char", 1}, {"Bool", 1}, {"bool", 1}, {"ComplexFloat", 8},
        {"complex<float>", 8}, {"ComplexDouble", 16}, {"complex<double>", 16}, {"Float8_e4m3fn", 1},
        {"Float8_e5m2", 1}, {"Float8_e4m3fnuz", 1}, {"Float8_e5m2fnuz", 1}};
    if (!strncmp(d, "c10::", 5))
        d += 5;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(d, t[i].s))
            return t[i].n;
    return 0;
}

/* A collective's annotation, which c10d records around the call with the call's
 * inputs: "nccl:all_reduce", "gloo:all_reduce" (ProcessGroup's profiling title). */
static bool is_collective_annotation(const char *name)
{
    return !strncmp(name, "nccl:", 5) || !strncmp(name, "gloo:", 5) || !strncmp(name, "xccl:", 5) ||
           !strncmp(name, "mpi:", 4) || !strncmp(name, "ucc:", 4);
}

/* The bytes of a record_function's inputs, from their shapes and types, or -1 when an
 * input with elements has a type of unknown size (or the shapes were too many). */
static int64_t input_bytes(const input_shapes *in)
{
    if (in->overflow || in->n == 0)
        return -1;
    int64_t bytes = 0;
    bool any = false;
    for (int i = 0; i < in->n; i++) {
        if (in->elems[i] <= 0)
            continue; /* not a tensor (an int, a list of scalars), or an empty one */
        if (i >= in->ntypes || in->elem_bytes[i] <= 0 || in->elems[i] > INT64_MAX / 16 - bytes)
            return -1;
        bytes += in->elems[i] * in->elem_bytes[i];
        any = true;
    }
    return any ? bytes : -1;
}

static int type_of(const char *cat, bool has_cat)
{
    if (!has_cat || !cat[0])
        return TEV_CPU; /* the list form's ops have no category */
    char c[32];
    size_t i = 0;
    for (; cat[i] && i < sizeof c - 1; i++)
        c[i] = (char)tolower((unsigned char)cat[i]);
    c[i] = '\0';
    if (!strcmp(c, "kernel"))
        return TEV_KERNEL;
    if (!strcmp(c, "gpu_memcpy") || !strcmp(c, "memcpy"))
        return TEV_MEMCPY;
    if (!strcmp(c, "gpu_memset") || !strcmp(c, "memset"))
        return TEV_MEMSET;
    if (!strcmp(c, "cuda_runtime") || !strcmp(c, "runtime") || !strcmp(c, "cuda_driver"))
        return TEV_RUNTIME;
    if (!strcmp(c, "cpu_op") || !strcmp(c, "operator") || !strcmp(c, "user_annotation"))
        return TEV_CPU;
    return -1;
}

static int finish_event(parser *p)
{
    event_fields *e = &p->ev;
    if (strcmp(e->ph, "X") != 0)
        return 1; /* metadata, flows, instants, counters */
    int type = type_of(e->cat, e->cat[0] != '\0');
    if (type < 0)
        return 1;
    if (!e->has_ts)
        return stop(p, "%s", "a complete event (\"ph\": \"X\") without \"ts\"");
    if (e->dur_ns.set && e->dur_ns.v < 0)
        return stop(p, "%s", "an event with a negative \"dur\"");
    if (!e->has_name)
        return stop(p, "%s", "an event without \"name\"");
    trace_rank *r = p->r;
    tev_in t = {.ts_ns = e->ts_ns,
             .dur_ns = e->dur_ns.set ? e->dur_ns.v : 0,
             .tid = e->tid.set ? e->tid.v : 0,
             .correlation = e->correlation.set ? e->correlation.v : -1,
             .bytes = -1,
             .seq = e->seq.set ? e->seq.v : -1,
             .pg = -1,
             .coll = -1,
             .device = -1,
             .type = (uint8_t)type,
             .kind = -1};
    if (type == TEV_KERNEL || type == TEV_MEMCPY || type == TEV_MEMSET) {
        /* A device event's pid is the GPU and its tid the stream; args say both too. */
        t.device = (int32_t)(e->device.set ? e->device.v : e->pid.set ? e->pid.v : 0);
        if (e->stream.set)
            t.tid = e->stream.v;
    }
    if ((type == TEV_MEMCPY || type == TEV_MEMSET) && e->bytes.set)
        t.bytes = e->bytes.v;
    if (e->nelems.set && e->has_dtype && dtype_size(e->dtype) > 0 && e->nelems.v >= 0 &&
        e->nelems.v <= INT64_MAX / 16)
        t.bytes = e->nelems.v * dtype_size(e->dtype);
    bool annotation = type == TEV_CPU && is_collective_annotation(e->name);
    if (annotation && t.bytes < 0)
        t.bytes = input_bytes(&e->in); /* record_shapes=True's Input Dims x Input type */
    if ((t.name = trace_rank_name(r, e->name, e->name_len)) < 0 ||
        (e->has_pg && (t.pg = trace_rank_name(r, e->pg, strlen(e->pg))) < 0) ||
        (e->has_coll && (t.coll = trace_rank_name(r, e->coll, strlen(e->coll))) < 0))
        return stop(p, "%s", "out of memory");
    /* The annotation names its op ("nccl:all_to_all"), where a kernel may not
     * (ncclDevKernel_Generic; all_to_all runs as SendRecv kernels). */
    if (annotation && !e->has_coll) {
        const char *op = strchr(e->name, ':') + 1;
        if ((t.coll = trace_rank_name(r, op, strlen(op))) < 0)
            return stop(p, "%s", "out of memory");
    }
    char why[400];
    if (trace_rank_push(r, &t, why, sizeof why) < 0)
        return stop(p, "%s", why);
    return 1;
}

/* ---- callbacks ------------------------------------------------------------------------- */

static role current(const parser *p)
{
    return p->depth > 0 ? (role)p->roles[p->depth - 1] : R_SKIP;
}

/* The role of a container opening as the value of the current key. */
static role child_role(parser *p, bool is_map)
{
    if (p->depth == 0) {
        if (p->top_seen)
            return R_SKIP;
        p->top_seen = true;
        if (is_map)
            return R_TOP;
        /* The list form: the array is the event list. */
        p->has_events = true;
        p->r->format = "pytorch-legacy-json";
        return R_EVENTS;
    }
    switch (current(p)) {
    case R_TOP:
        if (p->key == K_TRACE_EVENTS && !is_map) {
            p->has_events = true;
            return R_EVENTS;
        }
        if (p->key == K_DIST_INFO && is_map)
            return R_DIST;
        return R_SKIP;
    case R_EVENTS:
        if (is_map) {
            reset_event(&p->ev);
            return R_EVENT;
        }
        return R_SKIP;
    case R_EVENT:
        return p->key == K_ARGS && is_map ? R_ARGS : R_SKIP;
    case R_ARGS:
        if (is_map)
            return R_SKIP;
        if (p->key == K_INPUT_DIMS) {
            p->ev.in.n = 0;
            return R_DIMS;
        }
        if (p->key == K_INPUT_TYPE) {
            p->ev.in.ntypes = 0;
            return R_TYPES;
        }
        return R_SKIP;
    case R_DIMS:
        if (is_map)
            return R_SKIP;
        if (p->ev.in.n == MAX_INPUTS) {
            p->ev.in.overflow = true;
            return R_SKIP;
        }
        p->ev.in.elems[p->ev.in.n++] = 0;
        p->ev.in.shape = 1;
        p->ev.in.shape_has_dim = false;
        return R_DIMS_ENTRY;
    case R_DIMS_ENTRY:
        if (is_map)
            return R_SKIP;
        p->ev.in.shape = 1;
        p->ev.in.shape_has_dim = false;
        return R_DIMS_SHAPE;
    default:
        return R_SKIP;
    }
}

/* A shape's product, once its list closes, added to its input's elements. */
static void close_shape(input_shapes *in)
{
    if (in->shape_has_dim && in->n > 0 && in->shape >= 0 && in->elems[in->n - 1] <= INT64_MAX - in->shape)
        in->elems[in->n - 1] += in->shape;
    in->shape = 1;
    in->shape_has_dim = false;
}

/* One dimension of the shape being read; false when it is not a size. */
static bool shape_dim(input_shapes *in, const char *s, size_t n)
{
    int64_t v;
    if (!parse_i64(s, n, &v) || v < 0)
        return false;
    if (v > 0 && in->shape > INT64_MAX / v) {
        in->overflow = true;
        return true;
    }
    in->shape *= v;
    in->shape_has_dim = true;
    return true;
}

static int open_container(parser *p, bool is_map)
{
    if (p->depth == MAX_DEPTH)
        return stop(p, "%s", "JSON nested too deeply to be a trace");
    role r = child_role(p, is_map);
    p->roles[p->depth++] = (uint8_t)r;
    p->key = K_NONE;
    return 1;
}

static int close_container(parser *p)
{
    role r = current(p);
    p->depth--;
    p->key = K_NONE;
    if (r == R_EVENT)
        return finish_event(p);
    if (r == R_DIMS_ENTRY || r == R_DIMS_SHAPE)
        close_shape(&p->ev.in);
    return 1;
}

static int cb_start_map(void *ctx) { return open_container(ctx, true); }
static int cb_start_array(void *ctx) { return open_container(ctx, false); }
static int cb_end(void *ctx) { return close_container(ctx); }

static int cb_map_key(void *ctx, const unsigned char *k, size_t n)
{
    parser *p = ctx;
    switch (current(p)) {
    case R_TOP:
        p->key = key_is(k, n, "traceEvents") ? K_TRACE_EVENTS
                 : key_is(k, n, "distributedInfo") ? K_DIST_INFO
                 : key_is(k, n, "baseTimeNanoseconds") ? K_BASE_TIME
                                                        : K_NONE;
        break;
    case R_EVENT:
        p->key = event_key(k, n);
        break;
    case R_ARGS:
        p->key = args_key(k, n);
        break;
    case R_DIST:
        p->key = key_is(k, n, "rank")         ? K_RANK
                 : key_is(k, n, "world_size") ? K_WORLD
                 : key_is(k, n, "pg_count")   ? K_PG_COUNT
                                              : K_NONE;
        break;
    default:
        p->key = K_NONE;
    }
    return 1;
}

/* A pid or tid: a number, or a name ("CPU functions", "stream 7 "): its last number,
 * else an id of its text (negative, below -1).  1, or stop()'s 0 when out of memory. */
static int id_value(parser *p, const char *s, size_t n, int64_t *v)
{
    if (parse_i64(s, n, v))
        return 1;
    *v = 0;
    size_t i = n;
    while (i > 0 && !isdigit((unsigned char)s[i - 1]))
        i--;
    size_t j = i;
    while (j > 0 && isdigit((unsigned char)s[j - 1]))
        j--;
    if (j < i && i - j < 15) {
        for (size_t q = j; q < i; q++)
            *v = *v * 10 + (s[q] - '0');
        return 1;
    }
    int32_t id = trace_rank_name(p->r, s, n);
    if (id < 0)
        return stop(p, "%s", "out of memory");
    *v = -2 - (int64_t)id;
    return 1;
}

/* A scalar of an event's own fields (name, ph, cat, ts, dur, pid, tid). */
static int event_scalar(parser *p, key_id k, const char *s, size_t n, bool is_number)
{
    event_fields *e = &p->ev;
    int64_t v;
    switch (k) {
    case K_NAME:
        if (is_number)
            return 1;
        return set_name(p, (const unsigned char *)s, n);
    case K_PH:
        if (!is_number)
            copy_short(e->ph, sizeof e->ph, (const unsigned char *)s, n);
        return 1;
    case K_CAT:
        if (!is_number)
            copy_short(e->cat, sizeof e->cat, (const unsigned char *)s, n);
        return 1;
    case K_TS:
        if (!us_to_ns(s, n, &e->ts_ns))
            return stop(p, "%s", "\"ts\" is not a number of microseconds");
        e->has_ts = true;
        return 1;
    case K_DUR:
        if (!us_to_ns(s, n, &v))
            return stop(p, "%s", "\"dur\" is not a number of microseconds");
        e->dur_ns = (opt_i64){true, v};
        return 1;
    case K_PID:
    case K_TID:
        if (!id_value(p, s, n, &v))
            return 0;
        if (k == K_PID)
            e->pid = (opt_i64){true, v};
        else
            e->tid = (opt_i64){true, v};
        return 1;
    default:
        return 1;
    }
}

/* A scalar of an event's args: the integers read, and the collective's names. */
static int args_scalar(parser *p, key_id k, const char *s, size_t n, bool is_number)
{
    event_fields *e = &p->ev;
    opt_i64 *slot = k == K_CORRELATION ? &e->correlation
                    : k == K_DEVICE    ? &e->device
                    : k == K_STREAM    ? &e->stream
                    : k == K_BYTES     ? &e->bytes
                    : k == K_IN_NELEMS ? &e->nelems
                    : k == K_SEQ       ? &e->seq
                                       : NULL;
    if (slot) {
        int64_t v;
        if (parse_i64(s, n, &v))
            *slot = (opt_i64){true, v};
        return 1;
    }
    if (is_number)
        return 1;
    if (k == K_COLL_NAME) {
        copy_short(e->coll, sizeof e->coll, (const unsigned char *)s, n);
        e->has_coll = true;
    } else if (k == K_PG_NAME) {
        copy_short(e->pg, sizeof e->pg, (const unsigned char *)s, n);
        e->has_pg = true;
    } else if (k == K_DTYPE) {
        copy_short(e->dtype, sizeof e->dtype, (const unsigned char *)s, n);
        e->has_dtype = true;
    }
    return 1;
}

/* A scalar of distributedInfo: the rank, the world size, the process groups' count. */
static int dist_scalar(parser *p, key_id k, const char *s, size_t n)
{
    int64_t v;
    if (k == K_PG_COUNT) {
        if (parse_i64(s, n, &v) && v >= 0 && v <= 1000000)
            p->r->pg_count = (int)v;
        return 1;
    }
    if (k != K_RANK && k != K_WORLD)
        return 1;
    if (!parse_i64(s, n, &v) || v < 0 || v > 1000000)
        return stop(p, "%s", k == K_RANK ? "distributedInfo.rank is not a rank number"
                                         : "distributedInfo.world_size is not a number of ranks");
    if (k == K_RANK) {
        p->r->rank = (int)v;
        p->r->rank_from = "distributedInfo";
    } else {
        p->r->world_size = (int)v;
    }
    return 1;
}

/* A scalar: a number's text (is_number) or a string's bytes. */
static int scalar(parser *p, const char *s, size_t n, bool is_number)
{
    role r = current(p);
    key_id k = p->key;
    p->key = K_NONE;
    event_fields *e = &p->ev;
    int64_t v;
    if (r == R_EVENT)
        return event_scalar(p, k, s, n, is_number);
    if (r == R_ARGS)
        return args_scalar(p, k, s, n, is_number);
    if (r == R_DIMS_ENTRY || r == R_DIMS_SHAPE) {
        if (!is_number || !shape_dim(&e->in, s, n))
            e->in.overflow = true; /* not a shape: the inputs' size is not known */
        return 1;
    }
    if (r == R_TYPES) {
        if (e->in.ntypes < MAX_INPUTS) {
            char name[48];
            copy_short(name, sizeof name, (const unsigned char *)s, is_number ? 0 : n);
            e->in.elem_bytes[e->in.ntypes++] = dtype_size(name);
        }
        return 1;
    }
    if (r == R_TOP && k == K_BASE_TIME) {
        if (!parse_i64(s, n, &v) || v < 0)
            return stop(p, "%s", "\"baseTimeNanoseconds\" is not a non-negative integer");
        p->r->base_ns = v;
        p->r->abs_clock = true;
        return 1;
    }
    if (r == R_DIST)
        return dist_scalar(p, k, s, n);
    if (p->depth == 0 && !p->top_seen) {
        p->top_seen = true;
        return stop(p, "%s", "not a trace: a lone JSON value, not an object or a list of events");
    }
    return 1;
}

static int cb_number(void *ctx, const char *s, size_t n) { return scalar(ctx, s, n, true); }
static int cb_string(void *ctx, const unsigned char *s, size_t n) { return scalar(ctx, (const char *)s, n, false); }
static int cb_null(void *ctx) { ((parser *)ctx)->key = K_NONE; return 1; }
static int cb_bool(void *ctx, int b) { (void)b; ((parser *)ctx)->key = K_NONE; return 1; }

static const yajl_callbacks CALLBACKS = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_bool,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end,
};

/* ---- driving yajl --------------------------------------------------------------------- */

/* yajl's own complaint, made plain: the first line of its message, where it is. */
static void syntax_error(parser *p, yajl_handle h, const unsigned char *piece, size_t len, bool at_end)
{
    size_t used = at_end ? len : yajl_get_bytes_consumed(h);
    if (used > len)
        used = len;
    long long line = p->line;
    for (size_t i = 0; i < used; i++)
        line += piece[i] == '\n';
    unsigned char *m = yajl_get_error(h, 0, NULL, 0);
    char what[200];
    snprintf(what, sizeof what, "%s", m ? (const char *)m : "parse error");
    if (m)
        yajl_free_error(h, m);
    for (char *c = what; *c; c++)
        if (*c == '\n') {
            *c = '\0';
            break;
        }
    if (at_end)
        snprintf(p->msg, sizeof p->msg,
                 "%s:%lld: truncated JSON: the text ends inside %s (%s)", p->path, line,
                 p->depth > 0 ? "an unclosed list or object" : "a value", what);
    else if (p->multiline || line > 1)
        snprintf(p->msg, sizeof p->msg, "%s:%lld: invalid JSON (%s)", p->path, line, what);
    else
        snprintf(p->msg, sizeof p->msg, "%s: byte %lld: invalid JSON (%s)", p->path,
                 (long long)(p->piece_off + (int64_t)used), what);
}

int kineto_json_read(source_input *in, trace_rank *out, char *err, size_t errlen)
{
    parser *p = calloc(1, sizeof *p);
    char *buf = malloc(READ_CHUNK);
    yajl_handle h = p ? yajl_alloc(&CALLBACKS, NULL, p) : NULL;
    int ret = -1;
    if (!p || !buf || !h) {
        set_err(err, errlen, "out of memory");
        goto out;
    }
    p->r = out;
    p->path = out->path;
    p->line = 1;
    if (!out->format)
        out->format = "kineto-json";
    /* Names are not checked for UTF-8: a trace's kernel names are whatever the
     * compiler mangled, and they are stored as they are. */
    yajl_config(h, yajl_dont_validate_strings, 1);
    bool first = true;
    for (;;) {
        long got = source_read(in, buf, READ_CHUNK, err, errlen);
        if (got < 0)
            goto out;
        if (got == 0)
            break;
        if (first) {
            size_t i = 0;
            while (i < (size_t)got && isspace((unsigned char)buf[i]))
                i++;
            if (i < (size_t)got && buf[i] != '{' && buf[i] != '[') {
                set_err(err, errlen,
                        "%s: not a trace: a PyTorch profiler trace is JSON (an object with"
                        " \"traceEvents\", or a list of events), an Nsight Systems one an SQLite"
                        " export (nsys export --type sqlite)",
                        out->path);
                goto out;
            }
            if (i < (size_t)got)
                first = false;
        }
        /* Pieces end after a newline or at PIECE bytes. */
        const unsigned char *b = (const unsigned char *)buf;
        size_t off = 0;
        while (off < (size_t)got) {
            size_t len = 0;
            while (off + len < (size_t)got && len < PIECE)
                if (b[off + len++] == '\n')
                    break;
            yajl_status st = yajl_parse(h, b + off, len);
            if (st == yajl_status_client_canceled) {
                set_err(err, errlen, "%s", p->msg);
                goto out;
            }
            if (st == yajl_status_error) {
                syntax_error(p, h, b + off, len, false);
                set_err(err, errlen, "%s", p->msg);
                goto out;
            }
            for (size_t i = 0; i < len; i++)
                if (b[off + i] == '\n') {
                    p->line++;
                    p->multiline = true;
                }
            p->piece_off += (int64_t)len;
            off += len;
        }
    }
    if (first) {
        set_err(err, errlen, "%s: empty: not a trace", out->path);
        goto out;
    }
    yajl_status st = yajl_complete_parse(h);
    if (st == yajl_status_client_canceled) {
        set_err(err, errlen, "%s", p->msg);
        goto out;
    }
    if (st == yajl_status_error) {
        syntax_error(p, h, (const unsigned char *)"", 0, true);
        set_err(err, errlen, "%s", p->msg);
        goto out;
    }
    if (!p->has_events) {
        set_err(err, errlen, "%s: not a PyTorch profiler trace: a JSON object without \"traceEvents\"",
                out->path);
        goto out;
    }
    ret = 0;
out:
    if (h)
        yajl_free(h);
    if (p)
        free(p->ev.name);
    free(p);
    free(buf);
    return ret;
}
