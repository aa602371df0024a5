/* source_input.h — reading a trace file once, as bytes of text: gzip (any number of
 * members) decompressed through zlib on the way, and the raw file's SHA-256 and size
 * taken in the same pass, for the run's source_file row.
 *
 * Contract: source_open judges the file by its first bytes (source_kind), never by its
 * name.  source_read returns up to n bytes of text (0 at the end), or -1 with err: an
 * I/O error, a gzip stream that is corrupt or ends early ("truncated gzip"), or text
 * beyond max_bytes.  source_finish reads what is left (so the hash covers the whole
 * file) and gives the digest as 64 hex digits.  Nothing global; one reader per file.
 *
 * Ownership: source_open() gives a reader that the caller closes with source_close()
 * (after source_finish() too; NULL is allowed); on failure *out is NULL and nothing is
 * left to close.  The reader keeps `path` borrowed: it must outlive the reader.
 */
#ifndef DDPPROF_SOURCE_INPUT_H
#define DDPPROF_SOURCE_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    SOURCE_TEXT,     /* anything else: a JSON reader decides */
    SOURCE_GZIP,     /* 1f 8b */
    SOURCE_SQLITE,   /* "SQLite format 3\0" */
    SOURCE_EMPTY,
} source_kind;

typedef struct source_input source_input;

/* Opens `path`; *kind says what it looks like.  -1 with err when it cannot be read. */
int source_open(const char *path, int64_t max_bytes, source_input **out, source_kind *kind, char *err,
                size_t errlen);
long source_read(source_input *in, char *buf, size_t n, char *err, size_t errlen);
/* Text bytes returned so far. */
int64_t source_text_offset(const source_input *in);
int source_finish(source_input *in, int64_t *file_bytes, char sha256_hex[65], char *err, size_t errlen);
void source_close(source_input *in);

/* Size and SHA-256 of a whole file (the SQLite readers, which do not stream it). */
int source_hash_file(const char *path, int64_t *file_bytes, char sha256_hex[65], char *err, size_t errlen);

#endif
