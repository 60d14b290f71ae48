#!/usr/bin/env bash
# Mid-edge bending (the default of model: shell) against the hinge on the
# default sphere-plate impact, CPU (user) seconds of `avi run` with the
# energy observable every 2e-5 s (so that it does not dominate), alternating
# the configurations (and the binaries, when several are given) ROUNDS
# times; prints each run, then per binary the medians and midedge / hinge
# (bench/README.md, "Bending models").
#   bench/midedge_hinge.sh [ROUNDS [AVI...]]   (default 3, build/avi)
# With SHARE=1 it also times the default run (energy rows every 1 us) and
# prints the bending model's share of it, (midedge - hinge) / default, as
# in bench/README.md's "Cost of accuracy".
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-3}
[ $# -gt 0 ] && shift
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(build/avi)
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
declare -A times
for r in $(seq "$rounds"); do
  for b in "${!bins[@]}"; do
    for bend in midedge hinge ${SHARE:+default}; do
      if [ "$bend" = default ]; then set -- ; else set -- --set output.energy_every=2e-5 --set "materials.steel.bending=$bend"; fi
      t=$( { /usr/bin/time -f %U "${bins[$b]}" run sphere-plate "$@" -o "$out/run.h5" --quiet; } 2>&1 | tail -1)
      echo "round $r ${bins[$b]} $bend $t"
      times[$b.$bend]="${times[$b.$bend]:-} $t"
    done
  done
done
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for b in "${!bins[@]}"; do
  m=$(echo "${times[$b.midedge]}" | median); h=$(echo "${times[$b.hinge]}" | median)
  awk -v b="${bins[$b]}" -v m="$m" -v h="$h" 'BEGIN {printf "%s: midedge %.2f s, hinge %.2f s (medians), midedge / hinge %.2f\n", b, m, h, m / h}'
  if [ -n "${SHARE:-}" ]; then
    d=$(echo "${times[$b.default]}" | median)
    awk -v b="${bins[$b]}" -v m="$m" -v h="$h" -v d="$d" 'BEGIN {printf "%s: default %.2f s, bending model +%.2f s (%.0f %% of default)\n", b, d, m - h, 100 * (m - h) / d}'
  fi
done
