/* report_equivalence.c — prints table `equivalence` (see report_equivalence.h), read
 * through profiler/store_equivalence.h. */
#include "reports/report_equivalence.h"

#include <math.h>
#include <stdbool.h>

#include "profiler/store_equivalence.h"

/* A figure, or "-" where it is not known. */
static void cell(FILE *out, double v, const char *fmt, int width)
{
    if (isnan(v))
        fprintf(out, " %*s", width, "-");
    else
        fprintf(out, fmt, width, v);
}

typedef struct {
    FILE *out;
    int64_t group; /* the group whose rows are being printed; -1 before the first */
} table;

static int print_row(const store_equivalence_row *row, void *ctx)
{
    table *t = ctx;
    FILE *out = t->out;
    if (row->group_id != t->group) {
        t->group = row->group_id;
        fprintf(out,
                "\n  equivalence (group %lld: %d steps, %s loss, weights compared with the reference)\n"
                "  %4s  %-14s %5s %7s %11s %11s %8s %11s %9s %9s %8s  %s\n",
                (long long)t->group, row->steps, row->loss_reduction, "run", "variant", "ranks", "nodes", "max |dw|",
                "dw/update", "update", "replicas", "step ms", "overlap %", "colls", "verdict");
    }
    char topo[32] = "-";
    if (row->nodes > 0)
        snprintf(topo, sizeof topo, "%dx%d", row->nodes, row->gpus_per_node);
    fprintf(out, "  %4lld  %-14s %5d %7s", (long long)row->run_id, row->variant, row->world_size, topo);
    cell(out, row->max_abs_diff, " %*.3e", 11);
    cell(out, row->rel_to_update, " %*.3e", 11);
    cell(out, row->update_ratio, " %*.4f", 8);
    cell(out, row->replica_max_diff, " %*.3e", 11);
    cell(out, row->step_ms, " %*.3f", 9);
    cell(out, row->overlap_pct, " %*.1f", 9);
    cell(out, row->collectives_per_step, " %*.1f", 8);
    fprintf(out, "  %s\n", row->verdict);
    return 0;
}

int report_equivalence_text(store *st, int64_t run_id, FILE *out, char *err, size_t errlen)
{
    table t = {out, -1};
    return store_each_equivalence(st, run_id, print_row, &t, err, errlen);
}
