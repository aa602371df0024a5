/* model_zoo.c — the parameter lists and per-layer forward FLOPs of ddpprof's models.
 *
 * DDP buckets gradients by parameter registration order and fires each bucket's
 * allreduce when its last gradient is ready, so the presets reproduce PyTorch's
 * named_parameters() exactly (names, shapes, order): torchvision's ResNets and
 * HuggingFace's BertModel / GPT2Model.  A "layer" is the unit the simulator schedules
 * compute for: one module that owns parameters, plus a few parameter-less layers that
 * carry real compute (pooling, attention scores, the GPT-2 LM head).
 *
 * FLOP conventions (per sample, forward only; backward is 2x, see model_zoo.h):
 *   - GEMM-like layers count 2 FLOPs per multiply-accumulate, and their gemm_m/n/k
 *     satisfy 2*m*n*k == fwd_flops so `compute = real` can replay them as one GEMM.
 *   - BatchNorm and LayerNorm count ~4 FLOPs per element (subtract mean, divide by
 *     std, scale, shift; the statistics are amortised into that) and are not GEMMs.
 *   - ReLU, dropout, residual adds and embedding sums are folded away (memory bound,
 *     and the published FLOP counts we check against leave them out too).
 *   - Max-pool counts one comparison per window element, average-pool one add per
 *     input element; both are their own parameter-less layers so the timeline shows
 *     them where they run.
 */
#include "engine/workload/model_zoo.h"

#include "engine/workload/custom_model.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Builds a model incrementally with a sticky error, so the preset builders read as
 * plain lists of modules and the error is checked once at the end. */
typedef struct {
    model *m;
    int cap_params;
    int cap_layers;
    char *err;
    size_t errlen;
    int failed;
} builder;

static void fail(builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(builder *b, const char *fmt, ...)
{
    if (b->failed)
        return; /* the first error is the one that explains the rest */
    b->failed = 1;
    if (b->err && b->errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b->err, b->errlen, fmt, ap);
        va_end(ap);
    }
}

/* Grows *arr to hold at least `need` items of `size` bytes, doubling to keep the
 * builders linear. */
static int grow(builder *b, void **arr, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    int ncap = *cap ? *cap : 64;
    while (ncap < need) {
        if (ncap > INT_MAX / 2) {
            fail(b, "model: too many parameters or layers");
            return -1;
        }
        ncap *= 2;
    }
    void *p = realloc(*arr, (size_t)ncap * size);
    if (!p) {
        fail(b, "model: out of memory");
        return -1;
    }
    *arr = p;
    *cap = ncap;
    return 0;
}

static void add_layer(builder *b, double flops, int64_t gm, int64_t gn, int64_t gk, const char *fmt,
                      ...) __attribute__((format(printf, 6, 7)));

static void add_layer(builder *b, double flops, int64_t gm, int64_t gn, int64_t gk, const char *fmt, ...)
{
    if (b->failed)
        return;
    model *m = b->m;
    if (m->nlayers == INT_MAX) {
        fail(b, "model: too many layers");
        return;
    }
    if (grow(b, (void **)&m->layers, &b->cap_layers, m->nlayers + 1, sizeof *m->layers) != 0)
        return;
    model_layer *l = &m->layers[m->nlayers];
    memset(l, 0, sizeof *l);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->name, sizeof l->name, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof l->name) {
        fail(b, "model: layer name too long (over %d characters)", MODEL_NAME - 1);
        return;
    }
    l->fwd_flops = flops;
    l->first_param = m->nparams;
    l->nparams = 0;
    l->gemm_m = gm;
    l->gemm_n = gn;
    l->gemm_k = gk;
    m->nlayers++;
    m->fwd_flops_per_sample += flops;
}

