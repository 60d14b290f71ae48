#!/usr/bin/env bash
# Contact scenes through the command line: two free shells colliding
# (two-spheres) and a strip folding onto itself (strip-fold), each also with
# Coulomb friction (contact.friction = 0.3: energy + friction work in the
# band, friction work > 0, linear momentum kept; angular momentum reported,
# the friction impulse acting across the gap). Each run must
# complete, conserve momentum where nothing is pinned (relative to sum m|v|
# and sum m|x||v| at t = 0), keep its energy in a band, stay above the inner
# layer thickness, and pass build/tests/check_penetration on its frames
# (skipped with a message when the checker is not built).
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
checker="$(dirname "$AVI")/tests/check_penetration" # the build tree of $AVI

"$AVI" scenes > "$work/scenes.txt" || { echo "avi scenes failed"; bad=$((bad + 1)); }
for s in two-spheres strip-fold; do
  grep -q "^ *$s" "$work/scenes.txt" || { echo "avi scenes does not list $s"; bad=$((bad + 1)); }
done

# name scene free(1: check momentum) friction(1: on) args...
run() {
  local name=$1 scene=$2 free=$3 fric=$4; shift 4
  [ "$fric" = 1 ] && set -- "$@" --set contact.friction=0.3
  if ! "$AVI" run "$scene" "$@" -o "$work/$name.h5" --quiet; then
    echo "$name: run failed"; bad=$((bad + 1)); return
  fi
  "$PYTHON" - "$work/$name.h5" "$free" "$fric" <<'PY' || bad=$((bad + 1))
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
free = sys.argv[2] == "1"
fric = sys.argv[3] == "1"
name = sys.argv[1].rsplit("/", 1)[-1]
obs = f["/observables"]
W = obs["friction_work/value"][()]
E = obs["total_energy/value"][()] + W
p = obs["linear_momentum/value"][()]
L = obs["angular_momentum/value"][()]
dmin = np.min(obs["min_contact_distance/value"][()])
active = np.max(obs["active_contact_potentials/value"][()])
text = f["/parameters/scene_resolved"][()]
text = text.decode() if isinstance(text, bytes) else str(text)
eta_inf = None
for line in text.splitlines():
    if "inner_thickness" in line:
        eta_inf = float(line.split("inner_thickness:")[1].split(",")[0].split("}")[0])
ps = ls = 0.0
for b in f["/particles"]:
    m = f[f"/particles/{b}/mass"][()]
    x = f[f"/particles/{b}/position/value"][0]
    v = f[f"/particles/{b}/velocity/value"][0]
    sp = np.linalg.norm(v, axis=1)
    ps += np.sum(m * sp)
    ls += np.sum(m * sp * np.linalg.norm(x, axis=1))
perr = np.max(np.linalg.norm(p - p[0], axis=1)) / ps
lerr = np.max(np.linalg.norm(L - L[0], axis=1)) / ls
band = np.max(np.abs(E - E[0])) / abs(E[0])
print(f"{name}: max |E+W-E0|/E0 {band:.3e} (friction work W/E0 {W[-1] / abs(E[0]):.3e}), momentum rel. error "
      f"linear {perr:.2e} angular {lerr:.2e}, min contact distance {dmin:.4e} (eta_inf {eta_inf}), "
      f"max active contact potentials {active}")
ok = band < 0.02 and active > 0 and eta_inf is not None and dmin > eta_inf and (W[-1] > 0) == fric
if free:
    ok = ok and perr <= 1e-12 and (fric or lerr <= 1e-12)
sys.exit(0 if ok else 1)
PY
  if [ -x "$checker" ]; then
    "$checker" "$work/$name.h5" --min-distance --radius 0.01 > "$work/$name.pen" 2>&1
    rc=$?
    sed "s/^/  $name: check_penetration: /" "$work/$name.pen"
    [ $rc -eq 0 ] || { echo "$name: check_penetration exit $rc"; bad=$((bad + 1)); }
  else
    echo "  $name: $checker is missing; penetration check skipped"
  fi
}

run two-spheres two-spheres 1 0 --set time.end=4.5e-3
run strip-fold strip-fold 0 0
run two-spheres-friction two-spheres 1 1 --set time.end=4.5e-3
run strip-fold-friction strip-fold 0 1

# The synchronous integrators do not resolve contact: a scene with contact
# is refused (exit 2, naming the integrator and the contact section, no
# file), never run with the bodies passing through each other.
for integ in sync-explicit sync-implicit sync-rootfind explicit-euler implicit-euler; do
  "$AVI" run sphere-plate --set integrator.type=$integ --set time.end=2e-4 -o "$work/$integ.h5" --quiet \
    2> "$work/$integ.err"; rc=$?
  if [ $rc -ne 2 ] || ! grep -q "integrator.type: $integ does not handle contact" "$work/$integ.err" || [ -e "$work/$integ.h5" ]; then
    echo "$integ with contact: exit $rc, $(cat "$work/$integ.err")"; bad=$((bad + 1))
  fi
done

echo "contact cli: $bad problems"
[ "$bad" -eq 0 ]
