#!/usr/bin/env bash
# Friction on the sphere-plate scene, side by side with the frictionless run
# (bench/README.md, "Friction"): ROUNDS alternations of contact.friction = 0
# and MU, each written by `avi run`, checked by the independent
# interpenetration checker and summarised as one JSON line: CPU time,
# events, energy + friction work, friction work, closest approach. With
# perf installed, one profiled run of each adds contact's share of the CPU
# samples (symbols of src/contact: manager, broad phase, distances,
# friction).
#   bench/friction.sh [ROUNDS [MU [--set KEY=VALUE]...]]   (default 2, 0.3; ROUNDS 0: perf only)
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-2} mu=${2:-0.3}
shift $(( $# > 2 ? 2 : $# ))
out=build/bench/friction_runs
mkdir -p "$out"
make -s build/avi build/tests/check_penetration
summary() { # name file cpu
  local pen; pen=$(build/tests/check_penetration "$2" --min-distance | tail -2 | tr '\n' ' ')
  /usr/bin/python3 - "$2" "$1" "$3" "$pen" <<'PY'
import sys, json, h5py, numpy as np
path, name, cpu, pen = sys.argv[1:5]
o = h5py.File(path, "r")["/observables"]
e, w = o["total_energy/value"][()], o["friction_work/value"][()]
ev = o["events_by_kind/value"][-1]
print(json.dumps({"bench": "friction", "run": name, "cpu_s": sum(float(c) for c in cpu.split()),
    "events": int(o["events/value"][-1]), "events_contact": int(ev[-1]),
    "max_abs_e_plus_w_minus_e0_rel": float(np.max(np.abs(e + w - e[0])) / abs(e[0])),
    "final_e_minus_e0_rel": float((e[-1] - e[0]) / e[0]), "friction_work_rel": float(w[-1] / e[0]),
    "min_contact_distance": float(np.min(o["min_contact_distance/value"][()])), "independent_check": pen.strip()}))
PY
}
for ((r = 1; r <= rounds; r++)); do
  for m in 0 "$mu"; do
    f="$out/mu$m.h5"
    TIMEFORMAT="%U %S"
    { time build/avi run sphere-plate --set contact.friction="$m" "$@" -o "$f" --quiet; } 2> "$out/time"
    summary "mu=$m round $r" "$f" "$(cat "$out/time")"
  done
done
command -v perf >/dev/null || { echo '{"bench": "friction", "perf": "not installed: no contact share"}'; exit 0; }
for m in 0 "$mu"; do
  perf record -q -o "$out/perf.data" build/avi run sphere-plate --set contact.friction="$m" "$@" \
    -o "$out/perf.h5" --quiet >/dev/null 2>&1
  perf report -q -i "$out/perf.data" --stdio --sort symbol 2>/dev/null | awk -v m="$m" '
    { p = $1; sub("%", "", p); total += p }
    # src/contact (distances: avi_pt_/avi_ee_, ee_pair, pt_pair; the
    # managers candidate sort: msort, cmp_candidate), and the owed
    # velocities of the friction work (avi_engine_vertex_owed in
    # core/vertex_sync.c; the gradients it calls count as elastic).
    / (avi_contact|avi_broad_phase|avi_cell_entries|avi_pt_|avi_ee_|ee_pair|pt_pair|cmp_candidate|msort_with_tmp|avi_stencil|coarse_rebuild|keep_sorted|reach|activate|retire_deepest|hash_rebuild|friction_step|resolved_step|avi_engine_vertex_owed|seen_before|clock_weight)/ { c += p }
    END { printf "{\"bench\": \"friction\", \"run\": \"mu=%s perf\", \"contact_share_of_samples\": %.3f}\n", m, c / total }'
done
