/* strtab.h — a string table: each distinct string once, numbered in the order first
 * seen, found again by hashing.  The store interns span names with it (span_name), and
 * the importers the names of millions of trace events, which repeat a few thousand
 * distinct strings.
 *
 * Contract: strtab_intern copies the bytes (any, NUL included, up to len) and returns
 * the string's index, the same for equal bytes; -1 only when out of memory.  Indices
 * are dense from 0; strtab_str returns the NUL-terminated copy.  strtab_clear forgets
 * every string (the store does so when a transaction that added names rolls back).
 * One table per user: no sharing between threads.
 */
#ifndef DDPPROF_STRTAB_H
#define DDPPROF_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char **str;       /* by index */
    uint32_t *len;    /* by index */
    int64_t *value;   /* by index: what the user attaches (the store: the row id) */
    size_t n, cap;
    int32_t *slots;   /* open addressing: index + 1, 0 = empty */
    size_t nslots;    /* a power of two, kept at least twice n */
    size_t bytes;     /* of the copies, for callers that bound their memory */
} strtab;

void strtab_init(strtab *t);
void strtab_free(strtab *t);
void strtab_clear(strtab *t);
/* The index of the string; *added (may be NULL) says whether it was new. */
int64_t strtab_intern(strtab *t, const char *s, size_t len, int *added);
/* The index of an equal string, or -1 when it is not in the table. */
int64_t strtab_find(const strtab *t, const char *s, size_t len);
static inline const char *strtab_str(const strtab *t, int64_t i) { return t->str[i]; }

#endif
