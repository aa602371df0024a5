/* scenario_value.c — parsing one key's text into struct scenario with its type and range
 * checks, comparing a value with its default, and printing a value back (contract in
 * scenario_value.h).
 *
 * Numbers are parsed with strtoll/strtod but held to a stricter grammar: the whole text
 * must be the number (no "4x", no "10us"), decimal only (strtod would take "0x1p3"),
 * finite, and in the key's range; a value strtoll/strtod cannot represent is reported as
 * out of range rather than clamped.
 */
#include "engine/scenario/scenario_value.h"

#include "engine/scenario/net_presets.h"
#include "engine/scenario/scenario_keys.h"
#include "engine/scenario/scenario_text.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum { NUM_OK, NUM_BAD, NUM_RANGE, NUM_NONFINITE } num_status;

static num_status parse_integer(const char *s, long long *out)
{
    if (*s == '\0')
        return NUM_BAD;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0')
        return NUM_BAD;
    if (errno == ERANGE)
        return NUM_RANGE;
    *out = v;
    return NUM_OK;
}

static num_status parse_real(const char *s, double *out)
{
    if (*s == '\0')
        return NUM_BAD;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0')
        return NUM_BAD;
    if (!isfinite(v))
        return NUM_NONFINITE;
    if (strpbrk(s, "xXpP") != NULL)
        return NUM_BAD; /* a C99 hex float: not what anyone means in a scenario */
    if (errno == ERANGE)
        return NUM_RANGE;
    *out = v;
    return NUM_OK;
}

