#!/usr/bin/env bash
# bending: midedge (the default of model: shell) against bending: hinge, side
# by side in one session, alternating ROUNDS times: a free shell bench (the
# sheet scene on a 64 x 64 rect grid, gravity, one edge pinned) and the
# default sphere-plate scene. One JSON line per run: events, CPU and wall
# seconds, events per CPU second and simulated seconds per CPU second (the
# fair measure: the two models make different numbers of events).
#   bench/bending.sh [ROUNDS]     (default 2; runs in build/bench/bending_runs/)
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-2}
out=build/bench/bending_runs
mkdir -p "$out"
run() { # label, scene, material, --set arguments...
  local label=$1 scene=$2 mat=$3; shift 3
  for bend in midedge hinge; do
    local t0=$EPOCHREALTIME TIMEFORMAT="%U %S"
    { time build/avi run "$scene" --set "materials.$mat.bending=$bend" "$@" -o "$out/$label-$bend.h5" --quiet; } \
      2> "$out/$label-$bend.time"
    local wall; wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b - a}')
    /usr/bin/python3 - "$out/$label-$bend.h5" "$label" "$bend" "$wall" "$(cat "$out/$label-$bend.time")" <<'PY'
import sys, json, h5py
path, label, bend, wall, cpu = sys.argv[1:6]
o = h5py.File(path, "r")["/observables"]
ev, t = int(o["events/value"][-1]), float(o["events/time"][-1])
cpu = sum(float(c) for c in cpu.split())
print(json.dumps({"bench": "bending", "run": label, "bending": bend, "simulated_s": t, "events": ev,
                  "cpu_s": round(cpu, 2), "wall_s": float(wall), "events_per_cpu_s": round(ev / cpu),
                  "simulated_s_per_cpu_s": t / cpu}))
PY
  done
}
for r in $(seq "$rounds"); do
  run sheet64 sheet cloth --set bodies.sheet.mesh.nx=64 --set bodies.sheet.mesh.ny=64 --set time.end=2e-2 \
      --set output.energy_every=1e-4 --set output.frame_every=1e-2
  run sphere-plate sphere-plate steel
done
