/* netmodel.h — how long a collective takes on the modelled network (alpha-beta costs).
 *
 * Contract: a net_model is built once from the [network] section and the world size and
 * is read-only after.  Flat (gpus_per_node = 0): every rank is one hop of one network
 * with per-step latency alpha and per-rank bandwidth B (bandwidth_gbps, latency_us).
 * Hierarchical (gpus_per_node = g > 0, nodes N = world / g): links inside a node are
 * (intra_bandwidth_gbps, intra_latency_us), links between nodes are the network's.
 * Costs, S bytes per rank, n ranks (ring: NCCL's ring; tree: NCCL's double binary tree,
 * whose bandwidth term is the one-tree asymptote 2S/B):
 *   ring allreduce, flat     2(n-1) * (alpha + S/(n B))
 *   tree allreduce, flat     2 ceil(log2 n) * alpha + 2 S/B
 *   hierarchical allreduce   intra reduce-scatter (g-1)(alpha_i + S/(g B_i)), then the
 *                            flat cost above over the N nodes for S/g bytes (each GPU
 *                            of a node drives its own share of the inter-node links),
 *                            then intra all-gather (g-1)(alpha_i + S/(g B_i))
 *   broadcast                ceil(log2 n) * alpha + S/B (pipelined tree), hierarchical:
 *                            over the nodes, then inside them
 * Measured (algorithm = measured): the allreduce times measured at this world size
 * (network.measured_*), interpolated linearly in log(bytes) -> log(time) between the
 * nearest sizes; below the smallest size its time (latency-bound), above the largest in
 * proportion to the bytes (bandwidth-bound).  A world size with no measurement, and
 * every broadcast, take the alpha-beta costs above.  With network.pace (a backend that
 * holds each allreduce to the modelled link: the cpu backend's pace) a measured
 * allreduce lasts at least the alpha-beta time, as the paced backend's does.
 * One rank: 0.  Bandwidths are GB/s of 1e9 bytes (1 GB/s = 1 byte/ns).
 */
#ifndef DDPPROF_NETMODEL_H
#define DDPPROF_NETMODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/scenario/scenario.h"

typedef struct {
    net_algorithm algorithm;
    int ranks;
    int nodes, gpus_per_node; /* gpus_per_node 0: flat */
    double alpha_ns, bytes_per_ns;             /* the network (every link when flat) */
    double intra_alpha_ns, intra_bytes_per_ns; /* inside a node */
    bool pace;     /* network.pace: an allreduce lasts at least the alpha-beta time */
    int nmeasured; /* measured points at this world size, by increasing bytes */
    double measured_bytes[SCENARIO_MAX_MEASURED], measured_ns[SCENARIO_MAX_MEASURED];
} net_model;

void net_model_init(net_model *nm, const scenario *sc);
/* Transfer time of a SUM allreduce of `bytes` per rank, once every rank has arrived:
 * the measured time where there are measurements (with pace, at least the link's),
 * else the link's. */
double net_allreduce_ns(const net_model *nm, double bytes);
/* The same without the pace's floor: when the reduced data is there (a paced backend
 * copies it out, then holds the collective to the link's time). */
double net_allreduce_data_ns(const net_model *nm, double bytes);
/* The alpha-beta time alone (flat or hierarchical), whatever was measured: what a paced
 * backend holds each allreduce to. */
double net_link_allreduce_ns(const net_model *nm, double bytes);
double net_broadcast_ns(const net_model *nm, double bytes);
/* The time of `bytes` from n measured (b[i] bytes, t[i]) points by increasing bytes (n >
 * 0): log-log interpolation between the nearest sizes, the smallest size's time below
 * them, in proportion to the bytes above them (see above). */
double net_interpolate(const double *b, const double *t, int n, double bytes);
/* True when allreduce times come from measurements at this world size. */
bool net_uses_measurements(const net_model *nm);

#endif
