/* test_launch_env.c — launcher detection from fake environments: each launcher's
 * variables, their precedence, every strict-parsing error, Slurm host lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/launch/launch_env.h"

/* A fake environment: NULL-terminated "NAME=value" strings. */
static const char *fake_getenv(void *user, const char *name)
{
    const char *const *env = user;
    size_t n = strlen(name);
    for (; *env; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}

static int detect(const char *const *env, launch_env *out, char *err, size_t errlen)
{
    err[0] = '\0';
    return launch_env_detect(fake_getenv, (void *)env, out, err, errlen);
}

/* Expects failure with a message containing every fragment given. */
static void expect_error(const char *const *env, const char *frag1, const char *frag2)
{
    launch_env e;
    char err[512];
    assert_int_equal(detect(env, &e, err, sizeof err), -1);
    if (!strstr(err, frag1) || (frag2 && !strstr(err, frag2)))
        fail_msg("error '%s' lacks '%s' / '%s'", err, frag1, frag2 ? frag2 : "");
}

static void test_none(void **state)
{
    (void)state;
    const char *env[] = {"HOME=/root", "MASTER_ADDR=10.0.0.1", "SLURM_JOB_ID=12", NULL};
    launch_env e;
    char err[256];
    assert_int_equal(detect(env, &e, err, sizeof err), 0);
    assert_int_equal(e.kind, LAUNCH_NONE);
    assert_string_equal(launch_kind_name(e.kind), "none");
    assert_int_equal(e.rank, 0);
    assert_int_equal(e.world_size, 1);
}

static void test_torchrun(void **state)
{
    (void)state;
    const char *env[] = {"RANK=5", "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4",
                         "MASTER_ADDR=node7.cluster", "MASTER_PORT=29400", NULL};
    launch_env e;
    char err[256];
    assert_int_equal(detect(env, &e, err, sizeof err), 0);
    assert_int_equal(e.kind, LAUNCH_TORCHRUN);
    assert_string_equal(launch_kind_name(e.kind), "torchrun");
    assert_int_equal(e.rank, 5);
    assert_int_equal(e.world_size, 8);
    assert_int_equal(e.local_rank, 1);
    assert_int_equal(e.local_world_size, 4);
    assert_string_equal(e.master_addr, "node7.cluster");
    assert_int_equal(e.master_port, 29400);
    assert_string_equal(e.rank_var, "RANK");
    assert_string_equal(e.local_world_var, "LOCAL_WORLD_SIZE");
    assert_string_equal(e.addr_var, "MASTER_ADDR");
    assert_string_equal(e.port_var, "MASTER_PORT");
}

static void test_torchrun_without_local(void **state)
{
    (void)state;
    const char *env[] = {"RANK=2", "WORLD_SIZE=3", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=1", NULL};
    launch_env e;
    char err[256];
    assert_int_equal(detect(env, &e, err, sizeof err), 0);
    assert_int_equal(e.local_rank, 2);
    assert_int_equal(e.local_world_size, 3);
    assert_int_equal(e.master_port, 1);
}

static void test_torchrun_errors(void **state)
{
    (void)state;
    const char *e1[] = {"RANK=abc", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e1, "RANK='abc'", "non-negative integer");
    const char *e2[] = {"RANK=-1", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e2, "RANK='-1'", NULL);
    const char *e3[] = {"RANK=2", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e3, "RANK=2 is not below WORLD_SIZE=2", NULL);
    const char *e4[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=65536", NULL};
    expect_error(e4, "MASTER_PORT='65536'", "1..65535");
    const char *e5[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=0", NULL};
    expect_error(e5, "MASTER_PORT='0'", NULL);
    const char *e6[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_PORT=5", NULL};
    expect_error(e6, "MASTER_ADDR is not", NULL);
    const char *e7[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", NULL};
    expect_error(e7, "MASTER_PORT is not", NULL);
    const char *e8[] = {"RANK=0", "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e8, "WORLD_SIZE is not set", NULL);
    const char *e9[] = {"WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e9, "RANK is not set", NULL);
    const char *e10[] = {"RANK=0", "WORLD_SIZE=0", "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e10, "WORLD_SIZE=0", "at least one");
    const char *e11[] = {"RANK=0", "WORLD_SIZE=2", "LOCAL_RANK=0", "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e11, "LOCAL_RANK is set but LOCAL_WORLD_SIZE is not", NULL);
    const char *e12[] = {"RANK=0", "WORLD_SIZE=2", "LOCAL_RANK=2", "LOCAL_WORLD_SIZE=2",
                         "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e12, "LOCAL_RANK=2 is not below LOCAL_WORLD_SIZE=2", NULL);
    const char *e13[] = {"RANK=0", "WORLD_SIZE=2", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=3",
                         "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e13, "LOCAL_WORLD_SIZE=3 is larger than WORLD_SIZE=2", NULL);
    const char *e14[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=", "MASTER_PORT=5", NULL};
    expect_error(e14, "MASTER_ADDR=''", NULL);
    const char *e15[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a b", "MASTER_PORT=5", NULL};
    expect_error(e15, "MASTER_ADDR='a b'", NULL);
    const char *e16[] = {"RANK=0", "WORLD_SIZE=99999999999", "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e16, "WORLD_SIZE='99999999999'", NULL);
    const char *e17[] = {"RANK= 1", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e17, "RANK=' 1'", NULL);
    const char *e18[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=80x", NULL};
    expect_error(e18, "MASTER_PORT='80x'", NULL);
    const char *e19[] = {"RANK=+1", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e19, "RANK='+1'", NULL);
    const char *e20[] = {"RANK=", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=5", NULL};
    expect_error(e20, "RANK=''", NULL);
}

static void test_mpi(void **state)
{
    (void)state;
    const char *env[] = {"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4",
                         "OMPI_COMM_WORLD_LOCAL_RANK=3", "OMPI_COMM_WORLD_LOCAL_SIZE=4", NULL};
    launch_env e;
    char err[256];
    assert_int_equal(detect(env, &e, err, sizeof err), 0);
    assert_int_equal(e.kind, LAUNCH_MPI);
    assert_int_equal(e.rank, 3);
    assert_int_equal(e.world_size, 4);
    assert_int_equal(e.local_rank, 3);
    assert_int_equal(e.local_world_size, 4);
    assert_string_equal(e.master_addr, "127.0.0.1");
    assert_int_equal(e.master_port, LAUNCH_DEFAULT_PORT);
    assert_int_equal(e.master_port, 29500);
    assert_string_equal(e.addr_var, "default");
    assert_string_equal(e.rank_var, "OMPI_COMM_WORLD_RANK");

    const char *env2[] = {"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=4",
                          "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
                          "MASTER_ADDR=head", "MASTER_PORT=4000", NULL};
    assert_int_equal(detect(env2, &e, err, sizeof err), 0);
    assert_int_equal(e.kind, LAUNCH_MPI);
    assert_string_equal(e.master_addr, "head");
    assert_int_equal(e.master_port, 4000);
    assert_string_equal(e.port_var, "MASTER_PORT");
}

static void test_mpi_errors(void **state)
{
    (void)state;
    const char *e1[] = {"OMPI_COMM_WORLD_RANK=4", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=0",
                        "OMPI_COMM_WORLD_LOCAL_SIZE=1", NULL};
    expect_error(e1, "OMPI_COMM_WORLD_RANK=4 is not below OMPI_COMM_WORLD_SIZE=4", NULL);
    const char *e2[] = {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4", NULL};
    expect_error(e2, "OMPI_COMM_WORLD_LOCAL_RANK is not set", NULL);
    const char *e3[] = {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=x",
                        "OMPI_COMM_WORLD_LOCAL_SIZE=1", NULL};
    expect_error(e3, "OMPI_COMM_WORLD_LOCAL_RANK='x'", NULL);
    const char *e4[] = {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=0",
                        "OMPI_COMM_WORLD_LOCAL_SIZE=1", "MASTER_PORT=70000", NULL};
    expect_error(e4, "MASTER_PORT='70000'", NULL);
    const char *e5[] = {"OMPI_COMM_WORLD_SIZE=4", NULL};
    expect_error(e5, "OMPI_COMM_WORLD_RANK is not set", NULL);
}

static void test_slurm(void **state)
{
    (void)state;
    const char *env[] = {"SLURM_PROCID=6", "SLURM_NTASKS=8", "SLURM_LOCALID=2", "SLURM_NTASKS_PER_NODE=4",
                         "SLURM_JOB_NODELIST=gpu[07-08,11],login1", "SLURM_NODELIST=other1", NULL};
    launch_env e;
    char err[256];
    assert_int_equal(detect(env, &e, err, sizeof err), 0);
    assert_int_equal(e.kind, LAUNCH_SLURM);
    assert_string_equal(launch_kind_name(e.kind), "slurm");
    assert_int_equal(e.rank, 6);
    assert_int_equal(e.world_size, 8);
    assert_int_equal(e.local_rank, 2);
    assert_int_equal(e.local_world_size, 4);
    assert_string_equal(e.master_addr, "gpu07");
    assert_int_equal(e.master_port, 29500);
    assert_string_equal(e.addr_var, "hostlist of SLURM_JOB_NODELIST");
    assert_string_equal(e.local_world_var, "SLURM_NTASKS_PER_NODE");

    /* SLURM_NODELIST when the job variable is absent; MASTER_* override both. */
    const char *env2[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_TASKS_PER_NODE=2",
                          "SLURM_NODELIST=a-b-[3-5]", NULL};
    assert_int_equal(detect(env2, &e, err, sizeof err), 0);
    assert_string_equal(e.master_addr, "a-b-3");
    assert_string_equal(e.addr_var, "hostlist of SLURM_NODELIST");
    assert_int_equal(e.local_world_size, 2);
    const char *env3[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_TASKS_PER_NODE=2",
                          "SLURM_NODELIST=a-b-[3-5]", "MASTER_ADDR=10.1.2.3", "MASTER_PORT=1234", NULL};
    assert_int_equal(detect(env3, &e, err, sizeof err), 0);
    assert_string_equal(e.master_addr, "10.1.2.3");
    assert_int_equal(e.master_port, 1234);
}

static void test_slurm_tasks_per_node(void **state)
{
    (void)state;
    launch_env e;
    char err[256];
    /* Nodes 0 and 1 run 4 tasks, node 2 runs 3. */
    const char *env[] = {"SLURM_PROCID=9", "SLURM_NTASKS=11", "SLURM_LOCALID=1", "SLURM_TASKS_PER_NODE=4(x2),3",
                         "SLURM_NODEID=2", "SLURM_NODELIST=n[1-3]", NULL};
    assert_int_equal(detect(env, &e, err, sizeof err), 0);
    assert_int_equal(e.local_world_size, 3);
    const char *env1[] = {"SLURM_PROCID=5", "SLURM_NTASKS=11", "SLURM_LOCALID=1", "SLURM_TASKS_PER_NODE=4(x2),3",
                          "SLURM_NODEID=1", "SLURM_NODELIST=n[1-3]", NULL};
    assert_int_equal(detect(env1, &e, err, sizeof err), 0);
    assert_int_equal(e.local_world_size, 4);
    const char *env2[] = {"SLURM_PROCID=1", "SLURM_NTASKS=6", "SLURM_LOCALID=1", "SLURM_TASKS_PER_NODE=2(x3)",
                          "SLURM_NODELIST=n[1-3]", NULL};
    assert_int_equal(detect(env2, &e, err, sizeof err), 0);
    assert_int_equal(e.local_world_size, 2);

    const char *b1[] = {"SLURM_PROCID=1", "SLURM_NTASKS=11", "SLURM_LOCALID=1", "SLURM_TASKS_PER_NODE=4(x2),3",
                        "SLURM_NODELIST=n1", NULL};
    expect_error(b1, "differs between nodes", "SLURM_NODEID");
    const char *b2[] = {"SLURM_PROCID=1", "SLURM_NTASKS=11", "SLURM_LOCALID=1", "SLURM_TASKS_PER_NODE=4(x2),3",
                        "SLURM_NODEID=3", "SLURM_NODELIST=n1", NULL};
    expect_error(b2, "SLURM_NODEID=3 is beyond the 3 nodes", NULL);
    const char *bad_lists[] = {"4(2)", "4(x)", "4(x0)", "x", "", "4,", "4(x2", "-1"};
    for (size_t i = 0; i < sizeof bad_lists / sizeof *bad_lists; i++) {
        char tpn[64];
        snprintf(tpn, sizeof tpn, "SLURM_TASKS_PER_NODE=%s", bad_lists[i]);
        const char *b[] = {"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_LOCALID=0", tpn, "SLURM_NODELIST=n1", NULL};
        expect_error(b, "SLURM_TASKS_PER_NODE=", "task count list");
    }
}

static void test_slurm_errors(void **state)
{
    (void)state;
    const char *e1[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_NTASKS_PER_NODE=2", NULL};
    expect_error(e1, "MASTER_ADDR", "SLURM_JOB_NODELIST");
    const char *e2[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_NODELIST=n1", NULL};
    expect_error(e2, "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE");
    const char *e3[] = {"SLURM_PROCID=2", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_NTASKS_PER_NODE=1",
                        "SLURM_NODELIST=n1", NULL};
    expect_error(e3, "SLURM_PROCID=2 is not below SLURM_NTASKS=2", NULL);
    const char *e4[] = {"SLURM_PROCID=1", "SLURM_NTASKS=2", "SLURM_LOCALID=1", "SLURM_NTASKS_PER_NODE=1",
                        "SLURM_NODELIST=n1", NULL};
    expect_error(e4, "SLURM_LOCALID=1 is not below SLURM_NTASKS_PER_NODE=1", NULL);
    const char *e5[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_NTASKS_PER_NODE=1",
                        "SLURM_JOB_NODELIST=n[3-1]", NULL};
    expect_error(e5, "SLURM_JOB_NODELIST='n[3-1]'", "backwards");
    const char *e6[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_NTASKS_PER_NODE=1",
                        "SLURM_NODELIST=n1", "MASTER_PORT=-5", NULL};
    expect_error(e6, "MASTER_PORT='-5'", NULL);
    const char *e7[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_NODEID=zz",
                        "SLURM_TASKS_PER_NODE=1(x2)", "SLURM_NODELIST=n1", NULL};
    expect_error(e7, "SLURM_NODEID='zz'", NULL);
}

/* Each launcher wins over the ones below it; MASTER_* alone does not make torchrun. */
static void test_precedence(void **state)
{
    (void)state;
    launch_env e;
    char err[256];
    const char *all[] = {"RANK=1", "WORLD_SIZE=2", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1", "MASTER_ADDR=t",
                         "MASTER_PORT=7", "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4",
                         "OMPI_COMM_WORLD_LOCAL_RANK=0", "OMPI_COMM_WORLD_LOCAL_SIZE=4", "SLURM_PROCID=3",
                         "SLURM_NTASKS=5", "SLURM_LOCALID=0", "SLURM_NTASKS_PER_NODE=1", "SLURM_NODELIST=n1", NULL};
    assert_int_equal(detect(all, &e, err, sizeof err), 0);
    assert_int_equal(e.kind, LAUNCH_TORCHRUN);
    assert_int_equal(e.rank, 1);
    assert_int_equal(e.world_size, 2);
    /* Drop RANK/WORLD_SIZE/LOCAL_*: MASTER_* stay but mpirun is what launched us. */
    assert_int_equal(detect(all + 4, &e, err, sizeof err), 0);
    assert_int_equal(e.kind, LAUNCH_MPI);
    assert_int_equal(e.world_size, 4);
    assert_string_equal(e.master_addr, "t");
    assert_int_equal(e.master_port, 7);
    assert_int_equal(detect(all + 10, &e, err, sizeof err), 0);
    assert_int_equal(e.kind, LAUNCH_SLURM);
    assert_int_equal(e.rank, 3);
    assert_int_equal(e.world_size, 5);
    /* A broken higher launcher is an error, not a fall-through to a lower one. */
    const char *broken[] = {"RANK=x", "WORLD_SIZE=2", "MASTER_ADDR=t", "MASTER_PORT=7", "SLURM_PROCID=0",
                            "SLURM_NTASKS=1", "SLURM_LOCALID=0", "SLURM_NTASKS_PER_NODE=1", "SLURM_NODELIST=n1", NULL};
    expect_error(broken, "RANK='x'", NULL);
}

static void expect_first(const char *list, const char *want)
{
    char out[64], err[256] = "";
    if (launch_hostlist_first(list, out, sizeof out, err, sizeof err) != 0)
        fail_msg("'%s': %s", list, err);
    assert_string_equal(out, want);
}

static void expect_bad_list(const char *list, const char *frag)
{
    char out[64], err[256] = "";
    assert_int_equal(launch_hostlist_first(list, out, sizeof out, err, sizeof err), -1);
    if (!strstr(err, frag))
        fail_msg("'%s': error '%s' lacks '%s'", list, err, frag);
    assert_string_equal(out, "");
}

static void test_hostlist(void **state)
{
    (void)state;
    expect_first("node[01-04,07],gpu5", "node01");
    expect_first("a-b-[3-5]", "a-b-3");
    expect_first("host1,host2", "host1");
    expect_first("single", "single");
    expect_first("n[7,1-3]", "n7");
    expect_first("n[001]", "n001");
    expect_first("rack[2-3]-n[10-11]", "rack2-n10");
    expect_first("n[1-2]x,m[5]", "n1x");
    expect_first("10.0.0.[5-9]", "10.0.0.5");
    expect_first("gpu5,node[01-04]", "gpu5");

    expect_bad_list("", "empty");
    expect_bad_list(",host", "empty");
    expect_bad_list("n[1-3", "unclosed");
    expect_bad_list("n[1-[2]]", "unclosed");
    expect_bad_list("n[]", "empty '[]'");
    expect_bad_list("n[a-b]", "not a list of numbers");
    expect_bad_list("n[1-]", "not a list of numbers");
    expect_bad_list("n[1,]", "not a list of numbers");
    expect_bad_list("n[,1]", "not a list of numbers");
    expect_bad_list("n[5-2]", "backwards");
    expect_bad_list("n1]", "unexpected ']'");
    expect_bad_list("n 1", "unexpected ' '");

    char small[4], err[128];
    assert_int_equal(launch_hostlist_first("abcd", small, sizeof small, err, sizeof err), -1);
    assert_non_null(strstr(err, "too long"));
    assert_int_equal(launch_hostlist_first("ab[1000]", small, sizeof small, err, sizeof err), -1);
    assert_non_null(strstr(err, "too long"));
    assert_int_equal(launch_hostlist_first("ab[1]", small, sizeof small, err, sizeof err), 0);
    assert_string_equal(small, "ab1");
}

/* The process adapter really reads the environment. */
static void test_process_getenv(void **state)
{
    (void)state;
    assert_int_equal(setenv("DDPPROF_LAUNCH_ENV_TEST", "42", 1), 0);
    assert_string_equal(launch_env_getenv(NULL, "DDPPROF_LAUNCH_ENV_TEST"), "42");
    assert_int_equal(unsetenv("DDPPROF_LAUNCH_ENV_TEST"), 0);
    assert_null(launch_env_getenv(NULL, "DDPPROF_LAUNCH_ENV_TEST"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_torchrun),
        cmocka_unit_test(test_torchrun_without_local),
        cmocka_unit_test(test_torchrun_errors),
        cmocka_unit_test(test_mpi),
        cmocka_unit_test(test_mpi_errors),
        cmocka_unit_test(test_slurm),
        cmocka_unit_test(test_slurm_tasks_per_node),
        cmocka_unit_test(test_slurm_errors),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_hostlist),
        cmocka_unit_test(test_process_getenv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
