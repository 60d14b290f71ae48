#!/usr/bin/env bash
# Runs test binaries one after another and ends with one summary line
# ("N passed, N failed") counting binaries.
set -u
pass=0; fail=0; failed=()
for t in "$@"; do
  start=$EPOCHREALTIME
  if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$t"); fi
  awk -v a="$start" -v b="$EPOCHREALTIME" -v n="$(basename "$t")" 'BEGIN{printf "  [%s] %.1fs\n", n, b-a}'
done
[ ${#failed[@]} -gt 0 ] && printf 'FAILED: %s\n' "${failed[@]}"
echo "$pass passed, $fail failed"
# make test adds every stage's counts up (the Makefile's test target).
[ -z "${AVI_TEST_TALLY:-}" ] || echo "$pass $fail 0" >> "$AVI_TEST_TALLY"
[ "$fail" -eq 0 ]
