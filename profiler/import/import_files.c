/* import_files.c — the files of an import: directories expanded to the trace files in
 * them, each file read by the reader its first bytes call for, with its size and
 * SHA-256.  See import_internal.h. */
#include "profiler/import/import_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/errmsg.h"
#include "profiler/import/kineto_json.h"
#include "profiler/import/nsys_sqlite.h"
#include "profiler/import/source_input.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* What a directory's entry must be called to be taken for a trace. */
static bool trace_name(const char *name)
{
    return name[0] != '.' && (ends_with(name, ".json") || ends_with(name, ".json.gz") ||
                              ends_with(name, ".sqlite"));
}

typedef struct {
    char **v;
    int n, cap;
} path_list;

static int push_path(path_list *l, const char *p)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **grown = realloc(l->v, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        l->v = grown;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(p)))
        return -1;
    l->n++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static import_status expand_dir(const char *dir, path_list *l, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        set_err(err, errlen, "%s: %s", dir, strerror(errno));
        return IMPORT_BAD_INPUT;
    }
    int first = l->n;
    struct dirent *e;
    import_status st = IMPORT_OK;
    while ((e = readdir(d)) != NULL) {
        if (!trace_name(e->d_name))
            continue;
        char p[4096];
        if ((size_t)snprintf(p, sizeof p, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name) >= sizeof p)
            continue;
        struct stat sb;
        if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (push_path(l, p) < 0) {
            set_err(err, errlen, "out of memory");
            st = IMPORT_RUNTIME;
            break;
        }
    }
    closedir(d);
    if (st == IMPORT_OK && l->n == first) {
        set_err(err, errlen,
                "%s: no trace files in this directory (looked for *.json, *.json.gz, *.sqlite)", dir);
        st = IMPORT_BAD_INPUT;
    }
    if (l->n > first)
        qsort(l->v + first, (size_t)(l->n - first), sizeof *l->v, cmp_str);
    return st;
}

static int push_rank(trace_rank ***ranks, int *n, int *cap, trace_rank *r)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 8;
        trace_rank **grown = realloc(*ranks, (size_t)c * sizeof *grown);
        if (!grown)
            return -1;
        *ranks = grown;
        *cap = c;
    }
    (*ranks)[(*n)++] = r;
    return 0;
}

