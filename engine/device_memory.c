/* device_memory.c — dev_alloc / dev_free: the device's own allocator, else the heap. */
#include <stdlib.h>

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
