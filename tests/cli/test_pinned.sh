#!/usr/bin/env bash
# Pinned potentials: a sphere falling onto a plate whose every vertex is
# pinned, 0.1 % stretched. The plate's membranes and hinges are never scheduled (the sphere
# alone makes as many membrane and hinge events, bitwise the same sphere),
# the plate's energy is still reported, constant, and a checkpoint resumes
# bitwise. With AVI_REF set to an avi built before this change (which
# scheduled them), the whole run's positions, velocities and energies are
# also compared bitwise with that binary's (event counts differ: the point).
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
cat > "$work/pinned_plate.yaml" <<'EOF'
name: pinned-plate
time: {end: 3.0e-4}
integrator: {type: avi}
time_step: {rule: stability, safety: 0.25, levels_per_octave: 0}
materials:
  steel: {model: shell, youngs: 2.0e11, poisson: 0.3, density: 7850, thickness: 0.0035}
bodies:
  - name: sphere
    mesh: {generator: icosphere, radius: 0.125, subdivisions: 2}
    material: steel
    translate: [0, 0, 0.130]
    velocity: [0, 0, -100]
  - name: plate
    mesh: {generator: disk, radius: 0.35, rings: 8}
    material: steel
    initial: {scale: 1.001}
    pinned: {box: [[-0.4, -0.4, -0.001], [0.4, 0.4, 0.001]]}
contact: {enabled: true, thickness: 1.0e-3, inner_thickness: 2.0e-4, stiffness: auto, layers: auto}
gravity: [0, 0, -9.81]
output: {file: pinned_plate.h5, energy_every: 5.0e-6, frame_every: 5.0e-5}
EOF
# The same sphere with no plate (bodies.1 dropped).
sed '/name: plate/,/pinned:/d' "$work/pinned_plate.yaml" > "$work/sphere_alone.yaml"
grep -q disk "$work/sphere_alone.yaml" && { echo "sphere_alone.yaml still has the plate"; exit 1; }

compare() { # a.h5 b.h5 what [events]: /observables and /particles bitwise; event counts too when "events"
  "$PYTHON" - "$@" <<'PY'
import sys, h5py
a, b, what = sys.argv[1:4]
with_events = len(sys.argv) > 4
def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if not isinstance(obj, h5py.Dataset) or name.split("/")[0] not in ("observables", "particles"):
                return
            if not with_events and (name.startswith("observables/events") or name.endswith("/step")):
                return
            x = obj[()]
            # Strings (variable length: objects) by value, not by address.
            out[name] = (x.dtype.str, x.shape, repr(x.tolist()) if x.dtype.kind == "O" else x.tobytes())
        f.visititems(visit)
    return out
da, db = datasets(a), datasets(b)
diff = sorted(k for k in set(da) | set(db) if da.get(k) != db.get(k))
if len(da) < 15 or diff:
    print(f"{what}: {len(da)} datasets, differing: {diff}"); sys.exit(1)
print(f"{what}: {len(da)} datasets bitwise identical")
PY
}

# 1. Before the impact (t = 3e-5) the plate makes no elastic event.
E=(--set time.end=3e-5 --set output.energy_every=1e-6 --set output.frame_every=1e-5 --quiet)
"$AVI" run "$work/pinned_plate.yaml" "${E[@]}" -o "$work/early.h5" || { echo "early run failed"; exit 1; }
"$AVI" run "$work/sphere_alone.yaml" "${E[@]}" -o "$work/alone.h5" || { echo "sphere-alone run failed"; exit 1; }
"$PYTHON" - "$work/early.h5" "$work/alone.h5" <<'PY' || bad=$((bad + 1))
import sys, h5py, numpy as np
p, a = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
ep, ea = p["/observables/events_by_kind/value"][()], a["/observables/events_by_kind/value"][()]
# kinds: spring, membrane, hinge, tet, midedge, gravity, contact
if not np.array_equal(ep[:, :6], ea[:, :6]):
    print("elastic and gravity events with the pinned plate", ep[-1], "against the sphere alone", ea[-1]); sys.exit(1)
for q in ("position/value", "velocity/value"):
    if not np.array_equal(p["/particles/sphere/" + q][()], a["/particles/sphere/" + q][()]):
        print("sphere", q, "differs from the sphere alone"); sys.exit(1)
el = p["/observables/elastic_energy/value"][()] - a["/observables/elastic_energy/value"][()]
if not (el[0] > 1.0 and np.all(np.abs(el - el[0]) <= 1e-9 * el[0])):
    print("the pinned plate's elastic energy is not reported constant:", el[:3], el[-1]); sys.exit(1)
if not np.array_equal(p["/particles/plate/position/value"][0], p["/particles/plate/position/value"][-1]):
    print("the pinned plate moved"); sys.exit(1)
print(f"before impact: events {ep[-1][:5].tolist()} as the sphere alone; plate energy {el[0]:.6g} J constant")
PY

# 2. Through the impact, and resumed from a checkpoint at half time: bitwise
# the uninterrupted run, event counts included.
"$AVI" run "$work/pinned_plate.yaml" --quiet -o "$work/full.h5" || { echo "full run failed"; exit 1; }
"$AVI" run "$work/pinned_plate.yaml" --set time.end=1.5e-4 --quiet -o "$work/half.h5" || { echo "half run failed"; exit 1; }
"$AVI" resume "$work/half.h5" --set time.end=3e-4 --quiet || { echo "resume failed"; bad=$((bad + 1)); }
compare "$work/full.h5" "$work/half.h5" "resumed at 1.5e-4" events || bad=$((bad + 1))

# 3. Against a build that scheduled the plate (AVI_REF): the same positions,
# velocities and energies; and its checkpoint (with clocks for the plate)
# resumes here.
if [ -n "${AVI_REF:-}" ] && [ -x "$AVI_REF" ]; then
  "$AVI_REF" run "$work/pinned_plate.yaml" --quiet -o "$work/ref.h5" || { echo "AVI_REF run failed"; exit 1; }
  compare "$work/ref.h5" "$work/full.h5" "against AVI_REF" || bad=$((bad + 1))
  "$AVI_REF" run "$work/pinned_plate.yaml" --set time.end=1.5e-4 --quiet -o "$work/refhalf.h5" || exit 1
  "$AVI" resume "$work/refhalf.h5" --set time.end=3e-4 --quiet || { echo "resuming AVI_REF's checkpoint failed"; bad=$((bad + 1)); }
  compare "$work/ref.h5" "$work/refhalf.h5" "AVI_REF's checkpoint resumed" || bad=$((bad + 1))
else
  echo "against a reference build: skipped (set AVI_REF to an avi built before pinned potentials were left unscheduled)"
fi
echo "test_pinned: $bad failed"
[ "$bad" -eq 0 ]
