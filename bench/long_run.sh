#!/usr/bin/env bash
# long_run.sh — does a long run stay usable?  Writes one synthetic run of about
# RANKS x ITERS x 1251 spans (default 8 x 1000: 10 million, a model of 400 layers: a
# forward and a backward kernel and a bucket copy per layer, an allreduce and an
# optimizer kernel per bucket of 16 layers) through the store, as a run's writer
# would (bench/gen_long_run.c, built here against build/libddpprof.a), and prints:
#   * spans written per second (the store's batched inserts), and the time the run's
#     end takes (its statistics, computed once and stored),
#   * database bytes per span,
#   * the wall time of `ddpprof report DB` (text), `ddpprof report DB --html`, and
#     `ddpprof export DB -o trace.json` and `--per-rank DIR` (with the sizes written).
# Everything goes to a temp directory, removed at the end (KEEP=1 keeps it).
#
#   usage: bench/long_run.sh [RANKS [ITERS [LAYERS]]]     (default: 8 1000 400)
set -euo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
RANKS=${1:-8}
ITERS=${2:-1000}
LAYERS=${3:-400}
for v in "$RANKS" "$ITERS" "$LAYERS"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [RANKS [ITERS [LAYERS]]]" >&2; exit 2; }
done

make -s build-all >/dev/null
GEN=build/bench/gen_long_run
mkdir -p build/bench
if [[ ! -x $GEN || $GEN -ot bench/gen_long_run.c || $GEN -ot build/libddpprof.a ]]; then
    # The same link line as ./ddpprof (its libraries come from the Makefile).
    LIBS=$(make -s --no-print-directory -f Makefile -f - print-ldlibs <<'MK'
print-ldlibs:
	@echo $(LDLIBS)
MK
)
    # shellcheck disable=SC2086 # a link line, split on purpose
    cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread -Iprofiler -Iengine \
        -o "$GEN" bench/gen_long_run.c build/libddpprof.a $LIBS
fi

DIR=$(mktemp -d /tmp/ddpprof_long_run.XXXXXX)
[[ ${KEEP:-0} = 1 ]] || trap 'rm -rf "$DIR"' EXIT
DB=$DIR/long.sqlite

echo "== writing $RANKS ranks x $ITERS iterations x $LAYERS layers into $DB"
"$GEN" "$DB" "$RANKS" "$ITERS" "$LAYERS"

timed() { # label, command...: wall seconds of the command, output discarded
    local label=$1; shift
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    printf '%-40s %7.2f s\n' "$label" "$(echo "$t1 - $t0" | bc)"
}

echo "== reading it back"
timed "ddpprof report (text)" ./ddpprof report "$DB"
timed "ddpprof report --json" ./ddpprof report "$DB" --json
timed "ddpprof report --html" ./ddpprof report "$DB" --html -o "$DIR/report.html"
timed "ddpprof export -o (Chrome JSON)" ./ddpprof export "$DB" -o "$DIR/trace.json"
timed "ddpprof export --per-rank (Kineto)" ./ddpprof export "$DB" --per-rank "$DIR/ranks"
printf '%-40s %7d MB\n' "trace.json" "$(( $(stat -c %s "$DIR/trace.json") / 1000000 ))"
printf '%-40s %7d MB\n' "per-rank files, together" "$(( $(du -sb "$DIR/ranks" | cut -f1) / 1000000 ))"
printf '%-40s %7d kB\n' "report.html" "$(( $(stat -c %s "$DIR/report.html") / 1000 ))"
