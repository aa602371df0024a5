/* run_config.c — a run's command-line settings as text, and the scenario keys in which
 * runs differ (see run_config.h). */
#include "reports/run_config.h"

#include "engine/scenario/scenario.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

void run_config_overrides_text(const char *json, char *out, size_t n)
{
    if (n == 0)
        return;
    out[0] = '\0';
    if (!json)
        return;
    json_t *o = json_loads(json, 0, NULL);
    if (!json_is_object(o)) {
        snprintf(out, n, "%s", json);
        json_decref(o);
        return;
    }
    size_t len = 0;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        int w = snprintf(out + len, n - len, "%s%s=%s", len ? ", " : "", k,
                         json_is_string(v) ? json_string_value(v) : "?");
        if (w < 0 || (size_t)w >= n - len)
            break; /* truncated: the buffer holds what fitted */
        len += (size_t)w;
    }
    json_decref(o);
}

void run_config_point_text(const char *json, char *out, size_t n)
{
    if (n == 0)
        return;
    out[0] = '\0';
    json_t *o = json ? json_loads(json, 0, NULL) : NULL;
    size_t len = 0;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        char key[128];
        scenario_short_key(k, key, sizeof key);
        int w = snprintf(out + len, n - len, "%s%s %s", len ? ", " : "", key,
                         json_is_string(v) ? json_string_value(v) : "?");
        if (w < 0 || (size_t)w >= n - len)
            break; /* truncated: the buffer holds what fitted */
        len += (size_t)w;
    }
    json_decref(o);
}

typedef struct {
    char *key, *value;
} kv;

typedef struct {
    kv *v;
    size_t n, cap;
} kv_list;

static char *dup_range(const char *a, const char *b)
{
    while (a < b && isspace((unsigned char)*a))
        a++;
    while (b > a && isspace((unsigned char)b[-1]))
        b--;
    char *s = malloc((size_t)(b - a) + 1);
    if (s) {
        memcpy(s, a, (size_t)(b - a));
        s[b - a] = '\0';
    }
    return s;
}

static void kv_free(kv_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].key);
        free(l->v[i].value);
    }
    free(l->v);
}

/* "[section]" and "key = value" lines into "section.key" = "value". */
static int parse(const char *text, kv_list *l)
{
    char section[64] = "";
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        const char *p = line;
        while (p < end && isspace((unsigned char)*p))
            p++;
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (p < end && *p == '[') {
            const char *close = memchr(p, ']', (size_t)(end - p));
            if (close)
                snprintf(section, sizeof section, "%.*s", (int)(close - p - 1), p + 1);
        } else if (p < end && *p != ';' && *p != '#' && eq) {
            char *name = dup_range(p, eq), *value = dup_range(eq + 1, end);
            char *key = name ? malloc(strlen(section) + strlen(name) + 2) : NULL;
            if (key)
                sprintf(key, "%s.%s", section, name);
            free(name);
            if (key && value && l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 64;
                kv *g = realloc(l->v, cap * sizeof *g);
                if (g) {
                    l->v = g;
                    l->cap = cap;
                }
            }
            if (!key || !value || l->n == l->cap) {
                free(key);
                free(value);
                return -1;
            }
            l->v[l->n++] = (kv){key, value};
        }
        line = *end ? end + 1 : end;
    }
    return 0;
}

static const char *lookup(const kv_list *l, const char *key, bool *found)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].key, key)) {
            *found = true;
            return l->v[i].value;
        }
    *found = false;
    return NULL;
}

void run_config_diff_free(run_config_key *keys, int nkeys, size_t nruns)
{
    for (int i = 0; i < nkeys; i++) {
        free(keys[i].key);
        for (size_t r = 0; r < nruns; r++)
            free(keys[i].values[r]);
        free(keys[i].values);
    }
    free(keys);
}

int run_config_diff(const char *const *scenarios, size_t nruns, run_config_key **out)
{
    *out = NULL;
    kv_list *l = calloc(nruns ? nruns : 1, sizeof *l);
    if (!l)
        return -1;
    int nkeys = 0, ret = -1;
    size_t cap = 0;
    run_config_key *keys = NULL;
    for (size_t r = 0; r < nruns; r++)
        if (parse(scenarios[r] ? scenarios[r] : "", &l[r]) < 0)
            goto out;
    for (size_t r = 0; r < nruns; r++)
        for (size_t i = 0; i < l[r].n; i++) {
            const char *key = l[r].v[i].key;
            if (!strcmp(key, "run.name") || !strcmp(key, "run.backend"))
                continue;
            bool seen = false, differs = false;
            for (int k = 0; k < nkeys && !seen; k++)
                seen = !strcmp(keys[k].key, key);
            for (size_t q = 0; q < r && !seen; q++)
                lookup(&l[q], key, &seen); /* an earlier run has it: compared there */
            if (seen)
                continue;
            for (size_t q = 0; q < nruns && !differs; q++) {
                bool found;
                const char *v = lookup(&l[q], key, &found);
                differs = !found || strcmp(v, l[r].v[i].value) != 0;
            }
            if (!differs)
                continue;
            if ((size_t)nkeys == cap) {
                cap = cap ? 2 * cap : 8;
                run_config_key *g = realloc(keys, cap * sizeof *g);
                if (!g)
                    goto out;
                keys = g;
            }
            run_config_key *k = &keys[nkeys];
            k->key = strdup(key);
            k->values = calloc(nruns, sizeof *k->values);
            if (!k->key || !k->values) {
                free(k->key);
                free(k->values);
                goto out;
            }
            nkeys++;
            for (size_t q = 0; q < nruns; q++) {
                bool found;
                const char *v = lookup(&l[q], key, &found);
                if (found && !(k->values[q] = strdup(v)))
                    goto out;
            }
        }
    *out = keys;
    keys = NULL;
    ret = nkeys;
out:
    if (keys)
        run_config_diff_free(keys, nkeys, nruns);
    for (size_t r = 0; r < nruns; r++)
        kv_free(&l[r]);
    free(l);
    return ret;
}
