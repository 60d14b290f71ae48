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
set -eu
[ $# -ge 3 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
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
make -s -C "$dir" "build/bench/$prog" >&2
make -s "build/bench/$prog" >&2
for ((r = 1; r <= rounds; r++)); do
  for side in "$old" HEAD; do
    if [ "$side" = HEAD ]; then bin=$root/build/bench/$prog; else bin=$dir/build/bench/$prog; fi
    "$bin" "$@" 2>/dev/null | sed "s/^{/{\"commit\": \"$side\", /"
  done
done
