/* test_model_zoo.c — the presets' parameter lists, totals and FLOPs against the
 * published models (torchvision ResNets, HuggingFace BERT-large and GPT-2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/workload/model_zoo.h"

/* Zeroed: a scenario that holds nothing, as scenario_free() expects. */
static scenario *new_scenario(const char *preset)
{
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    snprintf(sc->preset, sizeof sc->preset, "%s", preset);
    sc->batch = 1;
    return sc;
}

static void build_ok(const scenario *sc, model *m)
{
    char err[256] = "";
    int rc = model_build(sc, m, err, sizeof err);
    if (rc != 0)
        print_error("model_build(%s): %s\n", sc->preset, err);
    assert_int_equal(rc, 0);
    assert_string_equal(err, "");
}

static const model_param *find_param(const model *m, const char *name)
{
    for (int i = 0; i < m->nparams; i++)
        if (strcmp(m->params[i].name, name) == 0)
            return &m->params[i];
    return NULL;
}

static const model_layer *find_layer(const model *m, const char *name)
{
    for (int i = 0; i < m->nlayers; i++)
        if (strcmp(m->layers[i].name, name) == 0)
            return &m->layers[i];
    return NULL;
}

static void assert_shape(const model *m, const char *name, int ndims, int64_t d0, int64_t d1, int64_t d2,
                         int64_t d3)
{
    const model_param *p = find_param(m, name);
    if (!p)
        print_error("no parameter %s\n", name);
    assert_non_null(p);
    const int64_t want[4] = {d0, d1, d2, d3};
    assert_int_equal(p->ndims, ndims);
    int64_t numel = 1;
    for (int i = 0; i < ndims; i++) {
        assert_int_equal(p->shape[i], want[i]);
        numel *= want[i];
    }
    assert_int_equal(p->numel, numel);
}

static void assert_near_rel(double got, double want, double rel)
{
    if (fabs(got - want) > rel * fabs(want))
        print_error("got %.6g, want %.6g (within %.2g)\n", got, want, rel);
    assert_true(fabs(got - want) <= rel * fabs(want));
}

/* Invariants every model must satisfy, whatever the preset. */
static void check_consistent(const model *m)
{
    assert_true(m->nparams > 0);
    assert_true(m->nlayers > 0);
    assert_non_null(m->params);
    assert_non_null(m->layers);

    int next = 0;
    double flops = 0;
    for (int l = 0; l < m->nlayers; l++) {
        const model_layer *ly = &m->layers[l];
        assert_true(ly->name[0] != '\0');
        assert_true(ly->nparams >= 0);
        assert_int_equal(ly->first_param, next); /* contiguous, in registration order */
        for (int i = ly->first_param; i < ly->first_param + ly->nparams; i++)
            assert_int_equal(m->params[i].layer, l);
        next += ly->nparams;
        assert_true(ly->fwd_flops >= 0);
        flops += ly->fwd_flops;
        if (ly->gemm_m || ly->gemm_n || ly->gemm_k) {
            assert_true(ly->gemm_m > 0 && ly->gemm_n > 0 && ly->gemm_k > 0);
            assert_near_rel(2.0 * (double)ly->gemm_m * (double)ly->gemm_n * (double)ly->gemm_k, ly->fwd_flops,
                            1e-12);
        }
    }
    assert_int_equal(next, m->nparams);
    assert_near_rel(m->fwd_flops_per_sample, flops, 1e-12);

    int64_t total = 0;
    for (int i = 0; i < m->nparams; i++) {
        const model_param *p = &m->params[i];
        assert_true(p->ndims >= 1 && p->ndims <= MODEL_MAX_DIMS);
        int64_t numel = 1;
        for (int d = 0; d < p->ndims; d++) {
            assert_true(p->shape[d] > 0);
            numel *= p->shape[d];
        }
        assert_int_equal(p->numel, numel);
        assert_true(p->layer >= 0 && p->layer < m->nlayers);
        total += numel;
        for (int j = 0; j < i; j++) /* names are unique, as in named_parameters() */
            assert_string_not_equal(m->params[j].name, p->name);
    }
    assert_int_equal(m->total_numel, total);
}

