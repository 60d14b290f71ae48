#!/usr/bin/env bash
# Runs test binaries one after another and ends with one summary line
# ("N passed, N failed") counting binaries; AVI_TEST_STAGE names the stage
# (make test) in that line, with the stage's seconds.
set -u
pass=0; fail=0; failed=(); stage_start=$EPOCHSECONDS
for t in "$@"; do
  start=$EPOCHREALTIME
  if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$t"); fi
  awk -v a="$start" -v b="$EPOCHREALTIME" -v n="$(basename "$t")" 'BEGIN{printf "  [%s] %.1fs\n", n, b-a}'
done
secs=$((EPOCHSECONDS - stage_start))
[ ${#failed[@]} -gt 0 ] && printf 'FAILED: %s\n' "${failed[@]}"
echo "${AVI_TEST_STAGE:+$AVI_TEST_STAGE: }$pass passed, $fail failed${AVI_TEST_STAGE:+ in $secs s}"
# make test adds every stage's counts and seconds up (the Makefile's test target).
[ -z "${AVI_TEST_TALLY:-}" ] || echo "$pass $fail 0 $secs ${AVI_TEST_STAGE:-suite}" >> "$AVI_TEST_TALLY"
[ "$fail" -eq 0 ]
