#!/usr/bin/env bash
# integrator.type: sync-explicit4 through the command line: what it refuses
# (contact, damping, links and particle constraints: exit 2, the key named,
# no output file), that time_step.max_events counts three events a step, that a run stopped at a checkpoint resumes bitwise (the
# bar's tetrahedra, and the spring pendulum under gravity), that the
# resolved scene keeps the type, and that events count three gradient
# evaluations per potential and step.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
I=(--set integrator.type=sync-explicit4)

# scene, expected text in the message, extra arguments
refused() {
  local scene=$1 want=$2; shift 2
  "$AVI" run "$scene" "${I[@]}" "$@" --set time.end=0.1 -o "$work/refused.h5" --quiet 2>"$work/err"; rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q -- "$want" "$work/err"; then
    echo "$scene: exit $rc, expected 2 with '$want': $(cat "$work/err")"; bad=$((bad + 1))
  fi
  [ ! -e "$work/refused.h5" ] || { echo "$scene: a refused run left an output file"; bad=$((bad + 1)); rm -f "$work/refused.h5"; }
}
refused two-spheres "integrator.type: sync-explicit4 does not handle contact"
refused rod_damped "damping: integrator.type sync-explicit4 does not handle damping"
refused pendulum "bodies.0.links: integrator.type sync-explicit4 does not handle links"

same() { # ref file: every numeric dataset of /observables and /particles identical
  "$PYTHON" - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) and n.split("/")[0] in ("observables", "particles") else None)
diff = [n for n in names if n not in b or not np.array_equal(a[n][()], b[n][()])]
if not names or diff:
    print("differs:", diff[:5] or "no datasets"); sys.exit(1)
PY
}

# name scene end half args: a direct run to end against one to half resumed to end
resume() {
  local name=$1 scene=$2 end=$3 half=$4; shift 4
  "$AVI" run "$scene" "${I[@]}" "$@" --set time.end="$end" -o "$work/$name-ref.h5" --quiet \
    || { echo "$name: run failed"; bad=$((bad + 1)); return; }
  "$AVI" run "$scene" "${I[@]}" "$@" --set time.end="$half" -o "$work/$name.h5" --quiet \
    || { echo "$name: short run failed"; bad=$((bad + 1)); return; }
  "$AVI" resume "$work/$name.h5" --set time.end="$end" --quiet && same "$work/$name-ref.h5" "$work/$name.h5" \
    || { echo "$name: resume differs from the direct run"; bad=$((bad + 1)); }
}
resume bar bar 0.2 0.1 --set output.checkpoint_every=0.05 \
  --set bodies.0.mesh.nx=8 --set bodies.0.mesh.ny=2 --set bodies.0.mesh.nz=2
# output times off the step grid (h = 0.05 / 3 ...): the state read between steps
resume pendulum pendulum_spring 2 0.7 --set time_step.fixed=0.003 --set output.checkpoint_every=0.35 \
  --set output.energy_every=0.01

# SIGINT as soon as the output is in place: the run stops at a step
# boundary between output times (exit 130, marked interrupted) and resumes,
# recomputing the kept gradient, to the same bits as the direct run.
B=(--set time.end=1 --set output.energy_every=0.01)
"$AVI" run bar "${I[@]}" "${B[@]}" -o "$work/intref.h5" --quiet || { echo "bar to t = 1 failed"; bad=$((bad + 1)); }
"$AVI" run bar "${I[@]}" "${B[@]}" -o "$work/int.h5" --quiet & pid=$!
for _ in $(seq 1 2000); do [ -e "$work/int.h5" ] && break; sleep 0.005; done
kill -INT $pid; wait $pid; rc=$?
[ "$rc" -eq 130 ] || { echo "SIGINT: exit $rc, expected 130"; bad=$((bad + 1)); }
"$AVI" info "$work/int.h5" | grep -q "completion: *interrupted" || { echo "SIGINT: not marked interrupted"; bad=$((bad + 1)); }
"$AVI" resume "$work/int.h5" --quiet && same "$work/intref.h5" "$work/int.h5" || { echo "SIGINT: resume differs"; bad=$((bad + 1)); }

# The resolved scene keeps the type; events: 3 per potential and step
# (the spring pendulum: one spring and one gravity potential, 2 / 0.003
# steps landing at or before t = 2: 666).
[ -e "$work/pendulum-ref.h5" ] && "$PYTHON" - "$work/pendulum-ref.h5" <<'PY' || bad=$((bad + 1))
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
if f["parameters/integrator"][()] != b"sync-explicit4" or b"type: sync-explicit4" not in f["parameters/scene_resolved"][()]:
    print("/parameters does not name sync-explicit4"); sys.exit(1)
ev = f["observables/events/value"][()]
if int(ev[-1]) != 3 * 2 * 666:
    print("events at the end:", ev[-1], "expected", 3 * 2 * 666); sys.exit(1)
PY

# time_step.max_events counts its three evaluations a step: the spring
# pendulum to 20 s at h = 1e-3 is 4e4 events for sync-explicit, 1.2e5 here.
M=(--set time_step.max_events=1e5 --set output.energy_every=1)
"$AVI" run pendulum_spring "${M[@]}" -o "$work/m2.h5" --quiet || { echo "max_events: sync-explicit refused"; bad=$((bad + 1)); }
"$AVI" run pendulum_spring "${I[@]}" "${M[@]}" -o "$work/m4.h5" --quiet 2>"$work/err"; rc=$?
[ "$rc" -eq 2 ] && grep -q "about 1.2e+05 events.*time_step.max_events" "$work/err" \
  || { echo "max_events: exit $rc: $(cat "$work/err")"; bad=$((bad + 1)); }

echo "sync-explicit4: $bad problems"
[ "$bad" -eq 0 ]