/* ---- presets ---------------------------------------------------------------- */

static void test_preset_names(void **state)
{
    (void)state;
    const char *const *n = model_preset_names();
    const char *want[] = {"mlp", "resnet18", "resnet50", "bert-large", "gpt2", "custom"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_non_null(n[i]);
        assert_string_equal(n[i], want[i]);
    }
    assert_null(n[6]);
}

static void test_totals_and_consistency(void **state)
{
    (void)state;
    static const struct {
        const char *preset;
        int64_t total;
        int nparams;
    } cases[] = {
        {"mlp", 4LL * (1024 * 1024 + 1024), 8},
        {"resnet18", 11689512, 62},
        {"resnet50", 25557032, 161},
        {"bert-large", 335141888, 5 + 24 * 16 + 2},
        {"gpt2", 124439808, 2 + 12 * 12 + 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scenario *sc = new_scenario(cases[i].preset);
        model m;
        build_ok(sc, &m);
        assert_string_equal(m.name, cases[i].preset);
        assert_int_equal(m.total_numel, cases[i].total);
        assert_int_equal(m.nparams, cases[i].nparams);
        check_consistent(&m);
        model_free(&m);
        scenario_free(sc);
        free(sc);
    }
}

static void test_resnet18(void **state)
{
    (void)state;
    scenario *sc = new_scenario("resnet18");
    model m;
    build_ok(sc, &m);
    assert_int_equal(m.nparams, 62);
    assert_string_equal(m.params[0].name, "conv1.weight");
    assert_shape(&m, "conv1.weight", 4, 64, 3, 7, 7);
    assert_string_equal(m.params[1].name, "bn1.weight");
    assert_string_equal(m.params[2].name, "bn1.bias");
    assert_string_equal(m.params[3].name, "layer1.0.conv1.weight");
    assert_string_equal(m.params[60].name, "fc.weight");
    assert_shape(&m, "fc.weight", 2, 1000, 512, 0, 0);
    assert_string_equal(m.params[61].name, "fc.bias");
    assert_shape(&m, "fc.bias", 1, 1000, 0, 0, 0);

    /* downsample only where the shape changes: layer2..4 block 0 */
    assert_null(find_param(&m, "layer1.0.downsample.0.weight"));
    assert_shape(&m, "layer2.0.downsample.0.weight", 4, 128, 64, 1, 1);
    assert_shape(&m, "layer2.0.downsample.1.weight", 1, 128, 0, 0, 0);
    assert_shape(&m, "layer4.1.conv2.weight", 4, 512, 512, 3, 3);
    /* downsample follows bn2 of the same block, as torchvision registers it */
    const model_param *bn2 = find_param(&m, "layer3.0.bn2.bias");
    assert_non_null(bn2);
    assert_string_equal((bn2 + 1)->name, "layer3.0.downsample.0.weight");

    /* conv, BN and fc are separate layers; BN owns weight and bias */
    const model_layer *c1 = find_layer(&m, "conv1");
    assert_non_null(c1);
    assert_int_equal(c1->nparams, 1);
    assert_int_equal(c1->first_param, 0);
    const model_layer *b1 = find_layer(&m, "bn1");
    assert_non_null(b1);
    assert_int_equal(b1->nparams, 2);
    assert_int_equal(b1->gemm_m, 0);
    assert_true(b1->fwd_flops > 0);

    /* conv1: 112x112 output, im2col GEMM 12544 x 64 x 147 */
    assert_int_equal(c1->gemm_m, 112 * 112);
    assert_int_equal(c1->gemm_n, 64);
    assert_int_equal(c1->gemm_k, 3 * 7 * 7);
    assert_near_rel(c1->fwd_flops, 2.0 * 64 * 3 * 49 * 112 * 112, 1e-12);
    const model_layer *l4 = find_layer(&m, "layer4.0.conv1");
    assert_non_null(l4);
    assert_int_equal(l4->gemm_m, 7 * 7);

    /* pooling is kept as parameter-less layers */
    const model_layer *mp = find_layer(&m, "maxpool");
    assert_non_null(mp);
    assert_int_equal(mp->nparams, 0);
    assert_non_null(find_layer(&m, "avgpool"));
    assert_string_equal(m.layers[m.nlayers - 1].name, "fc");
    assert_near_rel(m.layers[m.nlayers - 1].fwd_flops, 2.0 * 512 * 1000, 1e-12);

    /* 1.814 GMACs (torchvision) = 3.63 GFLOPs, plus a little BN and pooling */
    assert_near_rel(m.fwd_flops_per_sample, 3.628e9, 0.02);
    check_consistent(&m);
    model_free(&m);
    scenario_free(sc);
    free(sc);
}

static void test_resnet50(void **state)
{
    (void)state;
    scenario *sc = new_scenario("resnet50");
    model m;
    build_ok(sc, &m);
    assert_int_equal(m.nparams, 161);
    assert_int_equal(m.total_numel, 25557032);
    assert_string_equal(m.params[0].name, "conv1.weight");
    assert_shape(&m, "conv1.weight", 4, 64, 3, 7, 7);
    assert_string_equal(m.params[159].name, "fc.weight");
    assert_shape(&m, "fc.weight", 2, 1000, 2048, 0, 0);
    assert_string_equal(m.params[160].name, "fc.bias");
    assert_shape(&m, "fc.bias", 1, 1000, 0, 0, 0);

    /* bottleneck: layer1.0 needs a downsample (64 -> 256 channels) */
    assert_shape(&m, "layer1.0.downsample.0.weight", 4, 256, 64, 1, 1);
    assert_shape(&m, "layer1.0.conv3.weight", 4, 256, 64, 1, 1);
    assert_shape(&m, "layer2.0.conv2.weight", 4, 128, 128, 3, 3);
    assert_shape(&m, "layer4.2.conv3.weight", 4, 2048, 512, 1, 1);
    assert_shape(&m, "layer4.2.bn3.bias", 1, 2048, 0, 0, 0);
    assert_null(find_param(&m, "layer1.1.downsample.0.weight"));
    assert_non_null(find_param(&m, "layer3.5.conv1.weight"));
    assert_null(find_param(&m, "layer3.6.conv1.weight"));

    /* torchvision v1.5: the stride is on the 3x3 conv, so conv1 of layer2.0 runs at
     * 56x56 and conv2 at 28x28 */
    const model_layer *a = find_layer(&m, "layer2.0.conv1");
    const model_layer *b = find_layer(&m, "layer2.0.conv2");
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->gemm_m, 56 * 56);
    assert_int_equal(b->gemm_m, 28 * 28);

    /* 4.09 GMACs (torchvision) = 8.18 GFLOPs */
    assert_near_rel(m.fwd_flops_per_sample, 8.18e9, 0.02);
    check_consistent(&m);
    model_free(&m);
    scenario_free(sc);
    free(sc);
}

