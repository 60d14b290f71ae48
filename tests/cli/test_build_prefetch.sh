#!/usr/bin/env bash
# The event loop's prefetches must reach the machine code: gcc 12 deleted
# calls to helpers whose only effect is a prefetch (src/core/engine.c,
# "Prefetching"), which left the 100k-tet bar at half its speed with no
# other symptom. Counts prefetch instructions in the built engine object;
# skipped where objdump is missing or the target is not x86-64.
set -u
obj="$(dirname "$AVI")/src/core/engine.o" # the build tree of $AVI
if ! command -v objdump >/dev/null || [ "$(uname -m)" != x86_64 ]; then
  echo "skipped: needs objdump on x86-64"; exit 77
fi
[ -f "$obj" ] || { echo "missing $obj (run make first)"; exit 1; }
n=$(objdump -d --no-show-raw-insn "$obj" | awk '/^[0-9a-f]+ <.*>:$/{f=$2} /prefetch/ && f ~ /events_advance|avi_engine_advance|run_tie|run_members_tie/{c++} END{print c+0}')
# The group tick alone asks for the records and vertices of members ahead,
# of the next groups, and the single-clock path for the queue's next entries.
if [ "$n" -lt 8 ]; then
  echo "only $n prefetch instructions in the event loop of $obj (expected >= 8)"; exit 1
fi
echo "event loop has $n prefetch instructions"
