#!/usr/bin/env bash
# The thread count as a user sets it (issue 30): `avi run --threads N`, the
# scene key parallel.threads (in a file and by --set), avi.run(threads=N)
# in Python; the option wins over the key, the key over the default, 1;
# auto (option or key) is every processor the process may run on (under
# taskset -c CPU: 1). The banner, /parameters/threads and `avi info`
# give the count used; the resolved scene carries
# the key only as set. Bad counts are exit 2 naming --threads or the key
# (file:line). A run resumed with another count is accepted and ends with
# the data of an uninterrupted run; every count gives the same bits.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
short=(--set time.end=0.004 --set output.energy_every=0.0002 --set output.frame_every=0.001)

# threads FILE: /parameters/threads.
threads() {
  "$PYTHON" -c 'import sys, h5py
try:
    print(int(h5py.File(sys.argv[1], "r")["/parameters/threads"][()]))
except (OSError, KeyError) as e:
    print(f"none ({e})")' "$1"
}
# banner_threads STDERR_FILE: the count on the banner's first line.
banner_threads() { sed -n 's/^avi: \(running\|resuming\) scene .*, \([0-9]*\) threads\{0,1\}$/\2/p' "$1" | head -1; }
# expect NAME WANT FILE STDERR_FILE: both records say WANT.
expect() {
  local got b
  got=$(threads "$3" 2>&1); b=$(banner_threads "$4")
  if [ "$got" != "$2" ] || [ "$b" != "$2" ]; then
    echo "$1: /parameters/threads $got, banner '$b', expected $2"; bad=$((bad + 1))
  else echo "$1: $2 threads (banner and /parameters)"; fi
}
# go NAME ARGS...: a run with its banner (stderr is not a terminal).
go() {
  local name=$1; shift
  "$AVI" run bar "${short[@]}" -o "$work/$name.h5" --progress-every 100 "$@" 2> "$work/$name.err" \
    || { echo "$name: run failed: $(cat "$work/$name.err")"; bad=$((bad + 1)); }
}

# The default: one thread per 25 000 clocks of an avi run without contact,
# at most the CPU affinity: 1 for the small bar and sphere-plate (contact),
# min(4, affinity) for 122 880 tets, 1 of those under taskset. auto: the
# CPU affinity (not nproc, which OMP_NUM_THREADS changes); under taskset to
# one of its processors (not always 0 in a container), 1.
ncpu=$("$PYTHON" -c 'import os; print(len(os.sched_getaffinity(0)))')
cpu=$("$PYTHON" -c 'import os; print(min(os.sched_getaffinity(0)))')
go default; expect default 1 "$work/default.h5" "$work/default.err"
big=(--set bodies.bar.mesh.nx=80 --set bodies.bar.mesh.ny=16 --set bodies.bar.mesh.nz=16 --set time.end=2e-4
     --set output.energy_every=1e-4 --set output.frame_every=1e-4)
"$AVI" run bar "${big[@]}" -o "$work/big.h5" --progress-every 100 2> "$work/big.err" || { echo "big: run failed"; bad=$((bad + 1)); }
expect "default, 122 880 tets" "$(( ncpu < 4 ? ncpu : 4 ))" "$work/big.h5" "$work/big.err"
if command -v taskset > /dev/null; then
  taskset -c "$cpu" "$AVI" run bar "${big[@]}" -o "$work/big1.h5" --progress-every 100 2> "$work/big1.err" \
    || { echo "big, taskset: run failed"; bad=$((bad + 1)); }
  expect "default, 122 880 tets, taskset -c $cpu" 1 "$work/big1.h5" "$work/big1.err"
fi
"$AVI" run sphere-plate --set time.end=2e-6 --set output.energy_every=1e-6 --set output.frame_every=1e-6 \
  -o "$work/sp.h5" --progress-every 100 2> "$work/sp.err" || { echo "sphere-plate: run failed"; bad=$((bad + 1)); }
expect "default, sphere-plate (contact)" 1 "$work/sp.h5" "$work/sp.err"
go auto_opt --threads auto; expect "--threads auto" "$ncpu" "$work/auto_opt.h5" "$work/auto_opt.err"
if command -v taskset > /dev/null; then
  taskset -c "$cpu" "$AVI" run bar "${short[@]}" -o "$work/one.h5" --threads auto --progress-every 100 2> "$work/one.err" \
    || { echo "taskset: run failed"; bad=$((bad + 1)); }
  expect "taskset -c $cpu, --threads auto" 1 "$work/one.h5" "$work/one.err"
else echo "no taskset: the affinity default is checked without it only"; fi

