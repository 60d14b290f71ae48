#!/usr/bin/env bash
# make install / uninstall into scratch prefixes (PREFIX, and DESTDIR
# staging): a C program and a C++ program built with `pkg-config --cflags
# --libs avi` alone run a two-particle spring through the public API (the C
# one also linked statically with `pkg-config --static`); examples/hello.c
# builds with the README's command line and runs with no LD_LIBRARY_PATH; the installed
# Python module runs scenes in process through libavi.so, its observables
# are bitwise those of its file and of `avi run`; its errors raise avi.Error
# with the library's message; uninstall leaves no file behind.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
fail() { echo "install: $*"; bad=$((bad + 1)); }
# The build tree of the avi under test; a plain make, not the caller's -j.
B=$(dirname "$AVI")
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$ROOT" B="$B" "$@" > "$work/make.log" 2>&1 \
  || { tail -n 20 "$work/make.log"; return 1; }; }
files() { find "$1" \( -type f -o -type l \) 2>/dev/null | sort; }

# DESTDIR: everything under the staging root, avi.pc naming PREFIX.
mk install DESTDIR="$work/stage" PREFIX=/opt/avi || fail "make install DESTDIR failed"
[ -x "$work/stage/opt/avi/bin/avi" ] || fail "DESTDIR: no bin/avi"
[ "$(readlink "$work/stage/opt/avi/lib/libavi.so")" = libavi.so.0 ] || fail "DESTDIR: libavi.so -> $(readlink "$work/stage/opt/avi/lib/libavi.so")"
grep -qx 'prefix=/opt/avi' "$work/stage/opt/avi/lib/pkgconfig/avi.pc" || fail "DESTDIR: avi.pc: $(head -1 "$work/stage/opt/avi/lib/pkgconfig/avi.pc")"
mk uninstall DESTDIR="$work/stage" PREFIX=/opt/avi || fail "make uninstall DESTDIR failed"
left=$(files "$work/stage"); [ -z "$left" ] || fail "DESTDIR: uninstall left: $left"

prefix="$work/prefix"
mk install PREFIX="$prefix" || { fail "make install failed"; exit 1; }
for f in bin/avi lib/libavi.a lib/libavi.so.0.1.0 include/avi/avi.h include/avi/run.h share/man/man1/avi.1 \
         share/avi/scenes/bar.yaml share/avi/tools/plot_energy.py lib/python3/dist-packages/avi/__init__.py; do
  [ -e "$prefix/$f" ] || fail "missing $f"
done
readelf -d "$prefix/lib/libavi.so.0.1.0" | grep -q 'SONAME.*\[libavi.so.0\]' || fail "soname is not libavi.so.0"
if readelf -d "$prefix/lib/libavi.so.0.1.0" | grep -q jemalloc; then fail "libavi.so links jemalloc"; fi
others=$(nm -D --defined-only "$prefix/lib/libavi.so.0.1.0" | awk '$2 ~ /^[TDBR]$/ && $3 !~ /^avi_/ {print $3}')
[ -z "$others" ] || fail "libavi.so exports more than avi_*: $(echo $others | head -c 200)"
if command -v groff > /dev/null; then
  groff -man -Tutf8 -ww -z "$prefix/share/man/man1/avi.1" 2> "$work/man.err"
  [ -s "$work/man.err" ] && fail "man page: $(head -3 "$work/man.err")"
fi