/* Adds a parameter named `full` owned by the most recent layer. */
static void add_param_named(builder *b, const char *full, int ndims, const int64_t *shape)
{
    if (b->failed)
        return;
    model *m = b->m;
    if (m->nlayers == 0 || ndims < 1 || ndims > MODEL_MAX_DIMS) {
        fail(b, "model: internal error adding parameter %s", full);
        return;
    }
    if (strlen(full) >= MODEL_NAME) {
        fail(b, "model: parameter name too long (over %d characters)", MODEL_NAME - 1);
        return;
    }
    if (m->nparams == INT_MAX) {
        fail(b, "model: too many parameters");
        return;
    }
    if (grow(b, (void **)&m->params, &b->cap_params, m->nparams + 1, sizeof *m->params) != 0)
        return;
    model_param *p = &m->params[m->nparams];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", full);
    int64_t numel = 1;
    for (int i = 0; i < ndims; i++) {
        if (shape[i] <= 0 || __builtin_mul_overflow(numel, shape[i], &numel)) {
            fail(b, "model: parameter %s has an invalid or too large shape", full);
            return;
        }
        p->shape[i] = shape[i];
    }
    if (__builtin_add_overflow(m->total_numel, numel, &m->total_numel)) {
        fail(b, "model: total parameter count overflows");
        return;
    }
    p->ndims = ndims;
    p->numel = numel;
    p->layer = m->nlayers - 1;
    m->layers[m->nlayers - 1].nparams++;
    m->nparams++;
}

/* The usual case: a module's parameter is "<module>.<suffix>". */
static void add_param(builder *b, const char *suffix, int ndims, const int64_t *shape)
{
    if (b->failed)
        return;
    char full[MODEL_NAME];
    const char *layer = b->m->nlayers ? b->m->layers[b->m->nlayers - 1].name : "?";
    int n = snprintf(full, sizeof full, "%s.%s", layer, suffix);
    if (n < 0 || (size_t)n >= sizeof full) {
        fail(b, "model: parameter name too long (over %d characters)", MODEL_NAME - 1);
        return;
    }
    add_param_named(b, full, ndims, shape);
}

static void param1(builder *b, const char *suffix, int64_t d0)
{
    const int64_t s[1] = {d0};
    add_param(b, suffix, 1, s);
}

static void param2(builder *b, const char *suffix, int64_t d0, int64_t d1)
{
    const int64_t s[2] = {d0, d1};
    add_param(b, suffix, 2, s);
}

/* ---- module kinds ------------------------------------------------------------- */

/* nn.Linear applied to `tokens` rows per sample: weight [out, in], bias [out]. */
static void linear(builder *b, const char *name, int64_t in, int64_t out, int64_t tokens)
{
    add_layer(b, 2.0 * (double)in * (double)out * (double)tokens, tokens, out, in, "%s", name);
    param2(b, "weight", out, in);
    param1(b, "bias", out);
}

/* HuggingFace's Conv1D (GPT-2): a linear layer with the weight stored as [in, out]. */
static void conv1d_hf(builder *b, const char *name, int64_t in, int64_t out, int64_t tokens)
{
    add_layer(b, 2.0 * (double)in * (double)out * (double)tokens, tokens, out, in, "%s", name);
    param2(b, "weight", in, out);
    param1(b, "bias", out);
}

static void layernorm(builder *b, const char *name, int64_t d, int64_t tokens)
{
    add_layer(b, 4.0 * (double)d * (double)tokens, 0, 0, 0, "%s", name);
    param1(b, "weight", d);
    param1(b, "bias", d);
    if (!b->failed)
        b->m->layers[b->m->nlayers - 1].grads_in_registration_order = true;
}

/* An embedding lookup is a gather, not arithmetic: ~0 FLOPs. */
static void embedding(builder *b, const char *name, int64_t num, int64_t d)
{
    add_layer(b, 0.0, 0, 0, 0, "%s", name);
    param2(b, "weight", num, d);
}

/* nn.Conv2d without bias (as in torchvision's ResNets) on a square hw x hw input;
 * updates *hw to the output size.  GEMM shape is the im2col one. */
static void conv2d(builder *b, const char *name, int cin, int cout, int k, int stride, int pad, int *hw)
{
    int out = (*hw + 2 * pad - k) / stride + 1;
    int64_t m = (int64_t)out * out, n = cout, kk = (int64_t)cin * k * k;
    add_layer(b, 2.0 * (double)m * (double)n * (double)kk, m, n, kk, "%s", name);
    const int64_t s[4] = {cout, cin, k, k};
    add_param(b, "weight", 4, s);
    *hw = out;
}

