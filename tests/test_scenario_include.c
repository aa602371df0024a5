/* test_scenario_include.c — `include = FILE` in scenario files (scenario.h): included
 * keys are read first and the including file's keys override them wherever they stand;
 * paths are relative to the including file; nesting is bounded; a missing file, a loop,
 * a [sweep] in an included file and an include inside a section are errors at the
 * include line; a bad key inside an included file is reported at that file's line, and
 * so is a cross-key problem of a key it set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/scenario/scenario.h"
#include "harness.h"

/* The files the tests write go to one scratch directory, /tmp/test_include.XXXXXX (and
 * its folder net/), made before the first test and removed after the last. */
static int setup(void **state)
{
    if (scratch_setup("test_include.") != 0)
        return -1;
    char sub[96];
    snprintf(sub, sizeof sub, "%s/net", scratch_dir());
    if (mkdir(sub, 0700) != 0) {
        scratch_group_teardown(state);
        return -1;
    }
    return 0;
}

static void put(void **state, const char *name, const char *text, char path[256])
{
    (void)state;
    write_file_in(scratch_dir(), name, text, path, 256);
}

static scenario *load(const char *path, int want_rc, char *err, size_t errlen)
{
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    err[0] = '\0';
    int rc = scenario_load_file(path, sc, err, errlen);
    if (rc != want_rc)
        fail_msg("load %s: rc %d, want %d (%s)", path, rc, want_rc, err);
    return sc;
}

static void test_included_keys_apply_and_including_file_wins(void **state)
{
    char inc[256], top[256], err[SCENARIO_ERR];
    put(state, "net/fabric.ini",
        "[network]\nlatency_us = 7.5\nbandwidth_gbps = 3.25\nalgorithm = tree\n[device]\nmem_bw_gbps = 40\n", inc);
    /* the override comes before the section the included file also sets */
    put(state, "top.ini",
        "include = net/fabric.ini\n[network]\nalgorithm = ring\n[run]\nworld_size = 2\n", top);
    scenario *sc = load(top, 0, err, sizeof err);
    assert_true(sc->latency_us == 7.5);
    assert_true(sc->bandwidth_gbps == 3.25);
    assert_int_equal(sc->algorithm, NET_RING);
    assert_true(sc->mem_bw_gbps == 40);
    assert_int_equal(sc->world_size, 2);
    assert_int_equal(sc->ninclude, 1);
    char want[256];
    snprintf(want, sizeof want, "%s/net/fabric.ini", scratch_dir());
    assert_string_equal(sc->include_path[0], want);
    /* the run is named after the including file, and its source is that file */
    assert_string_equal(sc->name, "top");
    assert_string_equal(sc->source, top);
    scenario_free(sc);
    free(sc);
}

static void test_explicit_included_bandwidth_survives_a_preset(void **state)
{
    char inc[256], top[256], err[SCENARIO_ERR];
    put(state, "mem.ini", "[device]\nmem_bw_gbps = 12\n", inc);
    put(state, "preset.ini", "include = mem.ini\n[device]\npreset = h100\n", top);
    scenario *sc = load(top, 0, err, sizeof err);
    assert_true(sc->mem_bw_gbps == 12); /* explicit, from the include, as if set in the file */
    scenario_free(sc);
    free(sc);
}

static void test_nested_includes_relative_to_each_file(void **state)
{
    char p[256], err[SCENARIO_ERR];
    put(state, "net/inner.ini", "[network]\nlatency_us = 1\nbandwidth_gbps = 2\n", p);
    put(state, "net/outer.ini", "include = inner.ini\n[network]\nlatency_us = 4\n", p);
    put(state, "nested.ini", "include = net/outer.ini\n[run]\niterations = 3\n", p);
    scenario *sc = load(p, 0, err, sizeof err);
    assert_true(sc->latency_us == 4); /* outer overrides inner */
    assert_true(sc->bandwidth_gbps == 2);
    assert_int_equal(sc->iterations, 3);
    assert_int_equal(sc->ninclude, 2);
    scenario_free(sc);
    free(sc);
}

static void expect_error(void **state, const char *name, const char *text, const char *fmt_suffix,
                         const char *located_in)
{
    char p[256], err[SCENARIO_ERR], want[SCENARIO_ERR + 256];
    put(state, name, text, p);
    scenario *sc = load(p, -1, err, sizeof err);
    snprintf(want, sizeof want, "%s/%s:%s", scratch_dir(), located_in, fmt_suffix);
    assert_string_equal(err, want);
    scenario_free(sc);
    free(sc);
}

static void test_missing_file(void **state)
{
    char suffix[512];
    snprintf(suffix, sizeof suffix, "2: include = nope.ini: cannot open %s/nope.ini: No such file or directory",
             scratch_dir());
    expect_error(state, "missing.ini", "; a comment first\ninclude = nope.ini\n[run]\n", suffix, "missing.ini");
}