static bool parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"true", "yes", "1", "on"};
    static const char *const no[] = {"false", "no", "0", "off"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* One element of a list or one scalar: checks type and range, writes *dst. */
static int parse_number(const key_def *k, key_type t, const char *text, void *dst,
                        const char *what, char *err, size_t errlen)
{
    char lo[32], hi[32];
    scn_fmt_double(k->min, lo, sizeof lo);
    scn_fmt_double(k->max, hi, sizeof hi);
    if (t == K_DOUBLE) {
        double v = 0;
        num_status st = parse_real(text, &v);
        if (st == NUM_BAD)
            return scn_errf(err, errlen, "%s: \"%s\" is not a number", what, text);
        if (st == NUM_NONFINITE)
            return scn_errf(err, errlen, "%s: \"%s\" is not a finite number", what, text);
        if (st == NUM_RANGE || v < k->min || v > k->max)
            return scn_errf(err, errlen, "%s %s is out of range [%s, %s]", what, text, lo, hi);
        memcpy(dst, &v, sizeof v);
        return 0;
    }
    long long v = 0;
    num_status st = parse_integer(text, &v);
    if (st == NUM_BAD)
        return scn_errf(err, errlen, "%s: \"%s\" is not an integer", what, text);
    if (st == NUM_RANGE || v < (long long)k->min || v > (long long)k->max)
        return scn_errf(err, errlen, "%s %s is out of range [%s, %s]", what, text, lo, hi);
    if (t == K_INT) {
        int iv = (int)v;
        memcpy(dst, &iv, sizeof iv);
    } else {
        int64_t lv = (int64_t)v;
        memcpy(dst, &lv, sizeof lv);
    }
    return 0;
}

/* The list is parsed into a new array, allocated to its length, which replaces the old one
 * only when every element is good: a bad value leaves the key as it was. */
static int set_list(scenario *sc, const key_def *k, const char *dotted, const char *text,
                    bool append, char *err, size_t errlen)
{
    int count;
    memcpy(&count, (char *)sc + k->count_offset, sizeof count);
    if (count < 0 || count > k->max_count)
        return scn_errf(err, errlen, "%s: corrupt scenario (%d elements)", dotted, count);
    int n = append ? count : 0;
    key_type et = k->type == K_LIST_DOUBLE ? K_DOUBLE : k->type == K_LIST_INT ? K_INT : K_LIST_I64;
    size_t es = scn_elem_size(k->type);
    int cap = n;
    char *array = NULL;
    if (n > 0) {
        array = malloc((size_t)n * es);
        if (array == NULL)
            return scn_errf(err, errlen, "%s: out of memory", dotted);
        memcpy(array, scn_list_items(sc, k), (size_t)n * es);
    }

    if (append && *text == ',')
        text++; /* a continuation line may start with the separator */
    if (*text != '\0') {
        scn_splitter s = {text, ',', 0};
        char item[64];
        int r;
        while ((r = scn_next_item(&s, item, sizeof item)) != 0) {
            int rc = 0;
            if (r == -1)
                rc = scn_errf(err, errlen, "%s: element %d is empty (elements are separated by commas)",
                              dotted, n + 1);
            else if (r == -2)
                rc = scn_errf(err, errlen, "%s: element %d is too long to be a number", dotted, n + 1);
            else if (n >= k->max_count)
                rc = scn_errf(err, errlen, "%s: more than %d elements", dotted, k->max_count);
            if (rc == 0 && n == cap) {
                int ncap = cap < 8 ? 8 : cap * 2 > k->max_count ? k->max_count : cap * 2;
                char *grown = realloc(array, (size_t)ncap * es);
                if (grown == NULL)
                    rc = scn_errf(err, errlen, "%s: out of memory", dotted);
                else {
                    array = grown;
                    cap = ncap;
                }
            }
            char what[128];
            if (rc == 0) {
                scn_bprintf(what, sizeof what, "%s element %d", dotted, n + 1);
                rc = parse_number(k, et, item, array + (size_t)n * es, what, err, errlen);
            }
            if (rc != 0) {
                free(array);
                return -1;
            }
            n++;
        }
    }
    if (n == 0) {
        free(array);
        array = NULL;
    } else if (n < cap) {
        char *fit = realloc(array, (size_t)n * es); /* to its length; keep it when that fails */
        if (fit != NULL)
            array = fit;
    }
    scn_list_replace(sc, k, array, n);
    return 0;
}

/* network.preset / network.intra_preset fill their link's figures unless set. */
static void apply_network_preset(scenario *sc, const char *key)
{
    double bw, lat;
    bool intra = strcmp(key, "intra_preset") == 0;
    if (!intra && strcmp(key, "preset") != 0)
        return;
    if (!net_preset(intra ? sc->intra_preset : sc->net_preset, &bw, &lat))
        return;
    if (sc->key_line[scn_key_index("network", intra ? "intra_bandwidth_gbps" : "bandwidth_gbps")] == 0)
        *(intra ? &sc->intra_bandwidth_gbps : &sc->bandwidth_gbps) = bw;
    if (sc->key_line[scn_key_index("network", intra ? "intra_latency_us" : "latency_us")] == 0)
        *(intra ? &sc->intra_latency_us : &sc->latency_us) = lat;
}

/* network.nodes x network.gpus_per_node gives the world size, unless world_size was set
 * explicitly (then the checks ask that they agree). */
static void apply_topology(scenario *sc)
{
    if (sc->nodes > 0 && sc->gpus_per_node > 0 && sc->key_line[scn_key_index("run", "world_size")] == 0 &&
        sc->nodes * sc->gpus_per_node <= SCENARIO_MAX_WORLD)
        sc->world_size = sc->nodes * sc->gpus_per_node;
}

static void apply_device_preset(scenario *sc)
{
    double peak, bw;
    if (!scn_device_preset(sc->device_preset, &peak, &bw))
        return;
    /* Explicit values win whatever their order in the file: a preset seen after
     * peak_tflops must not overwrite it. */
    if (sc->key_line[scn_key_index("device", "peak_tflops")] == 0)
        sc->peak_tflops = peak;
    if (sc->key_line[scn_key_index("device", "mem_bw_gbps")] == 0)
        sc->mem_bw_gbps = bw;
}

/* Text fit for a name stored in SQLite and exported as JSON, and read back by inih. */
static int check_string(const key_def *k, const char *dotted, const char *text, char *err, size_t errlen)
{
    size_t len = strlen(text);
    if (len >= k->size)
        return scn_errf(err, errlen, "%s is longer than %zu bytes", dotted, k->size - 1);
    const unsigned char *u = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        uint32_t cp = 0;
        size_t c = scn_utf8_next(u + i, len - i, &cp);
        if (c == 0)
            return scn_errf(err, errlen, "%s: byte %zu is not valid UTF-8", dotted, i + 1);
        if (scn_is_control(cp))
            return scn_errf(err, errlen, "%s: control character U+%04" PRIX32 " at byte %zu is not allowed",
                            dotted, cp, i + 1);
        /* inih would cut the value at " ;" when it is read back. */
        if (cp == ';')
            return scn_errf(err, errlen, "%s: ';' is not allowed (it starts an INI comment)", dotted);
        i += c;
    }
    return 0;
}

