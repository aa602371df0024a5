/* scenario_read.c — reading a scenario file: what may be opened and how much of it is
 * read, the text rules of every line, and the INI grammar fed through inih, with every
 * problem reported as `file:line: message` or, for the whole file, `file: message`
 * (scenario_load_file in scenario.h).
 *
 * The file is checked before anything is parsed: opened with O_NONBLOCK so that a FIFO
 * cannot block, refused by fstat unless it is a regular file, and read whole up to
 * SCENARIO_MAX_FILE_BYTES (+1, to notice a file that grew after fstat).  Lines are then
 * handed to inih from memory by a reader that counts them (inih's handler has no line
 * number) and refuses what inih would silently mangle: a NUL byte (inih's fgets-style
 * reading would cut the line there), a line longer than inih's buffer (it would be split
 * in two), malformed UTF-8 and control characters.
 *
 * INI syntax is inih's, with two rules of our own that the error messages explain:
 *  - a list value (model.params, skew.speed, skew.slow_ranks) may continue on indented
 *    lines (inih's multi-line values), so long lists fit inih's fixed line length; the
 *    separator may end a line or start the next one (a continuation line that starts
 *    with '#' would be a comment);
 *  - in [sweep], values are comma-separated, except for list keys, whose values are
 *    themselves comma-separated lists and are therefore separated with '|'.
 */
#include "engine/scenario/scenario.h"

#include "engine/scenario/scenario_keys.h"
#include "engine/scenario/scenario_own.h"
#include "engine/scenario/scenario_sweep.h"
#include "engine/scenario/scenario_text.h"
#include "engine/scenario/scenario_value.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file being read, outermost first: what an include may not reopen. */
typedef struct {
    dev_t dev;
    ino_t ino;
    const char *path;
} open_file;

typedef struct {
    const char *path; /* as messages name it */
    const char *text; /* the whole file */
    size_t len;
    size_t pos;    /* start of the next line */
    int line;      /* physical line last handed to inih */
    bool indented; /* that line starts with white space */
    bool any_section;
    scenario *sc;
    scenario *scratch; /* where sweep values are tried out */
    /* inih's own notion of "the previous key", needed to tell a continuation line
     * (same key again, from an indented line) from a duplicate key. */
    bool has_prev;
    char prev_section[64];
    char prev_name[64];
    int err_line; /* first error found by us (0 = none) */
    char msg[SCENARIO_ERR];
    int syntax_line; /* first line that inih will reject by itself, and why */
    char syntax_msg[SCENARIO_ERR];
    /* The line whose values took the sweep past SCENARIO_MAX_SWEEP_POINTS: reported
     * after the whole [sweep] is read, so that the message gives the full count. */
    int sweep_over_line;
    /* Includes: this file's place in the chain of open files (chain[0..depth]), its
     * index for key_include[] (0: the scenario's own file), the keys it set itself
     * (a key set by an included file may be set again, once), and whether msg is a
     * whole message from an included file, already located there. */
    open_file *chain;
    int depth;
    int inc_index;
    bool own[SCENARIO_MAX_KEYS];
    bool msg_located;
} load_state;

