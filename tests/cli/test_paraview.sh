#!/usr/bin/env bash
# ParaView reads a run's XDMF sidecar: the right number of time steps, and
# of points and cells per step. Skipped (with a message) where ParaView's
# Python (pvpython, Debian package paraview) is not installed.
set -u
# pvpython, or Debian's pvbatch<version>, runs the check script.
pv=$(command -v pvpython || compgen -c pvbatch | sort -u | head -n 1)
if [ -z "$pv" ]; then
  echo "skipped: neither pvpython nor pvbatch installed (apt-get install paraview to run this test)"
  exit 77
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$AVI" run sphere-plate --set time.end=4e-5 --set output.frame_every=1e-5 --set bodies.sphere.mesh.subdivisions=2 \
  --set bodies.plate.mesh.rings=8 -o "$work/pv.h5" --quiet || { echo "run failed"; exit 1; }
# 5 frames (0, 1e-5 .. 4e-5); sphere 162 vertices / 320 triangles, plate
# 1 + 3*8*9 = 217 vertices / 6*64 = 384 triangles.
cat > "$work/check.py" <<'PY'
import sys
from paraview.simple import XDMFReader, UpdatePipeline, MergeBlocks, servermanager
r = XDMFReader(FileNames=[sys.argv[1]])
r.UpdatePipelineInformation()
times = list(r.TimestepValues)
problems = []
if len(times) != 5:
    problems.append(f"{len(times)} time steps, expected 5: {times}")
for t in times:
    m = MergeBlocks(Input=r)
    m.UpdatePipeline(t)
    d = servermanager.Fetch(m)
    if (d.GetNumberOfPoints(), d.GetNumberOfCells()) != (162 + 217, 320 + 384):
        problems.append(f"t={t}: {d.GetNumberOfPoints()} points, {d.GetNumberOfCells()} cells")
print("\n".join(problems) if problems else f"paraview: {len(times)} steps, 379 points, 704 cells each")
sys.exit(1 if problems else 0)
PY
"$pv" --force-offscreen-rendering "$work/check.py" "$work/pv.xmf" 2>&1 | grep -v "^$" | tail -5
exit "${PIPESTATUS[0]}"
