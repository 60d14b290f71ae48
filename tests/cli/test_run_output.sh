#!/usr/bin/env bash
# A small run of each mesh kind: the file validates against the layout, the
# run is deterministic (bitwise-identical datasets), `avi info` reads it, and
# the XDMF sidecar names every frame.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
run() { # name scene args...
  local name=$1; shift
  "$AVI" run "$@" -o "$work/$name.h5" --quiet || { echo "$name: run failed"; bad=$((bad + 1)); return; }
  "$PYTHON" "$ROOT/tools/validate_h5.py" --complete "$work/$name.h5" || { echo "$name: layout"; bad=$((bad + 1)); }
  "$AVI" info "$work/$name.h5" > "$work/$name.info" || { echo "$name: info failed"; bad=$((bad + 1)); }
  grep -q "completion: *complete" "$work/$name.info" || { echo "$name: info: $(cat "$work/$name.info")"; bad=$((bad + 1)); }
  [ -s "$work/$name.xmf" ] || { echo "$name: no .xmf"; bad=$((bad + 1)); }
}
run bar bar --set time.end=0.5 --set output.frame_every=0.1 --set output.energy_every=0.01
run sheet sheet --set time.end=0.02 --set output.frame_every=0.005
run chain spring-chain --set time.end=0.5
run sp sphere-plate --set time.end=2e-5 --set output.frame_every=1e-5
# Determinism: the same scene twice gives identical data.
"$AVI" run bar --set time.end=0.5 --set output.frame_every=0.1 --set output.energy_every=0.01 -o "$work/bar2.h5" --quiet
"$PYTHON" - "$work/bar.h5" "$work/bar2.h5" <<'PY' || bad=$((bad + 1))
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
diff = [n for n in names if n in b and a[n].dtype.kind in "fiu" and not np.array_equal(a[n][()], b[n][()])]
if diff:
    print("not deterministic:", diff); sys.exit(1)
print(f"determinism: {len(names)} datasets identical")
PY
# Frames: frame times are k * frame_every and the .xmf has one grid collection per frame.
"$PYTHON" - "$work/bar.h5" "$work/bar.xmf" <<'PY' || bad=$((bad + 1))
import sys, h5py, numpy as np, xml.etree.ElementTree as ET
f = h5py.File(sys.argv[1], "r")
t = f["/particles/bar/position/time"][()]
want = np.array([k * 0.1 for k in range(6)])
if not np.array_equal(t, want):
    print("frame times", t, "expected", want); sys.exit(1)
steps = ET.parse(sys.argv[2]).getroot().findall(".//Grid[@CollectionType='Temporal']/Grid")
if len(steps) != len(t):
    print("xmf has", len(steps), "time steps, file has", len(t)); sys.exit(1)
PY
echo "run output: $bad problems"
[ "$bad" -eq 0 ]
