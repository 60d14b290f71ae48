#!/usr/bin/env bash
# A reader opening the file with h5py in SWMR mode sees rows grow while the
# run is going, and the finished file keeps them all.
set -u
work=$(mktemp -d); trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT
"$AVI" run bar --set time.end=6 --set output.energy_every=0.01 --set output.frame_every=1 -o "$work/live.h5" --quiet &
pid=$!
"$PYTHON" - "$work/live.h5" <<'PY'
import sys, time, h5py
path = sys.argv[1]
deadline = time.time() + 60
counts = []
while time.time() < deadline and len(set(counts)) < 3:
    try:
        with h5py.File(path, "r", swmr=True) as f:
            d = f["/observables/total_energy/value"]
            d.refresh()
            counts.append(d.shape[0])
    except (OSError, KeyError):
        pass
    time.sleep(0.3)
grew = sorted(set(counts))
print("rows seen by a live SWMR reader:", grew[:6], "...")
sys.exit(0 if len(grew) >= 3 and grew == sorted(grew) else 1)
PY
rc=$?
wait $pid || rc=1
exit $rc
