/* test_scenario.c — unit tests of the scenario modules (engine/scenario/): defaults,
 * loading, every kind of error with its exact file:line, overrides, the device-preset
 * rule, sweeps and their size limit, cross-key validation, keys without effect and the
 * warnings API, file limits and UTF-8 rules, explain and the INI round trip.  The long
 * list of bad inputs is in test_bad_inputs.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "engine/scenario/scenario.h"
#include "harness.h"

/* The files the tests write go to one scratch directory, /tmp/test_scenario.XXXXXX, made
 * before the first test and removed after the last. */
static int group_setup(void **state)
{
    (void)state;
    return scratch_setup("test_scenario.");
}

/* Writes `text` to <tmpdir>/<name> and returns its path in `path`. */
static void put(void **state, const char *name, const char *text, char path[256])
{
    (void)state;
    write_file_in(scratch_dir(), name, text, path, 256);
}

static scenario *new_scenario(void)
{
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    return sc;
}

/* Loads `text` as file `name` and expects failure with exactly "<path>:<suffix>". */
static void expect_load_error(void **state, const char *name, const char *text,
                              const char *suffix)
{
    char path[256], want[SCENARIO_ERR + 256], err[SCENARIO_ERR] = "";
    put(state, name, text, path);
    scenario *sc = new_scenario();
    assert_int_equal(scenario_load_file(path, sc, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:%s", path, suffix);
    assert_string_equal(err, want);
    scenario_free(sc);
    free(sc);
}

/* sc: zeroed, or a scenario, which is freed first. */
static void load_ok(void **state, const char *name, const char *text, scenario *sc)
{
    char path[256], err[SCENARIO_ERR] = "";
    put(state, name, text, path);
    scenario_free(sc);
    int rc = scenario_load_file(path, sc, err, sizeof err);
    if (rc != 0)
        fail_msg("unexpected load error: %s", err);
}

/* A scenario held as text (a run's stored one) reads as the same file would. */
static void test_load_text(void **state)
{
    static const char text[] = "[run]\nname = held\nworld_size = 3\n[ddp]\nbucket_cap_mb = 7\n";
    scenario *from_file = new_scenario(), *from_text = new_scenario();
    load_ok(state, "held.ini", text, from_file);
    char err[SCENARIO_ERR] = "";
    assert_int_equal(scenario_load_text(text, "run 3's scenario", from_text, err, sizeof err), 0);
    assert_int_equal(from_text->world_size, from_file->world_size);
    assert_true(from_text->bucket_cap_mb == 7.0);
    assert_string_equal(from_text->name, "held");
    assert_string_equal(from_text->source, "run 3's scenario");
    assert_int_equal(scenario_load_text("[run]\nworld_size = x\n", "run 4's scenario", from_text, err, sizeof err), -1);
    assert_non_null(strstr(err, "run 4's scenario:2: "));
    scenario_free(from_file);
    free(from_file);
    scenario_free(from_text);
    free(from_text);
}

/* ------------------------------------------------------------------ defaults */

static void test_defaults(void **state)
{
    (void)state;
    scenario *sc = new_scenario();
    scenario_defaults(sc);
    assert_string_equal(sc->name, "scenario");
    assert_string_equal(sc->source, "");
    assert_string_equal(sc->backend, "auto");
    assert_int_equal(sc->world_size, 4);
    assert_int_equal(sc->iterations, 10);
    assert_int_equal(sc->warmup, 2);
    assert_int_equal(sc->seed, 1);
    assert_true(sc->timeout_s == 60.0);
    assert_string_equal(sc->preset, "resnet18");
    assert_int_equal(sc->layers, 0);
    assert_int_equal(sc->hidden, 1024);
    assert_int_equal(sc->batch, 32);
    assert_string_equal(sc->dtype, "fp32");
    assert_int_equal(sc->compute, COMPUTE_MODEL);
    assert_int_equal(sc->ncustom, 0);
    assert_true(sc->bucket_cap_mb == 25.0);
    assert_true(sc->first_bucket_mb == 1.0);
    assert_false(sc->gradient_as_bucket_view);
    assert_int_equal(sc->no_sync_every, 1);
    assert_int_equal(sc->comm_hook, COMM_HOOK_NONE);
    assert_int_equal(sc->loss_reduction, LOSS_MEAN);
    assert_int_equal(sc->nspeed, 0);
    assert_int_equal(sc->nslow, 0);
    assert_true(sc->slowdown == 1.0);
    assert_true(sc->jitter == 0.0);
    assert_true(sc->bandwidth_gbps == 12.5);
    assert_true(sc->latency_us == 10.0);
    assert_int_equal(sc->algorithm, NET_RING);
    assert_false(sc->pace);
    assert_string_equal(sc->device_preset, "a100");
    assert_true(sc->peak_tflops == 19.5);
    assert_true(sc->mem_bw_gbps == 1555.0);
    assert_true(sc->efficiency == 0.5);
    assert_int_equal(sc->fault_rank, -1);
    assert_int_equal(sc->fault, FAULT_NONE);
    assert_int_equal(sc->nsweep, 0);
    assert_int_equal(scenario_sweep_count(sc), 1);
    char err[SCENARIO_ERR];
    assert_int_equal(scenario_validate(sc, err, sizeof err), 0);
    for (int r = 0; r < 4; r++)
        assert_true(scenario_rank_speed(sc, r) == 1.0);
    scenario_free(sc);
    free(sc);
}

/* ------------------------------------------------------------------ good files */

static const char every_section[] =
    "; every section\n"
    "[run]\n"
    "name = full\n"
    "backend = cpu\n"
    "world_size = 3\n"
    "iterations = 20\n"
    "warmup = 1\n"
    "seed = 18446744073709551615\n"
    "timeout_s = 5.5\n"
    "\n"
    "[model]\n"
    "preset = custom\n"
    "params = 1000, 2000,\n"
    "         3000   ; continues on an indented line\n"
    "batch = 8\n"
    "compute = real\n"
    "[ddp]\n"
    "bucket_cap_mb = 5\n"
    "first_bucket_mb = 50\n"
    "gradient_as_bucket_view = yes\n"
    "no_sync_every = 4\n"
    "comm_hook = bf16\n"
    "find_unused_parameters = on\n"
    "static_graph = 1\n"
    "loss_reduction = sum\n"
    "[skew]\n"
    "speed = 1, 1.5,2\n"
    "slow_ranks = 2\n"
    "slowdown = 4\n"
    "jitter = 0.1\n"
    "[network]\n"
    "bandwidth_gbps = 100\n"
    "latency_us = 2\n"
    "algorithm = tree\n"
    "pace = true\n"
    "[device]\n"
    "preset = h100\n"
    "efficiency = 0.25\n"
    "[fault]\n"
    "rank = 1\n"
    "iter = 7\n"
    "mode = hang\n";

static void test_good_file_every_section(void **state)
{
    scenario *sc = new_scenario();
    load_ok(state, "full.ini", every_section, sc);
    assert_string_equal(sc->name, "full");
    assert_non_null(strstr(sc->source, "full.ini"));
    assert_string_equal(sc->backend, "cpu");
    assert_int_equal(sc->world_size, 3);
    assert_int_equal(sc->iterations, 20);
    assert_int_equal(sc->warmup, 1);
    assert_true(sc->seed == UINT64_MAX);
    assert_true(sc->timeout_s == 5.5);
    assert_string_equal(sc->preset, "custom");
    assert_int_equal(sc->ncustom, 3);
    assert_int_equal(sc->custom_params[0], 1000);
    assert_int_equal(sc->custom_params[2], 3000);
    assert_int_equal(sc->batch, 8);
    assert_int_equal(sc->compute, COMPUTE_REAL);
    assert_true(sc->bucket_cap_mb == 5.0);
    assert_true(sc->first_bucket_mb == 50.0); /* may exceed bucket_cap_mb */
    assert_true(sc->gradient_as_bucket_view);
    assert_int_equal(sc->no_sync_every, 4);
    assert_int_equal(sc->comm_hook, COMM_HOOK_BF16);
    assert_true(sc->find_unused_parameters);
    assert_true(sc->static_graph);
    assert_int_equal(sc->loss_reduction, LOSS_SUM);
    assert_int_equal(sc->nspeed, 3);
    assert_true(sc->speed[1] == 1.5);
    assert_int_equal(sc->nslow, 1);
    assert_int_equal(sc->slow_ranks[0], 2);
    assert_true(sc->jitter == 0.1);
    assert_true(sc->bandwidth_gbps == 100.0);
    assert_int_equal(sc->algorithm, NET_TREE);
    assert_true(sc->pace);
    assert_string_equal(sc->device_preset, "h100");
    assert_true(sc->peak_tflops == 67.0);
    assert_true(sc->mem_bw_gbps == 3350.0);
    assert_true(sc->efficiency == 0.25);
    assert_int_equal(sc->fault_rank, 1);
    assert_int_equal(sc->fault_iter, 7);
    assert_int_equal(sc->fault, FAULT_HANG);
    /* rank 2: speed 2, slowed down 4x */
    assert_true(scenario_rank_speed(sc, 0) == 1.0);
    assert_true(scenario_rank_speed(sc, 1) == 1.5);
    assert_true(scenario_rank_speed(sc, 2) == 0.5);
    scenario_free(sc);
    free(sc);
}

static void test_name_from_file_name(void **state)
{
    scenario *sc = new_scenario();
    load_ok(state, "my-run.ini", "[run]\nworld_size = 2\n", sc);
    assert_string_equal(sc->name, "my-run");
    assert_int_equal(sc->world_size, 2);
    /* An explicitly empty name is a mistake, not "use the file's name". */
    expect_load_error(state, "other.ini", "[run]\nname =\n",
                      "2: run.name: no value (give a name, or leave the key out to use the "
                      "file's name)");
    scenario_free(sc);
    free(sc);
}

static void test_enum_and_bool_spellings(void **state)
{
    scenario *sc = new_scenario();
    load_ok(state, "case.ini", "[model]\npreset = ResNet50\n[ddp]\nstatic_graph = OFF\n", sc);
    assert_string_equal(sc->preset, "resnet50"); /* stored canonical */
    assert_false(sc->static_graph);
    scenario_free(sc);
    free(sc);
}

/* ------------------------------------------------------------------ errors */

static void test_error_not_a_number(void **state)
{
    expect_load_error(state, "skewed.ini",
                      "; comment\n[run]\nworld_size = 2\n\n[ddp]\nfirst_bucket_mb = 1\n"
                      "bucket_cap_mb = abc\n",
                      "7: ddp.bucket_cap_mb: \"abc\" is not a number");
}

static void test_error_out_of_range(void **state)
{
    expect_load_error(state, "range.ini", "[run]\nworld_size = 0\n",
                      "2: run.world_size 0 is out of range [1, 65536]");
    expect_load_error(state, "range2.ini", "[skew]\njitter = 0.75\n",
                      "2: skew.jitter 0.75 is out of range [0, 0.5]");
    expect_load_error(state, "overflow.ini", "[run]\n\nworld_size = 99999999999999999999999\n",
                      "3: run.world_size 99999999999999999999999 is out of range [1, 65536]");
    expect_load_error(state, "dbl_overflow.ini", "[ddp]\nbucket_cap_mb = 1e999\n",
                      "2: ddp.bucket_cap_mb: \"1e999\" is not a finite number");
}

static void test_error_trailing_junk_nan_inf(void **state)
{
    expect_load_error(state, "junk.ini", "[run]\nworld_size = 4x\n",
                      "2: run.world_size: \"4x\" is not an integer");
    expect_load_error(state, "float_int.ini", "[run]\niterations = 2.5\n",
                      "2: run.iterations: \"2.5\" is not an integer");
    expect_load_error(state, "junk2.ini", "[network]\nlatency_us = 10us\n",
                      "2: network.latency_us: \"10us\" is not a number");
    expect_load_error(state, "nan.ini", "[network]\nbandwidth_gbps = nan\n",
                      "2: network.bandwidth_gbps: \"nan\" is not a finite number");
    expect_load_error(state, "inf.ini", "[network]\nbandwidth_gbps = inf\n",
                      "2: network.bandwidth_gbps: \"inf\" is not a finite number");
    expect_load_error(state, "seed.ini", "[run]\nseed = -1\n",
                      "2: run.seed: \"-1\" is not a non-negative integer");
    expect_load_error(state, "empty.ini", "[run]\nwarmup =\n",
                      "2: run.warmup: no value (expected an integer in [0, 1000])");
}

static void test_error_enum_and_bool(void **state)
{
    expect_load_error(state, "enum.ini", "[model]\ncompute = fast\n",
                      "2: model.compute \"fast\" is not one of: model, real");
    expect_load_error(state, "bool.ini", "[network]\n\npace = maybe\n",
                      "3: network.pace: \"maybe\" is not a boolean (use true/false, yes/no, "
                      "on/off, 1/0)");
}

static void test_error_list_element(void **state)
{
    expect_load_error(state, "list.ini", "[skew]\nspeed = 1, 2, x, 4\n",
                      "2: skew.speed element 3: \"x\" is not a number");
    expect_load_error(state, "list2.ini", "[skew]\nspeed = 1, 200\n",
                      "2: skew.speed element 2 200 is out of range [0.01, 100]");
    expect_load_error(state, "list3.ini", "[skew]\nslow_ranks = 1,,2\n",
                      "2: skew.slow_ranks: element 2 is empty (elements are separated by commas)");
    /* The element count runs on across continuation lines. */
    expect_load_error(state, "list4.ini", "[model]\npreset = custom\nparams = 1, 2,\n  0\n",
                      "4: model.params element 3 0 is out of range [1, 1099511627776]");
}

static void test_error_unknown_key(void **state)
{
    expect_load_error(state, "key.ini", "[run]\nworld_size = 2\n[ddp]\nbucket_cap = 5\n",
                      "4: unknown key \"bucket_cap\" in [ddp] (keys: bucket_cap_mb, "
                      "first_bucket_mb, gradient_as_bucket_view, no_sync_every, comm_hook, "
                      "find_unused_parameters, static_graph, loss_reduction, sync, broadcast_buffers, join, divide_by_initial_world_size)");
}

/* The terms of a host's shared cores moved from [device] to [host]: a file or an override
 * written before is refused with the new key's name, and the new key reads. */
static void test_error_moved_host_key(void **state)
{
    expect_load_error(state, "moved.ini", "[run]\nworld_size = 2\n[device]\nop_wakeup_us = 3\n",
                      "4: device.op_wakeup_us is now host.op_wakeup_us: move it under [host] (the model of "
                      "ranks that share one host's cores; `ddpprof explain host`)");
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    scenario_defaults(sc);
    char err[SCENARIO_ERR];
    assert_int_equal(scenario_override(sc, "device.host_cores=2", err, sizeof err), -1);
    assert_non_null(strstr(err, "device.host_cores is now host.host_cores"));
    assert_int_equal(scenario_override(sc, "host.host_cores=2", err, sizeof err), 0);
    assert_true(sc->host_cores == 2);
    scenario_free(sc);
    free(sc);
}

/* The command line against the file's [sweep]: an override of a swept key removes that
 * axis (saying what it was), --sweep adds an axis or replaces the file's, each value
 * checked, and a malformed or bad one is refused. */
static void test_sweep_from_command_line(void **state)
{
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    load_ok(state, "clisweep.ini", "[run]\nworld_size = 2\n[sweep]\nddp.bucket_cap_mb = 1, 5, 25\nrun.world_size = 2, 4\n",
            sc);
    assert_int_equal(scenario_sweep_count(sc), 6);
    char was[SCENARIO_ERR], err[SCENARIO_ERR];
    assert_int_equal(scenario_unsweep(sc, "ddp.first_bucket_mb=2", was, sizeof was), 0);
    assert_int_equal(scenario_sweep_count(sc), 6);
    assert_int_equal(scenario_unsweep(sc, "ddp.bucket_cap_mb=10", was, sizeof was), 1);
    assert_string_equal(was, "ddp.bucket_cap_mb = 1, 5, 25");
    assert_int_equal(scenario_sweep_count(sc), 2);
    assert_int_equal(scenario_unsweep(sc, "no_equals_sign", was, sizeof was), 0); /* override reports it */
    assert_int_equal(scenario_sweep_override(sc, "ddp.bucket_cap_mb=5,50", was, sizeof was, err, sizeof err), 0);
    assert_int_equal(scenario_sweep_count(sc), 4);
    assert_int_equal(scenario_sweep_override(sc, "run.world_size=8,16,32", was, sizeof was, err, sizeof err), 1);
    assert_string_equal(was, "run.world_size = 2, 4");
    assert_int_equal(scenario_sweep_count(sc), 6);
    scenario *point = calloc(1, sizeof *point);
    assert_non_null(point);
    assert_int_equal(scenario_sweep_point(sc, 5, point, err, sizeof err), 0);
    assert_true(point->bucket_cap_mb == 50 && point->world_size == 32);
    assert_int_equal(scenario_sweep_override(sc, "ddp.bucket_cap_mb=5,x", was, sizeof was, err, sizeof err), -1);
    assert_non_null(strstr(err, "--sweep ddp.bucket_cap_mb: \"x\" is not a number"));
    assert_int_equal(scenario_sweep_override(sc, "ddp.nokey=1,2", was, sizeof was, err, sizeof err), -1);
    assert_int_equal(scenario_sweep_count(sc), 6); /* refusals change nothing */
    scenario_free(point);
    free(point);
    scenario_free(sc);
    free(sc);
}

static void test_error_unknown_section(void **state)
{
    /* Reported even though the section has no keys at all. */
    expect_load_error(state, "section.ini", "[run]\nworld_size = 2\n\n[foo]\n",
                      "4: unknown section [foo] (sections: run, model, ddp, skew, network, "
                      "device, host, fault, record, sweep)");
}

static void test_error_key_outside_section(void **state)
{
    expect_load_error(state, "nosection.ini", "; header\nworld_size = 2\n[run]\n",
                      "2: key \"world_size\" is outside any section (sections: run, model, ddp, "
                      "skew, network, device, host, fault, record, sweep)");
}

static void test_error_duplicate_key(void **state)
{
    expect_load_error(state, "dup.ini", "[run]\nworld_size = 2\n[ddp]\n[run]\nworld_size = 3\n",
                      "5: duplicate key run.world_size (first set on line 2)");
}

static void test_error_syntax(void **state)
{
    expect_load_error(state, "syntax.ini", "[run]\nworld_size = 2\nthis line has no equals\n",
                      "3: cannot read \"this line has no equals\": expected key = value, "
                      "[section] or a ; comment");
    expect_load_error(state, "bracket.ini", "[run]\n[ddp\nstatic_graph = true\n",
                      "2: section header \"[ddp\" has no closing ']'");
    /* The first error wins, whichever kind it is. */
    expect_load_error(state, "first.ini", "[run]\noops\nworld_size = 0\n",
                      "2: cannot read \"oops\": expected key = value, [section] or a ; comment");
}

static void test_error_continuation_of_scalar(void **state)
{
    expect_load_error(state, "indent.ini", "[run]\nname = x\n  world_size = 2\n",
                      "3: run.name: this indented line is read as a continuation of its value; "
                      "only list values may continue (remove the indentation)");
}

static void test_error_long_line(void **state)
{
    char text[400];
    int n = snprintf(text, sizeof text, "[run]\nname = ");
    memset(text + n, 'a', 250);
    strcpy(text + n + 250, "\n");
    expect_load_error(state, "long.ini", text,
                      "2: line is longer than 198 characters (a long list can continue on "
                      "indented lines)");
}

static void test_error_cannot_open(void **state)
{
    (void)state;
    char path[256], want[SCENARIO_ERR], err[SCENARIO_ERR] = "";
    snprintf(path, sizeof path, "%s/does-not-exist.ini", scratch_dir());
    scenario *sc = new_scenario();
    assert_int_equal(scenario_load_file(path, sc, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: cannot open: %s", path, strerror(ENOENT));
    assert_string_equal(err, want);
    scenario_free(sc);
    free(sc);
}

/* ------------------------------------------------------------------ file limits */

static void test_file_size_limit_is_inclusive(void **state)
{
    (void)state;
    char path[256], err[SCENARIO_ERR] = "";
    snprintf(path, sizeof path, "%s/exactly-1mib.ini", scratch_dir());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    long n = fprintf(f, "[run]\nname = big\n");
    while (n + 100 <= SCENARIO_MAX_FILE_BYTES)
        n += fprintf(f, ";%98s\n", "x");
    while (n < SCENARIO_MAX_FILE_BYTES)
        n += fprintf(f, "\n");
    assert_int_equal(fclose(f), 0);
    scenario *sc = new_scenario();
    if (scenario_load_file(path, sc, err, sizeof err) != 0)
        fail_msg("a file of exactly the limit must load: %s", err);
    assert_string_equal(sc->name, "big");
    scenario_free(sc);
    free(sc);
}

static void test_line_length_limit_and_line_endings(void **state)
{
    scenario *sc = new_scenario();
    /* 198 bytes is the longest line; 199 is refused. */
    char longest[512];
    snprintf(longest, sizeof longest, "[run]\n;%*s\nname = ok\n", SCENARIO_MAX_LINE - 1, "x");
    load_ok(state, "longest.ini", longest, sc);
    snprintf(longest, sizeof longest, "[run]\n;%*s\n", SCENARIO_MAX_LINE, "x");
    expect_load_error(state, "toolong.ini", longest,
                      "2: line is longer than 198 characters (a long list can continue on "
                      "indented lines)");
    /* CRLF line ends, a UTF-8 byte order mark and tabs are text. */
    load_ok(state, "crlf.ini",
            "\xEF\xBB\xBF[run]\r\nworld_size = 2\r\n[skew]\r\nspeed =\t1,\t2\r\n", sc);
    assert_int_equal(sc->world_size, 2);
    assert_int_equal(sc->nspeed, 2);
    scenario_free(sc);
    free(sc);
}

static void test_utf8_names(void **state)
{
    scenario *sc = new_scenario(), *pt = new_scenario();
    char err[SCENARIO_ERR] = "";
    load_ok(state, "utf8.ini", "[run]\nname = Überlauf ✓ 𝄞\n", sc);
    assert_string_equal(sc->name, "Überlauf ✓ 𝄞");
    /* 4-byte characters up to U+10FFFF are fine. */
    assert_int_equal(scenario_override(sc, "run.name=\xF4\x8F\xBF\xBF", err, sizeof err), 0);

    /* A long multi-byte name cut to fit a sweep point's label stays valid UTF-8. */
    strbuf text = STRBUF_INIT;
    strbuf_addstr(&text, "[run]\nname = ");
    for (int i = 0; i < 63; i++)
        strbuf_addstr(&text, "é");
    strbuf_addstr(&text, "\n[sweep]\nddp.bucket_cap_mb = 1, 2\n");
    assert_false(text.failed);
    load_ok(state, "longname.ini", text.buf, sc);
    strbuf_release(&text);
    assert_int_equal(strlen(sc->name), 126);
    assert_int_equal(scenario_sweep_point(sc, 1, pt, err, sizeof err), 0);
    assert_non_null(strstr(pt->name, " [point 2 of 2]"));
    const unsigned char *u = (const unsigned char *)pt->name;
    size_t len = strlen(pt->name), tag = strlen(" [point 2 of 2]");
    /* The cut falls between characters: the byte before the tag is a whole "é". */
    assert_int_equal(u[len - tag - 1], 0xA9);
    assert_int_equal(u[len - tag - 2], 0xC3);
    scenario_free(sc);
    free(sc);
    scenario_free(pt);
    free(pt);
}

static void test_name_from_odd_file_name(void **state)
{
    (void)state;
    char path[256], err[SCENARIO_ERR] = "";
    snprintf(path, sizeof path, "%s/caf\xE9;x.ini", scratch_dir());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs("[run]\n", f) >= 0);
    assert_int_equal(fclose(f), 0);
    scenario *sc = new_scenario();
    assert_int_equal(scenario_load_file(path, sc, err, sizeof err), 0);
    /* The file's name is not UTF-8; the run's name and source must be. */
    assert_string_equal(sc->name, "caf__x");
    assert_non_null(strstr(sc->source, "/caf_;x.ini"));
    scenario_free(sc);
    free(sc);
}

/* ------------------------------------------------------------------ sweep size */

static void test_sweep_point_limit(void **state)
{
    scenario *sc = new_scenario();
    char err[SCENARIO_ERR] = "";
    strbuf text = STRBUF_INIT;
    /* 16 x 16 x 16 = 4096 points: the most allowed. */
    strbuf_addstr(&text, "[sweep]\n");
    const char *axes[] = {"run.seed", "run.iterations", "ddp.bucket_cap_mb", "run.warmup"};
    for (int a = 0; a < 3; a++) {
        strbuf_addf(&text, "%s = ", axes[a]);
        for (int v = 1; v <= 16; v++)
            strbuf_addf(&text, "%d%s", v, v < 16 ? ", " : "\n");
    }
    assert_false(text.failed);
    load_ok(state, "sw4096.ini", text.buf, sc);
    assert_int_equal(scenario_sweep_count(sc), SCENARIO_MAX_SWEEP_POINTS);
    assert_int_equal(scenario_validate(sc, err, sizeof err), 0);

    /* One more axis value, added behind the loader's back, is caught by validate at the
     * line of the axis that takes the product over the limit (16 x 17 x 16: the third). */
    char **grown = realloc(sc->sweep[1].values, 17 * sizeof *grown); /* the axis's own */
    assert_non_null(grown);
    sc->sweep[1].values = grown;
    assert_non_null(grown[16] = strdup("17"));
    sc->sweep[1].nvalues = 17;
    assert_int_equal(scenario_validate(sc, err, sizeof err), -1);
    char want[SCENARIO_ERR];
    snprintf(want, sizeof want, "%s:4: [sweep] has 4352 points (16 x 17 x 16); at most 4096 are "
                                "allowed",
             sc->source);
    assert_string_equal(err, want);

    /* In a file, the line that takes it over is the one reported. */
    strbuf_addstr(&text, "run.warmup = 0, 1\n");
    assert_false(text.failed);
    expect_load_error(state, "sw8192.ini", text.buf,
                      "5: [sweep] has 8192 points (16 x 16 x 16 x 2); at most 4096 are allowed");
    strbuf_release(&text);
    scenario_free(sc);
    free(sc);
}

static void test_validate_refuses_corrupt_structs(void **state)
{
    (void)state;
    scenario *sc = new_scenario();
    char err[SCENARIO_ERR] = "";
    scenario_defaults(sc);
    sc->nspeed = 2000;
    assert_int_equal(scenario_validate(sc, err, sizeof err), -1);
    assert_string_equal(err, "corrupt scenario: skew.speed has 2000 elements");
    scenario_defaults(sc);
    sc->fault = (fault_mode)7;
    assert_int_equal(scenario_validate(sc, err, sizeof err), -1);
    assert_string_equal(err, "corrupt scenario: fault.mode = 7");
    scenario_defaults(sc);
    sc->sweep = calloc(1, sizeof *sc->sweep); /* one axis, the scenario's own, without values */
    assert_non_null(sc->sweep);
    sc->nsweep = 1;
    assert_int_equal(scenario_validate(sc, err, sizeof err), -1);
    assert_string_equal(err, "corrupt scenario: sweep axis 1 has 0 values");
    assert_int_equal(scenario_sweep_point(sc, 0, sc, err, sizeof err), -1);
    scenario_free(sc);
    scenario_defaults(sc);
    sc->name[0] = '\0';
    assert_int_equal(scenario_validate(sc, err, sizeof err), -1);
    assert_string_equal(err, "defaults: run.name is empty (give the run a name)");
    scenario_free(sc);
    free(sc);
}

/* ------------------------------------------------------------------ keys without effect */

static void test_warnings_api(void **state)
{
    scenario *sc = new_scenario();
    char buf[1024], path[256], want[1024];
    put(state, "warn.ini", "[model]\nhidden = 1024\n[fault]\nrank = 1\nmode = none\n", path);
    char err[SCENARIO_ERR] = "";
    assert_int_equal(scenario_load_file(path, sc, err, sizeof err), 0);
    assert_int_equal(scenario_warnings(sc, buf, sizeof buf), 2);
    snprintf(want, sizeof want,
             "%s:4: warning: fault.rank = 1 has no effect with fault.mode = none\n"
             "%s:2: warning: model.hidden = 1024 has no effect with model.preset = resnet18 "
             "(only mlp uses it)\n",
             path, path);
    assert_string_equal(buf, want);

    /* A buffer too small for the second line keeps the first whole, and still counts. */
    size_t first = strchr(want, '\n') - want + 1;
    assert_int_equal(scenario_warnings(sc, buf, first + 5), 2);
    assert_int_equal(strlen(buf), first);
    assert_int_equal(scenario_warnings(sc, buf, 3), 2);
    assert_string_equal(buf, "");
    assert_int_equal(scenario_warnings(sc, NULL, 0), 2);

    /* Switching the fault on again clears that warning. */
    assert_int_equal(scenario_override(sc, "fault.mode=hang", err, sizeof err), 0);
    assert_int_equal(scenario_validate(sc, err, sizeof err), 0);
    assert_int_equal(scenario_warnings(sc, buf, sizeof buf), 1);
    scenario_defaults(sc);
    assert_int_equal(scenario_warnings(sc, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    scenario_free(sc);
    free(sc);
}

static void test_keys_without_effect_in_sweeps(void **state)
{
    scenario *sc = new_scenario(), *pt = new_scenario(), *back = new_scenario();
    char err[SCENARIO_ERR] = "", buf[1024];
    /* d_model acts in the gpt2 points: the file is fine, and so is the mlp point. */
    load_ok(state, "swctx.ini",
            "[model]\npreset = gpt2\nd_model = 256\nlayers = 2\n"
            "[sweep]\nmodel.preset = mlp, gpt2\n",
            sc);
    assert_int_equal(scenario_warnings(sc, buf, sizeof buf), 0);
    assert_int_equal(scenario_sweep_point(sc, 0, pt, err, sizeof err), 0);
    assert_string_equal(pt->preset, "mlp");
    int nswept = 0;
    for (int k = 0; k < SCENARIO_MAX_KEYS; k++)
        nswept += pt->swept[k];
    assert_int_equal(nswept, 1); /* model.preset, from the sweep */
    assert_int_equal(scenario_warnings(pt, buf, sizeof buf), 0);
    /* The point's INI leaves d_model as a comment, so it reads back cleanly. */
    char *ini = scenario_to_ini(pt);
    assert_non_null(ini);
    assert_non_null(strstr(ini, "\n; d_model = 256   (no effect with model.preset = mlp)\n"));
    assert_non_null(strstr(ini, "\nlayers = 2\n"));
    char path[256];
    put(state, "swctx-point.ini", ini, path);
    assert_int_equal(scenario_load_file(path, back, err, sizeof err), 0);
    assert_int_equal(scenario_warnings(back, buf, sizeof buf), 0);
    assert_int_equal(back->d_model, 0);
    free(ini);

    /* The base INI keeps d_model: it acts in some points. */
    ini = scenario_to_ini(sc);
    assert_non_null(ini);
    assert_non_null(strstr(ini, "\nd_model = 256\n"));
    free(ini);
    scenario_free(sc);
    free(sc);
    scenario_free(pt);
    free(pt);
    scenario_free(back);
    free(back);
}

static void test_override_switches_context(void **state)
{
    scenario *sc = new_scenario();
    char err[SCENARIO_ERR] = "", buf[1024];
    load_ok(state, "gpt.ini", "[model]\npreset = gpt2\nd_model = 256\n", sc);
    /* Re-using a gpt2 file for an mlp: a warning, the file is not wrong. */
    assert_int_equal(scenario_override(sc, "model.preset=mlp", err, sizeof err), 0);
    assert_int_equal(scenario_validate(sc, err, sizeof err), 0);
    assert_int_equal(scenario_warnings(sc, buf, sizeof buf), 1);
    assert_non_null(strstr(buf, ":3: warning: model.d_model = 256 has no effect with "
                                "model.preset = mlp (only bert-large and gpt2 use it); -s "
                                "changed model.preset\n"));
    /* But an override that sets a key the file's preset ignores is a mistake. */
    assert_int_equal(scenario_override(sc, "model.vocab=100", err, sizeof err), 0);
    assert_int_equal(scenario_validate(sc, err, sizeof err), -1);
    assert_string_equal(err, "-s model.vocab: model.vocab = 100 has no effect with model.preset "
                             "= mlp (only bert-large and gpt2 use it)");
    scenario_free(sc);
    free(sc);
}

static void test_shipped_scenarios_have_no_warnings(void **state)
{
    (void)state;
    const char *dir = getenv("SCENARIOS");
    if (dir == NULL || dir[0] == '\0')
        dir = "scenarios";
    DIR *d = opendir(dir);
    if (d == NULL)
        fail_msg("%s: %s", dir, strerror(errno));
    scenario *sc = new_scenario();
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        char path[512], err[SCENARIO_ERR] = "", buf[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        scenario_free(sc); /* the previous file's */
        if (scenario_load_file(path, sc, err, sizeof err) != 0)
            fail_msg("%s", err);
        if (scenario_warnings(sc, buf, sizeof buf) != 0)
            fail_msg("%s", buf);
        n++;
    }
    assert_int_equal(closedir(d), 0);
    assert_true(n >= 5);
    scenario_free(sc);
    free(sc);
}

/* ------------------------------------------------------------------ overrides */

static void test_overrides(void **state)
{
    (void)state;
    scenario *sc = new_scenario();
    char err[SCENARIO_ERR] = "";
    scenario_defaults(sc);
    assert_int_equal(scenario_override(sc, "run.world_size=8", err, sizeof err), 0);
    assert_int_equal(sc->world_size, 8);
    assert_int_equal(scenario_override(sc, "skew.speed = 1, 2,1,1,1,1,1,1 ", err, sizeof err), 0);
    assert_int_equal(sc->nspeed, 8);
    assert_true(sc->speed[1] == 2.0);
    assert_int_equal(scenario_override(sc, "skew.speed=", err, sizeof err), 0); /* clears the list */
    assert_int_equal(sc->nspeed, 0);
    assert_int_equal(scenario_set(sc, "network.algorithm", "tree", err, sizeof err), 0);
    assert_int_equal(sc->algorithm, NET_TREE);

    assert_int_equal(scenario_override(sc, "run.world_size=65537", err, sizeof err), -1);
    assert_string_equal(err, "-s run.world_size=65537: run.world_size 65537 is out of range [1, 65536]");
    assert_int_equal(scenario_override(sc, "run.world_size", err, sizeof err), -1);
    assert_string_equal(err, "-s run.world_size: expected section.key=value (e.g. "
                             "ddp.bucket_cap_mb=25)");
    assert_int_equal(scenario_override(sc, "ddp.bucket=3", err, sizeof err), -1);
    assert_non_null(strstr(err, "-s ddp.bucket=3: unknown key \"bucket\" in [ddp] (keys: "
                                "bucket_cap_mb,"));
    assert_int_equal(scenario_override(sc, "foo.bar=3", err, sizeof err), -1);
    assert_string_equal(err, "-s foo.bar=3: unknown section [foo] (sections: run, model, ddp, "
                             "skew, network, device, host, fault, record, sweep)");
    assert_int_equal(scenario_override(sc, "world_size=3", err, sizeof err), -1);
    assert_string_equal(err, "-s world_size=3: \"world_size\" is not a section.key name (e.g. "
                             "ddp.bucket_cap_mb)");
    scenario_free(sc);
    free(sc);
}

static void test_override_after_file_validates_with_override_location(void **state)
{
    scenario *sc = new_scenario();
    char err[SCENARIO_ERR] = "";
    load_ok(state, "base.ini", "[run]\nworld_size = 2\n", sc);
    assert_int_equal(scenario_override(sc, "fault.rank=1", err, sizeof err), 0);
    assert_int_equal(scenario_validate(sc, err, sizeof err), -1);
    assert_string_equal(err, "-s fault.rank: fault.rank = 1 needs fault.mode, which is missing "
                             "(hang, exit or error)");
    scenario_free(sc);
    free(sc);
}

/* ------------------------------------------------------------------ device preset */

static void test_device_preset_vs_explicit_peak(void **state)
{
    scenario *sc = new_scenario();
    char err[SCENARIO_ERR] = "";

    load_ok(state, "dev1.ini", "[device]\npreset = v100\n", sc);
    assert_true(sc->peak_tflops == 15.7);
    assert_true(sc->mem_bw_gbps == 900.0);

    /* Explicit value after the preset... */
    load_ok(state, "dev2.ini", "[device]\npreset = h200\npeak_tflops = 30\n", sc);
    assert_true(sc->peak_tflops == 30.0);
    assert_true(sc->mem_bw_gbps == 4800.0);

    /* ...and before it: the explicit value still wins. */
    load_ok(state, "dev3.ini", "[device]\npeak_tflops = 30\npreset = h200\n", sc);
    assert_true(sc->peak_tflops == 30.0);
    assert_true(sc->mem_bw_gbps == 4800.0);

    /* An override counts as explicit, and a later preset override keeps it. */
    load_ok(state, "dev4.ini", "[device]\npreset = a100\n", sc);
    assert_int_equal(scenario_override(sc, "device.mem_bw_gbps=2000", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "device.preset=h100", err, sizeof err), 0);
    assert_true(sc->peak_tflops == 67.0);
    assert_true(sc->mem_bw_gbps == 2000.0);

    /* A custom device must say what it is. */
    char path[256];
    put(state, "dev5.ini", "[device]\n\npreset = custom\npeak_tflops = 10\n", path);
    assert_int_equal(scenario_load_file(path, sc, err, sizeof err), -1);
    char want[SCENARIO_ERR];
    snprintf(want, sizeof want, "%s:3: device.preset = custom needs device.mem_bw_gbps, which is "
                                "missing", path);
    assert_string_equal(err, want);
    scenario_free(sc);
    free(sc);
}

/* ------------------------------------------------------------------ sweeps */

static void test_sweep_points(void **state)
{
    scenario *sc = new_scenario(), *pt = new_scenario();
    char err[SCENARIO_ERR] = "";
    load_ok(state, "sw.ini",
            "[run]\nname = sw\n[sweep]\nddp.bucket_cap_mb = 5, 25, 100\n"
            "model.preset = resnet18,resnet50\n",
            sc);
    assert_int_equal(sc->nsweep, 2);
    assert_int_equal(sc->sweep[0].line, 4);
    assert_int_equal(sc->sweep[1].line, 5);
    assert_int_equal(scenario_sweep_count(sc), 6);

    /* Last axis fastest. */
    static const double caps[6] = {5, 5, 25, 25, 100, 100};
    static const char *const presets[6] = {"resnet18", "resnet50", "resnet18",
                                           "resnet50", "resnet18", "resnet50"};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(scenario_sweep_point(sc, i, pt, err, sizeof err), 0);
        assert_true(pt->bucket_cap_mb == caps[i]);
        assert_string_equal(pt->preset, presets[i]);
        assert_int_equal(pt->nsweep, 0);
        assert_int_equal(scenario_sweep_count(pt), 1);
    }
    assert_int_equal(scenario_sweep_point(sc, 3, pt, err, sizeof err), 0);
    assert_string_equal(pt->name, "sw [bucket_cap_mb 25, model.preset resnet50]");
    assert_string_equal(sc->name, "sw"); /* the base is untouched */

    assert_int_equal(scenario_sweep_point(sc, 6, pt, err, sizeof err), -1);
    assert_string_equal(err, "sweep point 6 does not exist (6 points)");

    /* Without [sweep] there is one point: the scenario itself. */
    scenario_free(sc);
    scenario_defaults(sc);
    assert_int_equal(scenario_sweep_count(sc), 1);
    assert_int_equal(scenario_sweep_point(sc, 0, pt, err, sizeof err), 0);
    assert_string_equal(pt->name, "scenario");
    scenario_free(sc);
    free(sc);
    scenario_free(pt);
    free(pt);
}

static void test_sweep_device_preset_follows_point(void **state)
{
    scenario *sc = new_scenario(), *pt = new_scenario();
    char err[SCENARIO_ERR] = "";
    load_ok(state, "swdev.ini", "[sweep]\ndevice.preset = v100, h100\n", sc);
    assert_int_equal(scenario_sweep_point(sc, 1, pt, err, sizeof err), 0);
    assert_true(pt->peak_tflops == 67.0);
    load_ok(state, "swdev2.ini", "[sweep]\ndevice.preset = v100, h100\n[device]\npeak_tflops = 5\n",
            sc);
    assert_int_equal(scenario_sweep_point(sc, 1, pt, err, sizeof err), 0);
    assert_true(pt->peak_tflops == 5.0);
    assert_true(pt->mem_bw_gbps == 3350.0);
    scenario_free(sc);
    free(sc);
    scenario_free(pt);
    free(pt);
}

static void test_sweep_errors(void **state)
{
    expect_load_error(state, "swbad.ini",
                      "[run]\nworld_size = 2\n[sweep]\nddp.bucket_cap_mb = 5, 25\n"
                      "run.world_size = 2, abc, 8\n",
                      "5: [sweep] run.world_size: \"abc\" is not an integer");
    expect_load_error(state, "swrange.ini", "[sweep]\n\nrun.world_size = 2, 70000\n",
                      "3: [sweep] run.world_size 70000 is out of range [1, 65536]");
    expect_load_error(state, "swkey.ini", "[sweep]\nddp.bucket = 1, 2\n",
                      "2: [sweep] unknown key \"bucket\" in [ddp] (keys: bucket_cap_mb, "
                      "first_bucket_mb, gradient_as_bucket_view, no_sync_every, comm_hook, "
                      "find_unused_parameters, static_graph, loss_reduction, sync, broadcast_buffers, join, divide_by_initial_world_size) (sweep keys are "
                      "section.key names of other sections)");
    expect_load_error(state, "swdup.ini", "[sweep]\nrun.seed = 1, 2\nrun.seed = 3\n",
                      "3: duplicate key run.seed in [sweep] (first given on line 2)");
    expect_load_error(state, "swdupv.ini", "[sweep]\nrun.seed = 1, 2, 1\n",
                      "2: [sweep] run.seed: value \"1\" is given twice");
    expect_load_error(state, "swempty.ini", "[sweep]\nrun.seed = 1,,2\n",
                      "2: [sweep] run.seed: value 2 is empty (values are separated by ',')");
    expect_load_error(state, "swlist.ini", "[sweep]\nskew.slow_ranks = 0, 1\n",
                      "2: [sweep] skew.slow_ranks is a list key: separate its values with '|' "
                      "(each value is a comma-separated list), e.g. skew.slow_ranks = 1, 2 | 3");
}

static void test_sweep_list_key_with_bar(void **state)
{
    scenario *sc = new_scenario(), *pt = new_scenario();
    char err[SCENARIO_ERR] = "";
    load_ok(state, "swbar.ini",
            "[run]\nworld_size = 2\n[sweep]\nskew.speed = 1, 1 | 2, 1 |\n   1, 0.5\n", sc);
    assert_int_equal(scenario_sweep_count(sc), 3);
    assert_int_equal(scenario_sweep_point(sc, 2, pt, err, sizeof err), 0);
    assert_int_equal(pt->nspeed, 2);
    assert_true(pt->speed[1] == 0.5);
    assert_string_equal(pt->name, "swbar [speed 1, 0.5]");
    scenario_free(sc);
    free(sc);
    scenario_free(pt);
    free(pt);
}

static void test_sweep_point_validation(void **state)
{
    scenario *sc = new_scenario(), *pt = new_scenario();
    char err[SCENARIO_ERR] = "", path[256], want[SCENARIO_ERR + 300];
    put(state, "swval.ini",
               "[run]\nname = v\nworld_size = 4\n[skew]\nslow_ranks = 3\nslowdown = 2\n[sweep]\n"
               "run.world_size = 4, 2\n",
               path);
    assert_int_equal(scenario_load_file(path, sc, err, sizeof err), 0);
    assert_int_equal(scenario_sweep_point(sc, 0, pt, err, sizeof err), 0);
    assert_int_equal(scenario_sweep_point(sc, 1, pt, err, sizeof err), -1);
    snprintf(want, sizeof want,
             "%s:5: skew.slow_ranks lists rank 3 but run.world_size is 2 (ranks are 0..1) "
             "(sweep point \"v [world_size 2]\")",
             path);
    assert_string_equal(err, want);
    scenario_free(sc);
    free(sc);
    scenario_free(pt);
    free(pt);
}

/* ------------------------------------------------------------------ validation */

/* A skewed scenario at another world size (issue 40): one speed is every rank's; a
 * command line that names other slow ranks drops the file's per-rank list, and slow
 * ranks outside the world are still refused. */
static void test_skew_at_other_world_sizes(void **state)
{
    char path[256], err[SCENARIO_ERR] = "", was[SCENARIO_ERR];
    put(state, "skew4.ini", "[run]\nworld_size = 4\n[skew]\nspeed = 1.5, 1.5, 1, 1\n", path);
    scenario *sc = new_scenario();
    assert_int_equal(scenario_load_file(path, sc, err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "run.world_size=1024", err, sizeof err), 0);
    assert_int_equal(scenario_validate(sc, err, sizeof err), -1);
    assert_non_null(strstr(err, "skew.speed has 4 values but run.world_size is 1024: give one per rank"));
    assert_non_null(strstr(err, "-s skew.speed_repeat=true"));
    /* One value: every rank's. */
    scenario *one = new_scenario();
    assert_int_equal(scenario_copy(one, sc, err, sizeof err), 0);
    assert_int_equal(scenario_override(one, "skew.speed=1.25", err, sizeof err), 0);
    assert_int_equal(scenario_validate(one, err, sizeof err), 0);
    assert_true(scenario_rank_speed(one, 0) == 1.25 && scenario_rank_speed(one, 1023) == 1.25);
    scenario_free(one);
    free(one);
    /* Other slow ranks replace the file's list, said in `was`. */
    assert_int_equal(scenario_reskew(sc, "skew.slow_ranks=2,3", was, sizeof was), 1);
    assert_string_equal(was, "skew.speed = 1.5, 1.5, 1, 1");
    assert_int_equal(scenario_override(sc, "skew.slow_ranks=2,3", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "skew.slowdown=1.5", err, sizeof err), 0);
    assert_int_equal(scenario_validate(sc, err, sizeof err), 0);
    assert_true(scenario_rank_speed(sc, 3) < 0.67 && scenario_rank_speed(sc, 4) == 1.0);
    assert_int_equal(scenario_reskew(sc, "skew.slow_ranks=2,3", was, sizeof was), 0); /* nothing left to drop */
    assert_int_equal(scenario_override(sc, "run.world_size=2", err, sizeof err), 0);
    assert_int_equal(scenario_validate(sc, err, sizeof err), -1);
    assert_non_null(strstr(err, "skew.slow_ranks lists rank 2 but run.world_size is 2"));
    /* Where a key got its value, for messages outside the checks. */
    assert_int_equal(scenario_key_where(sc, "run.world_size", was, sizeof was), 0);
    assert_string_equal(was, "-s run.world_size: ");
    scenario_free(sc);
    free(sc);
}

static void test_validation_errors(void **state)
{
    expect_load_error(state, "val1.ini",
                      "[run]\nworld_size = 4\n\n[skew]\njitter = 0.1\nspeed = 1, 2, 3\n",
                      "6: skew.speed has 3 values but run.world_size is 4: give one per rank, one for "
                      "every rank (-s skew.speed=1), none (-s skew.speed=), or repeat the list over the "
                      "ranks (-s skew.speed_repeat=true)");
    expect_load_error(state, "val2.ini", "[run]\nworld_size = 2\n[skew]\nslow_ranks = 0, 2\n",
                      "4: skew.slow_ranks lists rank 2 but run.world_size is 2 (ranks are 0..1)");
    expect_load_error(state, "val3.ini", "[fault]\nmode = exit\n",
                      "2: fault.mode = exit needs fault.rank, which is missing (the rank that "
                      "fails)");
    expect_load_error(state, "val4.ini", "[fault]\niter = 3\nrank = 2\n",
                      "3: fault.rank = 2 needs fault.mode, which is missing (hang, exit or "
                      "error)");
    expect_load_error(state, "val5.ini", "[fault]\nrank = 9\nmode = hang\n",
                      "2: fault.rank 9 is not a rank of run.world_size 4 (ranks are 0..3)");
    expect_load_error(state, "val6.ini", "[model]\nbatch = 4\npreset = custom\n",
                      "3: model.preset = custom needs model.params (the element count of each "
                      "parameter) or model.params_file (each parameter's name, kind and shape)");
    expect_load_error(state, "val7.ini", "[model]\nparams = 10, 20\n",
                      "2: model.params is only used with model.preset = custom (preset is "
                      "resnet18)");
    expect_load_error(state, "val8.ini", "[skew]\nslow_ranks = 1, 1\n",
                      "2: skew.slow_ranks lists rank 1 twice");
}

static void test_validation_of_defaults_names_source(void **state)
{
    (void)state;
    scenario *sc = new_scenario();
    char err[SCENARIO_ERR] = "";
    scenario_defaults(sc);
    sc->world_size = 2;
    sc->fault = FAULT_ERROR; /* set behind the loader's back: no line known */
    assert_int_equal(scenario_validate(sc, err, sizeof err), -1);
    assert_string_equal(err, "defaults: fault.mode = error needs fault.rank, which is missing "
                             "(the rank that fails)");
    scenario_free(sc);
    free(sc);
}

/* ------------------------------------------------------------------ explain */

static char *explain_to_string(const char *key, int *rc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    *rc = scenario_explain(f, key);
    assert_int_equal(fclose(f), 0);
    return text;
}

static void test_explain(void **state)
{
    (void)state;
    int rc;
    char *one = explain_to_string("run.world_size", &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(one, "run.world_size"));
    assert_non_null(strstr(one, "[1, 65536]"));
    assert_non_null(strstr(one, " 4 "));
    assert_non_null(strstr(one, "int"));
    int lines = 0;
    for (const char *p = one; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 1);
    free(one);

    char *cap = explain_to_string("ddp.bucket_cap_mb", &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(cap, "[0.001, 1048576]"));
    assert_non_null(strstr(cap, " 25 "));
    free(cap);

    char *en = explain_to_string("model.compute", &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(en, "model|real"));
    free(en);

    char *sec = explain_to_string("fault", &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(sec, "[fault]\n"));
    assert_non_null(strstr(sec, "fault.rank"));
    assert_non_null(strstr(sec, "fault.mode"));
    assert_null(strstr(sec, "run.world_size"));
    free(sec);

    char *all = explain_to_string(NULL, &rc);
    assert_int_equal(rc, 0);
    const char *run = strstr(all, "[run]\n"), *ddp = strstr(all, "[ddp]\n");
    assert_non_null(run);
    assert_non_null(ddp);
    assert_true(run < ddp);
    assert_non_null(strstr(all, "[sweep]\n"));
    assert_non_null(strstr(all, "skew.speed"));
    assert_non_null(strstr(all, "device.peak_tflops"));
    free(all);

    free(explain_to_string("ddp.nope", &rc));
    assert_int_equal(rc, -1);
    free(explain_to_string("nope", &rc));
    assert_int_equal(rc, -1);
}

/* ------------------------------------------------------------------ INI round trip */

/* Equal apart from where the values came from: every value byte for byte, and what the
 * scenarios own (lists, sweep axes, include paths) by content, at whatever address. */
static void assert_same_values(const scenario *a, const scenario *b)
{
    /* Shallow copies to compare the bytes: a and b own what they point to, so x and y are
     * freed with free(), not scenario_free(). */
    scenario *x = new_scenario(), *y = new_scenario();
    memcpy(x, a, sizeof *x);
    memcpy(y, b, sizeof *y);
    memset(x->source, 0, sizeof x->source);
    memset(y->source, 0, sizeof y->source);
    memset(x->key_line, 0, sizeof x->key_line);
    memset(y->key_line, 0, sizeof y->key_line);
    memset(x->swept, 0, sizeof x->swept);
    memset(y->swept, 0, sizeof y->swept);
    assert_string_equal(x->name, y->name);
    assert_int_equal(x->ncustom, y->ncustom);
    assert_int_equal(x->nsweep, y->nsweep);
    for (int i = 0; i < x->nsweep; i++) {
        assert_string_equal(x->sweep[i].key, y->sweep[i].key);
        assert_int_equal(x->sweep[i].nvalues, y->sweep[i].nvalues);
        for (int v = 0; v < x->sweep[i].nvalues; v++)
            assert_string_equal(x->sweep[i].values[v], y->sweep[i].values[v]);
    }
    assert_int_equal(x->ninclude, y->ninclude);
    for (int i = 0; i < x->ninclude; i++)
        assert_string_equal(x->include_path[i], y->include_path[i]);
    x->sweep = y->sweep = NULL;
    x->include_path = y->include_path = NULL;
#define SAME_LIST(m, n)                                                                    \
    do {                                                                                   \
        assert_int_equal(x->n, y->n);                                                      \
        if (x->n > 0)                                                                      \
            assert_memory_equal(x->m, y->m, (size_t)x->n * sizeof *x->m);                  \
        x->m = y->m = NULL;                                                                \
    } while (0)
    SAME_LIST(custom_params, ncustom);
    SAME_LIST(layer_forward_us, nlayer_forward);
    SAME_LIST(layer_backward_us, nlayer_backward);
    SAME_LIST(speed, nspeed);
    SAME_LIST(slow_ranks, nslow);
    SAME_LIST(rank_steps, nrank_steps);
    SAME_LIST(measured_ranks, nmeasured_ranks);
    SAME_LIST(measured_bytes, nmeasured_bytes);
    SAME_LIST(measured_us, nmeasured_us);
#undef SAME_LIST
    assert_memory_equal(x, y, sizeof *x);
    free(x);
    free(y);
}

static void round_trip(void **state, const scenario *sc, const char *name)
{
    char *ini = scenario_to_ini(sc);
    assert_non_null(ini);
    char path[256], err[SCENARIO_ERR] = "";
    put(state, name, ini, path);
    scenario *back = new_scenario();
    if (scenario_load_file(path, back, err, sizeof err) != 0)
        fail_msg("reloading the exported INI failed: %s\n%s", err, ini);
    assert_same_values(sc, back);
    scenario_free(back);
    free(back);
    free(ini);
}

/* A wrapped list whose next item starts with '#' must not turn into a comment line. */
static void test_to_ini_wraps_hash_items_safely(void **state)
{
    scenario *sc = new_scenario(), *back = new_scenario();
    char path[256], err[SCENARIO_ERR] = "";
    load_ok(state, "hash.ini",
            "[sweep]\nrun.name = first-run-with-a-long-name-to-fill-the-line, "
            "second-run-with-a-long-name-to-fill-the-line, "
            "#3 third-run-with-an-even-longer-name-to-fill-the-line\n",
            sc);
    char *ini = scenario_to_ini(sc);
    assert_non_null(ini);
    const char *third = "#3 third-run-with-an-even-longer-name-to-fill-the-line";
    char wrapped[128];
    snprintf(wrapped, sizeof wrapped, "\n    , %s\n", third);
    assert_non_null(strstr(ini, wrapped));
    put(state, "hash-out.ini", ini, path);
    assert_int_equal(scenario_load_file(path, back, err, sizeof err), 0);
    assert_int_equal(back->sweep[0].nvalues, 3);
    assert_string_equal(back->sweep[0].values[2], third);
    /* The reader takes a leading separator on continuation lines of lists too. */
    load_ok(state, "lead.ini", "[model]\npreset = custom\nparams = 1, 2\n  , 3\n", back);
    assert_int_equal(back->ncustom, 3);
    free(ini);
    scenario_free(sc);
    free(sc);
    scenario_free(back);
    free(back);
}

static void test_to_ini_round_trip(void **state)
{
    scenario *sc = new_scenario();
    char err[SCENARIO_ERR] = "";

    scenario_defaults(sc);
    round_trip(state, sc, "rt0.ini");

    load_ok(state, "rt1.ini", every_section, sc);
    assert_int_equal(scenario_override(sc, "network.latency_us=0.1", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "device.preset=custom", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "device.peak_tflops=12.345678901234", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "device.mem_bw_gbps=777", err, sizeof err), 0);
    round_trip(state, sc, "rt1-out.ini");

    /* A long custom model wraps onto continuation lines, and sweeps come along. */
    char *text = malloc(64 * 1024);
    assert_non_null(text);
    int n = sprintf(text, "[run]\nname = big\nworld_size = 2\n[model]\npreset = custom\nparams = ");
    for (int i = 0; i < 3000; i++)
        n += sprintf(text + n, "%s%d", i == 0 ? "" : i % 10 == 0 ? ",\n  " : ", ", 1000 + i * 7919);
    n += sprintf(text + n, ", 5\n[skew]\nspeed = 1, 1.25\n[sweep]\nddp.bucket_cap_mb = 1, 2.5, 10\n"
                           "skew.speed = 1, 1 | 2, 0.5\nmodel.compute = model, real\n");
    load_ok(state, "rt2.ini", text, sc);
    assert_int_equal(sc->ncustom, 3001);
    assert_int_equal(scenario_sweep_count(sc), 12);
    round_trip(state, sc, "rt2-out.ini");

    char *ini = scenario_to_ini(sc);
    assert_non_null(ini);
    assert_non_null(strstr(ini, "\n[sweep]\nddp.bucket_cap_mb = 1, 2.5, 10\n"
                                "skew.speed = 1, 1 | 2, 0.5\n"));
    assert_non_null(strstr(ini, "; peak_tflops = 19.5"));
    /* Every line fits inih's line buffer. */
    for (const char *p = ini; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        assert_true(len <= 120);
        p += len + (nl ? 1 : 0);
    }
    free(ini);

    /* A sweep point round-trips too. */
    scenario *pt = new_scenario();
    assert_int_equal(scenario_sweep_point(sc, 5, pt, err, sizeof err), 0);
    round_trip(state, pt, "rt3-out.ini");
    scenario_free(pt);
    free(pt);
    free(text);
    scenario_free(sc);
    free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_load_text),
        cmocka_unit_test(test_good_file_every_section),
        cmocka_unit_test(test_name_from_file_name),
        cmocka_unit_test(test_enum_and_bool_spellings),
        cmocka_unit_test(test_error_not_a_number),
        cmocka_unit_test(test_error_out_of_range),
        cmocka_unit_test(test_error_trailing_junk_nan_inf),
        cmocka_unit_test(test_error_enum_and_bool),
        cmocka_unit_test(test_error_list_element),
        cmocka_unit_test(test_error_unknown_key),
        cmocka_unit_test(test_error_moved_host_key),
        cmocka_unit_test(test_sweep_from_command_line),
        cmocka_unit_test(test_error_unknown_section),
        cmocka_unit_test(test_error_key_outside_section),
        cmocka_unit_test(test_error_duplicate_key),
        cmocka_unit_test(test_error_syntax),
        cmocka_unit_test(test_error_continuation_of_scalar),
        cmocka_unit_test(test_error_long_line),
        cmocka_unit_test(test_error_cannot_open),
        cmocka_unit_test(test_file_size_limit_is_inclusive),
        cmocka_unit_test(test_line_length_limit_and_line_endings),
        cmocka_unit_test(test_utf8_names),
        cmocka_unit_test(test_name_from_odd_file_name),
        cmocka_unit_test(test_sweep_point_limit),
        cmocka_unit_test(test_validate_refuses_corrupt_structs),
        cmocka_unit_test(test_warnings_api),
        cmocka_unit_test(test_keys_without_effect_in_sweeps),
        cmocka_unit_test(test_override_switches_context),
        cmocka_unit_test(test_shipped_scenarios_have_no_warnings),
        cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_override_after_file_validates_with_override_location),
        cmocka_unit_test(test_device_preset_vs_explicit_peak),
        cmocka_unit_test(test_sweep_points),
        cmocka_unit_test(test_sweep_device_preset_follows_point),
        cmocka_unit_test(test_sweep_errors),
        cmocka_unit_test(test_sweep_list_key_with_bar),
        cmocka_unit_test(test_sweep_point_validation),
        cmocka_unit_test(test_validation_errors),
        cmocka_unit_test(test_skew_at_other_world_sizes),
        cmocka_unit_test(test_validation_of_defaults_names_source),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_to_ini_round_trip),
        cmocka_unit_test(test_to_ini_wraps_hash_items_safely),
    };
    return cmocka_run_group_tests(tests, group_setup, scratch_group_teardown);
}
