#!/usr/bin/env bash
# What `avi resume` trusts: a mesh file changed or removed since the run
# started, a checkpoint with a changed value or a flipped byte, a forged
# checkpoint whose content hash was recomputed (an event counter of 2^63, a
# NaN time), an old-format checkpoint and a truncated output are all refused
# with exit 2, a message naming the file and what failed, and the output
# and checkpoint left as they were. The content hash is recomputed here in
# Python from its definition in src/run/checkpoint.h, independently of
# the C code, and must equal the one avi stores.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
cd "$work"
cp "$ROOT/data/meshes/unit_cube_v41.msh" m.msh
cp m.msh m.orig
cat > s.yaml <<'EOF'
name: cube
time: {end: 1.0}
time_step: {rule: cfl, delta: 0.1}
materials:
  soft: {model: neo-hookean, youngs: 1.0, poisson: 0.3, density: 1.0}
bodies:
  - name: cube
    mesh: {file: m.msh}
    material: soft
    initial: {scale: 1.1}
output: {energy_every: 0.01, frame_every: 0.1, checkpoint_every: 0.25}
EOF

same() { # every dataset of /observables, /particles and /connectivity identical
  "$PYTHON" - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) and n.split("/")[0] in ("observables", "particles", "connectivity") else None)
diff = [n for n in names if n not in b or not np.array_equal(a[n][()], b[n][()])]
if diff or not names:
    print("differs:", diff[:5]); sys.exit(1)
PY
}

# The content hash as src/run/checkpoint.h defines it; with --store,
# writes it into the file (a forger's recomputation).
cat > hash.py <<'PY'
import sys, struct, hashlib, h5py, numpy as np
def content_hash(f):
    paths = []
    f.visititems(lambda n, o: paths.append("/" + n) if isinstance(o, h5py.Dataset) else None)
    h = hashlib.sha256()
    for p in sorted(paths, key=lambda s: s.encode()):
        d = f[p]
        a = np.empty(d.shape, d.dtype)   # the bytes as stored, padding included
        if d.size:
            d.read_direct(a)
        h.update(p.encode() + b"\0")
        h.update(struct.pack("<Q", len(d.shape)))
        for n in d.shape:
            h.update(struct.pack("<Q", n))
        h.update(struct.pack("<Q", d.dtype.itemsize))
        h.update(a.tobytes())
    return h.hexdigest()
with h5py.File(sys.argv[1], "r+" if "--store" in sys.argv else "r") as f:
    mine = content_hash(f)
    if "--store" in sys.argv:
        f.attrs["content_sha256"] = np.bytes_(mine.encode())
    else:
        stored = f.attrs["content_sha256"]
        stored = stored.decode() if isinstance(stored, bytes) else str(stored)
        print("python %s, stored %s" % (mine, stored))
        sys.exit(0 if mine == stored else 1)
PY

# expect_refusal NAME OUT PATTERN...: resume OUT exits 2, the message matches
# every pattern, and OUT and its checkpoint are unchanged.
expect_refusal() {
  local name=$1 out=$2; shift 2
  local before; before=$(cat "$out" "$out.ckpt" | sha256sum)
  "$AVI" resume "$out" --quiet 2>err; local rc=$?
  [ -z "${AVI_TEST_VERBOSE:-}" ] || echo "$name: rc $rc: $(cat err)"
  [ "$rc" -eq 2 ] || { echo "$name: exit $rc, expected 2: $(cat err)"; bad=$((bad + 1)); }
  for p in "$@"; do grep -q -- "$p" err || { echo "$name: message lacks '$p': $(cat err)"; bad=$((bad + 1)); }; done
  [ "$(wc -l < err)" -eq 1 ] || { echo "$name: more than one line on stderr: $(cat err)"; bad=$((bad + 1)); }
  [ "$(cat "$out" "$out.ckpt" | sha256sum)" = "$before" ] || { echo "$name: output or checkpoint changed"; bad=$((bad + 1)); }
  [ ! -e "$out.resume-old" ] || { echo "$name: left $out.resume-old"; bad=$((bad + 1)); }
}

