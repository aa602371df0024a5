#!/bin/sh
# readme_commands.sh — every command README.md shows runs as shown.
#
# The convention (README.md, "Two commands"): in an indented code block, a line that
# begins with "$ " (four spaces, a dollar sign, a space) is a command; everything else in
# a block (synopses, output) is not run. This script runs every such command, in README
# order, with /bin/sh, in one scratch directory that holds links to ./ddpprof, scenarios/
# and bench/, so that later commands see what earlier ones wrote (ddpprof.sqlite, ...).
# A command must exit 0, or N when its line ends in "# exit N". The script runs them all
# and fails, naming each command that failed with its exit status and the end of its
# output. The README's first block ("Two commands": bootstrap and make test) has no "$ "
# and is run by .ci/run and tests/fresh_machine.sh instead.
#
#   usage: tests/readme_commands.sh            (make test runs it)
#   env:   DDPPROF=./ddpprof  README=README.md
#          README_SLOW=1   also run the commands skipped below as slow
#          README_KEEP=1   keep the scratch directory (its path is printed)
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
README=${README:-$ROOT/README.md}
DDPPROF=${DDPPROF:-$ROOT/ddpprof}
case $DDPPROF in /*) ;; *) DDPPROF=$PWD/$DDPPROF ;; esac
[ -x "$DDPPROF" ] || { echo "readme_commands: no ddpprof at $DDPPROF (make it first)" >&2; exit 2; }
[ -r "$README" ] || { echo "readme_commands: cannot read $README" >&2; exit 2; }

# Skipped, each with the reason. Matched as sh patterns against the whole command.
skip_reason() {
    case $1 in
        # Nsight Systems: tests/test_nsys.c runs a scenario under `nsys profile` and
        # checks its NVTX ranges through `nsys export --type sqlite`.
        nsys\ *|*/QdstrmImporter\ *) echo "needs Nsight Systems (tests/test_nsys.c covers it)" ;;
        # A GPU: the cuda backend fails at once without one (exit 1), which the tests
        # check; with one, bench/gpu_check.sh is the GPU check.
        *--backend\ cuda*) echo "needs a GPU" ;;
        bench/gpu_check.sh*) echo "needs a GPU" ;;
        # Launchers: tests/test_processes.c starts ranks with the real mpirun and
        # torchrun (and as root, which mpirun refuses without --allow-run-as-root).
        mpirun\ *) echo "a launcher (tests/test_processes.c runs the real mpirun)" ;;
        python3\ -m\ torch.distributed.run\ *) echo "a launcher (tests/test_processes.c runs the real torchrun)" ;;
        # Slow: the 4096-rank prediction takes 15-30 s on two cores (bench/sim_scale.sh).
        *bench/gpt2_1p5b_4096.ini*) [ "${README_SLOW:-0}" = 1 ] || echo "slow (README_SLOW=1 runs it)" ;;
    esac
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ddpprof-readme.XXXXXX") || exit 2
if [ "${README_KEEP:-0}" = 1 ]; then
    echo "readme_commands: scratch directory $WORK"
else
    trap 'rm -rf "$WORK"' EXIT
fi
ln -s "$DDPPROF" "$WORK/ddpprof"
ln -s "$ROOT/scenarios" "$WORK/scenarios"
ln -s "$ROOT/bench" "$WORK/bench"

CMDS=$WORK/.commands
sed -n 's/^    \$ //p' "$README" > "$CMDS"
total=$(grep -c . "$CMDS")
[ "$total" -gt 0 ] || { echo "readme_commands: no '    \$ ' command in $README" >&2; exit 1; }

n=0 ran=0 skipped=0 failed=0 failures=
T0=$(date +%s)
while IFS= read -r cmd; do
    n=$((n + 1))
    why=$(skip_reason "$cmd")
    if [ -n "$why" ]; then
        printf '== readme %s/%s SKIPPED (%s): %s\n' "$n" "$total" "$why" "$cmd"
        skipped=$((skipped + 1))
        continue
    fi
    want=0
    case $cmd in *'# exit '[0-9]*) want=$(printf '%s\n' "$cmd" | sed 's/.*# exit \([0-9][0-9]*\).*/\1/') ;; esac
    log=$WORK/.log$n
    t=$(date +%s)
    (cd "$WORK" && exec sh -c "$cmd") > "$log" 2>&1 < /dev/null
    rc=$?
    ran=$((ran + 1))
    if [ "$rc" = "$want" ]; then
        printf '== readme %s/%s ok (%s s): %s\n' "$n" "$total" "$(($(date +%s) - t))" "$cmd"
    else
        failed=$((failed + 1))
        printf '== readme %s/%s FAILED (exit %s, expected %s): %s\n' "$n" "$total" "$rc" "$want" "$cmd"
        tail -n 15 "$log" | sed 's/^/   | /'
        failures="$failures
== failed: $cmd (exit $rc, expected $want)"
    fi
done < "$CMDS"

echo "== readme: $ran run, $skipped skipped, $failed failed, $(($(date +%s) - T0)) s"
if [ "$failed" -gt 0 ]; then
    printf '== SOME README COMMANDS FAILED%s\n' "$failures"
    exit 1
fi
echo "== ALL README COMMANDS PASSED"