static void test_loops(void **state)
{
    char p[256], suffix[512];
    snprintf(suffix, sizeof suffix, "1: include = self.ini: include loop: %s/self.ini is already being read",
             scratch_dir());
    expect_error(state, "self.ini", "include = self.ini\n[run]\n", suffix, "self.ini");

    put(state, "loop_b.ini", "include = loop_a.ini\n[run]\n", p);
    snprintf(suffix, sizeof suffix,
             "1: include = loop_a.ini: include loop: %s/loop_a.ini is already being read (it includes %s/loop_b.ini)",
             scratch_dir(), scratch_dir());
    expect_error(state, "loop_a.ini", "include = loop_b.ini\n[run]\n", suffix, "loop_b.ini");
}

static void test_bad_key_inside_included_file(void **state)
{
    char p[256];
    put(state, "bad_inc.ini", "[network]\nlatency_us = 1\nbandwith_gbps = 3\n", p);
    char err[SCENARIO_ERR];
    put(state, "uses_bad.ini", "include = bad_inc.ini\n[run]\n", p);
    scenario *sc = load(p, -1, err, sizeof err);
    char want[256];
    snprintf(want, sizeof want, "%s/bad_inc.ini:3: ", scratch_dir());
    /* located in the included file, at its line, whatever the wording of the hint */
    assert_memory_equal(err, want, strlen(want));
    assert_non_null(strstr(err, "bandwith_gbps"));
    scenario_free(sc);
    free(sc);

    put(state, "bad_value.ini", "[network]\n\nlatency_us = -1\n", p);
    expect_error(state, "uses_bad_value.ini", "include = bad_value.ini\n[run]\n",
                 "3: network.latency_us -1 is out of range [0, 1000000]", "bad_value.ini");
}

static void test_cross_key_error_of_an_included_key_names_its_file(void **state)
{
    char p[256], err[SCENARIO_ERR];
    /* skew.slow_ranks without its slowdown: reported where slow_ranks was set */
    put(state, "skew_inc.ini", "[skew]\n\nslow_ranks = 1\n", p);
    put(state, "skew_top.ini", "include = skew_inc.ini\n[run]\nworld_size = 2\n", p);
    scenario *sc = load(p, -1, err, sizeof err);
    char want[256];
    snprintf(want, sizeof want, "%s/skew_inc.ini:3: ", scratch_dir());
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("want a message located at %s, got %s", want, err);
    scenario_free(sc);
    free(sc);
}

static void test_misplaced_and_forbidden(void **state)
{
    char p[256];
    put(state, "plain.ini", "[network]\nlatency_us = 1\n", p);
    expect_error(state, "in_section.ini", "[run]\ninclude = plain.ini\n",
                 "2: include goes before the first [section] (it was in [run])", "in_section.ini");
    expect_error(state, "empty_inc.ini", "include =\n[run]\n", "1: include needs a file name (include = network.ini)",
                 "empty_inc.ini");
    put(state, "has_sweep.ini", "[network]\nlatency_us = 1\n[sweep]\nddp.bucket_cap_mb = 1, 2\n", p);
    expect_error(state, "top_sweep.ini", "include = has_sweep.ini\n[run]\n",
                 "4: [sweep] in an included file: put the sweep in the scenario that includes it", "has_sweep.ini");
    /* a key the including file sets twice is still a duplicate */
    expect_error(state, "dup.ini", "include = plain.ini\n[network]\nlatency_us = 2\nlatency_us = 3\n",
                 "4: duplicate key network.latency_us (first set on line 3)", "dup.ini");
}

static void test_depth_is_bounded(void **state)
{
    char p[256], text[64];
    /* chain0 includes chain1 ... each including the next; the last is a plain file */
    for (int i = 0; i <= SCENARIO_MAX_INCLUDES + 1; i++) {
        char name[32];
        snprintf(name, sizeof name, "chain%d.ini", i);
        snprintf(text, sizeof text, "include = chain%d.ini\n[run]\n", i + 1);
        put(state, name, text, p);
    }
    snprintf(text, sizeof text, "chain%d.ini", SCENARIO_MAX_INCLUDES + 2);
    put(state, text, "[run]\n", p);
    char err[SCENARIO_ERR];
    snprintf(p, sizeof p, "%s/chain0.ini", scratch_dir());
    scenario *sc = load(p, -1, err, sizeof err);
    assert_non_null(strstr(err, "more than 8 included files"));
    scenario_free(sc);
    free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_included_keys_apply_and_including_file_wins),
        cmocka_unit_test(test_explicit_included_bandwidth_survives_a_preset),
        cmocka_unit_test(test_nested_includes_relative_to_each_file),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_loops),
        cmocka_unit_test(test_bad_key_inside_included_file),
        cmocka_unit_test(test_cross_key_error_of_an_included_key_names_its_file),
        cmocka_unit_test(test_misplaced_and_forbidden),
        cmocka_unit_test(test_depth_is_bounded),
    };
    return cmocka_run_group_tests(tests, setup, scratch_group_teardown);
}