static int no_value(const key_def *k, const char *dotted, char *err, size_t errlen)
{
    char range[160];
    scn_describe_range(k, range, sizeof range);
    switch (k->type) {
    case K_INT:
    case K_U64:
        return scn_errf(err, errlen, "%s: no value (expected an integer in %s)", dotted, range);
    case K_DOUBLE:
        return scn_errf(err, errlen, "%s: no value (expected a number in %s)", dotted, range);
    case K_BOOL:
        return scn_errf(err, errlen, "%s: no value (expected true or false)", dotted);
    case K_ENUM_STR:
    case K_ENUM_INT:
        return scn_errf(err, errlen, "%s: no value (expected one of: %s)", dotted, range);
    case K_STRING:
        return scn_errf(err, errlen, "%s: no value (give a name, or leave the key out to use the file's "
                             "name)",
                        dotted);
    default:
        return 0; /* an empty list is a value */
    }
}

int scn_set_key(scenario *sc, int ki, const char *text, bool append, char *err, size_t errlen)
{
    const key_def *k = &scn_keys[ki];
    char dotted[96];
    scn_dotted_name(k, dotted, sizeof dotted);
    void *dst = (char *)sc + k->offset;

    /* Checked before any message quotes the text, so that messages stay valid UTF-8. */
    size_t bad = 0, len = strlen(text);
    if (scn_utf8_check(text, len, &bad) != 0)
        return scn_errf(err, errlen, "%s: the value is not valid UTF-8 (byte %zu is 0x%02X)", dotted,
                        bad + 1, (unsigned char)text[bad]);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if ((c < 0x20 && c != '\t') || c == 0x7F)
            return scn_errf(err, errlen, "%s: the value has control character 0x%02X at byte %zu", dotted,
                            c, i + 1);
    }

    if (*text == '\0' && (!scn_is_list(k) && !(k->type == K_STRING && k->min < 1)))
        return no_value(k, dotted, err, errlen);

    switch (k->type) {
    case K_INT:
    case K_DOUBLE: {
        int rc = parse_number(k, k->type, text, dst, dotted, err, errlen);
        if (rc == 0 && strcmp(k->section, "network") == 0 &&
            (strcmp(k->name, "nodes") == 0 || strcmp(k->name, "gpus_per_node") == 0))
            apply_topology(sc);
        return rc;
    }
    case K_U64: {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(text, &end, 10);
        /* strtoull quietly negates "-1"; a seed given as negative is a mistake. */
        if (text[0] == '-' || end == text || *end != '\0')
            return scn_errf(err, errlen, "%s: \"%s\" is not a non-negative integer", dotted, text);
        if (errno == ERANGE)
            return scn_errf(err, errlen, "%s %s is out of range [0, 2^64-1]", dotted, text);
        uint64_t u = (uint64_t)v;
        memcpy(dst, &u, sizeof u);
        return 0;
    }
    case K_BOOL: {
        bool b;
        if (!parse_bool(text, &b))
            return scn_errf(err, errlen,
                            "%s: \"%s\" is not a boolean (use true/false, yes/no, on/off, 1/0)",
                            dotted, text);
        memcpy(dst, &b, sizeof b);
        return 0;
    }
    case K_STRING: {
        if (check_string(k, dotted, text, err, errlen) != 0)
            return -1;
        memset(dst, 0, k->size);
        memcpy(dst, text, len);
        return 0;
    }
    case K_ENUM_STR:
    case K_ENUM_INT: {
        for (int c = 0; k->choices[c] != NULL; c++) {
            if (strcasecmp(text, k->choices[c]) != 0)
                continue;
            if (k->type == K_ENUM_INT) {
                memcpy(dst, &c, sizeof c);
            } else {
                memset(dst, 0, k->size);
                memcpy(dst, k->choices[c], strlen(k->choices[c]));
            }
            if (strcmp(k->section, "device") == 0 && strcmp(k->name, "preset") == 0)
                apply_device_preset(sc);
            if (strcmp(k->section, "network") == 0)
                apply_network_preset(sc, k->name);
            return 0;
        }
        char list[160];
        size_t pos = 0;
        list[0] = '\0';
        for (int c = 0; k->choices[c] != NULL && pos < sizeof list; c++)
            pos += scn_bprintf(list + pos, sizeof list - pos, "%s%s", c ? ", " : "",
                               k->choices[c]);
        return scn_errf(err, errlen, "%s \"%s\" is not one of: %s", dotted, text, list);
    }
    case K_LIST_DOUBLE:
    case K_LIST_INT:
    case K_LIST_I64:
        return set_list(sc, k, dotted, text, append, err, errlen);
    }
    return scn_errf(err, errlen, "%s: unsupported key type", dotted);
}