static double transformer_flops(double layers, double d, double seq)
{
    /* 4 d x d projections and two d x 4d MLP matrices per layer, per token, plus
     * attention scores and context */
    return layers * (2.0 * 12.0 * d * d * seq + 4.0 * seq * seq * d);
}

static void test_bert_large(void **state)
{
    (void)state;
    scenario *sc = new_scenario("bert-large");
    model m;
    build_ok(sc, &m);
    assert_int_equal(m.total_numel, 335141888);
    assert_string_equal(m.params[0].name, "embeddings.word_embeddings.weight");
    assert_shape(&m, "embeddings.word_embeddings.weight", 2, 30522, 1024, 0, 0);
    assert_string_equal(m.params[1].name, "embeddings.position_embeddings.weight");
    assert_shape(&m, "embeddings.position_embeddings.weight", 2, 512, 1024, 0, 0);
    assert_shape(&m, "embeddings.token_type_embeddings.weight", 2, 2, 1024, 0, 0);
    assert_string_equal(m.params[3].name, "embeddings.LayerNorm.weight");
    assert_string_equal(m.params[4].name, "embeddings.LayerNorm.bias");
    assert_string_equal(m.params[5].name, "encoder.layer.0.attention.self.query.weight");
    assert_string_equal(m.params[6].name, "encoder.layer.0.attention.self.query.bias");
    assert_string_equal(m.params[7].name, "encoder.layer.0.attention.self.key.weight");
    assert_string_equal(m.params[9].name, "encoder.layer.0.attention.self.value.weight");
    assert_string_equal(m.params[11].name, "encoder.layer.0.attention.output.dense.weight");
    assert_string_equal(m.params[13].name, "encoder.layer.0.attention.output.LayerNorm.weight");
    assert_string_equal(m.params[15].name, "encoder.layer.0.intermediate.dense.weight");
    assert_string_equal(m.params[17].name, "encoder.layer.0.output.dense.weight");
    assert_string_equal(m.params[19].name, "encoder.layer.0.output.LayerNorm.weight");
    assert_string_equal(m.params[20].name, "encoder.layer.0.output.LayerNorm.bias");
    assert_string_equal(m.params[21].name, "encoder.layer.1.attention.self.query.weight");
    assert_shape(&m, "encoder.layer.23.intermediate.dense.weight", 2, 4096, 1024, 0, 0);
    assert_shape(&m, "encoder.layer.23.intermediate.dense.bias", 1, 4096, 0, 0, 0);
    assert_shape(&m, "encoder.layer.23.output.dense.weight", 2, 1024, 4096, 0, 0);
    assert_null(find_param(&m, "encoder.layer.24.output.dense.weight"));
    assert_string_equal(m.params[m.nparams - 2].name, "pooler.dense.weight");
    assert_shape(&m, "pooler.dense.weight", 2, 1024, 1024, 0, 0);
    assert_string_equal(m.params[m.nparams - 1].name, "pooler.dense.bias");

    /* a linear layer runs once per token: GEMM seq x out x in */
    const model_layer *q = find_layer(&m, "encoder.layer.0.attention.self.query");
    assert_non_null(q);
    assert_int_equal(q->gemm_m, 128);
    assert_int_equal(q->gemm_n, 1024);
    assert_int_equal(q->gemm_k, 1024);
    assert_int_equal(q->nparams, 2);
    const model_layer *emb = find_layer(&m, "embeddings.word_embeddings");
    assert_non_null(emb);
    assert_true(emb->fwd_flops == 0);

    assert_near_rel(m.fwd_flops_per_sample, transformer_flops(24, 1024, 128), 0.01);
    check_consistent(&m);
    model_free(&m);
    scenario_free(sc);
    free(sc);
}

