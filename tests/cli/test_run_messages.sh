#!/usr/bin/env bash
# What a run says on stderr (issue 27): the banner's frame count is the
# file's and its size estimate within 25 % of the file; a large output is
# announced even under --quiet and one past output.max_bytes (default 20 GB)
# refused; the last lines name the .xmf, the checkpoint and the next
# commands, an interrupted run how to resume; `avi info` on a missing or
# non-HDF5 file says so in one line.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
cd "$work"
problem() { echo "$*"; bad=$((bad + 1)); }

# Banner (stderr is a file: the log mode) and last lines, -o a bare name.
"$AVI" run sphere-plate --set time.end=6e-4 -o sp.h5 --progress-every 1000 2> sp.err || problem "sphere-plate run failed: $(cat sp.err)"
"$PYTHON" - sp.h5 sp.err <<'PY' || bad=$((bad + 1))
import sys, os, re, h5py
f = h5py.File(sys.argv[1], "r")
frames = f["/particles/sphere/position/value"].shape[0]
rows = f["/observables/elastic_energy/value"].shape[0]
err = open(sys.argv[2]).read()
m = re.search(r"output \S+: (\d+) rows .*, (\d+) frames .*about ([\d.]+) (B|kB|MB|GB)", err)
if not m:
    sys.exit("no output plan in the banner:\n" + err)
scale = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(4)]
est, size = float(m.group(3)) * scale, os.path.getsize(sys.argv[1])
problems = []
if int(m.group(1)) != rows: problems.append(f"banner says {m.group(1)} rows, the file has {rows}")
if int(m.group(2)) != frames: problems.append(f"banner says {m.group(2)} frames, the file has {frames}")
if abs(est - size) > 0.25 * size: problems.append(f"banner estimates {est:.0f} bytes, the file has {size}")
print(f"sphere-plate 6e-4: {rows} rows, {frames} frames, estimate {est:.0f} B, file {size} B")
if problems: sys.exit("\n".join(problems))
PY
for want in "wrote sp.h5, sp.xmf (XDMF for ParaView) and the checkpoint sp.h5.ckpt" "next: avi info sp.h5" \
            "plot_energy.py sp.h5" "paraview ./sp.xmf"; do
  grep -qF "$want" sp.err || problem "last lines lack '$want': $(tail -5 sp.err)"
done
tool=$(sed -n 's/^avi: *python3 \(.*plot_energy\.py\) sp\.h5$/\1/p' sp.err)
[ -f "$tool" ] || problem "the plot command names '$tool', not a file"
[ -e sp.h5.ckpt ] && [ -e sp.xmf ] || problem "the files named do not exist"

# SIGINT: says how to continue.
"$AVI" run bar --set time.end=100 -o int.h5 --quiet 2> int.err & pid=$!
for _ in $(seq 1 2000); do [ -e int.h5 ] && break; sleep 0.005; done
kill -INT $pid; wait $pid; rc=$?
[ "$rc" -eq 130 ] || problem "SIGINT: exit $rc"
grep -qF "avi resume int.h5" int.err || problem "SIGINT: no resume command: $(cat int.err)"

# About 25 GB of frames (bar: 1,025 vertices, 49 kB a frame; 5e5 frames):
# refused by the default limit, naming the key (the old 1 TB limit let it
# run).
big=(--set time.end=500 --set output.frame_every=1e-3)
# (A binary that accepts it is stopped after 20 s, not left to fill the disk.)
timeout -s TERM 20 "$AVI" run bar "${big[@]}" -o big.h5 --quiet 2> big.err; rc=$?
[ "$rc" -eq 2 ] || problem "25 GB plan: exit $rc, expected 2: $(cat big.err)"
grep -q "output.frame_every: .*more than output.max_bytes = 2e+10" big.err || problem "25 GB plan: message: $(cat big.err)"
[ ! -e big.h5 ] || problem "25 GB plan: wrote big.h5"
# Raised: runs, and says how large under --quiet (stopped at once).
"$AVI" run bar "${big[@]}" --set output.max_bytes=1e11 -o big.h5 --quiet 2> big.err & pid=$!
for _ in $(seq 1 2000); do [ -s big.err ] && break; sleep 0.005; done
kill -TERM $pid 2>/dev/null; wait $pid
grep -q "^avi: output big.h5 will take about 2[0-9.]* GB" big.err || problem "large output not announced under --quiet: $(cat big.err)"
# Under 2 GB, --quiet says nothing.
"$AVI" run bar --set time.end=0.01 -o small.h5 --quiet 2> small.err || problem "small run failed"
[ ! -s small.err ] || problem "--quiet printed: $(cat small.err)"

# avi info: a missing file, a file that is not HDF5.
"$AVI" info nosuch.h5 2> info.err; rc=$?
[ "$rc" -eq 2 ] || problem "info nosuch.h5: exit $rc"
[ "$(cat info.err)" = "avi: nosuch.h5: no such file" ] || problem "info nosuch.h5: $(cat info.err)"
echo "not hdf5" > text.h5
"$AVI" info text.h5 2> info.err; rc=$?
[ "$rc" -eq 2 ] || problem "info text.h5: exit $rc"
[ "$(cat info.err)" = "avi: text.h5: not an HDF5 file" ] || problem "info text.h5: $(cat info.err)"

echo "run messages: $bad problems"
[ "$bad" -eq 0 ]
