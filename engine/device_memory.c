/* device_memory.c — dev_alloc / dev_free / dev_copy / dev_zero: the device's own memory
 * functions, else the heap's. */
#include <stdlib.h>
#include <string.h>

#include "engine/device.h"

void *dev_alloc(device *d, size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    return d->ops->alloc ? d->ops->alloc(d, bytes) : calloc(1, bytes);
}

void dev_free(device *d, void *p)
{
    if (!p)
        return;
    if (d->ops->release)
        d->ops->release(d, p);
    else
        free(p);
}

int dev_copy(device *d, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return 0;
    if (d->ops->copy)
        return d->ops->copy(d, dst, src, bytes);
    memmove(dst, src, bytes);
    return 0;
}

int dev_zero(device *d, void *p, size_t bytes)
{
    if (bytes == 0)
        return 0;
    if (d->ops->zero)
        return d->ops->zero(d, p, bytes);
    memset(p, 0, bytes);
    return 0;
}