static void batchnorm2d(builder *b, const char *name, int c, int hw)
{
    add_layer(b, 4.0 * c * (double)hw * hw, 0, 0, 0, "%s", name);
    param1(b, "weight", c);
    param1(b, "bias", c);
    if (!b->failed) {
        b->m->layers[b->m->nlayers - 1].grads_in_registration_order = true;
        b->m->buffer_f32_numel += 2 * (int64_t)c; /* running_mean, running_var */
        b->m->buffer_i64_count += 1;              /* num_batches_tracked */
    }
}

/* ---- presets ------------------------------------------------------------------ */

static void build_mlp(builder *b, int layers, int hidden)
{
    char name[MODEL_NAME];
    for (int i = 0; i < layers && !b->failed; i++) {
        snprintf(name, sizeof name, "layers.%d", i);
        linear(b, name, hidden, hidden, 1);
    }
}

/* torchvision.models.resnet: BasicBlock (expansion 1) or Bottleneck (expansion 4,
 * stride on the 3x3 conv as in torchvision >= 0.5), 224x224 input. */
static void build_resnet(builder *b, int bottleneck, const int blocks[4])
{
    const int expansion = bottleneck ? 4 : 1;
    char name[MODEL_NAME];
    int hw = 224;
    int inplanes = 64;

    conv2d(b, "conv1", 3, 64, 7, 2, 3, &hw);
    batchnorm2d(b, "bn1", 64, hw);
    /* maxpool 3x3 stride 2 pad 1: one comparison per window element per output */
    hw = (hw + 2 - 3) / 2 + 1;
    add_layer(b, 9.0 * 64 * (double)hw * hw, 0, 0, 0, "maxpool");

    for (int s = 0; s < 4; s++) {
        const int planes = 64 << s;
        for (int j = 0; j < blocks[s] && !b->failed; j++) {
            const int stride = (s > 0 && j == 0) ? 2 : 1;
            const int in_hw = hw;
            int h = hw;
#define BLOCK_NAME(suffix) (snprintf(name, sizeof name, "layer%d.%d.%s", s + 1, j, suffix), name)
            if (bottleneck) {
                conv2d(b, BLOCK_NAME("conv1"), inplanes, planes, 1, 1, 0, &h);
                batchnorm2d(b, BLOCK_NAME("bn1"), planes, h);
                conv2d(b, BLOCK_NAME("conv2"), planes, planes, 3, stride, 1, &h);
                batchnorm2d(b, BLOCK_NAME("bn2"), planes, h);
                conv2d(b, BLOCK_NAME("conv3"), planes, planes * expansion, 1, 1, 0, &h);
                batchnorm2d(b, BLOCK_NAME("bn3"), planes * expansion, h);
            } else {
                conv2d(b, BLOCK_NAME("conv1"), inplanes, planes, 3, stride, 1, &h);
                batchnorm2d(b, BLOCK_NAME("bn1"), planes, h);
                conv2d(b, BLOCK_NAME("conv2"), planes, planes, 3, 1, 1, &h);
                batchnorm2d(b, BLOCK_NAME("bn2"), planes, h);
            }
            if (stride != 1 || inplanes != planes * expansion) {
                int dh = in_hw;
                conv2d(b, BLOCK_NAME("downsample.0"), inplanes, planes * expansion, 1, stride, 0, &dh);
                batchnorm2d(b, BLOCK_NAME("downsample.1"), planes * expansion, dh);
            }
#undef BLOCK_NAME
            inplanes = planes * expansion;
            hw = h;
        }
    }
    /* adaptive average pool to 1x1: one add per input element */
    add_layer(b, (double)inplanes * hw * hw, 0, 0, 0, "avgpool");
    linear(b, "fc", inplanes, 1000, 1);
}

/* Scaled dot-product attention of one layer, all heads: Q K^T and P V are each
 * seq x seq x d multiply-accumulates summed over heads.  Represented as one GEMM of
 * m = seq, n = seq, k = 2*d so that 2*m*n*k matches the FLOPs.  GPT-2 computes the
 * full matrix and masks it, so causal attention costs the same. */
static void attention_scores(builder *b, const char *name, int64_t seq, int64_t d)
{
    add_layer(b, 4.0 * (double)seq * (double)seq * (double)d, seq, seq, 2 * d, "%s", name);
}