bool scn_key_is_default(const scenario *sc, int ki)
{
    const key_def *k = &scn_keys[ki];
    const char *src = (const char *)sc + k->offset;
    if (scn_is_list(k)) {
        int n;
        memcpy(&n, (const char *)sc + k->count_offset, sizeof n);
        return n == 0; /* every list defaults to empty */
    }
    if (k->type == K_STRING || k->type == K_ENUM_STR)
        return strncmp(src, k->def, k->size) == 0;
    /* Parse the default into a scratch copy of the key's bytes, then compare values. */
    union {
        int i;
        uint64_t u;
        double d;
        bool b;
    } def;
    memset(&def, 0, sizeof def);
    if (k->type == K_ENUM_INT) {
        for (int c = 0; k->choices[c] != NULL; c++)
            if (strcmp(k->def, k->choices[c]) == 0)
                def.i = c;
        int v;
        memcpy(&v, src, sizeof v);
        return v == def.i;
    }
    switch (k->type) {
    case K_INT: {
        int v;
        memcpy(&v, src, sizeof v);
        return v == (int)strtol(k->def, NULL, 10);
    }
    case K_U64: {
        uint64_t v;
        memcpy(&v, src, sizeof v);
        return v == (uint64_t)strtoull(k->def, NULL, 10);
    }
    case K_DOUBLE: {
        double v;
        memcpy(&v, src, sizeof v);
        return v == strtod(k->def, NULL);
    }
    case K_BOOL: {
        bool v;
        memcpy(&v, src, sizeof v);
        return v == (strcmp(k->def, "true") == 0);
    }
    default:
        return false;
    }
}

void scn_value_text(const scenario *sc, int ki, char *buf, size_t n)
{
    const key_def *k = &scn_keys[ki];
    const char *src = (const char *)sc + k->offset;
    if (n == 0)
        return;
    buf[0] = '\0';
    switch (k->type) {
    case K_INT: {
        int v;
        memcpy(&v, src, sizeof v);
        scn_bprintf(buf, n, "%d", v);
        return;
    }
    case K_U64: {
        uint64_t v;
        memcpy(&v, src, sizeof v);
        scn_bprintf(buf, n, "%" PRIu64, v);
        return;
    }
    case K_DOUBLE: {
        double v;
        memcpy(&v, src, sizeof v);
        scn_fmt_double(v, buf, n);
        return;
    }
    case K_BOOL: {
        bool v;
        memcpy(&v, src, sizeof v);
        scn_bprintf(buf, n, "%s", v ? "true" : "false");
        return;
    }
    case K_STRING:
    case K_ENUM_STR:
        scn_bprintf(buf, n, "%.*s", (int)strnlen(src, k->size), src);
        return;
    case K_ENUM_INT: {
        int v, nchoices = 0;
        memcpy(&v, src, sizeof v);
        while (k->choices[nchoices] != NULL)
            nchoices++;
        scn_bprintf(buf, n, "%s", v >= 0 && v < nchoices ? k->choices[v] : "?");
        return;
    }
    case K_LIST_DOUBLE:
    case K_LIST_INT:
    case K_LIST_I64: {
        int count;
        memcpy(&count, (const char *)sc + k->count_offset, sizeof count);
        const char *items = scn_list_items(sc, k);
        size_t pos = 0;
        for (int i = 0; i < count && i < k->max_count; i++) {
            char item[40];
            const char *e = items + (size_t)i * scn_elem_size(k->type);
            if (k->type == K_LIST_DOUBLE) {
                double v;
                memcpy(&v, e, sizeof v);
                scn_fmt_double(v, item, sizeof item);
            } else if (k->type == K_LIST_INT) {
                int v;
                memcpy(&v, e, sizeof v);
                scn_bprintf(item, sizeof item, "%d", v);
            } else {
                int64_t v;
                memcpy(&v, e, sizeof v);
                scn_bprintf(item, sizeof item, "%" PRId64, v);
            }
            size_t need = strlen(item) + (i ? 2 : 0);
            if (pos + need + 4 >= n) { /* room for ", ..." */
                scn_bprintf(buf + pos, n - pos, "%s", i ? ", ..." : "...");
                return;
            }
            pos += scn_bprintf(buf + pos, n - pos, "%s%s", i ? ", " : "", item);
        }
        return;
    }
    }
}