/* A name the user might give that is a trace in another form. */
static const char *hint(const char *path)
{
    if (ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep"))
        return " (an Nsight Systems report: export it first, `nsys export --type sqlite --output"
               " FILE.sqlite FILE.nsys-rep`, and import the .sqlite)";
    if (ends_with(path, ".pt") || ends_with(path, ".pkl"))
        return " (a pickle, not a trace)";
    return "";
}

static import_status read_one(const char *path, int idx, const trace_limits *lim, import_file *f,
                              trace_rank ***ranks, int *nranks, int *cap, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        set_err(err, errlen, "%s: %s", path, strerror(errno));
        return IMPORT_BAD_INPUT;
    }
    if (!S_ISREG(sb.st_mode)) {
        set_err(err, errlen, "%s: not a regular file", path);
        return IMPORT_BAD_INPUT;
    }
    /* A plain trace's text is its size: refused before a byte is parsed. */
    if (lim->max_file_bytes > 0 && (int64_t)sb.st_size > lim->max_file_bytes) {
        char head[4] = {0};
        FILE *fp = fopen(path, "rb");
        size_t got = fp ? fread(head, 1, sizeof head, fp) : 0;
        if (fp)
            fclose(fp);
        bool gz = got >= 2 && (unsigned char)head[0] == 0x1f && (unsigned char)head[1] == 0x8b;
        bool sqlite = got >= 4 && !memcmp(head, "SQLi", 4);
        if (!gz && !sqlite) {
            set_err(err, errlen,
                    "%s: %lld bytes: larger than the %lld bytes a trace may be (profile fewer steps, or"
                    " raise --max-size)",
                    path, (long long)sb.st_size, (long long)lim->max_file_bytes);
            return IMPORT_BAD_INPUT;
        }
    }
    source_input *in = NULL;
    source_kind kind;
    if (source_open(path, lim->max_file_bytes, &in, &kind, err, errlen) < 0)
        return IMPORT_BAD_INPUT;
    import_status st = IMPORT_OK;
    if (kind == SOURCE_EMPTY) {
        set_err(err, errlen, "%s: empty file: not a trace%s", path, hint(path));
        st = IMPORT_BAD_INPUT;
    } else if (kind == SOURCE_SQLITE) {
        source_close(in);
        in = NULL;
        if (source_hash_file(path, &f->bytes, f->sha256, err, errlen) < 0)
            return IMPORT_BAD_INPUT;
        trace_rank **got = NULL;
        int ngot = 0;
        if (nsys_sqlite_read(path, idx, lim, &got, &ngot, err, errlen) < 0)
            return IMPORT_BAD_INPUT;
        f->format = "nsys-sqlite";
        f->nranks_in_file = ngot;
        for (int i = 0; i < ngot; i++)
            if (push_rank(ranks, nranks, cap, got[i]) < 0) {
                for (int j = i; j < ngot; j++) {
                    trace_rank_free(got[j]);
                    free(got[j]);
                }
                free(got);
                set_err(err, errlen, "out of memory");
                return IMPORT_RUNTIME;
            }
        free(got);
        return IMPORT_OK;
    } else {
        trace_rank *r = malloc(sizeof *r);
        if (!r) {
            set_err(err, errlen, "out of memory");
            st = IMPORT_RUNTIME;
        } else {
            trace_rank_init(r, f->path, idx, NULL, lim);
            char why[600];
            if (kineto_json_read(in, r, why, sizeof why) < 0) {
                set_err(err, errlen, "%s%s", why, hint(path));
                st = IMPORT_BAD_INPUT;
            } else if (source_finish(in, &f->bytes, f->sha256, err, errlen) < 0) {
                st = IMPORT_BAD_INPUT;
            }
            if (st != IMPORT_OK || push_rank(ranks, nranks, cap, r) < 0) {
                if (st == IMPORT_OK) {
                    set_err(err, errlen, "out of memory");
                    st = IMPORT_RUNTIME;
                }
                trace_rank_free(r);
                free(r);
            } else {
                f->format = r->format;
                f->nranks_in_file = 1;
            }
        }
    }
    source_close(in);
    return st;
}

import_status import_read_files(const import_options *o, import_file **files, int *nfiles,
                                trace_rank ***ranks, int *nranks, trace_limits *lim, char *err,
                                size_t errlen)
{
    *files = NULL;
    *nfiles = 0;
    *ranks = NULL;
    *nranks = 0;
    path_list l = {0};
    import_status st = IMPORT_OK;
    for (int i = 0; i < o->npaths && st == IMPORT_OK; i++) {
        struct stat sb;
        if (stat(o->paths[i], &sb) != 0) {
            set_err(err, errlen, "%s: %s", o->paths[i], strerror(errno));
            st = IMPORT_BAD_INPUT;
        } else if (S_ISDIR(sb.st_mode)) {
            st = expand_dir(o->paths[i], &l, err, errlen);
        } else if (push_path(&l, o->paths[i]) < 0) {
            set_err(err, errlen, "out of memory");
            st = IMPORT_RUNTIME;
        }
    }
    if (st == IMPORT_OK && l.n == 0) {
        set_err(err, errlen, "no trace given");
        st = IMPORT_BAD_INPUT;
    }
    import_file *f = st == IMPORT_OK ? calloc((size_t)l.n, sizeof *f) : NULL;
    if (st == IMPORT_OK && !f) {
        set_err(err, errlen, "out of memory");
        st = IMPORT_RUNTIME;
    }
    int cap = 0;
    int nf = 0;
    for (int i = 0; i < l.n && st == IMPORT_OK; i++) {
        f[i].path = l.v[i];
        l.v[i] = NULL;
        nf = i + 1;
        st = read_one(f[i].path, i, lim, &f[i], ranks, nranks, &cap, err, errlen);
    }
    for (int i = 0; i < l.n; i++)
        free(l.v[i]);
    free(l.v);
    *files = f;
    *nfiles = nf;
    return st;
}

void import_files_free(import_file *files, int nfiles, trace_rank **ranks, int nranks)
{
    for (int i = 0; i < nranks; i++) {
        trace_rank_free(ranks[i]);
        free(ranks[i]);
    }
    free(ranks);
    for (int i = 0; i < nfiles; i++)
        free(files[i].path);
    free(files);
}