/* HuggingFace BertModel (bert-large-uncased by default), with its pooler. */
static void build_bert(builder *b, int layers, int d, int vocab, int seq)
{
    /* position table is 512 rows; grown so that a longer seq_len stays valid */
    const int64_t npos = seq > 512 ? seq : 512;
    const int64_t inter = 4 * (int64_t)d;
    char name[MODEL_NAME];

    embedding(b, "embeddings.word_embeddings", vocab, d);
    embedding(b, "embeddings.position_embeddings", npos, d);
    embedding(b, "embeddings.token_type_embeddings", 2, d);
    layernorm(b, "embeddings.LayerNorm", d, seq);
    for (int i = 0; i < layers && !b->failed; i++) {
#define LAYER_NAME(suffix) (snprintf(name, sizeof name, "encoder.layer.%d.%s", i, suffix), name)
        linear(b, LAYER_NAME("attention.self.query"), d, d, seq);
        linear(b, LAYER_NAME("attention.self.key"), d, d, seq);
        linear(b, LAYER_NAME("attention.self.value"), d, d, seq);
        attention_scores(b, LAYER_NAME("attention.self.scores"), seq, d);
        linear(b, LAYER_NAME("attention.output.dense"), d, d, seq);
        layernorm(b, LAYER_NAME("attention.output.LayerNorm"), d, seq);
        linear(b, LAYER_NAME("intermediate.dense"), d, inter, seq);
        linear(b, LAYER_NAME("output.dense"), inter, d, seq);
        layernorm(b, LAYER_NAME("output.LayerNorm"), d, seq);
#undef LAYER_NAME
    }
    /* the pooler reads only the [CLS] token, hence one row, not seq_len */
    linear(b, "pooler.dense", d, d, 1);
}

/* HuggingFace GPT2Model, plus the LM head that reuses wte (tied, so no parameter). */
static void build_gpt2(builder *b, int layers, int d, int vocab, int seq)
{
    /* n_positions is 1024; grown so that a longer seq_len stays valid */
    const int64_t npos = seq > 1024 ? seq : 1024;
    const int64_t dd = d;
    char name[MODEL_NAME];

    embedding(b, "wte", vocab, d);
    embedding(b, "wpe", npos, d);
    for (int i = 0; i < layers && !b->failed; i++) {
#define LAYER_NAME(suffix) (snprintf(name, sizeof name, "h.%d.%s", i, suffix), name)
        layernorm(b, LAYER_NAME("ln_1"), d, seq);
        conv1d_hf(b, LAYER_NAME("attn.c_attn"), dd, 3 * dd, seq);
        attention_scores(b, LAYER_NAME("attn.scores"), seq, d);
        conv1d_hf(b, LAYER_NAME("attn.c_proj"), dd, dd, seq);
        layernorm(b, LAYER_NAME("ln_2"), d, seq);
        conv1d_hf(b, LAYER_NAME("mlp.c_fc"), dd, 4 * dd, seq);
        conv1d_hf(b, LAYER_NAME("mlp.c_proj"), 4 * dd, dd, seq);
#undef LAYER_NAME
    }
    layernorm(b, "ln_f", d, seq);
    add_layer(b, 2.0 * (double)d * (double)vocab * (double)seq, seq, vocab, d, "lm_head");
}

/* One flat tensor per entry, costed as a linear layer with that many weights: a
 * 1 x numel x 1 GEMM, so that 2*m*n*k equals the 2*numel FLOPs. */
static void build_custom(builder *b, const scenario *sc)
{
    char name[MODEL_NAME];
    for (int i = 0; i < sc->ncustom && !b->failed; i++) {
        const int64_t n = sc->custom_params[i];
        snprintf(name, sizeof name, "layer%d", i);
        add_layer(b, 2.0 * (double)n, 1, n, 1, "%s", name);
        /* not inside a module, so the name is not "<layer>.<suffix>" */
        snprintf(name, sizeof name, "param%d", i);
        const int64_t s[1] = {n};
        add_param_named(b, name, 1, s);
    }
}

/* The module a tensor belongs to: its name up to the last '.' (the whole name when it
 * has none). */
static size_t module_len(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot ? (size_t)(dot - name) : strlen(name);
}

/* A parameter-list file (custom_model.h): consecutive parameters of one module make a
 * layer, costed by its weight as the presets cost theirs (a linear layer as its GEMM of
 * one row, a norm at 4 FLOPs per element, an embedding as a gather, anything else at 2
 * FLOPs per element); buffers are counted for DDP's broadcasts.  A layer makes its
 * gradients ready as PyTorch's autograd does: a Linear's bias before its weight, a
 * norm's or a convolution's weight before its bias. */
