/* scenario_keys.c — the scenario key table: every key's section, name, type, range,
 * default and meaning, plus lookups by name and the text forms `explain` shows
 * (contract in scenario_keys.h).
 *
 * Ranges are chosen so that every accepted value is one the engine can run: e.g. a
 * world size fits SCENARIO_MAX_WORLD, a custom parameter stays below 2^40 elements.
 */
#include "engine/scenario/scenario_keys.h"

#include "engine/scenario/scenario_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const backend_choices[] = {"auto", "cpu", "cuda", "sim", NULL};
static const char *const ranks_choices[] = {"threads", "processes", NULL};
/* The one list of model presets: the key's choices, the zoo's names and its messages. */
const char *const scenario_model_presets[] = {"mlp", "resnet18", "resnet50", "bert-large", "gpt2", "custom", NULL};
static const char *const dtype_choices[] = {"fp32", NULL};
static const char *const compute_choices[] = {"model", "real", NULL};
static const char *const hook_choices[] = {"none", "fp16", "bf16", NULL};
static const char *const loss_choices[] = {"mean", "sum", NULL};
static const char *const algorithm_choices[] = {"ring", "tree", "measured", NULL};
static const char *const device_choices[] = {"v100", "a100", "h100", "h200", "custom", NULL};
static const char *const fault_choices[] = {"none", "hang", "exit", "error", NULL};
static const char *const net_preset_choices[] = {"custom", "nvlink4", "pcie4",  "pcie5",
                                                 "ib-ndr400", "roce100", "eth10g", NULL};
static const char *const detail_choices[] = {"op", "phase", NULL};
static const char *const loss_fn_choices[] = {"mse", "cross_entropy", NULL};
static const char *const sync_choices[] = {"ddp", "manual", NULL};

/* fp32 (non-tensor-core) peak and HBM bandwidth; the H100/H200 figures are SXM parts. */
static const struct {
    const char *name;
    double peak_tflops;
    double mem_bw_gbps;
} device_presets[] = {
    {"v100", 15.7, 900},
    {"a100", 19.5, 1555},
    {"h100", 67, 3350},
    {"h200", 67, 4800},
};

#define MEMBER_SIZE(m) sizeof(((scenario *)0)->m)
#define AT(m) .offset = offsetof(scenario, m), .size = MEMBER_SIZE(m)
/* A list: m points to its n elements (the scenario's own, NULL when empty). */
#define LIST_AT(m, n, max) AT(m), .count_offset = offsetof(scenario, n), .max_count = (max)

