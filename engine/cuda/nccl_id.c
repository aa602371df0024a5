/* nccl_id.c — NCCL's unique id to text and back (see nccl_id.h). */
#include "engine/cuda/nccl_id.h"

#include <stdio.h>
#include <string.h>

int nccl_id_new(char text[NCCL_ID_TEXT], char *err, size_t errlen)
{
    ncclUniqueId id;
    ncclResult_t rc = ncclGetUniqueId(&id);
    if (rc != ncclSuccess) {
        snprintf(err, errlen, "ncclGetUniqueId: %s", ncclGetErrorString(rc));
        return -1;
    }
    static const char digits[] = "0123456789abcdef";
    memcpy(text, "nccl:", 5);
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) {
        unsigned char b = (unsigned char)id.internal[i];
        text[5 + 2 * i] = digits[b >> 4];
        text[5 + 2 * i + 1] = digits[b & 15];
    }
    text[NCCL_ID_TEXT - 1] = '\0';
    return 0;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int nccl_id_parse(const char *text, ncclUniqueId *id, char *err, size_t errlen)
{
    if (strncmp(text, "nccl:", 5) != 0 || strlen(text) != NCCL_ID_TEXT - 1) {
        snprintf(err, errlen, "not an NCCL id (want \"nccl:\" and %d hex digits)", 2 * NCCL_UNIQUE_ID_BYTES);
        return -1;
    }
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) {
        int hi = hex_value(text[5 + 2 * i]), lo = hex_value(text[5 + 2 * i + 1]);
        if (hi < 0 || lo < 0) {
            snprintf(err, errlen, "not an NCCL id: '%c%c' at byte %d is not lowercase hex", text[5 + 2 * i],
                     text[5 + 2 * i + 1], i);
            return -1;
        }
        id->internal[i] = (char)(hi << 4 | lo);
    }
    return 0;
}
