#!/usr/bin/env bash
# integrator.solver (cholesky, cg, lu) through the command line: the Newton
# integrators take it, the resolved scene keeps it (and leaves it out when
# it is the default), LU root finding follows the Cholesky run's iterates
# to round-off, a run stopped at a checkpoint resumes with the same solver
# bitwise, and what it refuses (exit 2, the key named, no output file).
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
R=(--set integrator.type=sync-rootfind --set time.end=1 --set output.energy_every=0.1 --set output.frame_every=0.5)

refused() { # scene, expected text, arguments
  local scene=$1 want=$2; shift 2
  "$AVI" run "$scene" "$@" --set time.end=0.1 -o "$work/refused.h5" --quiet 2>"$work/err"; rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q -- "$want" "$work/err"; then
    echo "$scene $*: exit $rc, expected 2 with '$want': $(cat "$work/err")"; bad=$((bad + 1))
  fi
  [ ! -e "$work/refused.h5" ] || { echo "$scene: a refused run left an output file"; bad=$((bad + 1)); rm -f "$work/refused.h5"; }
}
refused rod "integrator.solver (--set): only used by sync-implicit, sync-rootfind and implicit-euler, not avi" \
  --set integrator.type=avi --set integrator.solver=cg
refused rod "integrator.solver (--set): only used by sync-implicit, sync-rootfind and implicit-euler, not sync-explicit" \
  --set integrator.solver=lu
refused rod "integrator.solver (--set): lu is for sync-rootfind only, not sync-implicit" \
  --set integrator.type=sync-implicit --set integrator.solver=lu
refused rod "integrator.solver" --set integrator.type=sync-rootfind --set integrator.solver=qr
refused pendulum "integrator.solver lu does not handle links" \
  --set integrator.type=sync-rootfind --set integrator.solver=lu

for s in cholesky lu; do
  "$AVI" run rod "${R[@]}" --set integrator.solver=$s -o "$work/$s.h5" --quiet || { echo "rod, $s: run failed"; bad=$((bad + 1)); }
done
"$AVI" run rod --set integrator.type=sync-implicit --set integrator.solver=cg --set time.end=1 \
  --set output.energy_every=0.1 -o "$work/cg.h5" --quiet || { echo "rod, sync-implicit with cg: run failed"; bad=$((bad + 1)); }

"$PYTHON" - "$work" <<'PY' || bad=$((bad + 1))
import sys, h5py, numpy as np
w = sys.argv[1]
def resolved(n):
    with h5py.File(f"{w}/{n}.h5", "r") as f:
        return f["parameters/scene_resolved"][()].decode()
bad = []
if "solver: lu" not in resolved("lu"): bad.append("the resolved scene of the lu run does not name its solver")
if "solver" in resolved("cholesky"): bad.append("the default solver is written in the resolved scene")
if "solver: cg" not in resolved("cg"): bad.append("the resolved scene of the cg run does not name its solver")
with h5py.File(f"{w}/cholesky.h5", "r") as a, h5py.File(f"{w}/lu.h5", "r") as b:
    x, y = a["particles/rod/position/value"][()], b["particles/rod/position/value"][()]
    e, f = a["observables/total_energy/value"][()], b["observables/total_energy/value"][()]
    # Same Newton iterates, another factorization: round-off, not the same bits.
    if x.shape != y.shape or np.max(np.abs(x - y)) > 1e-9: bad.append(f"lu positions differ from cholesky's by {np.max(np.abs(x - y)):.3g}")
    if np.max(np.abs(e - f)) > 1e-9 * np.max(np.abs(e)): bad.append("lu energies differ from cholesky's")
for m in bad: print("linear solver:", m)
sys.exit(1 if bad else 0)
PY

# Resume: the checkpoint's scene keeps the solver, and the bits follow.
"$AVI" run rod "${R[@]}" --set integrator.solver=lu --set time.end=0.5 --set output.checkpoint_every=0.25 \
  -o "$work/half.h5" --quiet && "$AVI" resume "$work/half.h5" --set time.end=1 --quiet \
  || { echo "lu: run or resume failed"; bad=$((bad + 1)); }
"$PYTHON" - "$work/lu.h5" "$work/half.h5" <<'PY' || { echo "lu: the resumed run differs from the direct one"; bad=$((bad + 1)); }
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) and n.split("/")[0] in ("observables", "particles") else None)
diff = [n for n in names if n not in b or not np.array_equal(a[n][()], b[n][()])]
if not names or diff: print("differs:", diff[:5] or "no datasets"); sys.exit(1)
PY
[ "$bad" -eq 0 ] && echo "linear solver: refusals, resolved scene, lu against cholesky, resume: ok"
exit $((bad > 0))
