# run_lines.sh — sourced by the benchmarks that time `ddpprof run` (profiler_overhead.sh,
# span_stream.sh): their arguments and what they read of a run's stderr, written once.
# Not run by itself.

# run_args [N [SCENARIO]]: sets N (runs per mode, default 3) and SCENARIO (default
# scenarios/skewed.ini), or exits 2 saying what is wrong.
run_args() {
    N=${1:-3}
    SCENARIO=${2:-scenarios/skewed.ini}
    [[ $N =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [N [SCENARIO]]  (N: runs per mode, default 3)" >&2; exit 2; }
    [[ -f $SCENARIO ]] || { echo "$0: no scenario file '$SCENARIO'" >&2; exit 2; }
}

# run_failed ERRFILE WHAT: says that ddpprof run (WHAT) failed, with its stderr, and exits.
run_failed() {
    echo "$0: ddpprof run ($2) failed:" >&2
    cat "$1" >&2
    exit 1
}

# run_wall_spans ERRFILE WHAT: sets the caller's `wall` (seconds) and `spans` from the
# last "complete in X s ..., N spans" line ddpprof run wrote to ERRFILE; exits, with the
# file on stderr, when there is none.
run_wall_spans() {
    local line
    line=$(grep -E 'complete in [0-9.]+ s' "$1" | tail -n 1 || true)
    if [[ -z $line ]]; then
        echo "$0: no 'complete in X s' line from ddpprof run ($2):" >&2
        cat "$1" >&2
        exit 1
    fi
    wall=$(sed -E 's/.*complete in ([0-9.]+) s.*/\1/' <<<"$line")
    spans=$(sed -E 's/.*, ([0-9]+) spans.*/\1/' <<<"$line")
}
