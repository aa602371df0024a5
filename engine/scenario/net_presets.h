/* net_presets.h — named fabrics (nvlink4, pcie4, pcie5, ib-ndr400, roce100, eth10g) and
 * the effective per-GPU bandwidth and per-step latency each stands for in [network].
 *
 * Contract: net_preset() fills both figures and returns true for a known name, false
 * for "custom" or an unknown name (nothing written).  The table in net_presets.c cites where each comes from.
 */
#ifndef DDPPROF_NET_PRESETS_H
#define DDPPROF_NET_PRESETS_H

#include <stdbool.h>

bool net_preset(const char *name, double *bandwidth_gbps, double *latency_us);

#endif
