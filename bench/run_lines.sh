# run_lines.sh — sourced by the benchmarks that time `ddpprof run` (profiler_overhead.sh,
# span_stream.sh): what they read of a run's stderr, written once.  Not run by itself.

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
