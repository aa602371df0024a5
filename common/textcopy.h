/* textcopy.h — bounded copy of a message into a fixed buffer (truncating, always
 * terminated), where snprintf("%s") would only add truncation warnings.
 *
 * Ownership: nothing here allocates; dst and src are the caller's, borrowed for the
 * call. */
#ifndef DDPPROF_TEXTCOPY_H
#define DDPPROF_TEXTCOPY_H

#include <string.h>

static inline void text_copy(char *dst, size_t dstlen, const char *src)
{
    if (dstlen == 0)
        return;
    size_t n = strnlen(src, dstlen - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

#endif
