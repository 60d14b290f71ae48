#!/usr/bin/env bash
# netCDF readers open the output: xarray's h5netcdf engine opens every
# observable and every body's position, velocity and masses without options
# (no phony_dims), with named dimensions and the values h5py reads; the
# netCDF library (ncdump -h, and xarray's netcdf4 engine when present) lists
# the whole file with no phony dimension; the file still validates (H5MD).
# Scenes: a tetrahedral bar, two shell bodies in contact.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
if ! "$PYTHON" -c 'import xarray, h5netcdf' 2>/dev/null || ! command -v ncdump >/dev/null; then
  echo "netcdf: skipped: needs python3-xarray, python3-h5netcdf and netcdf-bin (make deps installs them)"
  exit 77
fi
bad=0
check() { # name scene args...
  local name=$1; shift
  local out="$work/$name.h5"
  "$AVI" run "$@" -o "$out" --quiet || { echo "$name: run failed"; bad=$((bad + 1)); return; }
  "$PYTHON" "$ROOT/tools/validate_h5.py" --complete --quiet "$out" || { echo "$name: layout"; bad=$((bad + 1)); }
  if ! ncdump -h "$out" > "$work/$name.cdl" 2> "$work/$name.err"; then
    echo "$name: ncdump -h failed: $(cat "$work/$name.err")"; bad=$((bad + 1))
  elif grep -q phony_dim "$work/$name.cdl"; then
    echo "$name: ncdump -h shows unnamed dimensions: $(grep -m3 phony_dim "$work/$name.cdl")"; bad=$((bad + 1))
  elif ! grep -q "double value(time, vertex, component)" "$work/$name.cdl"; then
    echo "$name: ncdump -h lists no frames: $(head -c 600 "$work/$name.cdl")"; bad=$((bad + 1))
  fi
  "$PYTHON" - "$out" <<'PY' || { echo "$name: xarray"; bad=$((bad + 1)); }
import sys, h5py, numpy as np, xarray as xr
path = sys.argv[1]
bad = 0
with h5py.File(path, "r") as f:
    want = {}
    for o in f["observables"]:
        column = () if f[f"observables/{o}/value"].ndim == 1 else ("kind",) if o == "events_by_kind" else ("component",)
        want["observables/" + o] = {"value": ("time",) + column, "step": ("time",)}
    for b in f["particles"]:
        want[f"particles/{b}"] = {"mass": ("vertex",)}
        for s in ("position", "velocity"):
            want[f"particles/{b}/{s}"] = {"value": ("time", "vertex", "component")}
    want["parameters/time_step"] = {"min": ("kind",), "max": ("kind",), "count": ("kind",)}
    want["connectivity"] = {}
    for group, variables in want.items():
        try:
            ds = xr.open_dataset(path, engine="h5netcdf", group=group)
        except Exception as e:  # noqa: BLE001 - any failure to open is the finding
            print(f"{group}: xarray (h5netcdf) cannot open it: {e}")
            bad += 1
            continue
        with ds:
            for var, dims in variables.items():
                got = ds[var]
                if got.dims != dims:
                    print(f"{group}/{var}: dimensions {got.dims}, expected {dims}")
                    bad += 1
                if not np.array_equal(got.values, f[f"{group}/{var}"][()]):
                    print(f"{group}/{var}: values differ from h5py's")
                    bad += 1
            if group.startswith("observables/") and not np.array_equal(ds["time"].values, f[group + "/time"][()]):
                print(f"{group}: time coordinate differs")
                bad += 1
            if group == "observables/linear_momentum" and list(ds["component"].values) != ["x", "y", "z"]:
                print(f"{group}: component labels {list(ds['component'].values)}")
                bad += 1
    try:
        import netCDF4  # noqa: F401 - optional: the netCDF library's own reader
    except ImportError:
        netCDF4 = None
    if netCDF4 is not None:
        for b in f["particles"]:
            ds = xr.open_dataset(path, engine="netcdf4", group=f"particles/{b}/position")
            with ds:
                if ds["value"].dims != ("time", "vertex", "component"):
                    print(f"netcdf4 engine: particles/{b}/position/value dimensions {ds['value'].dims}")
                    bad += 1
print(f"xarray: {len(want)} groups opened" if not bad else f"xarray: {bad} problems")
sys.exit(1 if bad else 0)
PY
}
check bar bar --set time.end=0.05 --set output.frame_every=0.01 --set output.energy_every=0.001
check sp sphere-plate --set time.end=2e-5 --set output.frame_every=1e-5
echo "netcdf: $bad problems"
[ "$bad" -eq 0 ]
