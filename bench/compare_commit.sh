#!/usr/bin/env bash
# Runs one benchmark program of this checkout and of an earlier commit side
# by side, alternating, so that both see the same machine (on a shared VM
# the speed drifts by tens of percent over minutes; ratios from alternated
# runs hold where absolute figures do not).
#
#   bench/compare_commit.sh COMMIT ROUNDS PROGRAM [ARGS...]
#   e.g. bench/compare_commit.sh 6071052 2 events --tets 1e5 --levels 0 --events 2e7
#
# The earlier commit is checked out with `git worktree` into
# build/compare/COMMIT and built there (its own build/). Each JSON line the
# program prints gets a "commit" field: COMMIT or "HEAD" (this checkout,
# built with make). Prints JSON lines on stdout.
#
# PROGRAM `avi` times the command line itself (`build/avi ARGS -o TMP
# --quiet`, e.g. `bench/compare_commit.sh fd1542f 3 avi run sphere-plate`,
# the scene `make run` runs): a line {"commit", "cpu_s" (user + sys, every
# thread), "user_s", "sys_s", "wall_s", "status"} per run.
set -eu
[ $# -ge 3 ] || { sed -n '2,17p' "$0" >&2; exit 2; }
old=$1 rounds=$2 prog=$3
shift 3
cd "$(dirname "$0")/.."
root=$PWD
dir=$root/build/compare/$old
git worktree prune
if [ ! -d "$dir" ]; then
  mkdir -p "$root/build/compare"
  git worktree add --detach "$dir" "$old" >&2
fi
if [ "$prog" = avi ]; then
  make -s -C "$dir" build/avi >&2
  make -s build/avi >&2
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
else
  make -s -C "$dir" "build/bench/$prog" >&2
  make -s "build/bench/$prog" >&2
fi
for ((r = 1; r <= rounds; r++)); do
  for side in "$old" HEAD; do
    if [ "$prog" = avi ]; then
      if [ "$side" = HEAD ]; then bin=$root/build/avi; else bin=$dir/build/avi; fi
      status=0
      /usr/bin/time -o "$tmp/time" -f '%U %S %e' "$bin" "$@" -o "$tmp/out.h5" --quiet 2>/dev/null || status=$?
      read -r u s w < <(tail -1 "$tmp/time")
      echo "{\"commit\": \"$side\", \"program\": \"avi $*\", \"status\": $status, \"cpu_s\": $(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}'), \"user_s\": $u, \"sys_s\": $s, \"wall_s\": $w}"
      rm -f "$tmp"/out.*
      continue
    fi
    if [ "$side" = HEAD ]; then bin=$root/build/bench/$prog; else bin=$dir/build/bench/$prog; fi
    "$bin" "$@" 2>/dev/null | sed "s/^{/{\"commit\": \"$side\", /"
  done
done
