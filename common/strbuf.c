/* strbuf.c — the growable string (see strbuf.h). */
#include "common/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char strbuf_empty[1];

void strbuf_init(strbuf *sb) { *sb = (strbuf)STRBUF_INIT; }

bool strbuf_grow(strbuf *sb, size_t extra)
{
    if (sb->failed)
        return false;
    if (extra >= (size_t)-1 / 2 - sb->len) {
        sb->failed = true;
        return false;
    }
    size_t want = sb->len + extra + 1;
    if (want <= sb->alloc)
        return true;
    size_t alloc = sb->alloc ? sb->alloc : 64;
    while (alloc < want)
        alloc *= 2;
    char *grown = realloc(sb->alloc ? sb->buf : NULL, alloc);
    if (!grown) {
        sb->failed = true;
        return false;
    }
    if (!sb->alloc)
        grown[0] = '\0';
    sb->buf = grown;
    sb->alloc = alloc;
    return true;
}

void strbuf_add(strbuf *sb, const void *data, size_t n)
{
    if (!strbuf_grow(sb, n))
        return;
    memcpy(sb->buf + sb->len, data, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void strbuf_addstr(strbuf *sb, const char *s) { strbuf_add(sb, s, strlen(s)); }

void strbuf_addch(strbuf *sb, char c) { strbuf_add(sb, &c, 1); }

void strbuf_vaddf(strbuf *sb, const char *fmt, va_list ap)
{
    if (sb->failed)
        return;
    va_list again;
    va_copy(again, ap);
    /* Tries in the room there is first: most appends fit. */
    size_t room = sb->alloc ? sb->alloc - sb->len : 0;
    int n = vsnprintf(room ? sb->buf + sb->len : NULL, room, fmt, ap);
    if (n < 0) {
        sb->failed = true;
    } else if ((size_t)n < room) {
        sb->len += (size_t)n;
    } else if (strbuf_grow(sb, (size_t)n)) {
        vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, again);
        sb->len += (size_t)n;
    }
    if (sb->alloc)
        sb->buf[sb->len] = '\0'; /* a failed first try wrote into the room: undone */
    va_end(again);
}

void strbuf_addf(strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

void strbuf_reset(strbuf *sb)
{
    sb->len = 0;
    sb->failed = false;
    if (sb->alloc)
        sb->buf[0] = '\0';
}

void strbuf_release(strbuf *sb)
{
    if (sb->alloc)
        free(sb->buf);
    strbuf_init(sb);
}

char *strbuf_detach(strbuf *sb, size_t *len)
{
    char *s = NULL;
    if (!sb->failed)
        s = sb->alloc ? sb->buf : strdup("");
    else if (sb->alloc)
        free(sb->buf);
    if (len)
        *len = s ? sb->len : 0;
    strbuf_init(sb);
    return s;
}
