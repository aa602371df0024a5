/* netmodel.c — alpha-beta costs of ring, tree and hierarchical collectives (contract in
 * netmodel.h); the link figures of named fabrics are engine/scenario/net_presets.c. */
#include "engine/cost/netmodel.h"

#include <math.h>
#include <string.h>

/* The points measured at this world size, sorted by size; repeated sizes averaged. */
static void keep_measurements(net_model *nm, const scenario *sc)
{
    int n = sc->nmeasured_us;
    if (sc->nmeasured_ranks != n || sc->nmeasured_bytes != n)
        return; /* scenario_check refuses this; be safe if called on an unchecked scenario */
    int count[SCENARIO_MAX_MEASURED] = {0};
    for (int i = 0; i < n; i++) {
        if (sc->measured_ranks[i] != sc->world_size || sc->measured_bytes[i] <= 0 || !(sc->measured_us[i] > 0))
            continue;
        double b = (double)sc->measured_bytes[i], t = sc->measured_us[i] * 1e3;
        int at = 0;
        while (at < nm->nmeasured && nm->measured_bytes[at] < b)
            at++;
        if (at < nm->nmeasured && nm->measured_bytes[at] == b) {
            nm->measured_ns[at] = (nm->measured_ns[at] * count[at] + t) / (count[at] + 1);
            count[at]++;
            continue;
        }
        for (int j = nm->nmeasured; j > at; j--) {
            nm->measured_bytes[j] = nm->measured_bytes[j - 1];
            nm->measured_ns[j] = nm->measured_ns[j - 1];
            count[j] = count[j - 1];
        }
        nm->measured_bytes[at] = b;
        nm->measured_ns[at] = t;
        count[at] = 1;
        nm->nmeasured++;
    }
}

bool net_uses_measurements(const net_model *nm) { return nm->nmeasured > 0; }

static double measured_allreduce(const net_model *nm, double bytes)
{
    return net_interpolate(nm->measured_bytes, nm->measured_ns, nm->nmeasured, bytes);
}

double net_interpolate(const double *b, const double *t, int n, double bytes)
{
    if (bytes <= b[0])
        return t[0];
    if (bytes >= b[n - 1])
        return t[n - 1] * bytes / b[n - 1];
    int hi = 1;
    while (b[hi] < bytes)
        hi++;
    double f = log(bytes / b[hi - 1]) / log(b[hi] / b[hi - 1]);
    return exp(log(t[hi - 1]) + f * (log(t[hi]) - log(t[hi - 1])));
}

void net_model_init(net_model *nm, const scenario *sc)
{
    memset(nm, 0, sizeof *nm);
    nm->algorithm = sc->algorithm;
    nm->ranks = sc->world_size;
    nm->alpha_ns = sc->latency_us * 1e3;
    nm->bytes_per_ns = sc->bandwidth_gbps;
    nm->intra_alpha_ns = sc->intra_latency_us * 1e3;
    nm->intra_bytes_per_ns = sc->intra_bandwidth_gbps;
    nm->pace = sc->pace;
    if (sc->gpus_per_node > 0 && sc->world_size % sc->gpus_per_node == 0) {
        nm->gpus_per_node = sc->gpus_per_node;
        nm->nodes = sc->world_size / sc->gpus_per_node;
    }
    if (sc->algorithm == NET_MEASURED)
        keep_measurements(nm, sc);
}

static double log2_ceil(int n)
{
    int steps = 0;
    while ((1 << steps) < n && steps < 31)
        steps++;
    return steps;
}

/* One flat allreduce among n peers over links (alpha, B). */
static double flat_allreduce(net_algorithm alg, int n, double alpha, double bpns, double bytes)
{
    if (n <= 1)
        return 0;
    if (alg == NET_TREE)
        return 2.0 * log2_ceil(n) * alpha + 2.0 * bytes / bpns;
    return 2.0 * (n - 1) * (alpha + bytes / ((double)n * bpns));
}

double net_allreduce_ns(const net_model *nm, double bytes)
{
    if (nm->ranks <= 1)
        return 0;
    if (nm->nmeasured == 0)
        return net_link_allreduce_ns(nm, bytes);
    double measured = measured_allreduce(nm, bytes);
    if (!nm->pace)
        return measured;
    double link = net_link_allreduce_ns(nm, bytes);
    return link > measured ? link : measured;
}

double net_allreduce_data_ns(const net_model *nm, double bytes)
{
    if (nm->ranks <= 1)
        return 0;
    return nm->nmeasured > 0 ? measured_allreduce(nm, bytes) : net_link_allreduce_ns(nm, bytes);
}

double net_link_allreduce_ns(const net_model *nm, double bytes)
{
    if (nm->ranks <= 1)
        return 0;
    if (nm->gpus_per_node == 0)
        return flat_allreduce(nm->algorithm, nm->ranks, nm->alpha_ns, nm->bytes_per_ns, bytes);
    int g = nm->gpus_per_node;
    /* Reduce-scatter inside the node, allreduce of each GPU's shard across nodes,
     * all-gather inside the node. */
    double intra = (g - 1) * (nm->intra_alpha_ns + bytes / ((double)g * nm->intra_bytes_per_ns));
    double inter = flat_allreduce(nm->algorithm, nm->nodes, nm->alpha_ns, nm->bytes_per_ns, bytes / g);
    return 2.0 * intra + inter;
}

static double flat_broadcast(int n, double alpha, double bpns, double bytes)
{
    return n <= 1 ? 0 : log2_ceil(n) * alpha + bytes / bpns;
}

double net_broadcast_ns(const net_model *nm, double bytes)
{
    if (nm->gpus_per_node == 0)
        return flat_broadcast(nm->ranks, nm->alpha_ns, nm->bytes_per_ns, bytes);
    return flat_broadcast(nm->nodes, nm->alpha_ns, nm->bytes_per_ns, bytes) +
           flat_broadcast(nm->gpus_per_node, nm->intra_alpha_ns, nm->intra_bytes_per_ns, bytes);
}