static void build_custom_file(builder *b, const custom_tensor *t, int n)
{
    for (int i = 0; i < n && !b->failed; i++) {
        if (t[i].kind == CT_BUFFER) {
            b->m->buffer_f32_numel += t[i].numel;
            continue;
        }
        if (t[i].kind == CT_BUFFER_I64) {
            b->m->buffer_i64_count += (int)t[i].numel;
            continue;
        }
        size_t ml = module_len(t[i].name);
        const model_layer *last = b->m->nlayers ? &b->m->layers[b->m->nlayers - 1] : NULL;
        bool same_module = last && last->nparams > 0 && strlen(last->name) == ml &&
                           strncmp(last->name, t[i].name, ml) == 0 &&
                           last->first_param + last->nparams == b->m->nparams;
        if (!same_module) {
            double flops = 2.0 * (double)t[i].numel;
            int64_t gm = 1, gn = t[i].numel, gk = 1;
            if (t[i].kind == CT_LINEAR_WEIGHT || t[i].kind == CT_LINEAR_BIAS) {
                /* the bias alone (a weight-less linear) costs what a 1-wide one would */
                gn = t[i].shape[0];
                gk = t[i].kind == CT_LINEAR_WEIGHT ? t[i].shape[1] : 1;
                flops = 2.0 * (double)gn * (double)gk;
            } else if (t[i].kind == CT_NORM_WEIGHT || t[i].kind == CT_NORM_BIAS) {
                flops = 4.0 * (double)t[i].numel, gm = gn = gk = 0;
            } else if (t[i].kind == CT_EMBEDDING) {
                flops = 0.0, gm = gn = gk = 0;
            }
            add_layer(b, flops, gm, gn, gk, "%.*s", (int)ml, t[i].name);
            if (!b->failed)
                b->m->layers[b->m->nlayers - 1].grads_in_registration_order =
                    t[i].kind != CT_LINEAR_WEIGHT && t[i].kind != CT_LINEAR_BIAS;
        }
        add_param_named(b, t[i].name, t[i].ndims, t[i].shape);
    }
}

/* model.params_file, relative to the scenario file's folder unless absolute. */
static void custom_file_path(const scenario *sc, char *out, size_t n)
{
    const char *f = sc->params_file, *slash = strrchr(sc->source, '/');
    if (f[0] == '/' || !slash)
        snprintf(out, n, "%s", f);
    else
        snprintf(out, n, "%.*s/%s", (int)(slash - sc->source), sc->source, f);
}

/* ---- entry points ------------------------------------------------------------- */

const char *const *model_preset_names(void) { return scenario_model_presets; }

/* 0 means "the preset's default"; negative is an error the caller reports. */
static int dim_or_default(builder *b, const char *key, int v, int def)
{
    if (v < 0) {
        fail(b, "model: %s must be positive (got %d)", key, v);
        return -1;
    }
    return v ? v : def;
}

/* model.layer_forward_us / layer_backward_us: one value per layer of the model built, or
 * none. */
static void apply_measured_times(builder *b, const scenario *sc)
{
    const struct {
        const char *key;
        const double *us;
        int n;
    } lists[2] = {{"model.layer_forward_us", sc->layer_forward_us, sc->nlayer_forward},
                  {"model.layer_backward_us", sc->layer_backward_us, sc->nlayer_backward}};
    for (int k = 0; k < 2; k++) {
        if (lists[k].n == 0)
            continue;
        if (lists[k].n != b->m->nlayers) {
            fail(b, "model: %s has %d values; the %s model has %d layers (one value each)", lists[k].key,
                 lists[k].n, sc->preset, b->m->nlayers);
            return;
        }
        /* The other collectives' time, shared over the layers as their times are, and
         * never more than a layer's own. */
        double total = 0, comm = (k == 0 ? sc->forward_comm_us : sc->backward_comm_us) * 1e3;
        for (int l = 0; l < b->m->nlayers; l++)
            total += lists[k].us[l] * 1e3;
        double share = total > 0 && comm < total ? comm / total : total > 0 ? 1.0 : 0.0;
        for (int l = 0; l < b->m->nlayers; l++) {
            model_layer *layer = &b->m->layers[l];
            double ns = lists[k].us[l] * 1e3;
            if (k == 0) {
                layer->fwd_ns_measured = ns;
                layer->fwd_comm_ns = ns * share;
                layer->fwd_measured = true;
            } else {
                layer->bwd_ns_measured = ns;
                layer->bwd_comm_ns = ns * share;
                layer->bwd_measured = true;
            }
        }
    }
}

