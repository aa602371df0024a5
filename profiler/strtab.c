/* strtab.c — see strtab.h.  FNV-1a hashing, linear probing. */
#include "profiler/strtab.h"

#include <stdlib.h>
#include <string.h>

void strtab_init(strtab *t)
{
    memset(t, 0, sizeof *t);
}

void strtab_clear(strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->str[i]);
    t->n = 0;
    t->bytes = 0;
    if (t->slots)
        memset(t->slots, 0, t->nslots * sizeof *t->slots);
}

void strtab_free(strtab *t)
{
    strtab_clear(t);
    free(t->str);
    free(t->len);
    free(t->value);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static uint64_t hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int64_t probe(const strtab *t, const char *s, size_t len, uint64_t h, size_t *slot)
{
    size_t mask = t->nslots - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        int32_t v = t->slots[i];
        if (v == 0) {
            *slot = i;
            return -1;
        }
        size_t k = (size_t)v - 1;
        if (t->len[k] == len && memcmp(t->str[k], s, len) == 0) {
            *slot = i;
            return (int64_t)k;
        }
    }
}

int64_t strtab_find(const strtab *t, const char *s, size_t len)
{
    if (t->nslots == 0)
        return -1;
    size_t slot;
    return probe(t, s, len, hash(s, len), &slot);
}

static int grow_slots(strtab *t)
{
    size_t n = t->nslots ? 2 * t->nslots : 256;
    int32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t k = 0; k < t->n; k++) {
        size_t i = (size_t)hash(t->str[k], t->len[k]) & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = (int32_t)(k + 1);
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

int64_t strtab_intern(strtab *t, const char *s, size_t len, int *added)
{
    if (added)
        *added = 0;
    if (len > UINT32_MAX || t->n >= INT32_MAX - 1)
        return -1;
    if ((t->n + 1) * 2 > t->nslots && grow_slots(t) < 0)
        return -1;
    uint64_t h = hash(s, len);
    size_t slot;
    int64_t found = probe(t, s, len, h, &slot);
    if (found >= 0)
        return found;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        char **str = realloc(t->str, cap * sizeof *str);
        if (!str)
            return -1;
        t->str = str;
        uint32_t *l = realloc(t->len, cap * sizeof *l);
        if (!l)
            return -1;
        t->len = l;
        int64_t *v = realloc(t->value, cap * sizeof *v);
        if (!v)
            return -1;
        t->value = v;
        t->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    if (len)
        memcpy(copy, s, len);
    copy[len] = '\0';
    t->str[t->n] = copy;
    t->len[t->n] = (uint32_t)len;
    t->value[t->n] = -1;
    t->slots[slot] = (int32_t)(t->n + 1);
    t->bytes += len + 1;
    if (added)
        *added = 1;
    return (int64_t)t->n++;
}