const key_def scn_keys[] = {
    /* [run] */
    {"run", "name", K_STRING, 1, 0, NULL, "scenario",
     "label of the run in reports; a file that does not set it is named after the file "
     "(without .ini)",
     AT(name), 0, 0},
    {"run", "backend", K_ENUM_STR, 0, 0, backend_choices, "auto",
     "where kernels run: auto uses the GPU when the cuda backend can, cpu never does; cuda "
     "fails at once without a GPU; sim models every op in virtual time (ddpprof predict)",
     AT(backend), 0,
     0},
    {"run", "world_size", K_INT, 1, SCENARIO_MAX_WORLD, NULL, "4",
     "number of DDP ranks (the cpu backend runs up to 64; sim, many more)", AT(world_size), 0, 0},
    {"run", "ranks", K_ENUM_STR, 0, 0, ranks_choices, "threads",
     "threads: every rank a thread of one process; processes: ddpprof starts one process "
     "per rank (as torchrun does), gathered into one database (under a launcher each "
     "process is one rank whatever this says)",
     AT(ranks), 0, 0},
    {"run", "iterations", K_INT, 1, 100000, NULL, "10",
     "measured training iterations, after the warm-up", AT(iterations), 0, 0},
    {"run", "warmup", K_INT, 0, 1000, NULL, "2",
     "warm-up iterations: recorded, but flagged and left out of the statistics", AT(warmup),
     0, 0},
    {"run", "seed", K_U64, 0, 0, NULL, "1",
     "seed of every random draw (jitter), so that a run can be repeated exactly", AT(seed), 0,
     0},
    {"run", "timeout_s", K_DOUBLE, 0.1, 86400, NULL, "60",
     "a collective not completed within this many seconds fails the run, naming the missing "
     "ranks",
     AT(timeout_s), 0, 0},
    {"run", "equivalence", K_BOOL, 0, 0, NULL, "false",
     "compute = real: also train the same model and global batch on one rank, and with the "
     "hand-written sync, and compare the weights after the run (table equivalence)",
     AT(equivalence), 0, 0},

    /* [model] */
    {"model", "preset", K_ENUM_STR, 0, 0, scenario_model_presets, "resnet18",
     "model whose gradients are synchronised (custom: from model.params or model.params_file)",
     AT(preset), 0, 0},
    {"model", "layers", K_INT, 0, 1000, NULL, "0",
     "layers of mlp, bert-large or gpt2 (0 = the preset's own depth)", AT(layers), 0, 0},
    {"model", "hidden", K_INT, 1, 65536, NULL, "1024", "hidden width of the mlp preset",
     AT(hidden), 0, 0},
    {"model", "d_model", K_INT, 0, 65536, NULL, "0",
     "model width of gpt2 and bert-large (0 = preset default)",
     AT(d_model), 0, 0},
    {"model", "vocab", K_INT, 0, 1000000, NULL, "0",
     "vocabulary size of gpt2 and bert-large (0 = preset default)", AT(vocab), 0, 0},
    {"model", "seq_len", K_INT, 0, 65536, NULL, "0",
     "tokens per sample of gpt2 and bert-large (0 = preset default)", AT(seq_len), 0, 0},
    {"model", "batch", K_INT, 1, 65536, NULL, "32", "samples per rank per iteration",
     AT(batch), 0, 0},
    {"model", "dtype", K_ENUM_STR, 0, 0, dtype_choices, "fp32",
     "element type of parameters and gradients (only fp32 so far)", AT(dtype), 0, 0},
    {"model", "compute", K_ENUM_INT, 0, 0, compute_choices, "model",
     "model: kernel times from a roofline model of the device; real: run and time the "
     "kernels",
     AT(compute), 0, 0},
    {"model", "params", K_LIST_I64, 1, 1099511627776.0 /* 2^40 */, NULL, "",
     "element counts of a custom model's parameters, in registration order (needs "
     "model.preset = custom)",
     LIST_AT(custom_params, ncustom, SCENARIO_MAX_CUSTOM_PARAMS)},
    {"model", "layer_forward_us", K_LIST_DOUBLE, 0, 1e9, NULL, "",
     "measured forward time of each layer in microseconds, registration order, one per layer "
     "of the model at speed 1 (a slower rank's skew.speed scales it); replaces the roofline "
     "of [device] (`ddpprof whatif` derives it from a run: the wall-clock time, idle gaps "
     "included); empty = modelled",
     LIST_AT(layer_forward_us, nlayer_forward, SCENARIO_MAX_CUSTOM_PARAMS)},
    {"model", "layer_backward_us", K_LIST_DOUBLE, 0, 1e9, NULL, "",
     "measured backward time of each layer in microseconds, like layer_forward_us: the time "
     "from the previous layer's gradients being ready to this layer's; empty = modelled",
     LIST_AT(layer_backward_us, nlayer_backward, SCENARIO_MAX_CUSTOM_PARAMS)},
    {"model", "forward_comm_us", K_DOUBLE, 0, 1e12, NULL, "0",
     "of layer_forward_us, the time collectives other than DDP's took (an embedding's "
     "all_to_all, an all_gather) in microseconds, at model.comm_ranks ranks: it scales with "
     "the world size as (n-1)/n and not with a rank's speed (`ddpprof whatif` measures it)",
     AT(forward_comm_us), 0, 0},
    {"model", "backward_comm_us", K_DOUBLE, 0, 1e12, NULL, "0",
     "the same, of layer_backward_us", AT(backward_comm_us), 0, 0},
    {"model", "comm_ranks", K_INT, 0, SCENARIO_MAX_WORLD, NULL, "0",
     "the world size forward_comm_us and backward_comm_us were measured at (0: the run's)",
     AT(comm_ranks), 0, 0},
    {"model", "params_file", K_STRING, 0, 0, NULL, "",
     "a custom model's parameter-list file (relative to the scenario file), one tensor a "
     "line in registration order: NAME KIND SHAPE, KIND linear.weight|linear.bias|"
     "norm.weight|norm.bias|conv.weight|conv.bias|embedding|param|buffer|buffer.int64, "
     "SHAPE like 64x3x7x7 or () (a scalar); shapes, autograd's ready order and buffers as "
     "PyTorch's (docs/custom_model.md; needs model.preset = custom, instead of model.params)",
     AT(params_file), 0, 0},
    {"model", "global_batch", K_INT, 0, 1048576, NULL, "0",
     "compute = real: samples per step over all ranks, split as DistributedSampler does "
     "(0 = model.batch per rank)",
     AT(global_batch), 0, 0},
    {"model", "loss", K_ENUM_INT, 0, 0, loss_fn_choices, "mse",
     "compute = real, mlp: the loss trained (mse against seeded targets, or cross_entropy "
     "against seeded classes)",
     AT(loss), 0, 0},
    {"model", "lr", K_DOUBLE, 0, 1e6, NULL, "0.001", "learning rate of the SGD step", AT(lr), 0, 0},
    {"model", "loss_scale", K_DOUBLE, 1e-9, 1e9, NULL, "1",
     "the loss is multiplied by this before backward (e.g. world_size with a sum loss)",
     AT(loss_scale), 0, 0},

    /* [ddp] */
    {"ddp", "bucket_cap_mb", K_DOUBLE, 0.001, 1048576, NULL, "25",
     "size limit of a gradient bucket in MiB (torch DDP's bucket_cap_mb)", AT(bucket_cap_mb),
     0, 0},
    {"ddp", "first_bucket_mb", K_DOUBLE, 0.001, 1048576, NULL, "1",
     "size limit of the first bucket in MiB, small so that the first allreduce starts early",
     AT(first_bucket_mb), 0, 0},
    {"ddp", "gradient_as_bucket_view", K_BOOL, 0, 0, NULL, "false",
     "gradients are views into the buckets, saving the copies into and out of them",
     AT(gradient_as_bucket_view), 0, 0},
    {"ddp", "no_sync_every", K_INT, 1, 10000, NULL, "1",
     "allreduce every k-th iteration, accumulating gradients locally (no_sync) in between",
     AT(no_sync_every), 0, 0},
    {"ddp", "comm_hook", K_ENUM_INT, 0, 0, hook_choices, "none",
     "compress gradients to fp16 or bf16 before the allreduce (half the bytes sent)",
     AT(comm_hook), 0, 0},
    {"ddp", "find_unused_parameters", K_BOOL, 0, 0, NULL, "false",
     "walk the autograd graph every iteration to find parameters without gradients",
     AT(find_unused_parameters), 0, 0},
    {"ddp", "static_graph", K_BOOL, 0, 0, NULL, "false",
     "the graph is the same every iteration, so DDP skips per-iteration bookkeeping",
     AT(static_graph), 0, 0},
    {"ddp", "loss_reduction", K_ENUM_INT, 0, 0, loss_choices, "mean",
     "how the loss is reduced over the batch, which sets the scale of the gradients averaged",
     AT(loss_reduction), 0, 0},
    {"ddp", "sync", K_ENUM_INT, 0, 0, sync_choices, "ddp",
     "ddp: buckets allreduced during backward; manual: allreduce every gradient after "
     "backward, then divide by world_size (the hand-written alternative)",
     AT(sync), 0, 0},
    {"ddp", "broadcast_buffers", K_BOOL, 0, 0, NULL, "true",
     "broadcast the module's buffers (batch-norm running statistics) from rank 0 before each "
     "forward, as DDP does by default",
     AT(broadcast_buffers), 0, 0},
    {"ddp", "join", K_BOOL, 0, 0, NULL, "false",
     "train inside model.join(): a rank out of data shadows the others' collectives with zeros "
     "(uneven inputs, skew.rank_steps)",
     AT(join), 0, 0},
    {"ddp", "divide_by_initial_world_size", K_BOOL, 0, 0, NULL, "true",
     "join: divide the gradients by world_size (true) or by the ranks still training (false)",
     AT(divide_by_initial_world_size), 0, 0},

    /* [skew] */
    {"skew", "speed", K_LIST_DOUBLE, 0.01, 100, NULL, "",
     "speed factor of each rank, one per rank (1.5 = 1.5x faster); one value = every rank's; "
     "empty = all 1",
     LIST_AT(speed, nspeed, SCENARIO_MAX_RANK_LIST)},
    {"skew", "speed_repeat", K_BOOL, 0, 0, NULL, "false",
     "skew.speed repeats over the ranks, whatever the world size: rank r takes the speed of "
     "rank r mod (its length), so measured speeds carry to more or fewer ranks (`ddpprof "
     "whatif` sets it); false = one value per rank",
     AT(speed_repeat), 0, 0},
    {"skew", "rank_steps", K_LIST_INT, 1, 1100000, NULL, "",
     "uneven inputs: the steps of data each rank has (one per rank; empty = every step); "
     "needs ddp.join when they differ",
     LIST_AT(rank_steps, nrank_steps, SCENARIO_MAX_RANK_LIST)},
    {"skew", "slow_ranks", K_LIST_INT, 0, SCENARIO_MAX_WORLD - 1, NULL, "",
     "ranks whose compute is slowed down by skew.slowdown", LIST_AT(slow_ranks, nslow, SCENARIO_MAX_RANK_LIST)},
    {"skew", "slowdown", K_DOUBLE, 1, 100, NULL, "1",
     "the slow ranks' compute takes this many times longer", AT(slowdown), 0, 0},
    {"skew", "jitter", K_DOUBLE, 0, 0.5, NULL, "0",
     "relative standard deviation of every kernel's duration (0 = deterministic)",
     AT(jitter), 0, 0},
    {"skew", "slow_fraction", K_DOUBLE, 0, 1, NULL, "0",
     "each rank is slowed down by skew.slowdown with this probability (a seeded draw per "
     "rank, so about this fraction of the ranks), besides skew.slow_ranks",
     AT(slow_fraction), 0, 0},
    {"skew", "speed_sigma", K_DOUBLE, 0, 2, NULL, "0",
     "speed factor of each rank drawn from a lognormal of median 1 and this sigma (seeded "
     "by run.seed and the rank), multiplied with skew.speed; 0 = off",
     AT(speed_sigma), 0, 0},

    /* [network] */
    {"network", "bandwidth_gbps", K_DOUBLE, 0.001, 100000, NULL, "12.5",
     "bandwidth of each link in GB/s (1e9 bytes per second); per GPU between nodes when "
     "gpus_per_node > 0; the beta term of the alpha-beta model (a calibration fits it)",
     AT(bandwidth_gbps), 0, 0},
    {"network", "latency_us", K_DOUBLE, 0, 1e6, NULL, "10",
     "latency of each step of a collective in microseconds (between nodes when "
     "gpus_per_node > 0); the alpha term of the alpha-beta model (a calibration fits it)",
     AT(latency_us), 0, 0},
    {"network", "algorithm", K_ENUM_INT, 0, 0, algorithm_choices, "ring",
     "allreduce algorithm: ring (bandwidth-optimal), tree (fewer latency-bound steps), or "
     "measured (times interpolated from network.measured_ranks / measured_bytes / "
     "measured_us, as ddpprof calibrate writes them; the ring with latency_us and "
     "bandwidth_gbps for a world size not measured, and for broadcasts)",
     AT(algorithm), 0, 0},
    {"network", "measured_ranks", K_LIST_INT, 1, SCENARIO_MAX_WORLD, NULL, "",
     "algorithm = measured: the world size of each measured allreduce",
     LIST_AT(measured_ranks, nmeasured_ranks, SCENARIO_MAX_MEASURED)},
    {"network", "measured_bytes", K_LIST_I64, 1, 1e15, NULL, "",
     "algorithm = measured: the bytes per rank of each measured allreduce",
     LIST_AT(measured_bytes, nmeasured_bytes, SCENARIO_MAX_MEASURED)},
    {"network", "measured_us", K_LIST_DOUBLE, 0.001, 1e12, NULL, "",
     "algorithm = measured: the time in microseconds of each measured allreduce (from the "
     "last rank's arrival to its end)",
     LIST_AT(measured_us, nmeasured_us, SCENARIO_MAX_MEASURED)},
    {"network", "pace", K_BOOL, 0, 0, NULL, "false",
     "hold each allreduce to the modelled link time, so measured overlap matches the network",
     AT(pace), 0, 0},
    {"network", "preset", K_ENUM_STR, 0, 0, net_preset_choices, "custom",
     "fabric between nodes (every link when gpus_per_node = 0): fills bandwidth_gbps and "
     "latency_us unless they are set (nvlink4 = H100 NVLink 4, pcie4/pcie5 = x16, ib-ndr400 "
     "= InfiniBand NDR 400 Gb/s, roce100 = RoCE 100 Gb/s, eth10g = 10 Gb/s Ethernet)",
     AT(net_preset), 0, 0},
    {"network", "gpus_per_node", K_INT, 0, 1024, NULL, "0",
     "GPUs per node: > 0 makes collectives hierarchical (inside each node over the intra "
     "links, between nodes over the network); 0 = one flat network",
     AT(gpus_per_node), 0, 0},
    {"network", "nodes", K_INT, 0, SCENARIO_MAX_WORLD, NULL, "0",
     "number of nodes (0 = run.world_size / gpus_per_node); nodes x gpus_per_node must be "
     "run.world_size",
     AT(nodes), 0, 0},
    {"network", "intra_preset", K_ENUM_STR, 0, 0, net_preset_choices, "custom",
     "fabric inside a node: fills intra_bandwidth_gbps and intra_latency_us unless they are "
     "set (same names as network.preset)",
     AT(intra_preset), 0, 0},
    {"network", "intra_bandwidth_gbps", K_DOUBLE, 0.001, 100000, NULL, "150",
     "bandwidth of each link inside a node in GB/s (used when gpus_per_node > 0)",
     AT(intra_bandwidth_gbps), 0, 0},
    {"network", "intra_latency_us", K_DOUBLE, 0, 1e6, NULL, "5",
     "latency of each step inside a node in microseconds (used when gpus_per_node > 0)",
     AT(intra_latency_us), 0, 0},

    /* [device] — the preset must come before the two keys it fills, so that the defaults
     * (applied in table order) agree with it. */
    {"device", "preset", K_ENUM_STR, 0, 0, device_choices, "a100",
     "GPU assumed by the compute model; fills peak_tflops and mem_bw_gbps unless they are set",
     AT(device_preset), 0, 0},
    {"device", "peak_tflops", K_DOUBLE, 0.001, 1e6, NULL, "19.5",
     "fp32 peak in TFLOP/s (from device.preset unless set)", AT(peak_tflops), 0, 0},
    {"device", "mem_bw_gbps", K_DOUBLE, 0.001, 1e6, NULL, "1555",
     "memory bandwidth in GB/s (from device.preset unless set)", AT(mem_bw_gbps), 0, 0},
    {"device", "copy_out_gbps", K_DOUBLE, 0, 1e6, NULL, "0",
     "memory bandwidth in GB/s of the copies out of the buckets after the allreduce, where it "
     "differs from mem_bw_gbps (on shared cores every rank copies out at once); `ddpprof "
     "calibrate --from` learns it; 0 = mem_bw_gbps",
     AT(copy_out_gbps), 0, 0},
    {"device", "optimizer_gbps", K_DOUBLE, 0, 1e6, NULL, "0",
     "memory bandwidth in GB/s of the optimizer step (SGD reads parameter and gradient and "
     "writes the parameter), where it differs from mem_bw_gbps; `ddpprof calibrate --from` "
     "learns it; 0 = mem_bw_gbps",
     AT(optimizer_gbps), 0, 0},
    {"device", "grad_write_gbps", K_DOUBLE, 0, 1e6, NULL, "0",
     "memory bandwidth in GB/s of a backward's gradient write (bytes written; read and written "
     "when it accumulates), the least time a backward takes, where it differs from mem_bw_gbps "
     "(a fill, not a copy); `ddpprof calibrate --from` learns it; 0 = mem_bw_gbps",
     AT(grad_write_gbps), 0, 0},
    {"device", "efficiency", K_DOUBLE, 0.01, 1, NULL, "0.5",
     "fraction of the peak that kernels achieve", AT(efficiency), 0, 0},
    {"device", "op_overhead_us", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: microseconds of idle stream time before every op and collective, the hand-off "
     "from the host to the stream's worker, as `ddpprof calibrate` measures it on a backend; 0 "
     "starts each op as soon as its stream and its inputs are ready",
     AT(op_overhead_us), 0, 0},
    {"device", "comm_slowdown", K_DOUBLE, 0, 100, NULL, "0",
     "predict only: how much slower a forward or backward runs while its rank's comm stream "
     "moves data (NCCL kernels take SMs and memory bandwidth; the cpu backend's allreduce sums "
     "take the cores a sleeping op wakes on): inside a collective it progresses at 1/(1 + this) "
     "of its speed; `ddpprof calibrate --from` learns it; 0 = compute and communication never "
     "slow each other",
     AT(comm_slowdown), 0, 0},

    /* [host] — the model of ranks that share one host's cores and cache (the cpu backend's
     * machine: late wake-ups, stalls, crowding, cache), applied by predict alone
     * (engine/sim/) and learned by `calibrate --from` (engine/predict/).  A GPU user
     * leaves it at its defaults, which model none of it. */
    {"host", "op_overhead_busy_us", K_DOUBLE, -1, 1e6, NULL, "-1",
     "predict only: microseconds of idle compute-stream time before an op queued behind a copy "
     "or optimizer step, whose worker ran it on its core and takes the next op without sleeping "
     "(the cpu backend: about 1 us at the median where a forward's hand-off takes 10-35); "
     "`ddpprof calibrate --from` learns it as the mean gap behind a rank's copies and steps, the "
     "last copy in aside (after it the stream waits for the last allreduce); -1 = op_overhead_us",
     AT(op_overhead_busy_us), 0, 0},
    {"host", "op_wakeup_us", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: microseconds added to every forward and backward op that a real stream sleeps "
     "to its modelled deadline and wakes from late (one whose gradient write outlasts the model is "
     "busy to its end and has none), as "
     "`ddpprof calibrate` measures it; 0 leaves each op its model",
     AT(op_wakeup_us), 0, 0},
    {"host", "op_wakeup_sd_us", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: standard deviation of op_wakeup_us from op to op: each wake-up is then a "
     "lognormal draw of that mean and deviation, seeded by run.seed and the rank, so equal "
     "ranks drift apart as on a real machine; `ddpprof calibrate --from` learns it; 0 = every "
     "wake-up the same",
     AT(op_wakeup_sd_us), 0, 0},
    {"host", "op_stall_fraction", K_DOUBLE, 0, 1, NULL, "0",
     "predict only: the share of wake-ups that stall as well (a thread kept off the cores for "
     "milliseconds, which a lognormal almost never draws, yet one stalled rank holds every rank at "
     "the next collective); `ddpprof calibrate --from` learns it; 0 = none",
     AT(op_stall_fraction), 0, 0},
    {"host", "op_stall_us", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: the mean length of such a stall in microseconds (each an exponential draw, "
     "seeded as the wake-ups are)",
     AT(op_stall_us), 0, 0},
    {"host", "backward_stall_fraction", K_DOUBLE, 0, 1, NULL, "0",
     "predict only: the share of backward ops whose wake-up is followed by a stall, where "
     "backwards stall otherwise than forwards (on the cpu backend other ranks' copies hold "
     "the cores a waking backward wants); `ddpprof calibrate --from` learns it; 0 with "
     "backward_stall_us 0 = op_stall_fraction",
     AT(backward_stall_fraction), 0, 0},
    {"host", "backward_stall_us", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: a backward's stall, mean in microseconds (exponential); 0 with "
     "backward_stall_fraction 0 = op_stall_us",
     AT(backward_stall_us), 0, 0},
    {"host", "op_gap_stall_fraction", K_DOUBLE, 0, 1, NULL, "0",
     "predict only: the share of compute-stream ops whose hand-off (op_overhead_us) stalls "
     "as well, the stream's worker held off its core between two ops; `ddpprof calibrate "
     "--from` learns it from the gaps between forwards",
     AT(op_gap_stall_fraction), 0, 0},
    {"host", "op_gap_stall_us", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: such a stall's mean in microseconds (exponential)",
     AT(op_gap_stall_us), 0, 0},
    {"host", "noise_seed", K_U64, 0, 0, NULL, "0",
     "predict only: seed of the draws of the machine's noise alone (the wake-ups' spread, the "
     "stalls, the order a host's ranks get its cores in), apart from run.seed, which also draws "
     "the jitter and the skew: predictions of one scenario with seeds 1, 2, 3, ... are draws of "
     "one model, as repeated runs are measurements of one machine; 0 = from run.seed",
     AT(noise_seed), 0, 0},
    {"host", "comm_wakeup_us", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: microseconds more for a forward or backward whose end falls while its "
     "rank's comm stream moves data (on shared cores the sums hold the cores it wakes on); "
     "`ddpprof calibrate --from` learns it with comm_slowdown; 0 = none",
     AT(comm_wakeup_us), 0, 0},
    {"host", "comm_launch_us", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: microseconds by which a comm stream that sat idle, waiting for the compute "
     "stream's event (a bucket's gradients ready), starts the collective after it late, beyond "
     "op_overhead_us (the cpu backend's comm worker is woken by the event and runs below "
     "compute; a GPU's NCCL kernel is launched), and by which it wakes late from a paced link's "
     "floor; `ddpprof calibrate --from` learns it; 0 = none",
     AT(comm_launch_us), 0, 0},
    {"host", "comm_launch_sd_us", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: standard deviation of comm_launch_us from collective to collective (a "
     "seeded lognormal, as the wake-ups are); `ddpprof calibrate --from` learns it; 0 = every "
     "late start the same",
     AT(comm_launch_sd_us), 0, 0},
    {"host", "comm_launch_per_op_us", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: on a host whose ranks outnumber host_cores, microseconds more of that late "
     "start for each copy, optimizer step or write-bound backward of the host's other ranks "
     "running when the bucket is ready (the comm worker, below compute, waits for a core they "
     "hold); `ddpprof calibrate --from` learns it with comm_launch_us; 0 = the same late start "
     "however busy the host",
     AT(comm_launch_per_op_us), 0, 0},
    {"host", "comm_launch_behind_us", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: with host_cores, an idle comm stream woken while its rank's compute stream "
     "goes straight on with copies or write-bound backwards (its worker never sleeps between "
     "them) starts once that run of ops ends or once it finds a core elsewhere, whichever is "
     "first: the latter after an exponential draw of this mean in microseconds (the comm "
     "worker, below compute, waits for the core the compute worker holds); `ddpprof calibrate "
     "--from` learns it; 0 = no wait",
     AT(comm_launch_behind_us), 0, 0},
    {"host", "comm_exit_late_fraction", K_DOUBLE, 0, 1, NULL, "0",
     "predict only: on a host whose ranks outnumber host_cores, the share of the ranks waiting "
     "for a bucket allreduce (nothing else on their compute stream) that leave it late, the "
     "first rank out aside (the cpu backend's comm workers, woken at the end, queue behind "
     "the copies and steps of the ranks already out); `ddpprof calibrate --from` learns it; "
     "0 = none",
     AT(comm_exit_late_fraction), 0, 0},
    {"host", "comm_exit_late_us", K_DOUBLE, 0, 1e7, NULL, "0",
     "predict only: microseconds by which such a rank leaves late, the mean (a seeded "
     "lognormal with comm_exit_late_sd_us); `ddpprof calibrate --from` learns it",
     AT(comm_exit_late_us), 0, 0},
    {"host", "comm_exit_late_sd_us", K_DOUBLE, 0, 1e7, NULL, "0",
     "predict only: standard deviation of comm_exit_late_us; `ddpprof calibrate --from` "
     "learns it; 0 = every late exit the same",
     AT(comm_exit_late_sd_us), 0, 0},
    {"host", "compute_wake_late_fraction", K_DOUBLE, 0, 1, NULL, "0",
     "predict only: on a host whose ranks outnumber host_cores, the share of the times a "
     "rank's compute stream, idle until its comm stream's event (the copies out after the "
     "last bucket), starts what follows late (the cpu backend's compute worker, woken, "
     "queues behind the copies and steps of the other ranks); `ddpprof calibrate --from` "
     "learns it; 0 = none",
     AT(compute_wake_late_fraction), 0, 0},
    {"host", "compute_wake_late_us", K_DOUBLE, 0, 1e7, NULL, "0",
     "predict only: microseconds by which such a compute stream starts late, the mean (a "
     "seeded lognormal with compute_wake_late_sd_us), no later than the host's cores are "
     "free of the other ranks' copies and steps; `ddpprof calibrate --from` learns it",
     AT(compute_wake_late_us), 0, 0},
    {"host", "compute_wake_late_sd_us", K_DOUBLE, 0, 1e7, NULL, "0",
     "predict only: standard deviation of compute_wake_late_us; `ddpprof calibrate --from` "
     "learns it; 0 = every late start the same",
     AT(compute_wake_late_sd_us), 0, 0},
    {"host", "host_wake_us", K_DOUBLE, 0, 1e7, NULL, "0",
     "predict only: microseconds by which a rank's host goes on late after a synchronize it "
     "waited in (the end of every step; a buffers' broadcast; not the end of an iteration that "
     "kept its gradients, after which nothing holds the cores), the mean (a seeded lognormal "
     "with host_wake_sd_us): on the cpu backend the host thread is woken from a condition "
     "variable and wakes its stream's worker in turn, so ranks start each iteration apart; "
     "`ddpprof calibrate --from` learns it from the gap between a rank's last compute op of "
     "an iteration and the first op of the next, beyond op_overhead_us (not after an iteration "
     "that ended with a backward); 0 = none",
     AT(host_wake_us), 0, 0},
    {"host", "host_wake_sd_us", K_DOUBLE, 0, 1e7, NULL, "0",
     "predict only: standard deviation of host_wake_us; `ddpprof calibrate --from` learns "
     "it; 0 = every late start the same",
     AT(host_wake_sd_us), 0, 0},
    {"host", "host_wake_stall_fraction", K_DOUBLE, 0, 1, NULL, "0",
     "predict only: the share of those wake-ups that stall as well (the host thread kept "
     "off the cores for milliseconds); `ddpprof calibrate --from` learns it as it learns "
     "op_stall_fraction; 0 = none",
     AT(host_wake_stall_fraction), 0, 0},
    {"host", "host_wake_stall_us", K_DOUBLE, 0, 1e7, NULL, "0",
     "predict only: the mean length of such a stall in microseconds, beyond host_wake_us "
     "(exponential)",
     AT(host_wake_stall_us), 0, 0},
    {"host", "host_cores", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: cores that the ranks of one host share for their memory-bound ops (copies "
     "into and out of the buckets, the optimizer step), each op on at most one core: on the cpu "
     "backend every rank is a process of one machine, and after the last allreduce they all copy "
     "out and step at once; a host is network.gpus_per_node ranks, or the whole world when that "
     "is 0; `ddpprof calibrate --from` writes the cores of the machine it learned on and learns "
     "the bandwidths of one op on one core; 0 = every rank has its own memory system (GPUs)",
     AT(host_cores), 0, 0},
    {"host", "comm_on_host_cores", K_BOOL, 0, 0, NULL, "false",
     "predict only: with host_cores, a bucket allreduce among the ranks of one host is work on "
     "its cores too (the cpu backend's comm workers add and copy the buckets): each rank's part "
     "runs from the last arrival at its share of the cores beside the copies and steps, and "
     "[network]'s measured allreduce table gives the collective's time alone on the host; "
     "`ddpprof calibrate --from` learns the table so and writes this; false = the table's time "
     "whatever else runs",
     AT(comm_on_host_cores), 0, 0},
    {"host", "comm_core_weight", K_DOUBLE, 0.01, 100, NULL, "1",
     "predict only: with comm_on_host_cores, how the host's cores are shared out when its "
     "ops outnumber them: a rank's part of the sums (or its copy out of the staging area) gets "
     "this weight, a copy or step weight 1, none more than a core; below 1 the copies and "
     "steps go first (the cpu backend's comm workers run at niceness 10, which Linux weighs "
     "at 110 against 1024); `ddpprof calibrate --from` learns it; 1 = every op alike",
     AT(comm_core_weight), 0, 0},
    {"host", "cache_mb", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: MiB of last-level cache that the ranks of one host share; where their memory "
     "(each rank's parameters, gradients and buckets: 12 bytes per parameter) fits in it, the "
     "copies, optimizer steps and gradient writes move at the cache_*_gbps bandwidths (a small "
     "model on the cpu backend copies out of the caches); `ddpprof calibrate --from` writes the "
     "cache of the machine it learned on; 0 = no cache modelled",
     AT(cache_mb), 0, 0},
    {"host", "cache_copy_in_gbps", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: mem_bw_gbps (copies into the buckets) where the host's memory fits in "
     "cache_mb; `ddpprof calibrate --from` learns it from runs that fit; 0 = mem_bw_gbps",
     AT(cache_copy_in_gbps), 0, 0},
    {"host", "cache_copy_out_gbps", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: copy_out_gbps where the host's memory fits in cache_mb; `ddpprof calibrate "
     "--from` learns it from runs that fit; 0 = copy_out_gbps",
     AT(cache_copy_out_gbps), 0, 0},
    {"host", "cache_optimizer_gbps", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: optimizer_gbps where the host's memory fits in cache_mb; `ddpprof calibrate "
     "--from` learns it from runs that fit; 0 = optimizer_gbps",
     AT(cache_optimizer_gbps), 0, 0},
    {"host", "cache_grad_write_gbps", K_DOUBLE, 0, 1e6, NULL, "0",
     "predict only: grad_write_gbps where the host's memory fits in cache_mb; `ddpprof "
     "calibrate --from` learns it from runs that fit; 0 = grad_write_gbps",
     AT(cache_grad_write_gbps), 0, 0},
    {"host", "cache_allreduce_factor", K_DOUBLE, 0, 1e3, NULL, "0",
     "predict only: where the host's memory fits in cache_mb, a bucket allreduce's time from "
     "[network]'s measured table times this (the sums read and write the caches); `ddpprof "
     "calibrate --from` learns it from runs that fit: the median of their collectives' times "
     "over the table's at their size; 0 = 1",
     AT(cache_allreduce_factor), 0, 0},
    {"host", "cache_allreduce_stall_fraction", K_DOUBLE, 0, 1, NULL, "0",
     "predict only: where the host's memory fits in cache_mb and it has a core per rank, the "
     "share of bucket allreduces that stall (a rank's worker held off its core: a short "
     "allreduce's time is a body at the table's time and now and then milliseconds more); "
     "`ddpprof calibrate --from` learns it from runs that fit",
     AT(cache_allreduce_stall_fraction), 0, 0},
    {"host", "cache_allreduce_stall_us", K_DOUBLE, 0, 1e7, NULL, "0",
     "predict only: how long such a stall lasts, on average (an exponential draw)",
     AT(cache_allreduce_stall_us), 0, 0},
    {"host", "cache_allreduce_crowded_stall_fraction", K_DOUBLE, 0, 1, NULL, "0",
     "predict only: cache_allreduce_stall_fraction on a host whose ranks outnumber its cores",
     AT(cache_allreduce_crowded_stall_fraction), 0, 0},
    {"host", "cache_allreduce_crowded_stall_us", K_DOUBLE, 0, 1e7, NULL, "0",
     "predict only: cache_allreduce_stall_us on a host whose ranks outnumber its cores",
     AT(cache_allreduce_crowded_stall_us), 0, 0},
    {"host", "cache_op_wakeup_us", K_DOUBLE, -1, 1e6, NULL, "-1",
     "predict only: op_wakeup_us where the host's memory fits in cache_mb (a small model's "
     "sub-microsecond forwards on a host its copies barely load wake sooner and stall less); "
     "`ddpprof calibrate --from` learns it from the forwards of runs that fit; -1 = op_wakeup_us",
     AT(cache_op_wakeup_us), 0, 0},
    {"host", "cache_op_wakeup_sd_us", K_DOUBLE, -1, 1e6, NULL, "-1",
     "predict only: op_wakeup_sd_us where the host's memory fits in cache_mb; `ddpprof "
     "calibrate --from` learns it from runs that fit; -1 = op_wakeup_sd_us",
     AT(cache_op_wakeup_sd_us), 0, 0},
    {"host", "cache_op_stall_fraction", K_DOUBLE, -1, 1, NULL, "-1",
     "predict only: op_stall_fraction where the host's memory fits in cache_mb; `ddpprof "
     "calibrate --from` learns it from runs that fit; -1 = op_stall_fraction",
     AT(cache_op_stall_fraction), 0, 0},
    {"host", "cache_op_stall_us", K_DOUBLE, -1, 1e6, NULL, "-1",
     "predict only: op_stall_us where the host's memory fits in cache_mb; `ddpprof calibrate "
     "--from` learns it from runs that fit; -1 = op_stall_us",
     AT(cache_op_stall_us), 0, 0},
    {"host", "cache_host_wake_us", K_DOUBLE, -1, 1e7, NULL, "-1",
     "predict only: host_wake_us where the host's memory fits in cache_mb (the host's "
     "cores are free sooner after a small model's step); `ddpprof calibrate --from` learns "
     "it from runs that fit; -1 = host_wake_us",
     AT(cache_host_wake_us), 0, 0},
    {"host", "cache_host_wake_sd_us", K_DOUBLE, -1, 1e7, NULL, "-1",
     "predict only: host_wake_sd_us where the host's memory fits in cache_mb; -1 = "
     "host_wake_sd_us",
     AT(cache_host_wake_sd_us), 0, 0},
    {"host", "cache_host_wake_stall_fraction", K_DOUBLE, -1, 1, NULL, "-1",
     "predict only: host_wake_stall_fraction where the host's memory fits in cache_mb; -1 = "
     "host_wake_stall_fraction",
     AT(cache_host_wake_stall_fraction), 0, 0},
    {"host", "cache_host_wake_stall_us", K_DOUBLE, -1, 1e7, NULL, "-1",
     "predict only: host_wake_stall_us where the host's memory fits in cache_mb; -1 = "
     "host_wake_stall_us",
     AT(cache_host_wake_stall_us), 0, 0},
    {"host", "cache_comm_launch_us", K_DOUBLE, -1, 1e7, NULL, "-1",
     "predict only: comm_launch_us where the host's memory fits in cache_mb; `ddpprof "
     "calibrate --from` learns it from runs that fit; -1 = comm_launch_us",
     AT(cache_comm_launch_us), 0, 0},
    {"host", "cache_comm_launch_sd_us", K_DOUBLE, -1, 1e7, NULL, "-1",
     "predict only: comm_launch_sd_us where the host's memory fits in cache_mb; -1 = "
     "comm_launch_sd_us",
     AT(cache_comm_launch_sd_us), 0, 0},
    {"host", "cache_comm_launch_per_op_us", K_DOUBLE, -1, 1e7, NULL, "-1",
     "predict only: comm_launch_per_op_us where the host's memory fits in cache_mb; -1 = "
     "comm_launch_per_op_us",
     AT(cache_comm_launch_per_op_us), 0, 0},
    {"host", "cache_comm_launch_behind_us", K_DOUBLE, -1, 1e7, NULL, "-1",
     "predict only: comm_launch_behind_us where the host's memory fits in cache_mb (a small "
     "model's runs of copies are microseconds long: a comm worker woken beside one seldom "
     "waits for it); `ddpprof calibrate --from` learns it from runs that fit, 0 where none "
     "of their launches met such a run; -1 = comm_launch_behind_us",
     AT(cache_comm_launch_behind_us), 0, 0},

    /* [fault] */
    {"fault", "rank", K_INT, -1, SCENARIO_MAX_WORLD - 1, NULL, "-1",
     "rank that fails on purpose (-1 = none)", AT(fault_rank), 0, 0},
    {"fault", "iter", K_INT, 0, 1000000, NULL, "0", "iteration at which that rank fails",
     AT(fault_iter), 0, 0},
    {"fault", "mode", K_ENUM_INT, 0, 0, fault_choices, "none",
     "how it fails: hang (never joins the collective), exit (the process dies) or error",
     AT(fault), 0, 0},

    /* [record] */
    {"record", "detail", K_ENUM_INT, 0, 0, detail_choices, "op",
     "op: every op is a span; phase: the sim backend merges each rank's consecutive "
     "forward, backward (with its copies into buckets), copy-out and optimizer ops into "
     "one span per phase, keeping one span per collective (for thousands of ranks)",
     AT(detail), 0, 0},
    {"record", "spans_ranks", K_STRING, 1, 0, NULL, "auto",
     "which ranks keep their spans in a run of more than 64 ranks (every rank keeps its "
     "statistics): auto = the slowest, the fastest, the median and the 10/25/75/90 % "
     "quantiles by speed factor, and rank 0; all = every rank; or ranks such as 0,17,4095, "
     "kept beside auto's (ddpprof run/predict/whatif --spans-ranks LIST sets it)",
     AT(spans_ranks), 0, 0},
};

const size_t scn_nkeys = sizeof scn_keys / sizeof scn_keys[0];
_Static_assert(sizeof scn_keys / sizeof scn_keys[0] <= SCENARIO_MAX_KEYS,
               "raise SCENARIO_MAX_KEYS in scenario.h");
_Static_assert(sizeof(compute_mode) == sizeof(int) && sizeof(comm_hook_kind) == sizeof(int) &&
                   sizeof(loss_reduction_kind) == sizeof(int) &&
                   sizeof(net_algorithm) == sizeof(int) && sizeof(fault_mode) == sizeof(int) &&
                   sizeof(record_detail) == sizeof(int) && sizeof(loss_fn_kind) == sizeof(int) &&
                   sizeof(sync_kind) == sizeof(int),
               "K_ENUM_INT keys are stored as int");

const char *const scn_sections[] = {"run",     "model",  "ddp",   "skew",
                                       "network", "device", "host",  "fault", "record", "sweep"};
const size_t scn_nsections = sizeof scn_sections / sizeof scn_sections[0];

const void *scn_list_items(const scenario *sc, const key_def *k)
{
    const void *items;
    memcpy(&items, (const char *)sc + k->offset, sizeof items);
    return items;
}

void scn_list_replace(scenario *sc, const key_def *k, void *items, int count)
{
    void *old;
    memcpy(&old, (char *)sc + k->offset, sizeof old);
    free(old);
    memcpy((char *)sc + k->offset, &items, sizeof items);
    memcpy((char *)sc + k->count_offset, &count, sizeof count);
}

bool scn_is_list(const key_def *k)
{
    return k->type == K_LIST_DOUBLE || k->type == K_LIST_INT || k->type == K_LIST_I64;
}

void scn_dotted_name(const key_def *k, char *buf, size_t n)
{
    scn_bprintf(buf, n, "%s.%s", k->section, k->name);
}

int scn_find_key(const char *section, const char *name)
{
    for (size_t i = 0; i < scn_nkeys; i++)
        if (strcmp(scn_keys[i].section, section) == 0 && strcmp(scn_keys[i].name, name) == 0)
            return (int)i;
    return -1;
}

bool scn_known_section(const char *section)
{
    for (size_t i = 0; i < scn_nsections; i++)
        if (strcmp(scn_sections[i], section) == 0)
            return true;
    return false;
}

static void section_keys(const char *section, char *buf, size_t n)
{
    size_t pos = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < scn_nkeys && pos < n; i++)
        if (strcmp(scn_keys[i].section, section) == 0)
            pos += scn_bprintf(buf + pos, n - pos, "%s%s", pos ? ", " : "", scn_keys[i].name);
}

int scn_unknown_key_msg(const char *section, const char *name, char *err, size_t errlen)
{
    /* The terms of a host's shared cores were [device] keys before [host] held them: name
     * the new key to a file or an override written before. */
    if (strcmp(section, "device") == 0 && scn_find_key("host", name) >= 0)
        return scn_errf(err, errlen,
                        "device.%s is now host.%s: move it under [host] (the model of ranks that "
                        "share one host's cores; `ddpprof explain host`)",
                        name, name);
    char list[400];
    section_keys(section, list, sizeof list);
    return scn_errf(err, errlen, "unknown key \"%s\" in [%s] (keys: %s)", name, section, list);
}

/* Resolves "section.key" to a table index, with a message saying what is allowed. */
int scn_find_dotted(const char *dotted, int *index, char *err, size_t errlen)
{
    const char *dot = strchr(dotted, '.');
    if (dot == NULL || dot == dotted || dot[1] == '\0')
        return scn_errf(err, errlen, "\"%s\" is not a section.key name (e.g. ddp.bucket_cap_mb)", dotted);
    char section[64];
    size_t len = (size_t)(dot - dotted);
    if (len >= sizeof section)
        return scn_errf(err, errlen, "unknown section in \"%s\" (sections: %s)", dotted, SCN_SECTION_LIST);
    memcpy(section, dotted, len);
    section[len] = '\0';
    if (strcmp(section, "sweep") == 0)
        return scn_errf(err, errlen,
                        "\"%s\": sweep axes can only be given in the [sweep] section of a file",
                        dotted);
    if (!scn_known_section(section))
        return scn_errf(err, errlen, "unknown section [%s] (sections: %s)", section, SCN_SECTION_LIST);
    int i = scn_find_key(section, dot + 1);
    if (i < 0)
        return scn_unknown_key_msg(section, dot + 1, err, errlen);
    *index = i;
    return 0;
}

void scenario_short_key(const char *dotted, char *out, size_t n)
{
    const char *dot = strchr(dotted, '.');
    const char *name = dot ? dot + 1 : dotted;
    int found = 0;
    for (size_t i = 0; i < scn_nkeys && dot; i++)
        found += strcmp(scn_keys[i].name, name) == 0;
    snprintf(out, n, "%s", found == 1 ? name : dotted);
}

int scn_key_index(const char *section, const char *name)
{
    int i = scn_find_key(section, name);
    if (i < 0) {
        /* Only reachable if the table and the code that names its keys disagree. */
        fprintf(stderr, "ddpprof: scenario key %s.%s missing from the key table\n", section,
                name);
        abort();
    }
    return i;
}

void scn_fmt_double(double v, char *buf, size_t n)
{
    /* Plain %.15g where it reads back exactly (no "1e+03" for 1000), more digits only
     * where needed, so that INI export round-trips. */
    for (int prec = 15; prec <= 17; prec++) {
        scn_bprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

void scn_describe_range(const key_def *k, char *buf, size_t n)
{
    char lo[32], hi[32];
    scn_fmt_double(k->min, lo, sizeof lo);
    scn_fmt_double(k->max, hi, sizeof hi);
    switch (k->type) {
    case K_INT:
    case K_DOUBLE:
        scn_bprintf(buf, n, "[%s, %s]", lo, hi);
        break;
    case K_U64:
        scn_bprintf(buf, n, "[0, 2^64-1]");
        break;
    case K_BOOL:
        scn_bprintf(buf, n, "true|false");
        break;
    case K_STRING:
        scn_bprintf(buf, n, "%s%zu bytes of UTF-8", k->min >= 1 ? "1 to " : "<=", k->size - 1);
        break;
    case K_ENUM_STR:
    case K_ENUM_INT: {
        size_t pos = 0;
        buf[0] = '\0';
        for (int c = 0; k->choices[c] != NULL && pos < n; c++)
            pos += scn_bprintf(buf + pos, n - pos, "%s%s", c ? "|" : "", k->choices[c]);
        break;
    }
    case K_LIST_DOUBLE:
    case K_LIST_INT:
    case K_LIST_I64:
        scn_bprintf(buf, n, "<=%d x [%s, %s]", k->max_count, lo, hi);
        break;
    }
}

const char *scn_type_name(key_type t)
{
    switch (t) {
    case K_INT:
        return "int";
    case K_U64:
        return "uint64";
    case K_DOUBLE:
        return "double";
    case K_BOOL:
        return "bool";
    case K_STRING:
        return "string";
    case K_ENUM_STR:
    case K_ENUM_INT:
        return "enum";
    case K_LIST_DOUBLE:
        return "list<double>";
    case K_LIST_INT:
        return "list<int>";
    case K_LIST_I64:
        return "list<int64>";
    }
    return "?";
}

/* ---------------------------------------------------------------- parsing values */

bool scn_device_preset(const char *name, double *peak_tflops, double *mem_bw_gbps)
{
    for (size_t i = 0; i < sizeof device_presets / sizeof device_presets[0]; i++) {
        if (strcmp(device_presets[i].name, name) == 0) {
            *peak_tflops = device_presets[i].peak_tflops;
            *mem_bw_gbps = device_presets[i].mem_bw_gbps;
            return true;
        }
    }
    return false;
}

size_t scn_elem_size(key_type t)
{
    return t == K_LIST_DOUBLE ? sizeof(double) : t == K_LIST_INT ? sizeof(int) : sizeof(int64_t);
}
