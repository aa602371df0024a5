/* scenario_text.c — bounded UTF-8-safe formatting, UTF-8 validation, escaping and list
 * splitting for the scenario modules (contract in scenario_text.h).
 *
 * Run names and sources go into SQLite and out as JSON, where a malformed byte sequence
 * either breaks the export or is silently replaced; hence a strict validator (RFC 3629:
 * no overlongs, no surrogates, nothing above U+10FFFF) instead of trusting the bytes.
 */
#include "engine/scenario/scenario_text.h"

#include "engine/scenario/scenario.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t scn_utf8_next(const unsigned char *s, size_t len, uint32_t *cp)
{
    if (len == 0)
        return 0;
    unsigned char b = s[0];
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    size_t need;
    uint32_t v;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (b >= 0xC2 && b <= 0xDF) {
        need = 2;
        v = b & 0x1Fu;
    } else if (b >= 0xE0 && b <= 0xEF) {
        need = 3;
        v = b & 0x0Fu;
        if (b == 0xE0)
            lo = 0xA0; /* overlong */
        else if (b == 0xED)
            hi = 0x9F; /* UTF-16 surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 4;
        v = b & 0x07u;
        if (b == 0xF0)
            lo = 0x90; /* overlong */
        else if (b == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else {
        return 0; /* continuation byte, C0/C1 overlong lead, or F5..FF */
    }
    if (len < need || s[1] < lo || s[1] > hi)
        return 0;
    v = (v << 6) | (s[1] & 0x3Fu);
    for (size_t i = 2; i < need; i++) {
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
        v = (v << 6) | (s[i] & 0x3Fu);
    }
    *cp = v;
    return need;
}

int scn_utf8_check(const char *s, size_t len, size_t *bad)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        size_t n = scn_utf8_next(u + i, len - i, &cp);
        if (n == 0) {
            if (bad != NULL)
                *bad = i;
            return -1;
        }
        i += n;
    }
    return 0;
}

size_t scn_utf8_cut(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    /* A character is at most 4 bytes: look back that far for the last lead byte. */
    for (size_t back = 1; back <= 4 && back <= len; back++) {
        unsigned char b = u[len - back];
        if ((b & 0xC0) == 0x80)
            continue; /* continuation byte */
        size_t need = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
        return need > back ? len - back : len;
    }
    return len;
}

bool scn_is_control(uint32_t cp)
{
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
}

static size_t fit_utf8(char *buf, size_t n, int r)
{
    if (r < 0) {
        buf[0] = '\0';
        return 0;
    }
    if ((size_t)r < n)
        return (size_t)r;
    size_t len = scn_utf8_cut(buf, n - 1);
    buf[len] = '\0';
    return len;
}

int scn_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        int r = vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        (void)fit_utf8(err, errlen, r);
    }
    return -1;
}

size_t scn_bprintf(char *buf, size_t n, const char *fmt, ...)
{
    if (n == 0)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return fit_utf8(buf, n, r);
}

void scn_escape(const char *s, char *out, size_t n)
{
    if (n == 0)
        return;
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s), i = 0, pos = 0;
    while (i < len) {
        uint32_t cp;
        size_t c = scn_utf8_next(u + i, len - i, &cp);
        if (c == 0 || scn_is_control(cp)) {
            if (pos + 5 > n)
                break;
            (void)snprintf(out + pos, n - pos, "\\x%02X", u[i]);
            pos += 4;
            i++;
            continue;
        }
        if (pos + c + 1 > n)
            break;
        memcpy(out + pos, u + i, c);
        pos += c;
        i += c;
    }
    out[pos] = '\0';
}

int scn_next_item(scn_splitter *s, char *buf, size_t n)
{
    if (s->p == NULL)
        return 0;
    const char *start = s->p;
    const char *sep = strchr(start, s->sep);
    const char *stop = sep ? sep : start + strlen(start);
    s->p = sep ? sep + 1 : NULL;
    while (start < stop && isspace((unsigned char)*start))
        start++;
    while (stop > start && isspace((unsigned char)stop[-1]))
        stop--;
    size_t len = (size_t)(stop - start);
    if (len == 0)
        return (sep == NULL && s->n > 0) ? 0 : -1;
    if (len >= n)
        return -2;
    memcpy(buf, start, len);
    buf[len] = '\0';
    s->n++;
    return 1;
}

void scn_strip_inline_comment(char *s)
{
    for (char *p = s; *p; p++)
        if (*p == ';' && p > s && isspace((unsigned char)p[-1])) {
            *p = '\0';
            break;
        }
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        s[--len] = '\0';
}

char *scn_trimmed_copy(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    return strndup(s, len);
}
