/* run_config.h — what a run was, for the reports: its command-line settings as text,
 * and the scenario keys in which runs differ.
 *
 * Contract: run_config_overrides_text() writes the stored overrides JSON object
 * ("section.key": "value") as "section.key=value, ..." (the text itself when it is
 * not such an object; "" for NULL), truncated to n bytes.  run_config_diff() compares
 * runs' effective scenario texts (run.scenario: "[section]" and "key = value" lines,
 * ';' comments) key by key and returns the keys whose value is not the same in every
 * run (a key missing from a run counts as different), in the first run's order, then
 * the others'; run.name and run.backend are left out (the backends are what a
 * comparison across backends varies).  Returns the number of keys, or -1 out of memory.
 */
#ifndef DDPPROF_RUN_CONFIG_H
#define DDPPROF_RUN_CONFIG_H

#include <stddef.h>

void run_config_overrides_text(const char *json, char *out, size_t n);
/* The same settings as a label a reader scans, "bucket_cap_mb 5, world_size 16" (keys as
 * scenario_short_key() shortens them); "" for NULL or text that is no JSON object. */
void run_config_point_text(const char *json, char *out, size_t n);

typedef struct {
    char *key;     /* "ddp.bucket_cap_mb" */
    char **values; /* one per run; NULL where the run has no such key */
} run_config_key;

int run_config_diff(const char *const *scenarios, size_t nruns, run_config_key **out);
void run_config_diff_free(run_config_key *keys, int nkeys, size_t nruns);

#endif