static void test_bert_overrides(void **state)
{
    (void)state;
    scenario *sc = new_scenario("bert-large");
    sc->layers = 2;
    sc->d_model = 256;
    sc->vocab = 1000;
    sc->seq_len = 600; /* longer than 512: the position table grows */
    model m;
    build_ok(sc, &m);
    const int64_t d = 256;
    const int64_t per_layer = 4 * (d * d + d) + 2 * d + (d * 4 * d + 4 * d) + (4 * d * d + d) + 2 * d;
    const int64_t want = 1000 * d + 600 * d + 2 * d + 2 * d + 2 * per_layer + d * d + d;
    assert_int_equal(m.total_numel, want);
    assert_shape(&m, "embeddings.position_embeddings.weight", 2, 600, 256, 0, 0);
    assert_shape(&m, "encoder.layer.1.intermediate.dense.weight", 2, 1024, 256, 0, 0);
    assert_null(find_param(&m, "encoder.layer.2.attention.self.query.weight"));
    assert_near_rel(m.fwd_flops_per_sample, transformer_flops(2, 256, 600), 0.01);
    check_consistent(&m);
    model_free(&m);
    scenario_free(sc);
    free(sc);
}

static int64_t gpt2_total(int64_t layers, int64_t d, int64_t vocab, int64_t npos)
{
    return vocab * d + npos * d + layers * (12 * d * d + 13 * d) + 2 * d;
}

