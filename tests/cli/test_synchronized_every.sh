#!/usr/bin/env bash
# output.synchronized_every (issue 29): kinetic_energy, total_energy and
# friction_work at rows 0, N, 2N, ... and at the end, with their own step
# and time; every other observable at every row. Their values are bitwise
# those of a run with N = 1 at the same rows, and nothing else changes
# (particles and the other observables bitwise), on 1 and 2 threads and
# across a SIGTERM and resume; /parameters/synchronized_every and the banner
# give N, `avi info` the rows with it; the file validates; bad values are
# exit 2 naming the key.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
# Sphere-plate into contact (0.1 ms), with friction: rows every 1 us.
short=(--set time.end=1.2e-4 --set output.frame_every=2e-5 --set contact.friction=0.3)
run() { # NAME ARGS...
  local name=$1; shift
  "$AVI" run sphere-plate "${short[@]}" -o "$work/$name.h5" --progress-every 1000 "$@" 2> "$work/$name.err" \
    || { echo "$name: run failed: $(cat "$work/$name.err")"; bad=$((bad + 1)); }
}
run one --set output.synchronized_every=1
run seven --set output.synchronized_every=7
run seven2 --set output.synchronized_every=7 --threads 2
run auto

# subset REF FILE N: FILE's synchronized rows are REF's rows 0, N, 2N, ...
# and its last, bitwise; every other dataset equals REF's.
subset() {
  "$PYTHON" - "$@" <<'PY'
import sys, h5py, numpy as np
ref, new, n = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r"), int(sys.argv[3])
sync = {"kinetic_energy", "total_energy", "friction_work"}
bad = []
if int(new["/parameters/synchronized_every"][()]) != n:
    bad.append(f"/parameters/synchronized_every {new['/parameters/synchronized_every'][()]}, expected {n}")
rows = ref["/observables/events/time"].shape[0]
want = sorted(set(range(0, rows, n)) | {rows - 1})
for name in sync:
    for part in ("value", "step", "time"):
        a, b = ref[f"/observables/{name}/{part}"][()], new[f"/observables/{name}/{part}"][()]
        if n > 1 and ref[f"/observables/{name}/{part}"].shape[0] != rows:
            bad.append(f"reference {name}/{part} does not have every row")
        if a[want].tobytes() != b.tobytes():
            bad.append(f"{name}/{part}: not the reference's rows {want[:4]}... ({len(b)} rows, {len(want)} expected)")
for g in ("observables", "particles"):
    def visit(path, obj):
        if isinstance(obj, h5py.Dataset) and path.split("/")[0] not in sync:
            o = new[g + "/" + path]
            same = o[()].tolist() == obj[()].tolist() if obj.dtype.kind in "OS" else o[()].tobytes() == obj[()].tobytes()
            if o.dtype != obj.dtype or o.shape != obj.shape or not same:
                bad.append(f"/{g}/{path} differs")
    ref[g].visititems(visit)
if np.nanmax(ref["/observables/friction_work/value"][()]) <= 0:
    bad.append("no friction work: the runs never slid in contact")
print("\n".join(bad) if bad else f"{sys.argv[2].rsplit('/', 1)[-1]}: {len(want)} synchronized rows of {rows}, "
      f"the N = 1 run's bits; the rest identical")
sys.exit(1 if bad else 0)
PY
}
subset "$work/one.h5" "$work/seven.h5" 7 || bad=$((bad + 1))
subset "$work/one.h5" "$work/seven2.h5" 7 || bad=$((bad + 1))
subset "$work/one.h5" "$work/auto.h5" 21 || bad=$((bad + 1))
for f in one seven auto; do
  "$PYTHON" "$ROOT/tools/validate_h5.py" "$work/$f.h5" >/dev/null || { echo "$f.h5 does not validate"; bad=$((bad + 1)); }
done
grep -q 'rows (every 1e-06 s; total and kinetic energy every 7)' "$work/seven.err" \
  || { echo "banner without the cadence: $(grep rows "$work/seven.err")"; bad=$((bad + 1)); }