static int fail_at(load_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_at(load_state *st, const char *fmt, ...)
{
    if (st->err_line == 0) {
        va_list ap;
        va_start(ap, fmt);
        int r = vsnprintf(st->msg, sizeof st->msg, fmt, ap);
        va_end(ap);
        if (r >= (int)sizeof st->msg)
            st->msg[scn_utf8_cut(st->msg, sizeof st->msg - 1)] = '\0';
        st->err_line = st->line;
        st->msg_located = false;
    }
    return 0;
}

/* ---------------------------------------------------------------- the file as a whole */

static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/* Reads the whole of `path` into a NUL-terminated buffer (the NUL is not part of *len;
 * the text may hold NUL bytes of its own, which the line reader reports). */
static int read_whole(const char *path, char **out, size_t *len, open_file *id, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return scn_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        (void)close(fd);
        return scn_errf(err, errlen, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        (void)close(fd);
        return scn_errf(err, errlen, "%s: is %s, not a scenario file", path, file_kind(sb.st_mode));
    }
    if (sb.st_size > SCENARIO_MAX_FILE_BYTES) {
        (void)close(fd);
        return scn_errf(err, errlen, "%s: is %lld bytes; a scenario file is at most %d bytes (1 MiB)",
                        path, (long long)sb.st_size, SCENARIO_MAX_FILE_BYTES);
    }
    id->dev = sb.st_dev;
    id->ino = sb.st_ino;
    size_t cap = (size_t)sb.st_size + 2, n = 0;
    char *buf = malloc(cap);
    if (buf == NULL) {
        (void)close(fd);
        return scn_errf(err, errlen, "%s: out of memory", path);
    }
    int rc = 0;
    for (;;) {
        if (n + 1 >= cap) {
            /* The file grew since fstat: read on, but never past the limit (+1). */
            size_t ncap = cap * 2 > (size_t)SCENARIO_MAX_FILE_BYTES + 2
                              ? (size_t)SCENARIO_MAX_FILE_BYTES + 2
                              : cap * 2;
            if (ncap <= cap) {
                rc = scn_errf(err, errlen, "%s: is more than %d bytes; a scenario file is at most %d "
                                   "bytes (1 MiB)",
                              path, SCENARIO_MAX_FILE_BYTES, SCENARIO_MAX_FILE_BYTES);
                break;
            }
            char *nbuf = realloc(buf, ncap);
            if (nbuf == NULL) {
                rc = scn_errf(err, errlen, "%s: out of memory", path);
                break;
            }
            buf = nbuf;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = scn_errf(err, errlen, "%s: read error: %s", path, strerror(errno));
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > SCENARIO_MAX_FILE_BYTES) {
            rc = scn_errf(err, errlen, "%s: is more than %d bytes; a scenario file is at most %d bytes "
                               "(1 MiB)",
                          path, SCENARIO_MAX_FILE_BYTES, SCENARIO_MAX_FILE_BYTES);
            break;
        }
    }
    if (close(fd) != 0 && rc == 0)
        rc = scn_errf(err, errlen, "%s: %s", path, strerror(errno));
    if (rc != 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

/* ---------------------------------------------------------------- lines */

/* The text rules of one line (without its '\n'): 0, or -1 after fail_at. */
static int check_line(load_state *st, const char *s, size_t len, int limit)
{
    const char *nul = memchr(s, '\0', len);
    if (nul != NULL) {
        fail_at(st, "NUL byte at column %zu (a scenario file is text: is this a binary file?)",
                (size_t)(nul - s) + 1);
        return -1;
    }
    if (len > (size_t)limit) {
        fail_at(st,
                "line is longer than %d characters (a long list can continue on indented "
                "lines)",
                limit);
        return -1;
    }
    size_t bad = 0;
    if (scn_utf8_check(s, len, &bad) != 0) {
        fail_at(st, "byte 0x%02X at column %zu is not valid UTF-8 (a scenario file is UTF-8 "
                    "text)",
                (unsigned char)s[bad], bad + 1);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\t' || (c == '\r' && i + 1 == len))
            continue; /* tabs indent; a CR ends a CRLF line */
        if (c < 0x20 || c == 0x7F) {
            fail_at(st, "control character 0x%02X at column %zu", c, i + 1);
            return -1;
        }
    }
    return 0;
}

/* Section headers are checked here because inih does not report them to the handler:
 * an empty unknown section would otherwise pass, and text after ']' would be dropped. */
static void check_section_header(load_state *st, const char *p)
{
    const char *close = strchr(p, ']');
    if (close == NULL) {
        if (st->syntax_line == 0) {
            st->syntax_line = st->line;
            scn_bprintf(st->syntax_msg, sizeof st->syntax_msg,
                        "section header \"%s\" has no closing ']'", p);
        }
        return;
    }
    char name[64];
    size_t nlen = (size_t)(close - p - 1);
    scn_bprintf(name, sizeof name, "%.*s", (int)nlen, p + 1);
    st->has_prev = false;
    st->any_section = true;
    if (nlen >= sizeof name || !scn_known_section(name)) {
        fail_at(st, "unknown section [%.*s] (sections: %s)", (int)nlen, p + 1, SCN_SECTION_LIST);
        return;
    }
    const char *after = close + 1;
    while (isspace((unsigned char)*after))
        after++;
    if (*after != '\0' && *after != ';' && *after != '#')
        fail_at(st, "text after the section header [%s] (put \"%s\" on a line of its own)", name,
                after);
}

/* inih's reader callback: hands over the next line of the file, or NULL at the end and
 * at our first error (the rest cannot change the outcome). */
static char *read_line(char *str, int num, void *stream)
{
    load_state *st = stream;
    if (st->err_line != 0 || st->pos >= st->len)
        return NULL;
    const char *s = st->text + st->pos;
    size_t rest = st->len - st->pos;
    const char *nl = memchr(s, '\n', rest);
    size_t len = nl ? (size_t)(nl - s) : rest;
    st->pos += len + (nl ? 1 : 0);
    st->line++;

    /* inih needs room for the line, its '\n' and the terminator. */
    int limit = num - 2 < SCENARIO_MAX_LINE ? num - 2 : SCENARIO_MAX_LINE;
    if (check_line(st, s, len, limit) != 0)
        return NULL;
    memcpy(str, s, len);
    str[len] = '\n';
    str[len + 1] = '\0';

    const char *p = str;
    if (st->line == 1 && strncmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    st->indented = *p == ' ' || *p == '\t';
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0' || *p == ';' || *p == '#')
        return str;
    if (st->indented && st->has_prev)
        return str; /* a continuation line; the handler judges it */
    char *end = str + strlen(str);
    while (end > p && isspace((unsigned char)end[-1]))
        end--;
    char saved = *end;
    *end = '\0'; /* the checks below quote the line without its newline */
    if (*p == '[') {
        check_section_header(st, p);
    } else if (strpbrk(p, "=:") == NULL && st->syntax_line == 0) {
        st->syntax_line = st->line;
        scn_bprintf(st->syntax_msg, sizeof st->syntax_msg,
                    "cannot read \"%s\": expected key = value, [section] or a ; comment", p);
    }
    *end = saved;
    return str;
}

/* ---------------------------------------------------------------- [sweep] */

/* Adds the values of one [sweep] line to `axis`, trying each on a scratch scenario so
 * that a bad value is reported at its line rather than when the point runs, and notes
 * the line that takes the sweep past SCENARIO_MAX_SWEEP_POINTS (nothing is expanded). */
static int add_sweep_values(load_state *st, sweep_axis *axis, int ki, const char *value,
                            bool continuation)
{
    if (st->scratch == NULL) {
        st->scratch = malloc(sizeof *st->scratch);
        if (st->scratch == NULL)
            return fail_at(st, "out of memory");
        scenario_defaults(st->scratch);
    }
    char msg[SCENARIO_ERR];
    if (scn_axis_add_values(axis, ki, value, continuation, st->scratch, msg, sizeof msg) != 0)
        return fail_at(st, "%s", msg);
    int over = 0;
    if (st->sweep_over_line == 0 && scn_sweep_over_limit(st->sc, msg, sizeof msg, &over) != 0)
        st->sweep_over_line = st->line;
    return 1;
}

static int on_sweep(load_state *st, const char *name, const char *value, bool continuation)
{
    scenario *sc = st->sc;
    if (continuation) {
        int a = scn_find_axis(sc, name);
        int ki = -1;
        if (a < 0 || scn_find_dotted(name, &ki, NULL, 0) != 0)
            return fail_at(st, "[sweep] %s: continuation of an unknown axis", name);
        char *text = strdup(value);
        if (text == NULL)
            return fail_at(st, "out of memory");
        scn_strip_inline_comment(text);
        int rc = add_sweep_values(st, &sc->sweep[a], ki, text, true);
        free(text);
        return rc;
    }
    int ki = -1;
    char msg[SCENARIO_ERR];
    if (scn_find_dotted(name, &ki, msg, sizeof msg) != 0)
        return fail_at(st, "[sweep] %s (sweep keys are section.key names of other sections)",
                       msg);
    char dotted[64];
    scn_dotted_name(&scn_keys[ki], dotted, sizeof dotted);
    int a = scn_find_axis(sc, dotted);
    if (a >= 0)
        return fail_at(st, "duplicate key %s in [sweep] (first given on line %d)", dotted,
                       sc->sweep[a].line);
    if (sc->nsweep >= SCENARIO_MAX_SWEEP_KEYS)
        return fail_at(st, "[sweep] %s: more than %d sweep axes", dotted,
                       SCENARIO_MAX_SWEEP_KEYS);
    a = scn_sweep_append(sc, dotted, st->line);
    if (a < 0)
        return fail_at(st, "out of memory");
    return add_sweep_values(st, &sc->sweep[a], ki, value, false);
}

/* ---------------------------------------------------------------- include */

static int parse_file(const char *path, scenario *sc, open_file *chain, int depth, int inc_index,
                      char *err, size_t errlen);

/* `value` relative to the directory of the including file, unless absolute. */
static int resolve(const char *including, const char *value, char *out, size_t n)
{
    const char *slash = strrchr(including, '/');
    int r;
    if (value[0] == '/' || slash == NULL)
        r = snprintf(out, n, "%s", value);
    else
        r = snprintf(out, n, "%.*s/%s", (int)(slash - including), including, value);
    return r < 0 || (size_t)r >= n ? -1 : 0;
}

static int on_include(load_state *st, const char *section, const char *value, bool continuation)
{
    scenario *sc = st->sc;
    if (section[0] != '\0' || continuation)
        return fail_at(st, "include goes before the first [section] (it was in [%s])", section);
    if (st->any_section)
        return fail_at(st, "include goes before the first [section]");
    if (value[0] == '\0')
        return fail_at(st, "include needs a file name (include = network.ini)");
    char path[sizeof sc->source];
    if (resolve(st->path, value, path, sizeof path) != 0)
        return fail_at(st, "include = %s: the path is longer than %zu bytes", value, sizeof path - 1);
    if (sc->ninclude >= SCENARIO_MAX_INCLUDES || st->depth + 1 >= SCENARIO_MAX_INCLUDES)
        return fail_at(st, "include = %s: more than %d included files (nested or not)", value,
                       SCENARIO_MAX_INCLUDES);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return fail_at(st, "include = %s: cannot open %s: %s", value, path, strerror(errno));
    for (int i = 0; i <= st->depth; i++)
        if (st->chain[i].dev == sb.st_dev && st->chain[i].ino == sb.st_ino)
            return fail_at(st, "include = %s: include loop: %s is already being read%s%s%s", value, path,
                           i == st->depth ? "" : " (it includes ", i == st->depth ? "" : st->chain[i + 1].path,
                           i == st->depth ? "" : ")");
    char **grown = realloc(sc->include_path, (size_t)(sc->ninclude + 1) * sizeof *grown);
    if (grown == NULL)
        return fail_at(st, "out of memory");
    sc->include_path = grown;
    if ((sc->include_path[sc->ninclude] = strdup(path)) == NULL)
        return fail_at(st, "out of memory");
    int index = ++sc->ninclude;
    char nested[SCENARIO_ERR];
    if (parse_file(path, sc, st->chain, st->depth + 1, index, nested, sizeof nested) != 0) {
        fail_at(st, "%s", nested);
        st->msg_located = true; /* already "file:line: ..." of the included file */
        return 0;
    }
    /* The included keys may be set once more here; the including file wins. */
    return 1;
}

/* ---------------------------------------------------------------- keys */

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    load_state *st = user;
    if (st->err_line != 0)
        return 0;
    bool continuation = st->indented && st->has_prev &&
                        strcmp(section, st->prev_section) == 0 &&
                        strcmp(name, st->prev_name) == 0;
    st->has_prev = true;
    scn_bprintf(st->prev_section, sizeof st->prev_section, "%s", section);
    scn_bprintf(st->prev_name, sizeof st->prev_name, "%s", name);

    if (strcmp(name, "include") == 0)
        return on_include(st, section, value, continuation);
    if (section[0] == '\0')
        return fail_at(st, "key \"%s\" is outside any section (sections: %s)", name,
                       SCN_SECTION_LIST);
    if (strcmp(section, "sweep") == 0) {
        if (st->depth > 0)
            return fail_at(st, "[sweep] in an included file: put the sweep in the scenario "
                               "that includes it");
        return on_sweep(st, name, value, continuation);
    }
    if (!scn_known_section(section))
        return fail_at(st, "unknown section [%s] (sections: %s)", section, SCN_SECTION_LIST);
    int ki = scn_find_key(section, name);
    if (ki < 0) {
        char msg[SCENARIO_ERR];
        scn_unknown_key_msg(section, name, msg, sizeof msg);
        return fail_at(st, "%s", msg);
    }
    scenario *sc = st->sc;
    char msg[SCENARIO_ERR];
    if (continuation) {
        if (!scn_is_list(&scn_keys[ki]))
            return fail_at(st,
                           "%s.%s: this indented line is read as a continuation of its value; "
                           "only list values may continue (remove the indentation)",
                           section, name);
        /* inih leaves inline comments on continuation lines; cut them as on key lines. */
        char *text = strdup(value);
        if (text == NULL)
            return fail_at(st, "out of memory");
        scn_strip_inline_comment(text);
        int rc = scn_set_key(sc, ki, text, true, msg, sizeof msg);
        free(text);
        if (rc != 0)
            return fail_at(st, "%s", msg);
        return 1;
    }
    if (st->own[ki])
        return fail_at(st, "duplicate key %s.%s (first set on line %d)", section, name,
                       sc->key_line[ki]);
    if (scn_set_key(sc, ki, value, false, msg, sizeof msg) != 0)
        return fail_at(st, "%s", msg);
    sc->key_line[ki] = st->line;
    sc->key_include[ki] = (unsigned char)st->inc_index;
    st->own[ki] = true;
    return 1;
}

/* ---------------------------------------------------------------- names */

/* Copies `in` (at most `max` bytes) with every byte that is not printable UTF-8 (and
 * every ';' when `name`) replaced by '_', so that a file's name always makes a valid
 * run.name and source, both of which end up in SQLite and JSON. */
static void sanitized_copy(char *out, size_t size, const char *in, size_t max, bool name)
{
    const unsigned char *u = (const unsigned char *)in;
    size_t len = strnlen(in, max), i = 0, pos = 0;
    while (i < len && pos + 1 < size) {
        uint32_t cp = 0;
        size_t c = scn_utf8_next(u + i, len - i, &cp);
        if (c == 0 || scn_is_control(cp) || (name && cp == ';')) {
            out[pos++] = '_';
            i += c ? c : 1;
            continue;
        }
        if (pos + c + 1 > size)
            break;
        memcpy(out + pos, u + i, c);
        pos += c;
        i += c;
    }
    out[pos] = '\0';
}

static void name_from_path(scenario *sc, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 4 && strcmp(base + len - 4, ".ini") == 0)
        len -= 4;
    /* A value is read back trimmed: so is a name taken from a file's name. */
    while (len > 0 && isspace((unsigned char)*base)) {
        base++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)base[len - 1]))
        len--;
    if (len == 0)
        return; /* keep the default name */
    char name[sizeof sc->name];
    sanitized_copy(name, sizeof name, base, len, true);
    memset(sc->name, 0, sizeof sc->name);
    memcpy(sc->name, name, strlen(name));
}