# The option, the key (--set and in a file), and the option over the key.
go opt --threads 3; expect "--threads 3" 3 "$work/opt.h5" "$work/opt.err"
"$AVI" info "$work/opt.h5" | grep -q '^threads: *3$' || { echo "avi info: no 'threads: 3' line"; bad=$((bad + 1)); }
go opt_eq --threads=2; expect "--threads=2" 2 "$work/opt_eq.h5" "$work/opt_eq.err"
go key --set parallel.threads=5; expect "--set parallel.threads=5" 5 "$work/key.h5" "$work/key.err"
go both --set parallel.threads=5 --threads 2; expect "--threads 2 over the key 5" 2 "$work/both.h5" "$work/both.err"
go auto --set parallel.threads=auto; expect "parallel.threads=auto" "$ncpu" "$work/auto.h5" "$work/auto.err"
cat > "$work/scene.yaml" <<'EOF'
time: {end: 0.004}
materials:
  rubber: {model: neo-hookean, youngs: 1.0e6, poisson: 0.3, density: 1000}
bodies:
  - mesh: {generator: tet_box, lx: 0.1, ly: 0.02, lz: 0.02, nx: 5, ny: 2, nz: 2}
    material: rubber
    pinned: {box: [[-1, -1, -1], [0.001, 1, 1]]}
parallel: {threads: 4}
EOF
"$AVI" run "$work/scene.yaml" -o "$work/file.h5" --progress-every 100 2> "$work/file.err" \
  || { echo "scene file: run failed: $(cat "$work/file.err")"; bad=$((bad + 1)); }
expect "scene file parallel: {threads: 4}" 4 "$work/file.h5" "$work/file.err"
"$AVI" run "$work/scene.yaml" -o "$work/file1.h5" --threads 1 --progress-every 100 2> "$work/file1.err" \
  || { echo "scene file --threads 1: run failed"; bad=$((bad + 1)); }
expect "scene file, --threads 1" 1 "$work/file1.h5" "$work/file1.err"

# The resolved scene: the key as set, absent when not (older scenes'
# resolved text unchanged).
"$PYTHON" - "$work/key.h5" "$work/opt.h5" "$work/file1.h5" <<'PY' || bad=$((bad + 1))
import sys, h5py
def resolved(p):
    return h5py.File(p, "r")["/parameters/scene_resolved"][()].decode()
key, opt, file1 = map(resolved, sys.argv[1:])
if "parallel: {threads: 5}" not in key or "parallel" in opt or "parallel: {threads: 4}" not in file1:
    sys.exit(f"scene_resolved: key {key[-60:]!r}, option {opt[-60:]!r}, file {file1[-60:]!r}")
print("scene_resolved: the key as set, absent without it")
PY

# Bad counts: exit 2, nothing written, the option or key named.
refuse() { # NAME PATTERN ARGS...
  local name=$1 pat=$2; shift 2
  "$AVI" run bar "${short[@]}" -o "$work/bad.h5" --quiet "$@" 2> "$work/bad.err"; local rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q -- "$pat" "$work/bad.err" || [ -e "$work/bad.h5" ]; then
    echo "$name: exit $rc, '$(cat "$work/bad.err")', expected 2 naming '$pat'"; bad=$((bad + 1))
  fi
}
for v in 0 -3 2.5 many 1025 "" " 4" 4x Auto; do refuse "--threads '$v'" "--threads '$v'" --threads "$v"; done
refuse "--threads=0" "--threads '0'" --threads=0
refuse "--threads with no value" "--threads needs" --threads
for v in 0 -3 2.5 many 1025 '"4"'; do
  refuse "--set parallel.threads=$v" "parallel.threads (--set)" --set "parallel.threads=$v"
done
refuse "--set parallel.thread" "no such key" --set parallel.thread=2
for v in 0 -3 2.5 many 1025; do
  sed "s/threads: 4/threads: $v/" "$work/scene.yaml" > "$work/bad.yaml"
  "$AVI" run "$work/bad.yaml" -o "$work/bad.h5" --quiet 2> "$work/bad.err"; rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q "bad.yaml:8: parallel.threads" "$work/bad.err" || [ -e "$work/bad.h5" ]; then
    echo "scene file threads: $v: exit $rc, '$(cat "$work/bad.err")', expected 2 naming bad.yaml:8: parallel.threads"
    bad=$((bad + 1))
  fi
done
"$AVI" resume "$work/opt.h5" --threads 0 --quiet 2> "$work/bad.err"; rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--threads '0'" "$work/bad.err" || { echo "resume --threads 0: exit $rc"; bad=$((bad + 1)); }
"$AVI" run --help | grep -q -- "--threads N" || { echo "avi run --help does not name --threads"; bad=$((bad + 1)); }