grep -q 'rows (every 1e-06 s)' "$work/one.err" || { echo "banner for N = 1: $(grep rows "$work/one.err")"; bad=$((bad + 1)); }
"$AVI" info "$work/seven.h5" | grep -q ', 122 rows (19 with the synchronized energy), ' \
  || { echo "avi info: $("$AVI" info "$work/seven.h5" | grep rows)"; bad=$((bad + 1)); }
"$AVI" info "$work/one.h5" | grep -q ', 122 rows, ' || { echo "avi info, N = 1: $("$AVI" info "$work/one.h5" | grep rows)"; bad=$((bad + 1)); }
# auto on sphere-plate's rows every 1 us: 21 (avi_synchronized_every's
# rule, tests/unit/test_energy_observable.c), the file's rows at that N.
n=$("$PYTHON" -c 'import sys, h5py; print(int(h5py.File(sys.argv[1], "r")["/parameters/synchronized_every"][()]))' "$work/auto.h5")
[ "$n" = 21 ] || { echo "auto on sphere-plate: N = $n, expected 21"; bad=$((bad + 1)); }
grep -q 'total and kinetic energy every 21)' "$work/auto.err" || { echo "auto banner: $(grep rows "$work/auto.err")"; bad=$((bad + 1)); }

# SIGTERM mid-run, then resume: the file of an uninterrupted run (to 0.5 ms).
long=(--set time.end=5e-4 --set output.frame_every=1e-4 --set contact.friction=0.3 --set output.synchronized_every=7)
"$AVI" run sphere-plate "${long[@]}" -o "$work/long.h5" --quiet || { echo "long run failed"; bad=$((bad + 1)); }
"$AVI" run sphere-plate "${long[@]}" --set output.checkpoint_every=2.5e-5 -o "$work/cut.h5" --quiet &
pid=$!
for _ in $(seq 100); do
  [ -e "$work/cut.h5.ckpt" ] && break
  sleep 0.05
done
sleep 0.2
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rc=$?
if [ "$rc" -ne 130 ] && [ "$rc" -ne 143 ]; then echo "interrupted run: exit $rc (finished before SIGTERM?)"; bad=$((bad + 1)); fi
"$AVI" resume "$work/cut.h5" --quiet 2> "$work/resume.err" || { echo "resume: $(cat "$work/resume.err")"; bad=$((bad + 1)); }
"$PYTHON" "$ROOT/tests/cli/h5same.py" "$work/long.h5" "$work/cut.h5" || { echo "resumed run differs"; bad=$((bad + 1)); }
# Extended: run to 0.25 ms (its last row synchronized), resume to 0.5 ms: the
# run to 0.5 ms (that row is not one of its synchronized rows).
"$AVI" run sphere-plate "${long[@]}" --set time.end=2.5e-4 -o "$work/ext.h5" --quiet || { echo "0.25 ms run failed"; bad=$((bad + 1)); }
"$AVI" resume "$work/ext.h5" --set time.end=5e-4 --quiet 2> "$work/ext.err" || { echo "extension: $(cat "$work/ext.err")"; bad=$((bad + 1)); }
"$PYTHON" "$ROOT/tests/cli/h5same.py" "$work/long.h5" "$work/ext.h5" || { echo "extended run differs"; bad=$((bad + 1)); }

# Bad values: exit 2 naming the key.
for v in 0 -3 1.5 x 1e12; do
  "$AVI" run sphere-plate --set "output.synchronized_every=$v" -o "$work/bad.h5" --quiet 2> "$work/bad.err"
  rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q 'output.synchronized_every' "$work/bad.err"; then
    echo "synchronized_every=$v: exit $rc, $(cat "$work/bad.err")"; bad=$((bad + 1))
  fi
done
[ -e "$work/bad.h5" ] && { echo "a refused run wrote bad.h5"; bad=$((bad + 1)); }

echo "synchronized_every: $bad problems"
[ "$bad" -eq 0 ]
