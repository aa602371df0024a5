/* scenario_text.h — text helpers of the scenario modules: bounded formatting that never
 * cuts a UTF-8 character, a strict UTF-8 validator, control-character and escaping
 * rules for user text echoed in messages, and the list splitter of INI values.
 *
 * Contract: every function takes its input as given (NUL-terminated unless a length is
 * passed), writes at most `n` bytes including the terminator, and never allocates except
 * scn_trimmed_copy (caller frees).  Nothing here knows about keys or files.
 */
#ifndef DDPPROF_SCENARIO_TEXT_H
#define DDPPROF_SCENARIO_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* vsnprintf into err (errlen bytes; NULL or 0 allowed), cut back to a UTF-8 character
 * boundary; always returns -1, so that a failing path can `return scn_errf(...)`. */
int scn_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* snprintf that may truncate on purpose (labels, messages), backing off to a UTF-8
 * character boundary; returns the length written. */
size_t scn_bprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Decodes one UTF-8 character of s[0..len): its length (1..4) and *cp, or 0 when the
 * bytes are not a well-formed character (overlong, surrogate, above U+10FFFF,
 * truncated or a stray continuation byte). */
size_t scn_utf8_next(const unsigned char *s, size_t len, uint32_t *cp);

/* 0 when s[0..len) is well-formed UTF-8; else -1 with *bad = offset of the first byte
 * that does not start a well-formed character. */
int scn_utf8_check(const char *s, size_t len, size_t *bad);

/* The longest prefix length <= len of valid UTF-8 text s that ends on a character
 * boundary (for truncating). */
size_t scn_utf8_cut(const char *s, size_t len);

/* C0 controls, DEL and the C1 controls U+0080..U+009F. */
bool scn_is_control(uint32_t cp);

/* Copies s into out with every byte that is not part of printable, well-formed UTF-8
 * written as \xHH, so that a message quoting user text is itself valid UTF-8. */
void scn_escape(const char *s, char *out, size_t n);

/* Walks sep-separated, trimmed items.  A trailing separator is allowed (after at least
 * one item) so that a long list can end a line with ',' and continue on the next. */
typedef struct {
    const char *p;
    char sep;
    int n; /* items returned so far */
} scn_splitter;

/* 1 = item in buf, 0 = no more, -1 = empty item, -2 = item longer than buf. */
int scn_next_item(scn_splitter *s, char *buf, size_t n);

/* Cuts a ';' comment that follows white space (inih's rule for inline comments) and the
 * white space before it. */
void scn_strip_inline_comment(char *s);

/* strndup of s without leading and trailing white space; NULL when out of memory. */
char *scn_trimmed_copy(const char *s);

#endif
