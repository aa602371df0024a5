/* test_sim_network.c — the sim backend, worked out by hand (the model: tests/sim_by_hand.h):
 * the network model's formulas and measured tables, and collectives through the sim's devices
 * carrying data. */
#include "sim_by_hand.h"

/* The network model's formulas at points worked out by hand. */
static void test_network_model(void **state)
{
    (void)state;
    scenario *sc = hand_scenario((const char *[]){"run.world_size=8", "network.bandwidth_gbps=10",
                                                  "network.latency_us=2", NULL});
    net_model nm;
    net_model_init(&nm, sc);
    /* ring: 2*7*(2000 + 8e6/(8*10)) = 14 * 102000 */
    assert_true(fabs(net_allreduce_ns(&nm, 8e6) - 14.0 * 102000) < 1e-6);
    /* tree: 2*3*2000 + 2*8e6/10 */
    sc->algorithm = NET_TREE;
    net_model_init(&nm, sc);
    assert_true(fabs(net_allreduce_ns(&nm, 8e6) - (12000 + 1.6e6)) < 1e-6);
    /* hierarchical ring, 2 nodes of 4: intra 2*3*(5000 + 8e6/(4*100)) + inter over 2
     * nodes of 2e6 bytes 2*1*(2000 + 2e6/(2*10)) */
    sc->algorithm = NET_RING;
    char err[SCENARIO_ERR];
    assert_int_equal(scenario_override(sc, "network.gpus_per_node=4", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "network.intra_bandwidth_gbps=100", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "network.intra_latency_us=5", err, sizeof err), 0);
    net_model_init(&nm, sc);
    assert_true(fabs(net_allreduce_ns(&nm, 8e6) - (6.0 * 25000 + 2.0 * 102000)) < 1e-6);
    /* one rank: nothing to send */
    assert_int_equal(scenario_override(sc, "run.world_size=1", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "network.gpus_per_node=0", err, sizeof err), 0);
    net_model_init(&nm, sc);
    assert_true(net_allreduce_ns(&nm, 8e6) == 0);
    /* presets fill the link unless it is set */
    scenario_free(sc); /* its lists, before the defaults again */
    scenario_defaults(sc);
    assert_int_equal(scenario_override(sc, "network.preset=ib-ndr400", err, sizeof err), 0);
    assert_true(fabs(sc->bandwidth_gbps - 46.0) < 1e-9);
    assert_true(fabs(sc->latency_us - 14.0) < 1e-9);
    assert_int_equal(scenario_override(sc, "network.intra_preset=nvlink4", err, sizeof err), 0);
    assert_true(fabs(sc->intra_bandwidth_gbps - 369.0) < 1e-9);
    scenario_free(sc); /* its lists, before the defaults again */
    scenario_defaults(sc);
    assert_int_equal(scenario_override(sc, "network.bandwidth_gbps=3", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "network.preset=roce100", err, sizeof err), 0);
    assert_true(sc->bandwidth_gbps == 3.0);
    scenario_free(sc);
    free(sc);
}

/* algorithm = measured: the points of this world size, log-log between neighbours
 * (with network.pace, never below the link's alpha-beta time)
 * (1000 B: 10 us, 100000 B: 1000 us, so 10000 B: sqrt(10 * 1000) = 100 us), the
 * smallest time below them, proportional above (200000 B: 2000 us); a repeated size is
 * averaged; another world size, and broadcasts, keep the ring. */