# A two-particle spring: the C program through the model and engine, the
# C++ program through a scene and a run (as avi run does it).
cat > "$work/spring.c" <<'C'
#include <math.h>
#include <stdio.h>
#include <avi/avi.h>
int main(void)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "pair");
    double x0[3] = {0, 0, 0}, x1[3] = {1.5, 0, 0}, v[3] = {0, 0, 0};
    int64_t a = avi_model_add_vertex(m, b, x0), c = avi_model_add_vertex(m, b, x1);
    avi_time_step ts = avi_default_time_step();
    if (a < 0 || c < 0 || avi_model_set_state(m, (uint32_t)c, x1, v) || avi_model_add_mass(m, (uint32_t)a, 1.0) ||
        avi_model_add_mass(m, (uint32_t)c, 1.0) || avi_model_add_spring(m, (uint32_t)a, (uint32_t)c, 100.0, 1.0) ||
        avi_model_finalize(m, &ts)) {
        fprintf(stderr, "model: %s\n", avi_model_error(m)->message);
        return 1;
    }
    avi_error err;
    avi_engine *e = avi_engine_create(m, &err);
    if (!e) return fprintf(stderr, "engine: %s\n", err.message), 1;
    avi_observation o0, o1;
    avi_engine_observe(e, 0.0, &o0);
    if (avi_engine_run(e, 1.0)) return fprintf(stderr, "run: %s\n", avi_engine_error(e)->message), 1;
    avi_engine_observe(e, 1.0, &o1);
    printf("events %llu energy %.6g -> %.6g momentum %.3g\n", (unsigned long long)o1.events_total, o0.total,
           o1.total, o1.linear_momentum[0]);
    int ok = o1.events_total > 10 && fabs(o1.total - o0.total) < 0.1 * o0.total &&
             fabs(o1.linear_momentum[0]) < 1e-9;
    avi_engine_destroy(e);
    avi_model_destroy(m);
    return ok ? 0 : 1;
}
C
cat > "$work/spring.cc" <<'CXX'
#include <cstdio>
#include <cstring>
#include <avi/avi.h>
int main()
{
    const char *text = "time: {end: 1.0}\n"
                       "bodies:\n"
                       "  - name: pair\n"
                       "    particles: [{x: [0, 0, 0], mass: 1}, {x: [1.5, 0, 0], mass: 1}]\n"
                       "    springs: [{a: 0, b: 1, stiffness: 100, rest: 1}]\n";
    avi_scene scene;
    avi_error err;
    if (avi_scene_load_string(text, std::strlen(text), "spring.yaml", nullptr, nullptr, 0, &scene, &err))
        return std::fprintf(stderr, "scene: %s\n", err.message), 1;
    avi_run *run = avi_run_open(&scene, "spring.h5", nullptr, &err);
    if (!run) return std::fprintf(stderr, "open: %s\n", err.message), 1;
    int rc = avi_run_evolve(run, avi_run_stats_of(run).end_time, &err);
    avi_run_stats st = avi_run_stats_of(run);
    if (avi_run_close(run, &err) || rc) return std::fprintf(stderr, "run: %s\n", err.message), 1;
    std::printf("%s: %llu events to t = %g\n", st.scene_name, (unsigned long long)st.events, st.time);
    avi_scene_free(&scene);
    return st.events > 10 && st.time == 1.0 ? 0 : 1;
}
CXX
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cd "$work"
# shellcheck disable=SC2046  # pkg-config's flags are words
gcc -std=c11 -Wall -Werror -o spring_c spring.c $(pkg-config --cflags --libs avi) 2> cc.err || fail "C build: $(cat cc.err)"
# shellcheck disable=SC2046
g++ -std=c++11 -Wall -Werror -o spring_cxx spring.cc $(pkg-config --cflags --libs avi) 2> cxx.err || fail "C++ build: $(cat cxx.err)"
static_libs=$(pkg-config --static --libs avi | sed 's/-lavi\b/-l:libavi.a/')
# shellcheck disable=SC2086
gcc -std=c11 -o spring_static spring.c $(pkg-config --cflags avi) $static_libs 2> st.err || fail "static build: $(cat st.err)"
readelf -d spring_c | grep -q 'NEEDED.*\[libavi.so.0\]' || fail "spring_c does not load libavi.so.0"
if readelf -d spring_static | grep -q libavi; then fail "spring_static loads libavi"; fi
for p in spring_c spring_cxx spring_static; do
  [ -x "$p" ] || continue
  LD_LIBRARY_PATH="$prefix/lib" "./$p" > "$p.out" 2>&1 && echo "$p: $(cat "$p.out")" || fail "$p: $(cat "$p.out")"
