/* verify.h — checks that a rank's gradients after a synchronised step are exactly the
 * average over ranks of what the ranks produced (the --verify run option).
 *
 * Contract: recomputes, with the same fp32 operations the engine performs (accumulate
 * over the micro steps, multiply by 1/world_size, sum over ranks in rank order), what
 * every element must hold, and compares bit for bit (fp16/bf16 hooks: within the
 * format's rounding).  Returns 0, or -1 naming the first wrong element.
 *
 * Ownership: nothing here allocates; sc and params are borrowed for the call, and each
 * params[p].grad must be memory the host can read (the trainer hands a host copy where
 * the device's memory is not).
 */
#ifndef DDPPROF_VERIFY_H
#define DDPPROF_VERIFY_H

#include "engine/device.h"
#include "engine/scenario/scenario.h"

int verify_averaged_gradients(const scenario *sc, int rank, int micro_first, int micro_last,
                              const dev_param *params, int nparams, char *err, size_t errlen);

#endif