int model_build(const scenario *sc, model *m, char *err, size_t errlen)
{
    builder b = {.m = m, .err = err, .errlen = errlen};
    if (err && errlen > 0)
        err[0] = '\0';
    if (!m) {
        fail(&b, "model: no model to build into");
        return -1;
    }
    memset(m, 0, sizeof *m);
    if (!sc) {
        fail(&b, "model: no scenario");
        return -1;
    }

    /* Checked for every preset, so that a bad value is reported even where the
     * preset ignores the key rather than lurking until the preset changes. */
    const char *p = sc->preset;
    const int is_bert = strcmp(p, "bert-large") == 0;
    const int layers = dim_or_default(&b, "model.layers", sc->layers, is_bert ? 24 : strcmp(p, "gpt2") == 0 ? 12 : 4);
    const int hidden = dim_or_default(&b, "model.hidden", sc->hidden, 1024);
    const int d_model = dim_or_default(&b, "model.d_model", sc->d_model, is_bert ? 1024 : 768);
    const int vocab = dim_or_default(&b, "model.vocab", sc->vocab, is_bert ? 30522 : 50257);
    const int seq_len = dim_or_default(&b, "model.seq_len", sc->seq_len, is_bert ? 128 : 1024);
    if (b.failed)
        return -1;

    if (strcmp(p, "mlp") == 0) {
        build_mlp(&b, layers, hidden);
    } else if (strcmp(p, "resnet18") == 0) {
        static const int blocks[4] = {2, 2, 2, 2};
        build_resnet(&b, 0, blocks);
    } else if (strcmp(p, "resnet50") == 0) {
        static const int blocks[4] = {3, 4, 6, 3};
        build_resnet(&b, 1, blocks);
    } else if (is_bert) {
        build_bert(&b, layers, d_model, vocab, seq_len);
    } else if (strcmp(p, "gpt2") == 0) {
        build_gpt2(&b, layers, d_model, vocab, seq_len);
    } else if (strcmp(p, "custom") == 0 && sc->params_file[0] != '\0') {
        char path[sizeof sc->source + sizeof sc->params_file + 1];
        custom_file_path(sc, path, sizeof path);
        custom_tensor *t = NULL;
        int n = 0;
        if (custom_model_read(path, &t, &n, err, errlen) != 0)
            b.failed = 1; /* err says which line */
        else
            build_custom_file(&b, t, n);
        free(t);
    } else if (strcmp(p, "custom") == 0) {
        if (sc->ncustom <= 0) {
            fail(&b, "model: preset custom needs at least one entry in model.params, or model.params_file");
        } else if (sc->ncustom > SCENARIO_MAX_CUSTOM_PARAMS) {
            fail(&b, "model: model.custom_params has %d entries (at most %d)", sc->ncustom,
                 SCENARIO_MAX_CUSTOM_PARAMS);
        } else {
            for (int i = 0; i < sc->ncustom; i++) {
                if (sc->custom_params[i] <= 0) {
                    fail(&b, "model: model.custom_params entry %d must be positive (got %lld)", i,
                         (long long)sc->custom_params[i]);
                    break;
                }
            }
            build_custom(&b, sc);
        }
    } else {
        char names[160];
        size_t at = 0;
        names[0] = '\0';
        for (const char *const *n = scenario_model_presets; *n && at < sizeof names; n++)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", at ? ", " : "", *n);
        fail(&b, "model: unknown preset \"%s\" (expected one of: %s)", p, names);
    }

    if (!b.failed)
        apply_measured_times(&b, sc);
    if (b.failed) {
        model_free(m);
        return -1;
    }
    snprintf(m->name, sizeof m->name, "%s", p);
    return 0;
}

void model_free(model *m)
{
    if (!m)
        return;
    free(m->params);
    free(m->layers);
    memset(m, 0, sizeof *m);
}
