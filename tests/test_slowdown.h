/* test_slowdown.h — how much slower this test build runs than the plain one.
 *
 * Sanitizer builds run several times slower (`make sanitize` / `make tsan` set
 * DDPPROF_TEST_SLOWDOWN): bounds that say "hung" or "too slow to stop" stretch by that
 * factor; the plain build (no variable) keeps them as they are. */
#ifndef DDPPROF_TEST_SLOWDOWN_H
#define DDPPROF_TEST_SLOWDOWN_H

#include <stdlib.h>

static inline double test_slowdown(void)
{
    const char *v = getenv("DDPPROF_TEST_SLOWDOWN");
    double f = v ? atof(v) : 1.0;
    return f >= 1.0 ? f : 1.0;
}

#endif
