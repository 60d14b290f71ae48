#!/usr/bin/env bash
# The sphere-plate runs behind the README's energy figure and the numbers in
# bench/README.md ("Sphere-plate impact"): default resolution, a finer one, a
# run ten times the impact's duration, and the impact at 1000 m/s. Each run
# is written with `avi run`, checked for interpenetration by the independent
# checker, and summarised as one JSON line (energy slope and peak-to-peak,
# momentum errors, minimum distance, events, CPU time).
#   bench/sphere_plate.sh [OUTDIR]      (default build/bench/sphere_plate_runs)
set -eu
cd "$(dirname "$0")/.."
out=${1:-build/bench/sphere_plate_runs}
mkdir -p "$out"
run() { # name, --set arguments...
  local name=$1; shift
  local t0=$EPOCHREALTIME
  local TIMEFORMAT="%U %S"
  { time build/avi run sphere-plate "$@" -o "$out/$name.h5" --quiet 2>"$out/$name.err"; } 2> "$out/$name.time"
  local wall; wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b - a}')
  local pen; pen=$(build/tests/check_penetration "$out/$name.h5" --min-distance | tail -2 | tr '\n' ' ')
  /usr/bin/python3 - "$out/$name.h5" "$name" "$wall" "$(cat "$out/$name.time")" "$pen" <<'PY'
import sys, json, h5py, numpy as np
path, name, wall, cpu, pen = sys.argv[1:6]
f = h5py.File(path, "r")
o = f["/observables"]
t = o["total_energy/time"][()]
e = o["total_energy/value"][()]
rel = (e - e[0]) / e[0]
slope = np.polyfit(t, rel, 1)[0]
p, L = o["linear_momentum/value"][()], o["angular_momentum/value"][()]
ps = ls = 0.0
for b in f["/particles"]:
    g = f["/particles"][b]
    x, v, m = g["position/value"][0], g["velocity/value"][0], g["mass"][()]
    s = np.linalg.norm(v, axis=1)
    ps += float(np.sum(m * s)); ls += float(np.sum(m * s * np.linalg.norm(x, axis=1)))
ev = o["events_by_kind/value"][-1]
print(json.dumps({"bench": "sphere_plate_run", "run": name, "end_time": float(t[-1]),
    "events": int(o["events/value"][-1]), "events_contact": int(ev[-1]),
    "wall_s": float(wall), "cpu_s": sum(float(c) for c in cpu.split()),
    "energy_slope_per_s": float(slope), "energy_drift_over_run": float(slope * t[-1]),
    "energy_peak_to_peak": float(rel.max() - rel.min()),
    "linear_momentum_rel": float(np.max(np.linalg.norm(p - p[0], axis=1)) / max(ps, np.linalg.norm(p[0]))),
    "angular_momentum_rel": float(np.max(np.linalg.norm(L - L[0], axis=1)) / max(ls, np.linalg.norm(L[0]))),
    "min_contact_distance": float(np.min(o["min_contact_distance/value"][()])),
    "independent_check": pen.strip()}))
PY
}
run default
run fine --set bodies.sphere.mesh.subdivisions=4 --set bodies.plate.mesh.rings=32
run long --set time.end=2e-2 --set output.energy_every=1e-5 --set output.frame_every=2e-4
run v1000 --set "bodies.sphere.velocity=[0,0,-1000]" --set time.end=4e-4 --set output.frame_every=1e-5
