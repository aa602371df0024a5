/* scenario_value.h — typed values of scenario keys: parsing a key's text as a file, an
 * override or a sweep gives it, and reading values back as text (internal to the
 * scenario modules).
 *
 * Contract: scn_set_key() checks the text completely (well-formed UTF-8, no control
 * characters, type, range, list length) before it stores anything, and on failure
 * leaves `err` with "section.key: what is wrong" and no location; the caller adds
 * `file:line:` or `-s ...:`.  It does not touch key_line[]: where a value came from is
 * the caller's business.
 */
#ifndef DDPPROF_SCENARIO_VALUE_H
#define DDPPROF_SCENARIO_VALUE_H

#include "engine/scenario/scenario.h"

#include <stdbool.h>
#include <stddef.h>

/* Sets key `ki` from trimmed text exactly as a file line would.  `append` continues a
 * list from an indented continuation line.  Returns 0 or -1 with err. */
int scn_set_key(scenario *sc, int ki, const char *text, bool append, char *err, size_t errlen);

/* Whether key `ki` holds its default value (lists: are empty). */
bool scn_key_is_default(const scenario *sc, int ki);

/* The value of key `ki` as a file would hold it, shortened with "..." to fit `n`. */
void scn_value_text(const scenario *sc, int ki, char *buf, size_t n);

#endif
