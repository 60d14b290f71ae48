#!/usr/bin/env bash
# Peak RSS of `avi run` on the neo-Hookean bar at 10k and 100k tets and the
# bytes per element between them: (RSS(100k) - RSS(10k)) / (98 304 - 10 080).
# The bars are bench/events' (4x as long as wide, cubic cells of side
# 1/ny, 6 tets a cell), run by the built-in scene `bar` with its output
# (rows every 0.01, frames every 0.1, a checkpoint at the end).
# Usage: bench/memory.sh [AVI] [REPEATS] [END]   (defaults: build/avi 3 0.1)
# Prints one JSON line per run and a summary (median of the repeats).
set -eu
avi=${1:-build/avi}
repeats=${2:-3}
end=${3:-0.1}
[ -x "$avi" ] || { echo "$0: $avi is not an executable" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# name tets nx ny nz lx ly lz
sizes=("10k 10080 30 7 8 4.285714285714286 1 1.142857142857143"
       "100k 98304 64 16 16 4 1 1")
declare -A rss
for ((rep = 0; rep < repeats; rep++)); do
  for s in "${sizes[@]}"; do
    # shellcheck disable=SC2086 # split into the fields
    set -- $s
    if ! /usr/bin/time -o "$work/rss" -f %M "$avi" run bar -o "$work/bar.h5" --quiet \
           --set bodies.0.mesh.nx="$3" --set bodies.0.mesh.ny="$4" --set bodies.0.mesh.nz="$5" \
           --set bodies.0.mesh.lx="$6" --set bodies.0.mesh.ly="$7" --set bodies.0.mesh.lz="$8" \
           --set time.end="$end"; then
      echo "$0: $avi run bar ($2 tets) failed" >&2; exit 1
    fi
    kb=$(tail -1 "$work/rss")
    echo "{\"bench\": \"memory\", \"tets\": $2, \"end\": $end, \"peak_rss_kib\": $kb}"
    rss[$1]="${rss[$1]:-} $kb"
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
a=$(echo "${rss[10k]}" | median)
b=$(echo "${rss[100k]}" | median)
awk -v a="$a" -v b="$b" 'BEGIN {
  printf "peak RSS (median): 10k tets %.1f MB, 100k tets %.1f MB; %.0f bytes per element\n",
         a * 1024 / 1e6, b * 1024 / 1e6, (b - a) * 1024 / (98304 - 10080) }'
