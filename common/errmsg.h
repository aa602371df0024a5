/* errmsg.h — formatting an error message into a caller's (err, errlen) buffer, the
 * convention every fallible function of ddpprof follows. */
#ifndef DDPPROF_ERRMSG_H
#define DDPPROF_ERRMSG_H

#include <stddef.h>

/* vsnprintf into err; does nothing when err is NULL or errlen is 0. */
void set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