/* ---------------------------------------------------------------- public */

/* Reads `path` into sc on top of what is there (chain[0..depth-1] are the files
 * including it).  0, or -1 with err located in the file at fault. */
static int parse_text(const char *path, char *text, size_t len, open_file self, scenario *sc, open_file *chain,
                      int depth, int inc_index, char *err, size_t errlen);

static int parse_file(const char *path, scenario *sc, open_file *chain, int depth, int inc_index,
                      char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    open_file self = {.path = path};
    if (read_whole(path, &text, &len, &self, err, errlen) != 0)
        return -1;
    return parse_text(path, text, len, self, sc, chain, depth, inc_index, err, errlen);
}

/* Parses `text` (malloc'ed, freed here) as the file `path` (self: its identity, all zero
 * for text of no file). */
static int parse_text(const char *path, char *text, size_t len, open_file self, scenario *sc, open_file *chain,
                      int depth, int inc_index, char *err, size_t errlen)
{
    for (int i = 0; i < depth; i++)
        if (chain[i].dev == self.dev && chain[i].ino == self.ino) {
            free(text);
            if (i == depth - 1)
                return scn_errf(err, errlen, "%s: includes itself", chain[i].path);
            return scn_errf(err, errlen, "%s: include loop: it is already being read (%s includes it, "
                                 "directly or not)",
                            path, chain[i].path);
        }
    chain[depth] = self;

    load_state *st = calloc(1, sizeof *st);
    if (st == NULL) {
        free(text);
        return scn_errf(err, errlen, "%s: out of memory", path);
    }
    *st = (load_state){.path = path, .text = text, .len = len, .sc = sc, .chain = chain,
                       .depth = depth, .inc_index = inc_index};
    int ret = ini_parse_stream(read_line, st, on_entry, st);
    int rc = 0;
    int over = st->sweep_over_line;
    char msg[SCENARIO_ERR];
    int axis = 0;
    if (over > 0 && (st->err_line == 0 || st->err_line > over) && (ret <= 0 || ret > over) &&
        scn_sweep_over_limit(sc, msg, sizeof msg, &axis) != 0)
        rc = scn_errf(err, errlen, "%s:%d: %s", path, over, msg);
    else if (st->err_line > 0 && (ret <= 0 || ret >= st->err_line) && st->msg_located)
        rc = scn_errf(err, errlen, "%s", st->msg);
    else if (st->err_line > 0 && (ret <= 0 || ret >= st->err_line))
        rc = scn_errf(err, errlen, "%s:%d: %s", path, st->err_line, st->msg);
    else if (ret > 0 && ret == st->syntax_line)
        rc = scn_errf(err, errlen, "%s:%d: %s", path, ret, st->syntax_msg);
    else if (ret > 0)
        rc = scn_errf(err, errlen, "%s:%d: cannot read this line (expected key = value, [section] or a "
                           "; comment)",
                      path, ret);
    else if (ret < 0)
        rc = scn_errf(err, errlen, "%s: out of memory while reading", path);
    else if (len == 0)
        rc = scn_errf(err, errlen, "%s: is empty (a scenario file needs at least one [section]; an "
                           "empty [run] runs the defaults)",
                      path);
    else if (!st->any_section)
        rc = scn_errf(err, errlen, "%s: has no [section] (a scenario file needs at least one; an empty "
                           "[run] runs the defaults)",
                      path);
    free(text);
    if (st->scratch != NULL)
        scenario_free(st->scratch);
    free(st->scratch);
    free(st);
    return rc;
}

