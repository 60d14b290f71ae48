#!/usr/bin/env bash
# The Python module (python/avi) as a user meets it, from a copy of the
# source tree's layout: it finds build/libavi.so.0 there with no variable
# set, and says how to get one when there is none; it refuses, before the
# library sees them, paths, keys and values with a NUL byte (a C string
# would end there: "victim\0.h5" would write "victim"), override keys that
# are not dotted keys and values that hide the rest behind a comment; it
# reads a SIGKILLed run's file (SWMR); under an interpreter without h5py
# (python3 -S: no site-packages, as a bare venv) reading observables raises
# avi.Error with the fix.
set -u
work=$(mktemp -d); pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT
B=$(dirname "$AVI")
[ -e "$B/libavi.so.0" ] || { echo "python: no $B/libavi.so.0 (make shared B=$B)"; exit 77; }
# A source tree's layout: the module copied (its own path is what it looks
# from), the headers and the build tree under test linked.
mkdir -p "$work/tree/python/avi" "$work/bare/python/avi"
cp "$ROOT/python/avi/__init__.py" "$work/tree/python/avi/"
cp "$ROOT/python/avi/__init__.py" "$work/bare/python/avi/"
ln -s "$ROOT/include" "$work/tree/include"
ln -s "$ROOT/include" "$work/bare/include"
ln -s "$(cd "$B" && pwd)" "$work/tree/build"
bad=0
export -n AVI_LIBRARY LD_LIBRARY_PATH
unset AVI_LIBRARY LD_LIBRARY_PATH

# The library from the source tree, no variable set; none found: avi.Error.
PYTHONPATH="$work/tree/python" "$PYTHON" - "$work/tree" <<'PY' || bad=$((bad + 1))
import os, sys
import avi
names = avi.scenes()
so = os.path.realpath(os.path.join(sys.argv[1], "build", "libavi.so.0"))
if "bar" not in names or so not in open("/proc/self/maps").read():
    sys.exit(f"python: source tree: scenes {names}, {so} not loaded")
print(f"python: the source tree's {so} found with no variable set")
PY
if ldconfig -p 2>/dev/null | grep -q 'libavi\.so\.0 '; then
  echo "python: a system libavi.so.0 is installed: not checking the message for no library"
else
  PYTHONPATH="$work/bare/python" "$PYTHON" - <<'PY' || bad=$((bad + 1))
import sys, avi
try:
    avi.scenes()
    sys.exit("python: no library anywhere: no error")
except avi.Error as e:
    if e.status != 2 or "make shared" not in str(e) or "AVI_LIBRARY" not in str(e):
        sys.exit(f"python: no library: status {e.status}: {e}")
    print(f"python: no library: {e}")
PY
fi
AVI_LIBRARY="$work/nowhere/libavi.so.0" PYTHONPATH="$work/tree/python" "$PYTHON" - <<'PY' || bad=$((bad + 1))
import sys, avi
try:
    avi.scenes()
    sys.exit("python: AVI_LIBRARY to a missing file: no error")
except avi.Error as e:
    if e.status != 2 or "AVI_LIBRARY=" not in str(e) or "nowhere" not in str(e):
        sys.exit(f"python: AVI_LIBRARY to a missing file: status {e.status}: {e}")
PY

# NUL bytes, keys, values; a SIGKILLed run's file.
PYTHONPATH="$work/tree/python" "$PYTHON" - "$work" "$AVI" <<'PY' || bad=$((bad + 1))
import os, signal, subprocess, sys, time
import numpy as np
import h5py
import avi
work, avi_bin = sys.argv[1], sys.argv[2]
os.chdir(work)
bad = []
pair = {"time": {"end": 1.0}, "output": {"energy_every": 0.25}, "bodies": [{"name": "pair",
        "particles": [{"x": [0, 0, 0], "mass": 1.0}, {"x": [1.5, 0, 0], "mass": 1.0}],
        "springs": [{"a": 0, "b": 1, "stiffness": 100.0, "rest": 1.0}]}]}
with open("victim", "w") as f:
    f.write("keep me\n")