static void test_gpt2(void **state)
{
    (void)state;
    scenario *sc = new_scenario("gpt2");
    model m;
    build_ok(sc, &m);
    assert_int_equal(m.total_numel, 124439808);
    assert_int_equal(gpt2_total(12, 768, 50257, 1024), 124439808);
    assert_string_equal(m.params[0].name, "wte.weight");
    assert_shape(&m, "wte.weight", 2, 50257, 768, 0, 0);
    assert_string_equal(m.params[1].name, "wpe.weight");
    assert_shape(&m, "wpe.weight", 2, 1024, 768, 0, 0);
    static const char *const layer0[] = {
        "h.0.ln_1.weight",      "h.0.ln_1.bias",        "h.0.attn.c_attn.weight", "h.0.attn.c_attn.bias",
        "h.0.attn.c_proj.weight", "h.0.attn.c_proj.bias", "h.0.ln_2.weight",        "h.0.ln_2.bias",
        "h.0.mlp.c_fc.weight",  "h.0.mlp.c_fc.bias",    "h.0.mlp.c_proj.weight",  "h.0.mlp.c_proj.bias",
    };
    for (int i = 0; i < 12; i++)
        assert_string_equal(m.params[2 + i].name, layer0[i]);
    /* Conv1D stores weights as [in, out] */
    assert_shape(&m, "h.0.attn.c_attn.weight", 2, 768, 2304, 0, 0);
    assert_shape(&m, "h.0.attn.c_attn.bias", 1, 2304, 0, 0, 0);
    assert_shape(&m, "h.11.attn.c_proj.weight", 2, 768, 768, 0, 0);
    assert_shape(&m, "h.11.mlp.c_fc.weight", 2, 768, 3072, 0, 0);
    assert_shape(&m, "h.11.mlp.c_proj.weight", 2, 3072, 768, 0, 0);
    assert_null(find_param(&m, "h.12.ln_1.weight"));
    assert_string_equal(m.params[m.nparams - 2].name, "ln_f.weight");
    assert_string_equal(m.params[m.nparams - 1].name, "ln_f.bias");

    /* tied LM head: last layer, no parameters, 2*d*vocab per token */
    const model_layer *head = &m.layers[m.nlayers - 1];
    assert_string_equal(head->name, "lm_head");
    assert_int_equal(head->nparams, 0);
    assert_near_rel(head->fwd_flops, 2.0 * 768 * 50257 * 1024, 1e-12);
    assert_int_equal(head->gemm_m, 1024);
    assert_int_equal(head->gemm_n, 50257);
    assert_int_equal(head->gemm_k, 768);

    assert_near_rel(m.fwd_flops_per_sample, transformer_flops(12, 768, 1024) + 2.0 * 768 * 50257 * 1024, 0.01);
    check_consistent(&m);
    model_free(&m);
    scenario_free(sc);
    free(sc);
}

static void test_gpt2_scaling(void **state)
{
    (void)state;
    /* GPT-2 medium: 24 layers, d 1024 -> 354,823,168 */
    scenario *sc = new_scenario("gpt2");
    sc->layers = 24;
    sc->d_model = 1024;
    model m;
    build_ok(sc, &m);
    assert_int_equal(m.total_numel, 354823168);
    assert_int_equal(m.nparams, 2 + 24 * 12 + 2);
    check_consistent(&m);
    model_free(&m);

    /* small and long: wpe grows to seq_len */
    sc->layers = 3;
    sc->d_model = 128;
    sc->vocab = 500;
    sc->seq_len = 2048;
    build_ok(sc, &m);
    assert_int_equal(m.total_numel, gpt2_total(3, 128, 500, 2048));
    assert_shape(&m, "wpe.weight", 2, 2048, 128, 0, 0);
    assert_shape(&m, "wte.weight", 2, 500, 128, 0, 0);
    assert_near_rel(m.fwd_flops_per_sample, transformer_flops(3, 128, 2048) + 2.0 * 128 * 500 * 2048, 0.01);
    check_consistent(&m);
    model_free(&m);

    /* flops scale with layers (minus the fixed head and embeddings) */
    sc->seq_len = 256;
    sc->layers = 2;
    build_ok(sc, &m);
    const double f2 = m.fwd_flops_per_sample;
    model_free(&m);
    sc->layers = 4;
    build_ok(sc, &m);
    const double f4 = m.fwd_flops_per_sample;
    model_free(&m);
    const double head = 2.0 * 128 * 500 * 256;
    assert_near_rel(f4 - head, 2.0 * (f2 - head), 0.01);
    scenario_free(sc);
    free(sc);
}

