/* scenario_ini.c — writing a scenario back as INI text: the effective value of every
 * key, the [sweep] axes, and as comments the values that follow from device.preset or
 * that cannot take effect, so that reading the text back gives the same scenario
 * without warnings (scenario_to_ini in scenario.h).
 *
 * Long lists wrap onto indented continuation lines well inside inih's line buffer.
 */
#include "engine/scenario/scenario.h"

#include "common/strbuf.h"

#include "engine/scenario/scenario_check.h"
#include "engine/scenario/scenario_keys.h"
#include "engine/scenario/scenario_text.h"
#include "engine/scenario/scenario_value.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Longest physical line written, well inside inih's line buffer. */
#define INI_WRAP 100

/* The text, and the column its last line has reached, for wrapping long lists. */
typedef struct {
    strbuf sb;
    size_t col; /* characters since the last newline */
} ini_text;

static void sb_printf(ini_text *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(ini_text *b, const char *fmt, ...)
{
    size_t at = b->sb.len;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&b->sb, fmt, ap);
    va_end(ap);
    /* Nothing was added when the strbuf has failed: the column no longer matters. */
    size_t added = b->sb.len - at;
    const char *nl = memrchr(b->sb.buf + at, '\n', added);
    b->col = nl ? (size_t)(b->sb.buf + b->sb.len - nl - 1) : b->col + added;
}

/* Appends one item of a list value, breaking onto an indented continuation line (after a
 * trailing separator, or before a leading one; the reader accepts both) before the line
 * gets too long. */
static void sb_item(ini_text *b, bool first, char sep, const char *item)
{
    if (first)
        sb_printf(b, "%s", item);
    else if (b->col + 3 + strlen(item) > INI_WRAP && (item[0] == '#' || item[0] == ';'))
        /* A line that starts with '#' or ';' is a comment even when indented: the value
         * would be lost.  Lead the continuation line with the separator instead. */
        sb_printf(b, "\n    %c %s", sep, item);
    else if (b->col + 3 + strlen(item) > INI_WRAP)
        sb_printf(b, "%s%c\n    %s", sep == '|' ? " " : "", sep, item);
    else
        sb_printf(b, "%s%c %s", sep == '|' ? " " : "", sep, item);
}

static void write_value(ini_text *b, const scenario *sc, const key_def *k)
{
    const char *src = (const char *)sc + k->offset;
    char tmp[64];
    switch (k->type) {
    case K_INT: {
        int v;
        memcpy(&v, src, sizeof v);
        sb_printf(b, "%d", v);
        break;
    }
    case K_U64: {
        uint64_t v;
        memcpy(&v, src, sizeof v);
        sb_printf(b, "%" PRIu64, v);
        break;
    }
    case K_DOUBLE: {
        double v;
        memcpy(&v, src, sizeof v);
        scn_fmt_double(v, tmp, sizeof tmp);
        sb_printf(b, "%s", tmp);
        break;
    }
    case K_BOOL: {
        bool v;
        memcpy(&v, src, sizeof v);
        sb_printf(b, "%s", v ? "true" : "false");
        break;
    }
    case K_STRING:
    case K_ENUM_STR:
        sb_printf(b, "%.*s", (int)k->size, src);
        break;
    case K_ENUM_INT: {
        int v;
        memcpy(&v, src, sizeof v);
        int nchoices = 0;
        while (k->choices[nchoices] != NULL)
            nchoices++;
        sb_printf(b, "%s", v >= 0 && v < nchoices ? k->choices[v] : "?");
        break;
    }
    case K_LIST_DOUBLE:
    case K_LIST_INT:
    case K_LIST_I64: {
        int n;
        memcpy(&n, (const char *)sc + k->count_offset, sizeof n);
        const char *items = scn_list_items(sc, k);
        for (int i = 0; i < n && i < k->max_count; i++) {
            const char *e = items + (size_t)i * scn_elem_size(k->type);
            if (k->type == K_LIST_DOUBLE) {
                double v;
                memcpy(&v, e, sizeof v);
                scn_fmt_double(v, tmp, sizeof tmp);
            } else if (k->type == K_LIST_INT) {
                int v;
                memcpy(&v, e, sizeof v);
                scn_bprintf(tmp, sizeof tmp, "%d", v);
            } else {
                int64_t v;
                memcpy(&v, e, sizeof v);
                scn_bprintf(tmp, sizeof tmp, "%" PRId64, v);
            }
            sb_item(b, i == 0, ',', tmp);
        }
        break;
    }
    }
}

char *scenario_to_ini(const scenario *sc)
{
    ini_text b = {.sb = STRBUF_INIT, .col = 0};
    sb_printf(&b, "; ddpprof scenario: the effective value of every key\n");
    if (sc->source[0]) {
        /* Kept well inside inih's line buffer, so that the text reads back. */
        size_t keep = scn_utf8_cut(sc->source, strnlen(sc->source, INI_WRAP));
        sb_printf(&b, "; loaded from %.*s%s\n", (int)keep, sc->source,
                  sc->source[keep] ? "..." : "");
    }
    bool device_custom = strcmp(sc->device_preset, "custom") == 0;
    const char *section = "";
    for (size_t i = 0; i < scn_nkeys; i++) {
        const key_def *k = &scn_keys[i];
        if (strcmp(section, k->section) != 0) {
            section = k->section;
            sb_printf(&b, "%s[%s]\n", b.sb.len ? "\n" : "", section);
        }
        /* A value that came from the device preset stays a comment, so that reading
         * this file back leaves it following the preset (e.g. when device.preset is
         * swept) instead of pinning it. */
        bool from_preset = strcmp(k->section, "device") == 0 && !device_custom &&
                           (strcmp(k->name, "peak_tflops") == 0 ||
                            strcmp(k->name, "mem_bw_gbps") == 0) &&
                           sc->key_line[i] == 0;
        /* A value that cannot take effect stays a comment too, on one line (an indented
         * line after it would continue the key above), so that the text reads back
         * without warnings. */
        char why[160];
        if (!from_preset && !scn_key_in_effect(sc, (int)i, why, sizeof why)) {
            char value[64];
            scn_value_text(sc, (int)i, value, sizeof value);
            sb_printf(&b, "; %s =%s%s   (%s)\n", k->name, value[0] ? " " : "", value, why);
            continue;
        }
        sb_printf(&b, "%s%s = ", from_preset ? "; " : "", k->name);
        size_t before = b.sb.len;
        write_value(&b, sc, k);
        if (!b.sb.failed && b.sb.len == before)
            b.sb.buf[--b.sb.len] = '\0'; /* an empty list: no trailing blank (the " = " is in buf) */
        sb_printf(&b, "%s\n", from_preset ? "   (from device.preset)" : "");
    }
    if (sc->nsweep > 0) {
        sb_printf(&b, "\n[sweep]\n");
        for (int a = 0; a < sc->nsweep && a < SCENARIO_MAX_SWEEP_KEYS; a++) {
            const sweep_axis *axis = &sc->sweep[a];
            int ki = -1;
            bool list = scn_find_dotted(axis->key, &ki, NULL, 0) == 0 && scn_is_list(&scn_keys[ki]);
            sb_printf(&b, "%s = ", axis->key);
            for (int v = 0; v < axis->nvalues && v < SCENARIO_MAX_SWEEP_VALUES; v++)
                sb_item(&b, v == 0, list ? '|' : ',', axis->values[v]);
            sb_printf(&b, "\n");
        }
    }
    return strbuf_detach(&b.sb, NULL); /* NULL when out of memory */
}
