/* test_nccl_id.c — NCCL's unique id as the cuda backend's world handle, without a GPU:
 * it round-trips through text exactly, malformed text is refused, and it reaches every
 * rank process through the TCP rendezvous byte for byte (built only with the CUDA
 * toolkit). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/backend.h"
#include "engine/cuda/nccl_id.h"
#include "engine/launch/rendezvous.h"

static void test_round_trip(void **state)
{
    (void)state;
    char a[NCCL_ID_TEXT], b[NCCL_ID_TEXT], err[256];
    assert_int_equal(nccl_id_new(a, err, sizeof err), 0);
    assert_int_equal(nccl_id_new(b, err, sizeof err), 0);
    assert_int_equal(strlen(a), NCCL_ID_TEXT - 1);
    assert_string_not_equal(a, b);
    ncclUniqueId id;
    assert_int_equal(nccl_id_parse(a, &id, err, sizeof err), 0);
    char again[NCCL_ID_TEXT];
    snprintf(again, sizeof again, "nccl:");
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++)
        snprintf(again + 5 + 2 * i, 3, "%02x", (unsigned char)id.internal[i]);
    assert_string_equal(again, a);
}

static void test_malformed_refused(void **state)
{
    (void)state;
    char good[NCCL_ID_TEXT], bad[NCCL_ID_TEXT + 8], err[256];
    ncclUniqueId id;
    assert_int_equal(nccl_id_new(good, err, sizeof err), 0);
    assert_int_equal(nccl_id_parse("/dev/shm/ddpprof-comm-x", &id, err, sizeof err), -1);
    assert_non_null(strstr(err, "not an NCCL id"));
    snprintf(bad, sizeof bad, "%.*s", NCCL_ID_TEXT - 3, good); /* one byte short */
    assert_int_equal(nccl_id_parse(bad, &id, err, sizeof err), -1);
    snprintf(bad, sizeof bad, "%s", good);
    bad[9] = 'G';
    assert_int_equal(nccl_id_parse(bad, &id, err, sizeof err), -1);
    assert_non_null(strstr(err, "byte 2"));
    snprintf(bad, sizeof bad, "%s0", good); /* one digit too many */
    assert_int_equal(nccl_id_parse(bad, &id, err, sizeof err), -1);
}

typedef struct {
    int port, rank;
    int rc;
    char world[600];
} joiner;

static void *join_main(void *arg)
{
    joiner *j = arg;
    rdv_config cfg = {.addr = "127.0.0.1", .port = j->port, .rank = j->rank, .world = 3, .timeout_s = 10};
    rdv *r = NULL;
    char err[256];
    j->rc = rdv_join(&cfg, &r, err, sizeof err);
    if (j->rc == 0) {
        size_t len;
        const char *blob = rdv_blob(r, &len);
        const char *w = blob ? strstr(blob, "world ") : NULL;
        j->rc = w && sscanf(w, "world %599s", j->world) == 1 ? 0 : -1;
        rdv_close(r);
    }
    return NULL;
}

/* The coordinator's cuda world is an NCCL id; two rank processes (threads here) get it
 * through the rendezvous and parse the same 128 bytes. */
static void test_exchange_through_rendezvous(void **state)
{
    (void)state;
    const backend_ops *be = backend_find("cuda");
    assert_non_null(be);
    scenario sc;
    scenario_defaults(&sc);
    sc.world_size = 2;
    backend_world_args wa = {.sc = &sc, .create_shared = true};
    backend_world *w = NULL;
    char err[512];
    assert_int_equal(be->world_create(&wa, &w, err, sizeof err), 0);
    const char *handle = be->world_handle(w);
    ncclUniqueId want;
    assert_int_equal(nccl_id_parse(handle, &want, err, sizeof err), 0);

    rdv_config cfg = {.bind_addr = "127.0.0.1", .port = 0, .rank = 0, .world = 3, .timeout_s = 10};
    rdv *r0 = NULL;
    assert_int_equal(rdv_listen(&cfg, &r0, err, sizeof err), 0);
    joiner j[2] = {{.port = rdv_port(r0), .rank = 1}, {.port = rdv_port(r0), .rank = 2}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, join_main, &j[i]), 0);
    char blob[RDV_BLOB_MAX];
    int n = snprintf(blob, sizeof blob, "run 1\nt0 0\nworld %s\n", handle);
    assert_int_equal(rdv_serve(r0, blob, (size_t)n + 1, err, sizeof err), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(j[i].rc, 0);
        ncclUniqueId got;
        assert_int_equal(nccl_id_parse(j[i].world, &got, err, sizeof err), 0);
        assert_memory_equal(got.internal, want.internal, NCCL_UNIQUE_ID_BYTES);
    }
    rdv_close(r0);
    /* Every op is set: the coordinator's world makes no device (devices live in the rank
     * processes), and says so rather than fail a NULL call. */
    assert_non_null(be->clock_ns);
    assert_true(be->clock_ns() > 0);
    assert_null(be->device_create(w, 0, err, sizeof err));
    assert_non_null(strstr(err, "rank processes"));
    be->world_abort(w, "test over");
    assert_int_equal(be->world_aborted(w, err, sizeof err), 1);
    assert_string_equal(err, "test over");
    be->world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_malformed_refused),
        cmocka_unit_test(test_exchange_through_rendezvous),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