static void test_mlp(void **state)
{
    (void)state;
    scenario *sc = new_scenario("mlp");
    model m;
    build_ok(sc, &m);
    assert_int_equal(m.nlayers, 4);
    assert_int_equal(m.nparams, 8);
    assert_string_equal(m.params[0].name, "layers.0.weight");
    assert_shape(&m, "layers.0.weight", 2, 1024, 1024, 0, 0);
    assert_string_equal(m.params[1].name, "layers.0.bias");
    assert_shape(&m, "layers.3.bias", 1, 1024, 0, 0, 0);
    assert_string_equal(m.layers[2].name, "layers.2");
    assert_int_equal(m.layers[2].gemm_m, 1);
    assert_int_equal(m.layers[2].gemm_n, 1024);
    assert_int_equal(m.layers[2].gemm_k, 1024);
    assert_near_rel(m.fwd_flops_per_sample, 4 * 2.0 * 1024 * 1024, 1e-12);
    model_free(&m);

    sc->layers = 3;
    sc->hidden = 256;
    build_ok(sc, &m);
    assert_int_equal(m.nlayers, 3);
    assert_int_equal(m.total_numel, 3 * (256 * 256 + 256));
    assert_near_rel(m.fwd_flops_per_sample, 3 * 2.0 * 256 * 256, 1e-12);
    assert_null(find_param(&m, "layers.3.weight"));
    check_consistent(&m);
    model_free(&m);
    scenario_free(sc);
    free(sc);
}

static void test_custom_roundtrip(void **state)
{
    (void)state;
    scenario *sc = new_scenario("custom");
    const int64_t sizes[] = {10, 1000000, 7, 25000000};
    /* Room for the largest list; the scenario owns it (scenario_free frees it). */
    sc->custom_params = malloc(SCENARIO_MAX_CUSTOM_PARAMS * sizeof *sc->custom_params);
    assert_non_null(sc->custom_params);
    sc->ncustom = 4;
    memcpy(sc->custom_params, sizes, sizeof sizes);
    model m;
    build_ok(sc, &m);
    assert_string_equal(m.name, "custom");
    assert_int_equal(m.nparams, 4);
    assert_int_equal(m.nlayers, 4);
    int64_t total = 0;
    double flops = 0;
    for (int i = 0; i < 4; i++) {
        char pname[32], lname[32];
        snprintf(pname, sizeof pname, "param%d", i);
        snprintf(lname, sizeof lname, "layer%d", i);
        assert_string_equal(m.params[i].name, pname);
        assert_string_equal(m.layers[i].name, lname);
        assert_int_equal(m.params[i].ndims, 1);
        assert_int_equal(m.params[i].shape[0], sizes[i]);
        assert_int_equal(m.params[i].numel, sizes[i]);
        assert_int_equal(m.params[i].layer, i);
        assert_int_equal(m.layers[i].first_param, i);
        assert_int_equal(m.layers[i].nparams, 1);
        assert_near_rel(m.layers[i].fwd_flops, 2.0 * (double)sizes[i], 1e-12);
        assert_int_equal(m.layers[i].gemm_m, 1);
        assert_int_equal(m.layers[i].gemm_n, sizes[i]);
        assert_int_equal(m.layers[i].gemm_k, 1);
        total += sizes[i];
        flops += 2.0 * (double)sizes[i];
    }
    assert_int_equal(m.total_numel, total);
    assert_near_rel(m.fwd_flops_per_sample, flops, 1e-12);
    check_consistent(&m);
    model_free(&m);

    /* the largest list the scenario allows */
    sc->ncustom = SCENARIO_MAX_CUSTOM_PARAMS;
    for (int i = 0; i < sc->ncustom; i++)
        sc->custom_params[i] = i + 1;
    build_ok(sc, &m);
    assert_int_equal(m.nparams, SCENARIO_MAX_CUSTOM_PARAMS);
    assert_int_equal(m.total_numel, (int64_t)SCENARIO_MAX_CUSTOM_PARAMS * (SCENARIO_MAX_CUSTOM_PARAMS + 1) / 2);
    assert_string_equal(m.params[SCENARIO_MAX_CUSTOM_PARAMS - 1].name, "param4095");
    check_consistent(&m);
    model_free(&m);
    scenario_free(sc);
    free(sc);
}

