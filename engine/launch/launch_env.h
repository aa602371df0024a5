/* launch_env.h — which rank this process is, read from the environment an existing
 * launcher (torchrun, Open MPI's mpirun, Slurm's srun) gives each process it starts.
 *
 * Contract: launch_env_detect() reads variables only through the caller's lookup
 * function (launch_env_getenv is the adapter for the real environment), so any
 * environment can be tested.  Launchers are tried in this order, the first whose marker
 * variable is set wins:
 *   1. torchrun  marker RANK or WORLD_SIZE.  Needs RANK, WORLD_SIZE, MASTER_ADDR,
 *                MASTER_PORT; LOCAL_RANK and LOCAL_WORLD_SIZE come as a pair, and when
 *                both are absent the job is taken as one node (local = global).
 *   2. mpirun    marker OMPI_COMM_WORLD_RANK or OMPI_COMM_WORLD_SIZE.  Needs those two
 *                and OMPI_COMM_WORLD_LOCAL_RANK / _LOCAL_SIZE.  Open MPI names no master:
 *                MASTER_ADDR / MASTER_PORT when set, else 127.0.0.1 and
 *                LAUNCH_DEFAULT_PORT (right for one node only).
 *   3. srun      marker SLURM_PROCID.  Needs SLURM_NTASKS, SLURM_LOCALID and
 *                SLURM_NTASKS_PER_NODE, or SLURM_TASKS_PER_NODE ("4(x2),3", indexed by
 *                SLURM_NODEID when the counts differ).  Master: MASTER_ADDR, else the
 *                first host of SLURM_JOB_NODELIST (or SLURM_NODELIST); port MASTER_PORT,
 *                else LAUNCH_DEFAULT_PORT.
 * torchrun comes first because it may run under mpirun or inside a Slurm allocation,
 * whose variables then describe the outer launcher, not this process.  mpirun comes
 * before srun for the same reason (mpirun inside an allocation).  A process that set
 * MASTER_ADDR/MASTER_PORT by hand under mpirun, without RANK/WORLD_SIZE, is still mpirun.
 * Parsing is strict: a value that is not a plain decimal number, is negative or too
 * large, a rank not below its size, a port outside 1..65535 or an empty address is an
 * error naming the variable and its value.  Returns 0 (kind LAUNCH_NONE when no
 * launcher is present: the caller starts the ranks itself) or -1 with err set.
 */
#ifndef DDPPROF_LAUNCH_ENV_H
#define DDPPROF_LAUNCH_ENV_H

#include <stddef.h>

typedef enum { LAUNCH_NONE = 0, LAUNCH_TORCHRUN, LAUNCH_SLURM, LAUNCH_MPI } launch_kind;

/* Returns the value of `name`, or NULL when it is not set. */
typedef const char *(*launch_getenv_fn)(void *user, const char *name);

#define LAUNCH_DEFAULT_PORT 29500 /* torch.distributed's customary MASTER_PORT */
#define LAUNCH_ADDR_MAX 256

typedef struct {
    launch_kind kind;
    int rank;
    int world_size;
    int local_rank;
    int local_world_size;
    char master_addr[LAUNCH_ADDR_MAX];
    int master_port;
    /* The variables each value came from, for messages ("SLURM_PROCID"); a value that
     * no variable gave reads as "default" (or "hostlist of SLURM_JOB_NODELIST"). */
    const char *rank_var;
    const char *world_var;
    const char *local_rank_var;
    const char *local_world_var;
    const char *addr_var;
    const char *port_var;
} launch_env;

/* The adapter for the process environment (user is ignored). */
const char *launch_env_getenv(void *user, const char *name);

int launch_env_detect(launch_getenv_fn getenv_fn, void *user, launch_env *out, char *err,
                      size_t errlen);

/* "none", "torchrun", "slurm", "mpi". */
const char *launch_kind_name(launch_kind k);

/* The first host of a Slurm compact hostlist: "node[01-04,07],gpu5" -> "node01",
 * "a-b-[3-5]" -> "a-b-3", "host1,host2" -> "host1".  Returns 0, or -1 with err set
 * on a malformed list or when the host does not fit in outlen. */
int launch_hostlist_first(const char *list, char *out, size_t outlen, char *err, size_t errlen);

#endif