static void test_measured_network(void **state)
{
    (void)state;
    scenario *sc = hand_scenario((const char *[]){"run.world_size=4", "network.bandwidth_gbps=10",
                                                  "network.latency_us=2", "network.algorithm=measured",
                                                  "network.measured_ranks=2,4,4,4,4",
                                                  "network.measured_bytes=1000,100000,1000,4000,4000",
                                                  "network.measured_us=7,1000,10,30,50", NULL});
    net_model nm;
    net_model_init(&nm, sc);
    assert_true(net_uses_measurements(&nm));
    assert_true(fabs(net_allreduce_ns(&nm, 1000) - 10000) < 1e-6);
    assert_true(fabs(net_allreduce_ns(&nm, 4) - 10000) < 1e-6);
    assert_true(fabs(net_allreduce_ns(&nm, 4000) - 40000) < 1e-6);
    /* between 4000 (40 us) and 100000 (1000 us): 20000 B is log(5)/log(25) = 1/2 of the way */
    assert_true(fabs(net_allreduce_ns(&nm, 20000) - sqrt(40000.0 * 1e6)) < 1e-3);
    assert_true(fabs(net_allreduce_ns(&nm, 200000) - 2e6) < 1e-6);
    /* broadcasts: the ring's tree of latency + bytes / bandwidth, 2*2000 + 8e6/10 */
    assert_true(fabs(net_broadcast_ns(&nm, 8e6) - (4000 + 8e5)) < 1e-6);
    char err[SCENARIO_ERR];
    /* pace: at least the link's ring, 2*3*(2000 + S/(4*10)): 12150 ns for 1000 B (above
     * the measured 10 us), 27000 ns for 100000 B (below the measured 1000 us) */
    assert_int_equal(scenario_override(sc, "network.pace=true", err, sizeof err), 0);
    net_model_init(&nm, sc);
    assert_true(fabs(net_allreduce_ns(&nm, 1000) - 12150) < 1e-6);
    assert_true(fabs(net_link_allreduce_ns(&nm, 100000) - 27000) < 1e-6);
    assert_true(fabs(net_allreduce_ns(&nm, 100000) - 1e6) < 1e-6);
    assert_int_equal(scenario_override(sc, "network.pace=false", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "run.world_size=8", err, sizeof err), 0);
    net_model_init(&nm, sc);
    assert_false(net_uses_measurements(&nm));
    assert_true(fabs(net_allreduce_ns(&nm, 8e6) - 14.0 * 102000) < 1e-6);
    scenario_free(sc);
    free(sc);
}

/* Collectives through the sim's devices directly (device.h), 3 ranks: a broadcast for
 * which each rank names roots[rank] as the root (the root's buffer holds 100..103, the
 * others' -1), then two SUM allreduces: int32 {rank, 1} and float32 rank + 0.5. */
typedef struct {
    const backend_ops *be;
    backend_world *w;
    int roots[3];
    int32_t buf[3][4];
    int32_t isum[3][2];
    float fsum[3];
    int rc[3];
    char err[3][256];
} bcast_case;

static int allreduce(device *d, int64_t seq, void *buf, int64_t count, dev_dtype dtype)
{
    dev_op op = {.kind = SPAN_ALLREDUCE, .iter = 0, .layer = -1, .bucket = -1, .seq = seq, .bytes = count * 4,
                 .work = WORK_ALLREDUCE};
    snprintf(op.name, sizeof op.name, "test allreduce");
    op.u.coll.buf = buf;
    op.u.coll.count = count;
    op.u.coll.dtype = dtype;
    op.u.coll.prescale = 1.0f;
    return dev_enqueue(d, DEV_STREAM_COMM, &op) != 0 || dev_synchronize(d, DEV_STREAM_COMM) != 0 ? -1 : 0;
}

