/* nsys_sqlite.c — see nsys_sqlite.h. */
#include "nsys_sqlite.h"

#include "errmsg.h"

int nsys_sqlite_read(const char *path, int file_idx, const trace_limits *lim, trace_rank ***out, int *nout,
                     char *err, size_t errlen)
{
    (void)file_idx;
    (void)lim;
    *out = NULL;
    *nout = 0;
    set_err(err, errlen, "%s: Nsight Systems exports are not read yet", path);
    return -1;
}
