#!/bin/sh
# verdict.sh — the last line of `make test`: what ran, passed, failed and was skipped
# across the whole suite, counted from the logs the steps left in LOGDIR.
#
#   usage: tests/verdict.sh LOGDIR    (make test runs it last)
#
# Unit tests: each test binary's log (LOGDIR/test_*.log, its exit status in .rc), its
# cmocka summaries summed ("[  PASSED  ] N test(s)", FAILED, SKIPPED); a binary that
# failed without saying which test (a crash) counts as one failure.  README commands:
# LOGDIR/readme.log's "== readme: R run, S skipped, F failed" (absent: the step
# failed, one failure).  Fuzzing: LOGDIR/fuzz.rc, one check.  Exits 1 when anything
# failed, else 0.
set -u
dir=${1:?usage: tests/verdict.sh LOGDIR}

passed=0 failed=0 skipped=0 binaries=0 failed_names=
for log in "$dir"/test_*.log; do
    [ -e "$log" ] || continue
    binaries=$((binaries + 1))
    rc=$(cat "$log.rc" 2>/dev/null || echo 1)
    p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test.*/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
    f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test.*/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
    s=$(sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) test.*/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
    [ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
    [ "$rc" != 0 ] && failed_names="$failed_names $(basename "$log" .log)"
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done

readme="no README step"
line=$(grep '^== readme: [0-9]* run, [0-9]* skipped, [0-9]* failed' "$dir/readme.log" 2>/dev/null | tail -n 1)
if [ -n "$line" ]; then
    set -- $(printf '%s\n' "$line" | sed 's/^== readme: \([0-9]*\) run, \([0-9]*\) skipped, \([0-9]*\) failed.*/\1 \2 \3/')
    passed=$((passed + $1 - $3)) skipped=$((skipped + $2)) failed=$((failed + $3))
    readme="$1 README commands"
    [ "$3" != 0 ] && failed_names="$failed_names README"
elif [ -e "$dir/readme.log" ]; then
    failed=$((failed + 1)) readme="the README step (no summary)" failed_names="$failed_names README"
fi

fuzz="no fuzz step"
if [ -e "$dir/fuzz.rc" ]; then
    fuzz="the fuzz step"
    if [ "$(cat "$dir/fuzz.rc")" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)) failed_names="$failed_names fuzz"; fi
fi

verdict="ALL PASSED"
[ "$failed" -gt 0 ] && verdict="FAILED:$failed_names"
echo "== make test: $((passed + failed)) ran, $passed passed, $failed failed, $skipped skipped" \
     "(unit tests of $binaries binaries, $readme, $fuzz): $verdict"
[ "$failed" -eq 0 ]