"$AVI" run s.yaml -o ref.h5 --quiet || { echo "reference run failed"; exit 1; }
"$AVI" run s.yaml --set time.end=0.5 -o r.h5 --quiet || { echo "first half failed"; exit 1; }
"$PYTHON" hash.py r.h5.ckpt > hashes || { echo "content hash differs from its definition: $(cat hashes)"; bad=$((bad + 1)); }
mesh=$(readlink -f m.msh)

# A fresh copy of the half-way output and checkpoint.
copy() { cp r.h5 "$1.h5"; cp r.h5.ckpt "$1.h5.ckpt"; }

# The mesh file changed (same topology, one coordinate moved).
sed -i 's/^1\.0 1\.0 0$/1.0 1.05 0/' m.msh
cmp -s m.msh m.orig && { echo "the test did not change the mesh"; bad=$((bad + 1)); }
copy changed
expect_refusal "changed mesh" changed.h5 "$mesh" "changed since the run started" "SHA-256 [0-9a-f]\{12\}\.\.\."
# The mesh file removed.
rm m.msh
copy removed
expect_refusal "removed mesh" removed.h5 "mesh file $mesh, read by the run (recorded in removed.h5.ckpt), is missing"
# Restored: the resume completes bitwise as the uninterrupted run. The
# scene file is not read again (its text is in the checkpoint): changing
# it does not change the resume.
cp m.orig m.msh
sed -i 's/youngs: 1.0/youngs: 2.0/' s.yaml
copy ok
"$AVI" resume ok.h5 --set time.end=1 --quiet 2>err || { echo "resume with the mesh restored: $(cat err)"; bad=$((bad + 1)); }
same ref.h5 ok.h5 || { echo "resume with the mesh restored differs from the uninterrupted run"; bad=$((bad + 1)); }

# One value of the checkpoint changed in place (through HDF5).
copy value
"$PYTHON" - value.h5.ckpt <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    x = f["vertex_position"][()]
    b = x.view(np.uint64); b[3, 1] ^= np.uint64(1 << 20); f["vertex_position"][...] = x
PY
expect_refusal "changed vertex position" value.h5 "value.h5.ckpt" "checkpoint is corrupt" "content hash"
# One raw byte of a dataset's data flipped in the file.
copy byte
off=$("$PYTHON" -c "import h5py, sys; print(h5py.File(sys.argv[1], 'r')['vertex_velocity'].id.get_offset() + 13)" byte.h5.ckpt)
"$PYTHON" - byte.h5.ckpt "$off" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x10]))
PY
expect_refusal "flipped byte" byte.h5 "byte.h5.ckpt" "checkpoint is corrupt"
# Forged, hash recomputed: an event counter of 2^63.
copy counter
"$PYTHON" - counter.h5.ckpt <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    e = f["events"][()]; e[3] = np.uint64(1 << 63); f["events"][...] = e
PY
"$PYTHON" hash.py counter.h5.ckpt --store
expect_refusal "event counter 2^63" counter.h5 "counter.h5.ckpt" "implausible" "events\[3\] (tet) = 9223372036854775808"
# Forged, hash recomputed: a NaN time.
copy nan
"$PYTHON" - nan.h5.ckpt <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    f["time"][...] = np.array([np.nan])
PY
"$PYTHON" hash.py nan.h5.ckpt --store
expect_refusal "NaN time" nan.h5 "nan.h5.ckpt" "implausible" "time nan is not a finite time"
# Forged, hash recomputed: a queue entry before the checkpoint time.
copy queue
"$PYTHON" - queue.h5.ckpt <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    q = f["queue_time"][()]; q[0] = f["time"][0] - 0.25; f["queue_time"][...] = q
PY
"$PYTHON" hash.py queue.h5.ckpt --store
expect_refusal "queue time before the checkpoint" queue.h5 "queue.h5.ckpt" "queue entry 0 has time"
# An old-format checkpoint (version 1 had no hash): refused, not trusted.
copy old
"$PYTHON" -c "import h5py, sys, numpy as np; f = h5py.File(sys.argv[1], 'r+'); f.attrs['format_version'] = np.int32(1)" old.h5.ckpt
expect_refusal "format 1" old.h5 "old.h5.ckpt" "checkpoint format 1" "run the scene again"
# Not HDF5 at all.
copy junk
printf 'not a checkpoint\n' > junk.h5.ckpt
expect_refusal "junk checkpoint" junk.h5 "junk.h5.ckpt"
# A truncated output (an earlier, shorter run's file under the checkpoint):
# another run's, refused by its run id; the message names the output, not
# its set-aside name.
copy short
"$AVI" run s.yaml --set time.end=0.2 -o shorter.h5 --quiet
cp shorter.h5 short.h5
expect_refusal "truncated output" short.h5 "^avi: resume: short.h5.ckpt is not the checkpoint of short.h5"
grep -q "resume-old" err && { echo "truncated output: message names the set-aside file: $(cat err)"; bad=$((bad + 1)); }