/* ---- errors ----------------------------------------------------------------- */

static void expect_error(const scenario *sc, const char *needle)
{
    model m;
    memset(&m, 0x5a, sizeof m); /* model_build must not depend on m's contents */
    char err[256] = "";
    assert_int_equal(model_build(sc, &m, err, sizeof err), -1);
    if (!strstr(err, needle))
        print_error("error \"%s\" lacks \"%s\"\n", err, needle);
    assert_non_null(strstr(err, needle));
    /* a failed build leaves nothing to free */
    assert_int_equal(m.nparams, 0);
    assert_int_equal(m.nlayers, 0);
    assert_null(m.params);
    assert_null(m.layers);
    model_free(&m);
}

static void test_errors(void **state)
{
    (void)state;
    scenario *sc = new_scenario("resnet101");
    expect_error(sc, "unknown preset \"resnet101\"");
    expect_error(sc, "mlp, resnet18"); /* lists the valid ones */
    snprintf(sc->preset, sizeof sc->preset, "%s", "");
    expect_error(sc, "unknown preset");
    snprintf(sc->preset, sizeof sc->preset, "%s", "GPT2"); /* names are case-sensitive */
    expect_error(sc, "unknown preset");

    snprintf(sc->preset, sizeof sc->preset, "%s", "custom");
    sc->ncustom = 0;
    expect_error(sc, "model.params");
    sc->custom_params = malloc(2 * sizeof *sc->custom_params); /* the scenario's own */
    assert_non_null(sc->custom_params);
    sc->ncustom = 2;
    sc->custom_params[0] = 5;
    sc->custom_params[1] = 0;
    expect_error(sc, "custom_params entry 1");
    sc->custom_params[1] = -3;
    expect_error(sc, "must be positive");
    sc->ncustom = SCENARIO_MAX_CUSTOM_PARAMS + 1;
    expect_error(sc, "custom_params");
    scenario_free(sc);
    free(sc);

    static const struct {
        const char *preset;
        size_t off;
        const char *key;
    } dims[] = {
        {"mlp", offsetof(scenario, layers), "model.layers"},
        {"mlp", offsetof(scenario, hidden), "model.hidden"},
        {"gpt2", offsetof(scenario, d_model), "model.d_model"},
        {"gpt2", offsetof(scenario, vocab), "model.vocab"},
        {"bert-large", offsetof(scenario, seq_len), "model.seq_len"},
        {"bert-large", offsetof(scenario, layers), "model.layers"},
    };
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        sc = new_scenario(dims[i].preset);
        *(int *)((char *)sc + dims[i].off) = -1;
        expect_error(sc, dims[i].key);
        scenario_free(sc);
        free(sc);
    }

    /* products that overflow int64 are refused, not wrapped */
    sc = new_scenario("gpt2");
    sc->d_model = 2000000000;
    sc->layers = 1;
    expect_error(sc, "too large");
    scenario_free(sc);
    free(sc);

    /* a tiny or absent error buffer is tolerated */
    sc = new_scenario("nope");
    model m;
    char one[1] = {'x'};
    assert_int_equal(model_build(sc, &m, one, sizeof one), -1);
    assert_int_equal(one[0], '\0');
    assert_int_equal(model_build(sc, &m, NULL, 0), -1);
    scenario_free(sc);
    free(sc);
}

