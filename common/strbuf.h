/* strbuf.h — one growable string for the whole tree (after git's strbuf).
 *
 * Invariants: `buf` is always a NUL-terminated string (an empty shared one before the
 * first allocation, so a fresh strbuf can be printed at once), `len` is its length and
 * len < alloc once anything is allocated.  Appending never truncates: when memory runs out
 * the strbuf keeps what it had, sets `failed`, and every later append is a no-op, so a
 * builder appends freely and checks `failed` once at the end.
 *
 * Ownership: the strbuf owns `buf` until strbuf_release() frees it or strbuf_detach()
 * hands it to the caller (who frees it with free()).
 */
#ifndef DDPPROF_STRBUF_H
#define DDPPROF_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *buf;
    size_t len, alloc;
    bool failed; /* an allocation failed: the text is incomplete */
} strbuf;

extern char strbuf_empty[];
#define STRBUF_INIT {.buf = strbuf_empty, .len = 0, .alloc = 0, .failed = false}

void strbuf_init(strbuf *sb);
/* Room for `extra` more bytes (and the NUL); false (and `failed` set) when out of memory. */
bool strbuf_grow(strbuf *sb, size_t extra);
void strbuf_add(strbuf *sb, const void *data, size_t n);
void strbuf_addstr(strbuf *sb, const char *s);
void strbuf_addch(strbuf *sb, char c);
void strbuf_addf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Empties it, keeping its memory (and its `failed` mark cleared). */
void strbuf_reset(strbuf *sb);
/* Frees its memory and makes it empty again. */
void strbuf_release(strbuf *sb);
/* Hands over the string (malloc'ed, never NULL unless `failed`) and empties the strbuf. */
char *strbuf_detach(strbuf *sb, size_t *len);

#endif
