#!/usr/bin/env bash
# Runs the command-line tests (tests/cli/test_*.sh) against build/avi and ends
# with one summary line ("N passed, N failed, N skipped"; AVI_TEST_STAGE
# names the stage there, with its seconds). A script that
# exits 77 could not run here (it says why): skipped, never passed.
set -u
cd "$(dirname "$0")/.."
# AVI_BIN picks another build of the binary (the sanitizer build); arguments
# pick test scripts (default: all). With AVI_CLI_QUEUE (a directory) several
# runners given the same list share it: each runs the scripts it claims
# first (mkdir of QUEUE/NAME, atomic), so each script runs once.
avi=${AVI_BIN:-build/avi}; [[ $avi = /* ]] || avi="$PWD/$avi"
export AVI="$avi" PYTHON=/usr/bin/python3 ROOT="$PWD"
pass=0; fail=0; skip=0; failed=(); skipped=(); stage_start=$EPOCHSECONDS
scripts=("$@"); [ ${#scripts[@]} -gt 0 ] || scripts=(tests/cli/test_*.sh)
for t in "${scripts[@]}"; do
  [ -z "${AVI_CLI_QUEUE:-}" ] || mkdir "$AVI_CLI_QUEUE/$(basename "$t")" 2>/dev/null || continue
  start=$EPOCHREALTIME
  bash "$t"; rc=$?
  if [ "$rc" -eq 0 ]; then pass=$((pass + 1))
  elif [ "$rc" -eq 77 ]; then skip=$((skip + 1)); skipped+=("$t")
  else fail=$((fail + 1)); failed+=("$t"); fi
  awk -v a="$start" -v b="$EPOCHREALTIME" -v n="$(basename "$t")" 'BEGIN{printf "  [%s] %.1fs\n", n, b-a}'
done
[ ${#skipped[@]} -gt 0 ] && printf 'SKIPPED: %s\n' "${skipped[@]}"
[ ${#failed[@]} -gt 0 ] && printf 'FAILED: %s\n' "${failed[@]}"
secs=$((EPOCHSECONDS - stage_start))
echo "${AVI_TEST_STAGE:+$AVI_TEST_STAGE: }$pass passed, $fail failed, $skip skipped${AVI_TEST_STAGE:+ in $secs s}"
# make test adds every stage's counts and seconds up (the Makefile's test target).
[ -z "${AVI_TEST_TALLY:-}" ] || echo "$pass $fail $skip $secs ${AVI_TEST_STAGE:-cli}" >> "$AVI_TEST_TALLY"
[ "$fail" -eq 0 ]