done
[ -s spring.h5 ] && "$prefix/bin/avi" info spring.h5 | grep -q "completion: *complete" || fail "spring.h5 from C++ not complete"

# examples/hello.c, built with the README's command line, runs with no
# LD_LIBRARY_PATH (the rpath); built without the rpath it cannot start.
readme="$ROOT"/README.md
cp "$ROOT/examples/hello.c" hello.c
cc_line=$(awk '/^## C$/ {c = 1} c && /^cc -o hello / {print; exit}' "$readme" | sed 's/ *#.*//')
if [ -z "$cc_line" ]; then
  fail "README: no 'cc -o hello' line under '## C'"
else
  # shellcheck disable=SC2046
  gcc -std=c11 -Wall -Wextra -Werror -c -o hello.o hello.c $(pkg-config --cflags avi) 2> hello.err \
    || fail "examples/hello.c has warnings: $(cat hello.err)"
  sh -c "$cc_line" 2> hello.err || fail "examples/hello.c does not build with '$cc_line': $(cat hello.err)"
  if [ -x hello ]; then
    if env -u LD_LIBRARY_PATH ./hello > hello.out 2>&1 && grep -Eq '^bar: [0-9]+ events to t = 0.01 s$' hello.out \
       && "$prefix/bin/avi" info hello.h5 | grep -q "completion: *complete"; then
      echo "examples/hello.c: $(cat hello.out), with no LD_LIBRARY_PATH"
    else
      fail "examples/hello.c: $(cat hello.out)"
    fi
    # shellcheck disable=SC2046
    gcc -o hello_norpath hello.c $(pkg-config --cflags --libs avi)
    if ! ldconfig -p 2>/dev/null | grep -q 'libavi\.so\.0 ' && env -u LD_LIBRARY_PATH ./hello_norpath > /dev/null 2>&1; then
      fail "hello.c ran without its rpath: the test of the rpath tests nothing"
    fi
  fi
fi

# Python, in process: a built-in scene, equal bitwise to its file and to avi run.
args=(--set time.end=0.1 --set output.frame_every=0.05 --set output.energy_every=0.01)
"$AVI" run bar "${args[@]}" -o "$work/ref.h5" --quiet || fail "avi run bar failed"
PYTHONPATH="$prefix/lib/python3/dist-packages" "$PYTHON" - "$work" "$prefix" "$AVI" <<'PY' || bad=$((bad + 1))
import os, sys, h5py, numpy as np
import avi
work, prefix = sys.argv[1], sys.argv[2]
bad = []
r = avi.run("bar", os.path.join(work, "py.h5"),
            overrides={"time.end": 0.1, "output.frame_every": 0.05, "output.energy_every": 0.01})
maps = open("/proc/self/maps").read()
if os.path.join(prefix, "lib", "libavi.so.0.1.0") not in maps:
    bad.append("the installed libavi.so is not loaded in this process")
obs = r.observables
with h5py.File(r.path, "r") as f, h5py.File(os.path.join(work, "ref.h5"), "r") as ref:
    names = sorted(f["observables"])
    if sorted(k for k in obs if k not in ("time", "synchronized_time")) != names or len(names) < 10:
        bad.append(f"observables {sorted(obs)} vs file {names}")
    for n in names:
        for other in (f, ref):
            v = other["observables"][n]["value"][()]
            if obs[n].dtype != v.dtype or obs[n].tobytes() != v.tobytes():
                bad.append(f"{n} differs from {other.filename}")
    if obs["time"].tobytes() != ref["observables/elastic_energy/time"][()].tobytes() or \
            obs["synchronized_time"].tobytes() != ref["observables/total_energy/time"][()].tobytes():
        bad.append("time differs from avi run")
    t, x = r.frames("bar")
    if x.tobytes() != ref["particles/bar/position/value"][()].tobytes() or list(t) != [0.0, 0.05, 0.1]:
        bad.append(f"frames differ from avi run: t = {t}")