# Issue 27: a checkpoint copied from another run of the same scene (same
# mesh, same number of rows, another initial velocity) used to continue
# that run's state into this file, exit 0, "complete". Refused by the run
# id, naming both files, the run ids and nothing changed.
"$AVI" run s.yaml --set time.end=0.5 --set 'bodies.0.velocity=[1,0,0]' -o other.h5 --quiet ||
  { echo "the other run failed"; bad=$((bad + 1)); }
cp r.h5.ckpt other.h5.ckpt
expect_refusal "another run's checkpoint" other.h5 "^avi: resume: other.h5.ckpt is not the checkpoint of other.h5" \
  "belongs to run [0-9a-f]\{8\}\.\.\., the output to run [0-9a-f]\{8\}\.\.\." "nothing was changed"
# Both sides of the run id as stored: 32 hex digits, the same in r.h5 and
# its checkpoint.
"$PYTHON" - r.h5 r.h5.ckpt <<'PY' || { echo "run id not stored in both files"; bad=$((bad + 1)); }
import sys, h5py, re
a = h5py.File(sys.argv[1], "r")["/parameters/run_id"][()]
b = h5py.File(sys.argv[2], "r")["output_run_id"][()]
a = a.decode() if isinstance(a, bytes) else str(a)
b = b.decode() if isinstance(b, bytes) else str(b)
sys.exit(0 if re.fullmatch("[0-9a-f]{32}", a) and a == b else 1)
PY
# The same run's output changed after the checkpoint recorded its last row
# (the energy of that row rewritten): refused by the row's digest.
copy edited
"$PYTHON" - edited.h5 <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    d = f["/observables/elastic_energy/value"]; d[50] = d[50] * 2 + 1
PY
expect_refusal "edited last row" edited.h5 "^avi: resume: edited.h5: row 50 (SHA-256 [0-9a-f]\{12\}\.\.\.) is not the row its checkpoint edited.h5.ckpt recorded"
# A checkpoint of format 2 (content hash, no run id): refused, saying why.
copy fmt2
"$PYTHON" -c "import h5py, sys, numpy as np; f = h5py.File(sys.argv[1], 'r+'); f.attrs['format_version'] = np.int32(2)" fmt2.h5.ckpt
expect_refusal "format 2" fmt2.h5 "fmt2.h5.ckpt" "checkpoint format 2" "did not tie a checkpoint to its output" "run the scene again"

# A run that ended off the energy grid (0.505 s: a final row at 0.505
# after the row at 0.5) keeps the rows on the grid when resumed; a resume
# killed before its first checkpoint leaves just those in the file (emulated
# here by cutting the final row off). Resuming again continues, and the
# extended run is the uninterrupted one.
# (s.yaml has youngs 2.0 since the test above: back to ref.h5's 1.0.)
"$AVI" run s.yaml --set time.end=0.505 --set materials.soft.youngs=1.0 -o off.h5 --quiet || { echo "off-grid run failed"; bad=$((bad + 1)); }
"$PYTHON" - off.h5 <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    g = f["/observables"]
    # every row but the last; the synchronized ones (output.synchronized_every) up to its time
    n = g["events/value"].shape[0] - 1
    t_cut = g["events/time"][n - 1]
    for name in g:
        m = int((g[name]["time"][()] <= t_cut).sum())
        for part in ("value", "step", "time"):
            d = g[name][part]
            if d.shape[0] > m:
                d.resize(m, axis=0)
PY
"$AVI" resume off.h5 --set time.end=1 --quiet 2>err || { echo "resume of a run cut back to its grid rows: $(cat err)"; bad=$((bad + 1)); }
same ref.h5 off.h5 || { echo "extended off-grid run differs from the uninterrupted run"; bad=$((bad + 1)); }

echo "resume integrity: $bad problems"
[ "$bad" -eq 0 ]