with open("s.yaml", "w") as f:
    f.write("time: {end: 1.0}\nbodies:\n  - name: pair\n"
            "    particles: [{x: [0, 0, 0], mass: 1}, {x: [1.5, 0, 0], mass: 1}]\n"
            "    springs: [{a: 0, b: 1, stiffness: 100, rest: 1}]\n")
before = sorted(os.listdir("."))


def refused(what, call, want):
    try:
        call()
        bad.append(f"{what}: no error")
    except avi.Error as e:
        if e.status != 2 or want not in str(e):
            bad.append(f"{what}: status {e.status}, message {e}")
    if open("victim", "rb").read() != b"keep me\n":
        bad.append(f"{what}: victim was written")
        with open("victim", "w") as f:
            f.write("keep me\n")
    left = set(os.listdir(".")) - set(before)
    if left:
        bad.append(f"{what}: left {sorted(left)}")
        for f in left:
            os.remove(f)


nul = "a path with a NUL byte"
refused("output victim\\0.h5", lambda: avi.run(pair, "victim\0.h5"), nul)
refused("output b'victim\\0.h5'", lambda: avi.run(pair, b"victim\0.h5"), nul)
refused("scene s.yaml\\0junk", lambda: avi.run("s.yaml\0junk", "out.h5"), nul)
refused("resume victim\\0.h5", lambda: avi.resume("victim\0.h5"), nul)
refused("a scene dict's string", lambda: avi.run(dict(pair, name="victim\0x"), "out.h5"), "NUL byte")
refused("a scene dict's key", lambda: avi.run(dict(pair, **{"time\0": 1}), "out.h5"), "NUL byte")
refused("an override value", lambda: avi.run(pair, "out.h5", overrides={"name": "x\0y"}), "NUL byte")
refused("an override string", lambda: avi.run(pair, "out.h5", overrides=["time.end=1\0"]), "NUL byte")
# A YAML escape for NUL in a string override: the library refuses it.
refused("a YAML \\0 escape in an override string", lambda: avi.run(pair, "out.h5", overrides=['name="x\\0y"']),
        "a NUL byte in a string")
refused("an override key", lambda: avi.run(pair, "out.h5", overrides={"time.end\0": 1}), "'time.end\\x00'")
# A key that smuggles an assignment and a comment: "time.end=1e-4 #=5".
refused("key 'time.end=1e-4 #'", lambda: avi.run(pair, "out.h5", overrides={"time.end=1e-4 #": 5}),
        "override key 'time.end=1e-4 #': not a scene key")
refused("key 'time end'", lambda: avi.run(pair, "out.h5", overrides={"time end": 5}), "'time end'")
refused("key ''", lambda: avi.run(pair, "out.h5", overrides={"": 5}), "override key ''")
refused("key 'time..end'", lambda: avi.run(pair, "out.h5", overrides=["time..end=5"]), "'time..end'")
refused("value '1e-4 #'", lambda: avi.run(pair, "out.h5", overrides=["time.end=1e-4 #"]), "a comment")
refused("value '0.5 # x=1'", lambda: avi.run(pair, "out.h5", overrides="time.end=0.5 # x=1"), "a comment")
refused("value with a line break", lambda: avi.run(pair, "out.h5", overrides=["time.end=0.5\nname: x"]),
        "line break")
refused("no '='", lambda: avi.run(pair, "out.h5", overrides=["time.end"]), "expected KEY=VALUE")
# What is allowed: '#' inside quotes or a word, spaces, both forms.
for ov, want in ((["name='a #1'", "x.y=[1, '#', \"#\"]"], ["name='a #1'", "x.y=[1, '#', \"#\"]"]),
                 ({"name": "b #2", "bodies.0.velocity": [0, 0, 1]}, ['name="b #2"', "bodies.0.velocity=[0, 0, 1]"]),
                 (['name="c \\" #3"', "name='it''s #4'", "name=d#5", "time.end= 0.25 "],
                  ['name="c \\" #3"', "name='it''s #4'", "name=d#5", "time.end= 0.25 "])):
    try:
        got = avi._override_list(ov)
        if got != want:
            bad.append(f"overrides {ov}: {got}")
    except avi.Error as e:
        bad.append(f"overrides {ov}: {e}")
