/* launch_env.c — see launch_env.h. */
#include "engine/launch/launch_env.h"

#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"

const char *launch_env_getenv(void *user, const char *name)
{
    (void)user;
    return getenv(name);
}

const char *launch_kind_name(launch_kind k)
{
    switch (k) {
    case LAUNCH_NONE: return "none";
    case LAUNCH_TORCHRUN: return "torchrun";
    case LAUNCH_SLURM: return "slurm";
    case LAUNCH_MPI: return "mpi";
    }
    return "?";
}

typedef struct {
    launch_getenv_fn fn;
    void *user;
} env_src;

static const char *env_get(const env_src *e, const char *name)
{
    return e->fn(e->user, name);
}

/* Plain decimal digits only: "+3", " 3", "3 " and "0x3" are all someone's mistake. */
static bool parse_uint(const char *s, long long max, long long *out)
{
    if (!s || !*s)
        return false;
    long long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
        if (v > max)
            return false;
    }
    *out = v;
    return true;
}

static int get_int(const env_src *e, const char *name, int *out, char *err, size_t errlen)
{
    const char *v = env_get(e, name);
    if (!v) {
        set_err(err, errlen, "%s is not set", name);
        return -1;
    }
    long long x;
    if (!parse_uint(v, INT_MAX, &x)) {
        set_err(err, errlen, "%s='%s' is not a non-negative integer (at most %d)", name, v, INT_MAX);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int get_port(const env_src *e, const char *name, int *out, char *err, size_t errlen)
{
    const char *v = env_get(e, name);
    long long x;
    if (!v || !parse_uint(v, 65535, &x) || x < 1) {
        set_err(err, errlen, "%s='%s' is not a TCP port (1..65535)", name, v ? v : "");
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int set_addr(launch_env *out, const char *name, const char *v, char *err, size_t errlen)
{
    size_t n = strlen(v);
    if (n == 0 || n >= sizeof out->master_addr) {
        set_err(err, errlen, "%s='%.64s%s' is not a host name or address (1..%zu characters)", name,
                v, n > 64 ? "..." : "", sizeof out->master_addr - 1);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (isspace((unsigned char)v[i]) || iscntrl((unsigned char)v[i])) {
            set_err(err, errlen, "%s='%s' is not a host name or address (it contains a space)",
                    name, v);
            return -1;
        }
    }
    memcpy(out->master_addr, v, n + 1);
    return 0;
}

/* Checks shared by every launcher, once all four numbers are read. */
static int check_ranks(const launch_env *o, char *err, size_t errlen)
{
    if (o->world_size < 1) {
        set_err(err, errlen, "%s=%d: the world needs at least one rank", o->world_var, o->world_size);
        return -1;
    }
    if (o->rank >= o->world_size) {
        set_err(err, errlen, "%s=%d is not below %s=%d", o->rank_var, o->rank, o->world_var,
                o->world_size);
        return -1;
    }
    if (o->local_world_size < 1) {
        set_err(err, errlen, "%s=%d: a node needs at least one rank", o->local_world_var,
                o->local_world_size);
        return -1;
    }
    if (o->local_rank >= o->local_world_size) {
        set_err(err, errlen, "%s=%d is not below %s=%d", o->local_rank_var, o->local_rank,
                o->local_world_var, o->local_world_size);
        return -1;
    }
    if (o->local_world_size > o->world_size) {
        set_err(err, errlen, "%s=%d is larger than %s=%d", o->local_world_var, o->local_world_size,
                o->world_var, o->world_size);
        return -1;
    }
    return 0;
}

static int detect_torchrun(const env_src *e, launch_env *o, char *err, size_t errlen)
{
    o->kind = LAUNCH_TORCHRUN;
    o->rank_var = "RANK";
    o->world_var = "WORLD_SIZE";
    if (get_int(e, "RANK", &o->rank, err, errlen) || get_int(e, "WORLD_SIZE", &o->world_size, err, errlen))
        return -1;
    bool has_lr = env_get(e, "LOCAL_RANK") != NULL, has_lw = env_get(e, "LOCAL_WORLD_SIZE") != NULL;
    if (has_lr != has_lw) {
        set_err(err, errlen, "%s is set but %s is not", has_lr ? "LOCAL_RANK" : "LOCAL_WORLD_SIZE",
                has_lr ? "LOCAL_WORLD_SIZE" : "LOCAL_RANK");
        return -1;
    }
    if (has_lr) {
        o->local_rank_var = "LOCAL_RANK";
        o->local_world_var = "LOCAL_WORLD_SIZE";
        if (get_int(e, "LOCAL_RANK", &o->local_rank, err, errlen) ||
            get_int(e, "LOCAL_WORLD_SIZE", &o->local_world_size, err, errlen))
            return -1;
    } else {
        o->local_rank_var = "RANK";
        o->local_world_var = "WORLD_SIZE";
        o->local_rank = o->rank;
        o->local_world_size = o->world_size;
    }
    if (check_ranks(o, err, errlen))
        return -1;
    const char *addr = env_get(e, "MASTER_ADDR");
    if (!addr) {
        set_err(err, errlen, "RANK is set (torchrun) but MASTER_ADDR is not");
        return -1;
    }
    o->addr_var = "MASTER_ADDR";
    o->port_var = "MASTER_PORT";
    if (set_addr(o, "MASTER_ADDR", addr, err, errlen))
        return -1;
    if (!env_get(e, "MASTER_PORT")) {
        set_err(err, errlen, "RANK is set (torchrun) but MASTER_PORT is not");
        return -1;
    }
    return get_port(e, "MASTER_PORT", &o->master_port, err, errlen);
}

/* MASTER_ADDR into o when the environment gives it: 1 when it did, 0 when it is not set,
 * -1 with err when its value is not an address; used by mpirun and srun, which fall back
 * on their own defaults. */
static int given_master_addr(const env_src *e, launch_env *o, char *err, size_t errlen)
{
    const char *addr = env_get(e, "MASTER_ADDR");
    if (!addr)
        return 0;
    o->addr_var = "MASTER_ADDR";
    return set_addr(o, "MASTER_ADDR", addr, err, errlen) ? -1 : 1;
}

/* MASTER_ADDR / MASTER_PORT when given, else the defaults; used by mpirun and srun. */
static int optional_master_port(const env_src *e, launch_env *o, char *err, size_t errlen)
{
    if (env_get(e, "MASTER_PORT")) {
        o->port_var = "MASTER_PORT";
        return get_port(e, "MASTER_PORT", &o->master_port, err, errlen);
    }
    o->port_var = "default";
    o->master_port = LAUNCH_DEFAULT_PORT;
    return 0;
}

static int detect_mpi(const env_src *e, launch_env *o, char *err, size_t errlen)
{
    o->kind = LAUNCH_MPI;
    o->rank_var = "OMPI_COMM_WORLD_RANK";
    o->world_var = "OMPI_COMM_WORLD_SIZE";
    o->local_rank_var = "OMPI_COMM_WORLD_LOCAL_RANK";
    o->local_world_var = "OMPI_COMM_WORLD_LOCAL_SIZE";
    if (get_int(e, o->rank_var, &o->rank, err, errlen) ||
        get_int(e, o->world_var, &o->world_size, err, errlen) ||
        get_int(e, o->local_rank_var, &o->local_rank, err, errlen) ||
        get_int(e, o->local_world_var, &o->local_world_size, err, errlen) || check_ranks(o, err, errlen))
        return -1;
    int given = given_master_addr(e, o, err, errlen);
    if (given < 0)
        return -1;
    if (!given) {
        o->addr_var = "default";
        memcpy(o->master_addr, "127.0.0.1", sizeof "127.0.0.1");
    }
    return optional_master_port(e, o, err, errlen);
}

/* One entry of SLURM_TASKS_PER_NODE: "4" or "4(x2)".  *p is advanced past it. */
static bool tasks_entry(const char **p, long long *count, long long *reps)
{
    const char *s = *p;
    char digits[16];
    size_t n = 0;
    while (*s >= '0' && *s <= '9' && n < sizeof digits - 1)
        digits[n++] = *s++;
    digits[n] = '\0';
    if (!parse_uint(digits, INT_MAX, count))
        return false;
    *reps = 1;
    if (*s == '(') {
        if (s[1] != 'x')
            return false;
        s += 2;
        n = 0;
        while (*s >= '0' && *s <= '9' && n < sizeof digits - 1)
            digits[n++] = *s++;
        digits[n] = '\0';
        if (!parse_uint(digits, INT_MAX, reps) || *reps < 1 || *s != ')')
            return false;
        s++;
    }
    if ((*s != ',' && *s != '\0') || (*s == ',' && s[1] == '\0'))
        return false;
    *p = *s == ',' ? s + 1 : s;
    return true;
}

static int slurm_local_size(const env_src *e, launch_env *o, char *err, size_t errlen)
{
    if (env_get(e, "SLURM_NTASKS_PER_NODE")) {
        o->local_world_var = "SLURM_NTASKS_PER_NODE";
        return get_int(e, "SLURM_NTASKS_PER_NODE", &o->local_world_size, err, errlen);
    }
    const char *tpn = env_get(e, "SLURM_TASKS_PER_NODE");
    if (!tpn) {
        set_err(err, errlen, "SLURM_PROCID is set (srun) but neither SLURM_NTASKS_PER_NODE nor "
                             "SLURM_TASKS_PER_NODE is");
        return -1;
    }
    o->local_world_var = "SLURM_TASKS_PER_NODE";
    const char *nodeid_s = env_get(e, "SLURM_NODEID");
    int nodeid = -1;
    if (nodeid_s && get_int(e, "SLURM_NODEID", &nodeid, err, errlen))
        return -1;
    long long first = -1, found = -1, node = 0;
    bool uniform = true;
    const char *p = tpn;
    if (!*p)
        goto bad;
    while (*p) {
        long long count, reps;
        if (!tasks_entry(&p, &count, &reps))
            goto bad;
        if (first < 0)
            first = count;
        uniform = uniform && count == first;
        if (found < 0 && nodeid >= 0 && nodeid < node + reps)
            found = count;
        node += reps;
        if (node > INT_MAX)
            goto bad;
    }
    if (nodeid >= 0) {
        if (found < 0) {
            set_err(err, errlen, "SLURM_NODEID=%d is beyond the %lld nodes of SLURM_TASKS_PER_NODE='%s'",
                    nodeid, node, tpn);
            return -1;
        }
        o->local_world_size = (int)found;
        return 0;
    }
    if (!uniform) {
        set_err(err, errlen, "SLURM_TASKS_PER_NODE='%s' differs between nodes and SLURM_NODEID is "
                             "not set to pick this node's", tpn);
        return -1;
    }
    o->local_world_size = (int)first;
    return 0;
bad:
    set_err(err, errlen, "SLURM_TASKS_PER_NODE='%s' is not a Slurm task count list like '4(x2),3'", tpn);
    return -1;
}

static int detect_slurm(const env_src *e, launch_env *o, char *err, size_t errlen)
{
    o->kind = LAUNCH_SLURM;
    o->rank_var = "SLURM_PROCID";
    o->world_var = "SLURM_NTASKS";
    o->local_rank_var = "SLURM_LOCALID";
    if (get_int(e, "SLURM_PROCID", &o->rank, err, errlen) ||
        get_int(e, "SLURM_NTASKS", &o->world_size, err, errlen) ||
        get_int(e, "SLURM_LOCALID", &o->local_rank, err, errlen) ||
        slurm_local_size(e, o, err, errlen) || check_ranks(o, err, errlen))
        return -1;
    int given = given_master_addr(e, o, err, errlen);
    if (given < 0)
        return -1;
    if (!given) {
        bool job = env_get(e, "SLURM_JOB_NODELIST") != NULL;
        const char *var = job ? "SLURM_JOB_NODELIST" : "SLURM_NODELIST";
        const char *list = env_get(e, var);
        if (!list) {
            set_err(err, errlen, "SLURM_PROCID is set (srun) but none of MASTER_ADDR, "
                                 "SLURM_JOB_NODELIST, SLURM_NODELIST is");
            return -1;
        }
        o->addr_var = job ? "hostlist of SLURM_JOB_NODELIST" : "hostlist of SLURM_NODELIST";
        char why[256];
        if (launch_hostlist_first(list, o->master_addr, sizeof o->master_addr, why, sizeof why)) {
            set_err(err, errlen, "%s='%s': %s", var, list, why);
            return -1;
        }
    }
    return optional_master_port(e, o, err, errlen);
}

int launch_env_detect(launch_getenv_fn getenv_fn, void *user, launch_env *out, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->kind = LAUNCH_NONE;
    out->world_size = 1;
    out->local_world_size = 1;
    out->rank_var = out->world_var = out->local_rank_var = out->local_world_var = "default";
    out->addr_var = out->port_var = "default";
    memcpy(out->master_addr, "127.0.0.1", sizeof "127.0.0.1");
    out->master_port = LAUNCH_DEFAULT_PORT;
    if (!getenv_fn) {
        set_err(err, errlen, "no environment lookup given");
        return -1;
    }
    env_src e = {getenv_fn, user};
    int rc = 0;
    if (env_get(&e, "RANK") || env_get(&e, "WORLD_SIZE"))
        rc = detect_torchrun(&e, out, err, errlen);
    else if (env_get(&e, "OMPI_COMM_WORLD_RANK") || env_get(&e, "OMPI_COMM_WORLD_SIZE"))
        rc = detect_mpi(&e, out, err, errlen);
    else if (env_get(&e, "SLURM_PROCID"))
        rc = detect_slurm(&e, out, err, errlen);
    return rc;
}

/* Copies the first element of one bracket group ("01-04,07]" -> "01"), checking the
 * whole group is well formed so that a typo is not silently half-read. */
static int bracket_first(const char **pp, char *out, size_t outlen, size_t *n, char *err, size_t errlen)
{
    const char *p = *pp; /* just past '[' */
    const char *close = strchr(p, ']');
    const char *open = strchr(p, '[');
    if (!close || (open && open < close)) {
        set_err(err, errlen, "unclosed '['");
        return -1;
    }
    if (close == p) {
        set_err(err, errlen, "empty '[]'");
        return -1;
    }
    bool first = true;
    while (p < close) {
        const char *lo = p;
        while (p < close && *p >= '0' && *p <= '9')
            p++;
        size_t lolen = (size_t)(p - lo);
        const char *hi = NULL;
        size_t hilen = 0;
        if (p < close && *p == '-') {
            hi = ++p;
            while (p < close && *p >= '0' && *p <= '9')
                p++;
            hilen = (size_t)(p - hi);
        }
        if (lolen == 0 || lolen > 18 || (hi && (hilen == 0 || hilen > 18)) ||
            (p < close && *p != ',') || (*p == ',' && p + 1 == close)) {
            set_err(err, errlen, "'[%.*s]' is not a list of numbers and ranges", (int)(close - *pp), *pp);
            return -1;
        }
        if (hi) {
            long long a, b;
            char tmp[20];
            memcpy(tmp, lo, lolen);
            tmp[lolen] = '\0';
            bool ok = parse_uint(tmp, LLONG_MAX, &a);
            memcpy(tmp, hi, hilen);
            tmp[hilen] = '\0';
            ok = ok && parse_uint(tmp, LLONG_MAX, &b);
            if (!ok || b < a) {
                set_err(err, errlen, "range '%.*s' runs backwards", (int)(lolen + 1 + hilen), lo);
                return -1;
            }
        }
        if (first) {
            if (*n + lolen >= outlen) {
                set_err(err, errlen, "the first host name is too long");
                return -1;
            }
            memcpy(out + *n, lo, lolen);
            *n += lolen;
            first = false;
        }
        if (p < close)
            p++; /* ',' */
    }
    *pp = close + 1;
    return 0;
}

int launch_hostlist_first(const char *list, char *out, size_t outlen, char *err, size_t errlen)
{
    if (outlen == 0) {
        set_err(err, errlen, "no room for the host name");
        return -1;
    }
    out[0] = '\0';
    if (!list || !*list) {
        set_err(err, errlen, "the host list is empty");
        return -1;
    }
    size_t n = 0;
    const char *p = list;
    while (*p && *p != ',') {
        if (*p == '[') {
            p++;
            if (bracket_first(&p, out, outlen, &n, err, errlen)) {
                out[0] = '\0';
                return -1;
            }
            continue;
        }
        if (*p == ']' || isspace((unsigned char)*p) || iscntrl((unsigned char)*p)) {
            set_err(err, errlen, "unexpected '%c' at offset %zu", isspace((unsigned char)*p) ? ' ' : *p,
                    (size_t)(p - list));
            out[0] = '\0';
            return -1;
        }
        if (n + 1 >= outlen) {
            set_err(err, errlen, "the first host name is too long");
            out[0] = '\0';
            return -1;
        }
        out[n++] = *p++;
    }
    out[n] = '\0';
    if (n == 0) {
        set_err(err, errlen, "the first host name is empty");
        return -1;
    }
    return 0;
}
