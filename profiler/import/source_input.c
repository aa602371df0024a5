/* source_input.c — see source_input.h.  SHA-256 from OpenSSL's libcrypto (EVP), gzip
 * from zlib's inflate with automatic header detection. */
#include "profiler/import/source_input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "common/errmsg.h"

#define RAW_CHUNK (256 * 1024)

struct source_input {
    FILE *f;
    const char *path;
    bool gz, gz_started, gz_member_done, eof;
    z_stream z;
    unsigned char *raw;
    size_t raw_len, raw_pos; /* bytes of raw[] read from the file / consumed */
    EVP_MD_CTX *sha;
    int64_t file_bytes, text_bytes, max_bytes;
};

static void to_hex(const unsigned char *d, unsigned n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (unsigned i = 0; i < n; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * n] = '\0';
}

/* Reads the next raw chunk into raw[], hashing it.  0 at the end of the file. */
static long fill_raw(source_input *in, char *err, size_t errlen)
{
    size_t got = fread(in->raw, 1, RAW_CHUNK, in->f);
    if (got == 0 && ferror(in->f)) {
        set_err(err, errlen, "%s: read error: %s", in->path, strerror(errno));
        return -1;
    }
    if (got && EVP_DigestUpdate(in->sha, in->raw, got) != 1) {
        set_err(err, errlen, "%s: SHA-256 failed", in->path);
        return -1;
    }
    in->file_bytes += (int64_t)got;
    in->raw_len = got;
    in->raw_pos = 0;
    return (long)got;
}

int source_open(const char *path, int64_t max_bytes, source_input **out, source_kind *kind, char *err,
                size_t errlen)
{
    *out = NULL;
    source_input *in = calloc(1, sizeof *in);
    if (!in || !(in->raw = malloc(RAW_CHUNK)) || !(in->sha = EVP_MD_CTX_new())) {
        if (in)
            free(in->raw);
        free(in);
        set_err(err, errlen, "out of memory");
        return -1;
    }
    in->path = path;
    in->max_bytes = max_bytes;
    in->f = fopen(path, "rb");
    if (!in->f) {
        set_err(err, errlen, "%s: %s", path, strerror(errno));
        source_close(in);
        return -1;
    }
    if (EVP_DigestInit_ex(in->sha, EVP_sha256(), NULL) != 1) {
        set_err(err, errlen, "%s: SHA-256 unavailable", path);
        source_close(in);
        return -1;
    }
    if (fill_raw(in, err, errlen) < 0) {
        source_close(in);
        return -1;
    }
    const unsigned char *b = in->raw;
    size_t n = in->raw_len;
    if (n == 0)
        *kind = SOURCE_EMPTY;
    else if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        *kind = SOURCE_GZIP;
    else if (n >= 16 && memcmp(b, "SQLite format 3", 16) == 0)
        *kind = SOURCE_SQLITE;
    else
        *kind = SOURCE_TEXT;
    if (*kind == SOURCE_GZIP) {
        in->gz = true;
        if (inflateInit2(&in->z, 15 + 32) != Z_OK) { /* +32: gzip or zlib header */
            set_err(err, errlen, "%s: zlib initialisation failed", path);
            source_close(in);
            return -1;
        }
        in->gz_started = true;
    }
    *out = in;
    return 0;
}

static long read_plain(source_input *in, char *buf, size_t n, char *err, size_t errlen)
{
    if (in->raw_pos == in->raw_len && fill_raw(in, err, errlen) < 0)
        return -1;
    size_t k = in->raw_len - in->raw_pos;
    if (k > n)
        k = n;
    memcpy(buf, in->raw + in->raw_pos, k);
    in->raw_pos += k;
    return (long)k;
}

static long read_gz(source_input *in, char *buf, size_t n, char *err, size_t errlen)
{
    if (n > UINT32_MAX)
        n = UINT32_MAX;
    in->z.next_out = (unsigned char *)buf;
    in->z.avail_out = (uInt)n;
    while (in->z.avail_out == n) {
        if (in->raw_pos == in->raw_len) {
            long got = fill_raw(in, err, errlen);
            if (got < 0)
                return -1;
            if (got == 0) {
                if (!in->gz_member_done) {
                    set_err(err, errlen, "%s: truncated gzip: the compressed stream ends early", in->path);
                    return -1;
                }
                return 0;
            }
        }
        if (in->gz_member_done) {
            /* Another member follows (gzip files may be concatenations). */
            if (inflateReset(&in->z) != Z_OK) {
                set_err(err, errlen, "%s: zlib reset failed", in->path);
                return -1;
            }
            in->gz_member_done = false;
        }
        in->z.next_in = in->raw + in->raw_pos;
        in->z.avail_in = (uInt)(in->raw_len - in->raw_pos);
        int rc = inflate(&in->z, Z_NO_FLUSH);
        in->raw_pos = in->raw_len - in->z.avail_in;
        if (rc == Z_STREAM_END) {
            in->gz_member_done = true;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            set_err(err, errlen, "%s: corrupt gzip data at compressed byte %lld (%s)", in->path,
                    (long long)(in->file_bytes - (int64_t)(in->raw_len - in->raw_pos)),
                    in->z.msg ? in->z.msg : "inflate failed");
            return -1;
        }
    }
    return (long)(n - in->z.avail_out);
}

long source_read(source_input *in, char *buf, size_t n, char *err, size_t errlen)
{
    if (in->eof)
        return 0;
    long got = in->gz ? read_gz(in, buf, n, err, errlen) : read_plain(in, buf, n, err, errlen);
    if (got < 0)
        return -1;
    if (got == 0)
        in->eof = true;
    in->text_bytes += got;
    if (in->max_bytes > 0 && in->text_bytes > in->max_bytes) {
        set_err(err, errlen,
                "%s: more than %lld bytes of trace text: too large to import (limit --max-size)",
                in->path, (long long)in->max_bytes);
        return -1;
    }
    return got;
}

int64_t source_text_offset(const source_input *in)
{
    return in->text_bytes;
}

int source_finish(source_input *in, int64_t *file_bytes, char sha256_hex[65], char *err, size_t errlen)
{
    long got;
    while ((got = fill_raw(in, err, errlen)) > 0)
        ;
    if (got < 0)
        return -1;
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned dn = 0;
    if (EVP_DigestFinal_ex(in->sha, d, &dn) != 1 || dn != 32) {
        set_err(err, errlen, "%s: SHA-256 failed", in->path);
        return -1;
    }
    to_hex(d, dn, sha256_hex);
    *file_bytes = in->file_bytes;
    return 0;
}

void source_close(source_input *in)
{
    if (!in)
        return;
    if (in->gz_started)
        inflateEnd(&in->z);
    if (in->f)
        fclose(in->f);
    EVP_MD_CTX_free(in->sha);
    free(in->raw);
    free(in);
}

int source_hash_file(const char *path, int64_t *file_bytes, char sha256_hex[65], char *err, size_t errlen)
{
    source_input *in;
    source_kind kind;
    if (source_open(path, 0, &in, &kind, err, errlen) < 0)
        return -1;
    int rc = source_finish(in, file_bytes, sha256_hex, err, errlen);
    source_close(in);
    return rc;
}