static void test_free_safe(void **state)
{
    (void)state;
    model m;
    memset(&m, 0, sizeof m);
    model_free(&m); /* zeroed */
    model_free(NULL);

    scenario *sc = new_scenario("resnet18");
    build_ok(sc, &m);
    model_free(&m);
    assert_null(m.params);
    assert_null(m.layers);
    assert_int_equal(m.nparams, 0);
    model_free(&m); /* twice */
    scenario_free(sc);
    free(sc);
}

/* A parameter-list file: shapes, one layer per module, autograd's ready order per kind,
 * buffers counted; a bad line named by file and line. */
static void test_custom_params_file(void **state)
{
    (void)state;
    char path[] = "/tmp/ddpprof_params_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "# an mlp with batch norm\n"
                       "0.weight linear.weight 32x16\n0.bias linear.bias 32\n\n"
                       "1.weight norm.weight 32\n1.bias norm.bias 32\n1.running_mean buffer 32\n"
                       "1.running_var buffer 32\n1.num_batches_tracked buffer.int64 ()\n"
                       "emb.weight embedding 100x8   # a comment\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(close(fd), 0);
    scenario *sc = new_scenario("custom");
    snprintf(sc->params_file, sizeof sc->params_file, "%s", path);
    model m;
    char err[512];
    assert_int_equal(model_build(sc, &m, err, sizeof err), 0);
    assert_int_equal(m.nparams, 5);
    assert_int_equal(m.nlayers, 3);
    assert_int_equal(m.params[0].ndims, 2);
    assert_int_equal(m.params[0].shape[0], 32);
    assert_int_equal(m.params[0].shape[1], 16);
    assert_false(m.layers[0].grads_in_registration_order); /* Linear: bias first */
    assert_true(m.layers[1].grads_in_registration_order);  /* norm: weight first */
    assert_string_equal(m.layers[1].name, "1");
    assert_int_equal(m.buffer_f32_numel, 64);
    assert_int_equal(m.buffer_i64_count, 1);
    assert_int_equal(m.total_numel, 32 * 16 + 32 + 64 + 800);
    assert_true(m.layers[0].fwd_flops == 2.0 * 32 * 16);
    model_free(&m);

    const char *bad[][2] = {
        {"a.weight linear.weight 32\n", ":1: a linear.weight has 2 dimensions, not 1"},
        {"# x\na.weight dense 3\n", ":2: unknown kind \"dense\""},
        {"a.weight param 3x0\n", ":1: bad shape \"3x0\""},
        {"a.weight param\n", ":1: expected three fields"},
        {"a.w param 3\na.w param 3\n", ":2: a.w is listed twice"},
        {"a.running_mean buffer 3\n", "has no parameter"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        assert_true(fputs(bad[i][0], f) >= 0);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(model_build(sc, &m, err, sizeof err), -1);
        if (!strstr(err, bad[i][1]) || strncmp(err, path, strlen(path)) != 0)
            fail_msg("error \"%s\" lacks \"%s\"", err, bad[i][1]);
    }
    unlink(path);
    scenario_free(sc);
    free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_custom_params_file),
        cmocka_unit_test(test_preset_names),
        cmocka_unit_test(test_totals_and_consistency),
        cmocka_unit_test(test_resnet18),
        cmocka_unit_test(test_resnet50),
        cmocka_unit_test(test_bert_large),
        cmocka_unit_test(test_bert_overrides),
        cmocka_unit_test(test_gpt2),
        cmocka_unit_test(test_gpt2_scaling),
        cmocka_unit_test(test_mlp),
        cmocka_unit_test(test_custom_roundtrip),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_free_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