int scenario_load_file(const char *path, scenario *sc, char *err, size_t errlen)
{
    scenario_defaults(sc);
    open_file chain[SCENARIO_MAX_INCLUDES + 1];
    int rc = parse_file(path, sc, chain, 0, 0, err, errlen);
    if (rc == 0) {
        sanitized_copy(sc->source, sizeof sc->source, path, strlen(path), false);
        if (sc->key_line[scn_key_index("run", "name")] == 0)
            name_from_path(sc, path);
        rc = scenario_validate(sc, err, errlen);
    }
    if (rc != 0)
        scenario_free(sc); /* a failed load holds nothing */
    return rc;
}

int scenario_load_text(const char *text, const char *origin, scenario *sc, char *err, size_t errlen)
{
    scenario_defaults(sc);
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    if (!copy)
        return scn_errf(err, errlen, "%s: out of memory", origin);
    memcpy(copy, text, len + 1);
    open_file chain[SCENARIO_MAX_INCLUDES + 1];
    int rc = parse_text(origin, copy, len, (open_file){.path = origin}, sc, chain, 0, 0, err, errlen);
    if (rc == 0) {
        sanitized_copy(sc->source, sizeof sc->source, origin, strlen(origin), false);
        rc = scenario_validate(sc, err, errlen);
    }
    if (rc != 0)
        scenario_free(sc); /* a failed load holds nothing */
    return rc;
}
