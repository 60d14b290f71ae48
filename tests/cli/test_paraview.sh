#!/usr/bin/env bash
# ParaView reads a run's XDMF sidecar with its legacy reader (XDMFReader)
# and its XDMF 3 readers (Xdmf3ReaderS, Xdmf3ReaderT), in place and after
# the run's directory is moved: the right time steps, points and cells per
# step, the last step's points equal to the HDF5 file's, no error line; the
# last frame rendered (under xvfb-run) shows both bodies. Skipped (exit 77,
# with a message) without ParaView's Python and Xvfb (make paraview-deps
# installs them as root).
set -u
pv=$(command -v pvbatch || compgen -c pvbatch | sort -u | head -n 1)
if [ -z "$pv" ] || ! command -v xvfb-run >/dev/null || ! command -v xauth >/dev/null; then
  echo "skipped: needs pvbatch (Debian paraview, python3-paraview), xvfb-run and xauth (make paraview-deps)"
  exit 77
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
echo 'import paraview.simple' > "$work/probe.py"
if ! xvfb-run -a "$pv" "$work/probe.py" > "$work/probe.txt" 2>&1; then
  echo "skipped: $pv cannot import paraview.simple (install python3-paraview): $(tail -n 1 "$work/probe.txt")"
  exit 77
fi
mkdir "$work/run"
"$AVI" run sphere-plate --set time.end=4e-5 --set output.frame_every=1e-5 --set bodies.sphere.mesh.subdivisions=2 \
  --set bodies.plate.mesh.rings=8 -o "$work/run/pv.h5" --quiet || { echo "run failed"; exit 1; }
# 5 frames (0, 1e-5 .. 4e-5); sphere 162 vertices / 320 triangles, plate
# 1 + 3*8*9 = 217 vertices / 6*64 = 384 triangles. The last frame's
# positions, as the HDF5 file has them:
"$PYTHON" - "$work/run/pv.h5" > "$work/last.txt" <<'PY' || { echo "cannot read the HDF5 file"; exit 1; }
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    for body in ("sphere", "plate"):
        for x in f[f"particles/{body}/position/value"][-1]:
            print(*(repr(float(c)) for c in x))
PY
cat > "$work/check.py" <<'PY'
import os
import sys
import numpy as np
from paraview.simple import (GetColorTransferFunction, XDMFReader, Xdmf3ReaderS, Xdmf3ReaderT, MergeBlocks, Show, Render, ColorBy,
                             GetActiveViewOrCreate, ResetCamera, SaveScreenshot, servermanager)
from vtkmodules.vtkIOImage import vtkPNGReader
from vtkmodules.util.numpy_support import vtk_to_numpy

xmf, expected_file, png = sys.argv[1], sys.argv[2], sys.argv[3]
expected = np.loadtxt(expected_file)
problems = []

def open_reader(R):
    try:
        return R(FileNames=[xmf])
    except AttributeError:  # XDMFReader in ParaView 5.11 has FileName
        return R(FileName=xmf)

def points(d):
    return vtk_to_numpy(d.GetPoints().GetData()) if d.GetPoints() else np.zeros((0, 3))

def sorted_rows(a):
    return a[np.lexsort(a.T[::-1])]

for R in (XDMFReader, Xdmf3ReaderS, Xdmf3ReaderT):
    name = R.__name__
    r = open_reader(R)
    r.UpdatePipelineInformation()
    times = list(r.TimestepValues)
    if len(times) != 5:
        problems.append(f"{name}: {len(times)} time steps, expected 5: {times}")
    m = MergeBlocks(Input=r)
    for t in times:
        m.UpdatePipeline(t)
        d = servermanager.Fetch(m)
        if (d.GetNumberOfPoints(), d.GetNumberOfCells()) != (162 + 217, 320 + 384):
            problems.append(f"{name} t={t}: {d.GetNumberOfPoints()} points, {d.GetNumberOfCells()} cells")
    if times:
        got = points(servermanager.Fetch(m))
        if got.shape != expected.shape or not np.array_equal(sorted_rows(got), sorted_rows(expected)):
            problems.append(f"{name}: the last step's points are not the last frame's")

# The last frame, each body in its own flat colour: both colours must cover
# a fair number of pixels.
r = open_reader(Xdmf3ReaderT)
r.UpdatePipelineInformation()
view = GetActiveViewOrCreate("RenderView")
view.ViewSize = [400, 300]
view.ViewTime = r.TimestepValues[-1]
view.OrientationAxesVisibility = 0
view.Background = [0, 0, 0]
try:
    view.UseColorPaletteForBackground = 0
except AttributeError:
    pass
disp = Show(r, view)
lut = GetColorTransferFunction("vtkBlockColors")
lut.InterpretValuesAsCategories = 1
lut.Annotations = ["0", "0", "1", "1"]
lut.IndexedColors = [1, 0, 0, 0, 1, 0]
disp.ColorArrayName = ["FIELD", "vtkBlockColors"]
disp.LookupTable = lut
disp.Ambient, disp.Diffuse = 1.0, 0.0
view.CameraPosition = [1, 0.5, 0.7]
view.CameraFocalPoint = [0, 0, 0]
view.CameraViewUp = [0, 0, 1]
ResetCamera(view)
Render(view)
SaveScreenshot(png, view, ImageResolution=[400, 300])
rd = vtkPNGReader()
rd.SetFileName(png)
rd.Update()
img = vtk_to_numpy(rd.GetOutput().GetPointData().GetScalars())[:, :3]
colours, counts = np.unique(img, axis=0, return_counts=True)
shown = sorted((int(n), tuple(int(v) for v in c)) for c, n in zip(colours, counts) if tuple(c) != (0, 0, 0))
big = [s for s in shown if s[0] >= 200]
if len(big) < 2:
    problems.append(f"render: {len(big)} body colours cover 200 pixels or more (colours: {shown[-4:]})")
print("\n".join(problems) if problems else
      f"paraview: 3 readers, 5 steps, 379 points, 704 cells each, last step = last frame; rendered {len(big)} bodies ({png})")
# Leave without tearing the OpenGL context down: under Xvfb that fails
# with "GLXBadContext" after everything is done.
sys.stdout.flush()
os._exit(1 if problems else 0)
PY
fail=0
check() { # where: the sidecar's directory
  local out="$work/out.txt"
  local rc try
  # xvfb-run -a can hand out a display whose server is not up yet on a
  # loaded machine ("bad X server connection"): that, and only that, is
  # tried again, up to twice.
  for try in 1 2 3; do
    (cd "$work" && xvfb-run -a -s "-screen 0 640x480x24" "$pv" "$work/check.py" \
      "$1/pv.xmf" "$work/last.txt" "$work/last.png") > "$out" 2>&1
    rc=$?
    [ $rc -ne 0 ] && grep -q "bad X server connection" "$out" || break
    sleep 2
  done
  grep -v "^$" "$out" | tail -5
  if [ $rc -ne 0 ]; then echo "FAIL ($2): pvbatch exit $rc"; fail=1; fi
  if grep -qE "ERR|Error|error|Skipping|Warning" "$out"; then
    echo "FAIL ($2): reader messages:"; grep -E "ERR|Error|error|Skipping|Warning" "$out" | sort | uniq -c | head -5; fail=1
  fi
}
check "$work/run" "in place"
mv "$work/run" "$work/moved"
check "$work/moved" "after moving the run directory"
[ $fail -eq 0 ] && echo "paraview: in place and moved: all checks passed"
exit $fail
