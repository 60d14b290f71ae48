#!/usr/bin/env bash
# Short contact runs for every build of avi, the sanitizer build included
# (make test-san runs this script with build-san/avi, where ASan and UBSan
# abort on any report): sphere-plate through the impact's start, two-spheres
# from out of reach into contact, the same with Coulomb friction, and
# sphere-plate under dcr. Each
# run must exit 0 and close its file "complete"; the AVI runs must have had
# contact potentials active, so that the contact paths really ran.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0

# name scene args...
run() {
  local name=$1 scene=$2; shift 2
  if ! "$AVI" run "$scene" "$@" -o "$work/$name.h5" --quiet 2> "$work/$name.err"; then
    echo "$name: run failed:"; sed 's/^/  /' "$work/$name.err" | head -n 40; bad=$((bad + 1)); return
  fi
  "$PYTHON" - "$work/$name.h5" "$name" <<'PY' || bad=$((bad + 1))
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
name = sys.argv[2]
c = f["/parameters/completion"][()]
c = c.decode() if isinstance(c, bytes) else str(c)
active = int(np.max(f["/observables/active_contact_potentials/value"][()]))
E = f["/observables/total_energy/value"][()]
# dcr resolves contact by its own decomposition: no penalty potentials
ok = c.startswith("complete") and (active > 0 or name.endswith("dcr")) and np.all(np.isfinite(E))
print(f"{name}: {c}, {active} contact potentials active at most, {len(E)} rows" + ("" if ok else ": FAILED"))
sys.exit(0 if ok else 1)
PY
}

run sphere-plate sphere-plate --set time.end=8e-5 --set output.frame_every=2e-5
# The left sphere starts 3 cm further away, out of the broad phase's reach
# (empty candidate lists: qsort(NULL, 0) aborted UBSan before), and comes in
# at 50 m/s: contact from about 0.6 ms.
FAR=(--set 'bodies.left.translate=[-0.13,-0.03,0]' --set 'bodies.left.velocity=[50,0,0]' --set time.end=8e-4)
run two-spheres two-spheres "${FAR[@]}"
run two-spheres-friction two-spheres "${FAR[@]}" --set contact.friction=0.3
run sphere-plate-dcr sphere-plate --set integrator.type=dcr --set time.end=8e-5 --set output.frame_every=2e-5

[ "$bad" -eq 0 ] || { echo "test_contact_short: $bad failed"; exit 1; }
echo "test_contact_short: all passed"
