#!/usr/bin/env bash
# A failed run stores its whole reason in /parameters/completion (the line
# avi prints, far longer than the 64 bytes of the running state) as a
# variable-length UTF-8 string, and a blow-up whose total energy is NaN
# names a potential whose energy is not finite.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
# The bar at a fixed 0.5 s step inverts tetrahedra: NaN energies at t = 0.01.
"$AVI" run bar --set time.end=1 --set "time_step={fixed: 0.5}" -o "$work/nan.h5" --quiet 2>"$work/err"; rc=$?
[ "$rc" -eq 1 ] || { echo "NaN blow-up: exit status $rc, expected 1: $(cat "$work/err")"; bad=$((bad + 1)); }
line=$(grep '^avi: blow-up' "$work/err")
echo "$line" | grep -Eq 'total energy -?nan J.*largest: tet [0-9]+ \(vertices [0-9, ]+\): -?(nan|inf) J$' \
  || { echo "NaN blow-up does not name a non-finite potential: $line"; bad=$((bad + 1)); }
"$PYTHON" - "$work/nan.h5" "${line#avi: }" <<'PY' || bad=$((bad + 1))
import sys, h5py
path, why = sys.argv[1], sys.argv[2]
with h5py.File(path, "r") as f:
    c = f["/parameters/completion"]
    info = h5py.check_string_dtype(c.dtype)
    state = c[()].decode("utf-8")
if info is None or info.length is not None or info.encoding != "utf-8":
    sys.exit(f"completion is {c.dtype}, not a variable-length UTF-8 string")
if state != "failed: " + why:
    sys.exit(f"completion is {state!r} ({len(state)} bytes), not 'failed: ' + the {len(why)}-byte message")
PY
"$AVI" info "$work/nan.h5" | grep -qF "completion:           failed: ${line#avi: }" \
  || { echo "avi info does not show the whole reason"; bad=$((bad + 1)); }
"$PYTHON" "$ROOT/tools/validate_h5.py" "$work/nan.h5" >/dev/null || { echo "validate_h5.py rejects the failed file"; bad=$((bad + 1)); }
echo "completion: $bad problems"
[ "$bad" -eq 0 ]