static void bcast_rank(void *user, int rank)
{
    bcast_case *c = user;
    device *d = c->be->device_create(c->w, rank, c->err[rank], sizeof c->err[rank]);
    if (!d) {
        c->rc[rank] = -1;
        return;
    }
    int root = c->roots[rank];
    for (int k = 0; k < 4; k++)
        c->buf[rank][k] = rank == root ? 100 + k : -1;
    dev_op op = {.kind = SPAN_BROADCAST, .iter = 0, .layer = -1, .bucket = -1, .seq = 0, .bytes = 16,
                 .work = WORK_BROADCAST};
    snprintf(op.name, sizeof op.name, "test broadcast int32");
    op.u.coll.buf = c->buf[rank];
    op.u.coll.count = 4;
    op.u.coll.dtype = DEV_I32;
    op.u.coll.prescale = 1.0f;
    op.u.coll.root = root;
    c->rc[rank] = dev_enqueue(d, DEV_STREAM_COMM, &op) != 0 || dev_synchronize(d, DEV_STREAM_COMM) != 0 ? -1 : 0;
    if (c->rc[rank] != 0)
        snprintf(c->err[rank], sizeof c->err[rank], "%s", dev_error(d));
    /* The root may reuse its buffer once its host sees the broadcast end (as DDP's
     * scratch buffer is): the others must have their copy by then. */
    if (rank == root)
        memset(c->buf[rank], 0, sizeof c->buf[rank]);
    c->isum[rank][0] = rank;
    c->isum[rank][1] = 1;
    c->fsum[rank] = (float)rank + 0.5f;
    if (c->rc[rank] == 0 &&
        (allreduce(d, 1, c->isum[rank], 2, DEV_I32) != 0 || allreduce(d, 2, &c->fsum[rank], 1, DEV_F32) != 0)) {
        c->rc[rank] = -1;
        snprintf(c->err[rank], sizeof c->err[rank], "%s", dev_error(d));
    }
    c->be->device_destroy(d);
}

static void run_bcast(bcast_case *c)
{
    scenario *sc = hand_scenario((const char *[]){"run.world_size=3", NULL});
    c->be = backend_find("sim");
    assert_non_null(c->be);
    recorder *rec;
    assert_int_equal(recorder_create(NULL, 0, c->be->span_rings, &rec), 0);
    assert_int_equal(recorder_start(rec), 0);
    backend_world_args wa = {.sc = sc, .rec = rec};
    char err[256];
    if (c->be->world_create(&wa, &c->w, err, sizeof err) != 0)
        fail_msg("%s", err);
    c->be->run_ranks(c->w, 3, bcast_rank, NULL, c);
    c->be->world_destroy(c->w);
    assert_int_equal(recorder_stop(rec, err, sizeof err), 0);
    recorder_destroy(rec);
    scenario_free(sc);
    free(sc);
}

/* The root's data reach every other rank whichever rank is the root (join broadcasts
 * from the last rank still training), even a root that arrives last and reuses its
 * buffer at once; ranks that name different roots fail the collective.  Allreduces
 * with buffers leave the sum in each (join reads its counts): {0+1+2, 3} and 4.5. */
static void test_collectives_carry_data(void **state)
{
    (void)state;
    for (int root = 0; root < 3; root++) {
        bcast_case c = {.roots = {root, root, root}};
        run_bcast(&c);
        for (int r = 0; r < 3; r++) {
            if (c.rc[r] != 0)
                fail_msg("rank %d: %s", r, c.err[r]);
            assert_int_equal(c.isum[r][0], 3);
            assert_int_equal(c.isum[r][1], 3);
            assert_true(c.fsum[r] == 4.5f);
            if (r == root)
                continue;
            for (int k = 0; k < 4; k++)
                assert_int_equal(c.buf[r][k], 100 + k);
        }
    }
    bcast_case c = {.roots = {1, 1, 2}};
    run_bcast(&c);
    int failed = 0;
    for (int r = 0; r < 3; r++) {
        if (c.rc[r] == 0)
            continue;
        failed++;
        assert_non_null(strstr(c.err[r], "names rank 2 its root where the ranks before it named 1"));
    }
    assert_int_equal(failed, 3);
    bcast_case out = {.roots = {3, 3, 3}};
    run_bcast(&out);
    for (int r = 0; r < 3; r++) {
        assert_int_equal(out.rc[r], -1);
        assert_non_null(strstr(out.err[r], "outside the world of 3"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measured_network),
        cmocka_unit_test(test_network_model),
        cmocka_unit_test(test_collectives_carry_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
