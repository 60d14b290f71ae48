#!/usr/bin/env bash
# Binary Gmsh 4.1 meshes: a scene reading the unit cube as binary (written by
# tests/data/msh_binary.py from the ASCII file, in both byte orders) runs to
# the same bits as with the ASCII file; a damaged binary mesh exits 2 with a
# message naming the file and the byte, and leaves no output.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
cd "$work"
scene() { # mesh-file
  cat <<YAML
name: cube
time: {end: 0.5}
time_step: {rule: cfl, delta: 0.1}
materials:
  soft: {model: neo-hookean, youngs: 1.0, poisson: 0.3, density: 1.0}
bodies:
  - name: cube
    mesh: {file: $1}
    material: soft
    initial: {scale: 1.1}
output: {energy_every: 0.01, frame_every: 0.1}
YAML
}
"$PYTHON" "$ROOT/tests/data/msh_binary.py" "$ROOT/data/meshes/unit_cube_v41.msh" le.msh &&
  "$PYTHON" "$ROOT/tests/data/msh_binary.py" "$ROOT/data/meshes/unit_cube_v41.msh" be.msh --big-endian ||
  { echo "msh_binary.py failed"; exit 1; }
cp "$ROOT/data/meshes/unit_cube_v41.msh" ascii.msh
for m in ascii le be; do
  scene $m.msh > $m.yaml
  "$AVI" run $m.yaml -o $m.h5 --quiet || { echo "$m: run failed"; bad=$((bad + 1)); }
done
"$PYTHON" - ascii.h5 le.h5 be.h5 <<'PY' || bad=$((bad + 1))
import sys, h5py
def data(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()].tobytes()) if isinstance(o, h5py.Dataset)
                     and n.split("/")[0] in ("observables", "particles", "connectivity") and o.dtype.kind in "fiu" else None)
    return out
ref = data(sys.argv[1])
bad = 0
for p in sys.argv[2:]:
    got = data(p)
    diff = sorted(k for k in set(ref) | set(got) if ref.get(k) != got.get(k))
    if diff or not ref:
        print(f"{p}: differs from the ASCII mesh's run in {diff[:3]}")
        bad += 1
print(f"binary meshes: {len(sys.argv) - 2} runs, {len(ref)} datasets, {bad} differing")
sys.exit(1 if bad else 0)
PY
# A binary mesh cut short in its node coordinates.
head -c 300 le.msh > cut.msh
scene cut.msh > cut.yaml
"$AVI" run cut.yaml -o cut.h5 --quiet 2> err; rc=$?
[ "$rc" -eq 2 ] && grep -q "cut.msh: byte [0-9]*: .*runs past the end of the file" err ||
  { echo "truncated binary mesh: rc $rc: $(cat err)"; bad=$((bad + 1)); }
[ -e cut.h5 ] && { echo "truncated binary mesh: left cut.h5"; bad=$((bad + 1)); }
echo "binary msh: $bad problems"
[ "$bad" -eq 0 ]