# Every count, the same bits; a run on 2 threads to half the time, extended
# by a resume on 1 and on 3, ends with the uninterrupted run's data.
"$AVI" run bar "${short[@]}" -o "$work/t1.h5" --threads 1 --quiet || { echo "--threads 1 failed"; bad=$((bad + 1)); }
"$AVI" run bar "${short[@]}" --set time.end=0.002 -o "$work/r1.h5" --threads 2 --quiet \
  || { echo "first half failed"; bad=$((bad + 1)); }
cp "$work/r1.h5" "$work/r3.h5"; cp "$work/r1.h5.ckpt" "$work/r3.h5.ckpt"
"$AVI" resume "$work/r1.h5" --set time.end=0.004 --threads 1 --progress-every 100 2> "$work/r1.err" \
  || { echo "resume on 1 thread refused: $(cat "$work/r1.err")"; bad=$((bad + 1)); }
expect "resume --threads 1 of a 2-thread run" 1 "$work/r1.h5" "$work/r1.err"
"$AVI" resume "$work/r3.h5" --set time.end=0.004 --threads 3 --progress-every 100 2> "$work/r3.err" \
  || { echo "resume on 3 threads refused: $(cat "$work/r3.err")"; bad=$((bad + 1)); }
expect "resume --threads 3 of a 2-thread run" 3 "$work/r3.h5" "$work/r3.err"
"$PYTHON" - "$work/t1.h5" "$work/default.h5" "$work/opt.h5" "$work/opt_eq.h5" "$work/key.h5" "$work/r1.h5" \
  "$work/r3.h5" <<'PY' || bad=$((bad + 1))
import sys, h5py
def data(p):
    out = {}
    def visit(n, o):
        if isinstance(o, h5py.Dataset) and n.split("/")[0] in ("observables", "particles"):
            a = o[()]  # strings (objects) by value, not by address
            out[n] = (a.dtype.str, a.shape, repr(a.tolist()) if a.dtype.kind == "O" else a.tobytes())
    with h5py.File(p, "r") as f:
        f.visititems(visit)
    return out
ref = data(sys.argv[1])
bad = [p for p in sys.argv[2:] if data(p) != ref]
if bad or len(ref) < 5:
    sys.exit(f"not the 1-thread run's bits: {bad} ({len(ref)} datasets)")
print(f"same bits: {len(sys.argv) - 2} runs and resumes on 2, 3, 5 and the default threads as on 1")
PY

# Python: avi.run(threads=N) and avi.resume(threads=N); bad counts raise
# avi.Error (status 2) before anything is written.
B=$(dirname "$AVI"); py=0
if [ -e "$B/libavi.so.0" ]; then
  AVI_LIBRARY="$B/libavi.so.0" PYTHONPATH="$ROOT/python" "$PYTHON" - "$work" <<'PY' || bad=$((bad + 1))
import os, sys, h5py, avi
w = sys.argv[1]
def threads(p):
    return int(h5py.File(p, "r")["/parameters/threads"][()])
short = {"time.end": 0.002, "output.energy_every": 0.0002}
avi.run("bar", f"{w}/py.h5", short, threads=3)
got = [threads(f"{w}/py.h5")]
avi.resume(f"{w}/py.h5", {"time.end": 0.004}, threads=2)
got.append(threads(f"{w}/py.h5"))
avi.run("bar", f"{w}/py_key.h5", dict(short, **{"parallel.threads": 2}))
got.append(threads(f"{w}/py_key.h5"))
avi.run("bar", f"{w}/py_def.h5", short)
got.append(threads(f"{w}/py_def.h5"))
avi.run("bar", f"{w}/py_auto.h5", short, threads="auto")
got.append(threads(f"{w}/py_auto.h5"))
want = [3, 2, 2, 1, len(os.sched_getaffinity(0))]
if got != want:
    sys.exit(f"python: /parameters/threads {got}, expected {want}")
for v in (0, -3, 2.5, "many", True, 1025):
    try:
        avi.run("bar", f"{w}/py_bad.h5", short, threads=v)
        sys.exit(f"python: threads={v!r} accepted")
    except avi.Error as e:
        if e.status != 2 or "threads=" not in str(e) or os.path.exists(f"{w}/py_bad.h5"):
            sys.exit(f"python: threads={v!r}: status {e.status}: {e}")
print(f"python: threads= gives {got}; bad counts raise avi.Error (status 2)")
PY
else echo "python: no $B/libavi.so.0 (make shared): avi.run(threads=) not checked"; py=77; fi

echo "threads option: $bad problems"
[ "$bad" -eq 0 ] || exit 1
exit $py