r = avi.run(pair, "ok.h5", overrides=["time.end= 0.5 ", "output.energy_every=0.125"])
if list(r.observables["time"]) != [0.125 * i for i in range(5)]:
    bad.append(f"list overrides: rows at {r.observables['time']}")
# A file this process holds open without SWMR (which then refuses SWMR)
# is read all the same.
with h5py.File("ok.h5", "r"):
    if len(avi.Result("ok.h5").frames("pair")[0]) < 2:
        bad.append("ok.h5 open in this process: no frames")

# A killed run's file: still marked as being written, it opens only in
# SWMR mode; avi.Result reads it.
killed = os.path.join(work, "killed.h5")
p = subprocess.Popen([avi_bin, "run", "bar", "-o", killed, "--quiet", "--set", "time.end=1000",
                      "--set", "output.energy_every=0.01", "--set", "output.frame_every=0.05"])
rows, deadline = 0, time.time() + 60
while time.time() < deadline and rows < 20:
    time.sleep(0.2)
    try:
        with h5py.File(killed, "r", swmr=True) as f:
            rows = f["observables/elastic_energy/value"].shape[0]
    except (OSError, KeyError):
        pass
p.send_signal(signal.SIGKILL)
p.wait()
try:
    h5py.File(killed, "r").close()
    bad.append("the killed run's file opens without SWMR: this case tests nothing")
except OSError:
    pass
try:
    r = avi.Result(killed)
    obs = r.observables
    t, x = r.frames("bar")
    n = len(obs["time"])
    ts = obs["synchronized_time"]
    if n < 20 or len(obs["elastic_energy"]) != n or not (obs["time"][1:] > obs["time"][:-1]).all() or len(t) < 2:
        bad.append(f"killed run: {n} rows, {len(t)} frames")
    elif len(obs["total_energy"]) != len(ts) or len(ts) < n // 2 or not np.isin(ts, obs["time"]).all():
        bad.append(f"killed run: {len(ts)} synchronized rows of {n}, not a subset of the rows at every 2 (bar)")
    else:
        print(f"python: a SIGKILLed run's file: {n} rows to t = {obs['time'][-1]}, {len(t)} frames, read")
except (avi.Error, OSError, TypeError) as e:
    bad.append(f"killed run: {type(e).__name__}: {e}")
for b in bad:
    print("python:", b)
sys.exit(1 if bad else 0)
PY

# No h5py in the interpreter: the run works, reading its result says how
# to get h5py.
if "$PYTHON" -S -c 'import h5py' 2> /dev/null; then
  echo "python: python3 -S still imports h5py: not checking a missing h5py"
else
  PYTHONPATH="$work/tree/python" "$PYTHON" -S - "$work/nohpy.h5" <<'PY' || bad=$((bad + 1))
import sys, avi
pair = {"time": {"end": 1.0}, "bodies": [{"name": "pair",
        "particles": [{"x": [0, 0, 0], "mass": 1.0}, {"x": [1.5, 0, 0], "mass": 1.0}],
        "springs": [{"a": 0, "b": 1, "stiffness": 100.0, "rest": 1.0}]}]}
r = avi.run(pair, sys.argv[1])
bad = []
for what, read in (("observables", lambda: r.observables), ("frames", lambda: r.frames("pair"))):
    try:
        read()
        bad.append(f"no h5py: {what}: no error")
    except avi.Error as e:
        if "pip install h5py" not in str(e) or "python3-h5py" not in str(e):
            bad.append(f"no h5py: {what}: {e}")
    except Exception as e:
        bad.append(f"no h5py: {what}: {type(e).__name__}: {e}")
for b in bad:
    print("python:", b)
sys.exit(1 if bad else 0)
PY
fi
[ "$bad" -eq 0 ] && echo "python: library lookup, NUL bytes, keys and values, a killed run's file, no h5py: all pass"
[ "$bad" -eq 0 ]