# A scene as a dict: two particles and a spring.
pair = {"time": {"end": 1.0}, "bodies": [{"name": "pair",
        "particles": [{"x": [0, 0, 0], "mass": 1.0}, {"x": [1.5, 0, 0], "mass": 1.0}],
        "springs": [{"a": 0, "b": 1, "stiffness": 100.0, "rest": 1.0}]}]}
d = avi.run(pair, os.path.join(work, "pair.h5"))
if d.events < 10 or d.observables["time"][-1] != 1.0 or d.frames("pair")[1].shape[1:] != (2, 3):
    bad.append(f"dict scene: {d}")
# Errors carry the library's message and status; no output is left.
for scene, want in ((dict(pair, time={"end": -1}), "time.end: must be > 0"),
                    ("no-such-scene", "no-such-scene: no such built-in scene or file")):
    try:
        avi.run(scene, os.path.join(work, "err.h5"))
        bad.append(f"{scene!r}: no error")
    except avi.Error as e:
        if e.status != 2 or want not in str(e):
            bad.append(f"error: status {e.status}, message {e}")
if os.path.exists(os.path.join(work, "err.h5")):
    bad.append("a failed load left err.h5")
try:
    avi.run("bar", os.path.join(work, "nodir", "x.h5"), overrides=["time.end=0.01"])
    bad.append("unwritable output: no error")
except avi.Error as e:
    if e.status != 2 or "nodir" not in str(e):
        bad.append(f"unwritable output: status {e.status}, message {e}")
# Ctrl-C stops a run with a checkpoint, as SIGINT stops avi run; avi.resume
# continues it to a file bitwise that of an uninterrupted run.
import signal, subprocess, threading
# 100 s of bar: far past the Ctrl-C at 0.5 s, and a lost Ctrl-C fails in a
# minute (at 1000 s it ran 14 min, twice). Python ignores SIGINT when
# started with it ignored (a background job of a script): restore Ctrl-C.
signal.signal(signal.SIGINT, signal.default_int_handler)
ov = {"time.end": 100.0, "output.energy_every": 0.05, "output.frame_every": 1.0}
ki = os.path.join(work, "ki.h5")
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    avi.run("bar", ki, overrides=ov)
    bad.append("Ctrl-C did not stop the run")
except KeyboardInterrupt as e:
    if "avi.resume" not in str(e):
        bad.append(f"KeyboardInterrupt: {e}")
with h5py.File(ki, "r") as f:
    completion = f["parameters/completion"][()].decode()
    t_last = f["observables/total_energy/time"][-1]
if completion != "interrupted":
    bad.append(f"after Ctrl-C: completion {completion}")
end = float(round(t_last + 0.2, 2))
avi.resume(ki, overrides={"time.end": end})
subprocess.run([sys.argv[3], "run", "bar", "-o", os.path.join(work, "ki_ref.h5"), "--quiet",
                "--set", f"time.end={end!r}", "--set", "output.energy_every=0.05", "--set", "output.frame_every=1.0"],
               check=True)
with h5py.File(ki, "r") as a, h5py.File(os.path.join(work, "ki_ref.h5"), "r") as b:
    for n in ["observables/total_energy/value", "observables/linear_momentum/value", "particles/bar/position/value"]:
        if a[n][()].tobytes() != b[n][()].tobytes():
            bad.append(f"resumed {n} differs from an uninterrupted run to t = {end}")
for b in bad:
    print("python:", b)
print(f"python: {len(names)} observables and frames bitwise equal to avi run's; Ctrl-C at t = {t_last} s, "
      f"resumed to {end} s bitwise" if not bad else "")
sys.exit(1 if bad else 0)
PY

mk uninstall PREFIX="$prefix" || fail "make uninstall failed"
left=$(files "$prefix"); [ -z "$left" ] || fail "uninstall left: $left"
[ -d "$prefix/include/avi" ] && fail "uninstall left include/avi"

if [ "$bad" -eq 0 ]; then echo "install: PREFIX and DESTDIR installs, C, C++, static C and Python clients, uninstall: all pass"; fi
[ "$bad" -eq 0 ]
