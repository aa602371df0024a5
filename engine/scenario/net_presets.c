/* net_presets.c — the link figures of named fabrics, what network.preset and
 * network.intra_preset stand for (net_presets.h). */
#include "engine/scenario/net_presets.h"

#include <stddef.h>
#include <string.h>

/* Effective per-GPU bandwidth and per-step latency of each fabric.
 *
 * Bandwidth: the line rate per direction times the fraction NCCL is seen to reach, 0.82
 * on NVLink (about 370 GB/s busbw of 450 GB/s on 8 x H100 with NCCL_ALGO=RING: S. Jeaugey
 * in NVIDIA/nccl-tests#212) and 0.92 on NICs (46-48 GB/s per 400 Gb/s NDR NIC: NVIDIA in
 * NVIDIA/nccl-tests#290; 0.92 is also NCCL's own ring/tree bus-bandwidth factor in
 * src/graph/tuning.cc).  PCIe takes NVLink's fraction.  Line rates: NVLink 4 on H100,
 * 18 links, 900 GB/s both directions (NVIDIA H100 Tensor Core GPU datasheet); PCIe 4.0
 * x16 16 GT/s and PCIe 5.0 x16 32 GT/s with 128b/130b encoding, 31.5 and 63 GB/s per
 * direction (PCI-SIG PCIe 4.0 / 5.0 base specifications); InfiniBand NDR 400 Gb/s
 * (NVIDIA ConnectX-7 datasheet); RoCE 100 Gb/s and 10 Gb/s Ethernet (IEEE 802.3ba /
 * 802.3ae line rates).
 * Latency: NCCL's per-hop hardware latencies for the Simple protocol of ring collectives,
 * the protocol large gradient buckets use (src/graph/tuning.cc hwLat: NVLink 3.4 us,
 * PCI 5.7 us, NET 14 us); plain TCP sockets over 10 GbE get the NET figure doubled for
 * the kernel's socket path (an estimate, not a measurement). */
static const struct {
    const char *name;
    double bandwidth_gbps, latency_us;
} presets[] = {
    {"nvlink4", 450 * 0.82, 3.4},
    {"pcie4", 31.5 * 0.82, 5.7},
    {"pcie5", 63.0 * 0.82, 5.7},
    {"ib-ndr400", 50.0 * 0.92, 14.0},
    {"roce100", 12.5 * 0.92, 14.0},
    {"eth10g", 1.25 * 0.92, 28.0},
};

bool net_preset(const char *name, double *bandwidth_gbps, double *latency_us)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        if (strcmp(presets[i].name, name) == 0) {
            *bandwidth_gbps = presets[i].bandwidth_gbps;
            *latency_us = presets[i].latency_us;
            return true;
        }
    }
    return false;
}
