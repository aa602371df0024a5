/* scenario_keys.h — the scenario key table and its lookups (internal to the scenario
 * modules).
 *
 * Contract: scn_keys[] holds everything known about a key (section, name, type, range,
 * default text, meaning, and where it lives in struct scenario), in the order `explain`
 * and the INI writer show them; the defaults, the loader, the checks and the writer all
 * read this one table, so they cannot disagree.  Lookups never allocate.
 */
#ifndef DDPPROF_SCENARIO_KEYS_H
#define DDPPROF_SCENARIO_KEYS_H

#include "engine/scenario/scenario.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    K_INT,
    K_U64,
    K_DOUBLE,
    K_BOOL,
    K_STRING,   /* min = 1: must not be empty */
    K_ENUM_STR, /* stored as its canonical text */
    K_ENUM_INT, /* stored as the index of the choice, which is the C enum's value */
    K_LIST_DOUBLE,
    K_LIST_INT,
    K_LIST_I64,
} key_type;

typedef struct {
    const char *section;
    const char *name;
    key_type type;
    double min, max;            /* numbers, and each element of a list */
    const char *const *choices; /* enums, NULL-terminated */
    const char *def;            /* default, as the text a file would hold */
    const char *meaning;
    size_t offset;
    size_t size;         /* capacity of strings; lists: the size of the pointer */
    size_t count_offset; /* lists: the int holding the element count */
    int max_count;       /* lists: elements allowed */
} key_def;

extern const key_def scn_keys[];
extern const size_t scn_nkeys;
extern const char *const scn_sections[];
extern const size_t scn_nsections;
#define SCN_SECTION_LIST "run, model, ddp, skew, network, device, host, fault, record, sweep"

/* Index of section.name in scn_keys, or -1. */
int scn_find_key(const char *section, const char *name);

/* Index of a key the code names itself; aborts if the table lacks it (a bug). */
int scn_key_index(const char *section, const char *name);

bool scn_known_section(const char *section);

/* Resolves "section.key" to a table index; -1 with a message saying what is allowed. */
int scn_find_dotted(const char *dotted, int *index, char *err, size_t errlen);

/* "unknown key "x" in [s] (keys: ...)"; returns -1. */
int scn_unknown_key_msg(const char *section, const char *name, char *err, size_t errlen);

void scn_dotted_name(const key_def *k, char *buf, size_t n);
bool scn_is_list(const key_def *k);
/* The elements of list key k in sc (NULL when the list is empty). */
const void *scn_list_items(const scenario *sc, const key_def *k);
/* Frees list k's elements and gives sc `items` (malloc'ed, owned by sc from now on; NULL
 * when count is 0) in their place. */
void scn_list_replace(scenario *sc, const key_def *k, void *items, int count);
size_t scn_elem_size(key_type t);

/* Shortest %g text that reads back as exactly v. */
void scn_fmt_double(double v, char *buf, size_t n);

/* "[1, 64]", "true|false", "<=4096 x [1, 2^40]"... as `explain` shows it. */
void scn_describe_range(const key_def *k, char *buf, size_t n);
const char *scn_type_name(key_type t);

/* Peak and memory bandwidth of a named device preset; false for custom or unknown. */
bool scn_device_preset(const char *name, double *peak_tflops, double *mem_bw_gbps);

#endif
