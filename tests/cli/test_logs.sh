#!/usr/bin/env bash
# Batch logs, the terminal progress line, provenance in /parameters and
# `avi COMMAND --help` (issue 22).
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
fail() { echo "$1"; bad=$((bad + 1)); }

# stderr to a file: a banner, then a progress line per 0.1 s (the run takes
# about 2 s: 2.5e-4 of sphere-plate, short for make test's time).
"$AVI" run sphere-plate --set time.end=2.5e-4 -o "$work/a.h5" --progress-every 0.1 2>"$work/log"; rc=$?
[ "$rc" -eq 0 ] || fail "logged run: exit $rc: $(cat "$work/log")"
for want in "scene sphere-plate" "integrator avi" "1459 vertices" "sphere (642)" "membrane" "midedge" "rows" "frames" "about"; do
  grep -q "$want" "$work/log" || fail "banner lacks '$want'"
done
lines=$(grep -c "%.*events/s" "$work/log")
[ "$lines" -ge 2 ] || fail "logged run: $lines progress lines, expected at least 2: $(cat "$work/log")"
grep -q $'\r' "$work/log" && fail "logged run: carriage returns in a log file"
# The environment variable does the same; a bad value is refused.
AVI_PROGRESS_EVERY=0.5 "$AVI" run spring-chain --set time.end=0.5 -o "$work/e.h5" 2>"$work/log"; rc=$?
[ "$rc" -eq 0 ] && grep -q "scene spring-chain" "$work/log" || fail "AVI_PROGRESS_EVERY: exit $rc: $(cat "$work/log")"
AVI_PROGRESS_EVERY=soon "$AVI" run spring-chain -o "$work/e.h5" 2>"$work/log"; rc=$?
[ "$rc" -eq 2 ] && grep -q "AVI_PROGRESS_EVERY" "$work/log" || fail "bad AVI_PROGRESS_EVERY: exit $rc: $(cat "$work/log")"

# --quiet: nothing at all on success.
"$AVI" run spring-chain --set time.end=0.2 -o "$work/q.h5" --quiet --progress-every 0.01 2>"$work/log"; rc=$?
[ "$rc" -eq 0 ] && [ ! -s "$work/log" ] || fail "--quiet: exit $rc, printed: $(cat "$work/log")"

# A 40-column terminal: the progress line is redrawn and never wraps.
"$PYTHON" - "$AVI" "$work/t.h5" >"$work/tty" <<'PY' || fail "terminal run: $(cat "$work/tty")"
import fcntl, os, pty, re, struct, sys, termios
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 40, 0, 0))
    os.execv(sys.argv[1], [sys.argv[1], "run", "sphere-plate", "--set", "time.end=2.5e-4", "-o", sys.argv[2]])
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
status = os.waitpid(pid, 0)[1]
text = re.sub(r"\x1b\[K", "", out.decode())
pieces = [p for p in re.split(r"[\r\n]+", text) if p.strip()]
progress = [p for p in pieces if "%" in p]
long = [p for p in progress if len(p) > 40]
print(f"{len(progress)} progress lines, longest {max(map(len, progress), default=0)} columns")
sys.exit(1 if status or not progress or long else 0)
PY

# Provenance.
"$PYTHON" - "$work/a.h5" <<'PY' || fail "provenance: see above"
import datetime, sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    p = {k: f["parameters"][k][()].decode() for k in ("command_line", "started", "host", "build", "resumed")}
ok = "run sphere-plate --set time.end=2.5e-4" in p["command_line"]
ok &= datetime.datetime.strptime(p["started"], "%Y-%m-%dT%H:%M:%SZ") is not None
ok &= p["host"] != "" and ("gcc" in p["build"] or "clang" in p["build"]) and "flags" in p["build"]
ok &= p["resumed"] == ""
if not ok:
    print(p)
sys.exit(0 if ok else 1)
PY
"$PYTHON" "$ROOT/tools/validate_h5.py" "$work/a.h5" || fail "validate_h5.py refuses the file"
# A word with a space or a quote is shell-quoted.
"$AVI" run spring-chain --set "time.end=0.1" --set "description=it's" -o "$work/s q.h5" --quiet 2>/dev/null
"$PYTHON" -c 'import h5py,sys; print(h5py.File(sys.argv[1],"r")["parameters/command_line"][()].decode())' \
  "$work/s q.h5" 2>/dev/null | grep -qF "'$work/s q.h5'" || fail "command_line: a path with a space is not quoted"

# Resume keeps the first run's provenance and adds a line.
"$AVI" resume "$work/q.h5" --set time.end=0.3 --quiet 2>"$work/log" || fail "resume: $(cat "$work/log")"
"$PYTHON" - "$work/q.h5" <<'PY' || fail "resume provenance: see above"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    cl = f["parameters/command_line"][()].decode(); res = f["parameters/resumed"][()].decode()
ok = " run spring-chain " in cl and "resume" in res and "time.end=0.3" in res and "\n" not in res
print("" if ok else (cl, res))
sys.exit(0 if ok else 1)
PY

# plot_energy.py: "change" where momentum is not conserved (spring-chain:
# a pinned end and gravity, 0.3 s), "error" where it is; time in ms or us; the
# scene and integrator in the title. Labels read from the figure as saved.
"$AVI" run sphere-plate --set time.end=2e-4 -o "$work/c.h5" --quiet || fail "sphere-plate run failed"
labels() {
  "$PYTHON" - "$ROOT/tools/plot_energy.py" "$1" "$work/plot.png" <<'PY'
import runpy, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.figure as mf
def savefig(self, *a, **k):
    for ax in self.axes:
        print(ax.get_title(), "|", ax.get_ylabel(), "|", ax.get_xlabel())
mf.Figure.savefig = savefig
sys.argv = [sys.argv[1], sys.argv[2], "-o", sys.argv[3]]
runpy.run_path(sys.argv[0], run_name="__main__")
PY
}
labels "$work/q.h5" >"$work/lab" 2>&1
grep -q "momentum change" "$work/lab" && ! grep -q "momentum error" "$work/lab" && grep -q "time \[ms\]" "$work/lab" &&
  grep -q "spring-chain (avi)" "$work/lab" || fail "plot_energy on spring-chain: $(cat "$work/lab")"
labels "$work/c.h5" >"$work/lab" 2>&1
grep -q "momentum error" "$work/lab" && grep -q "time \[us\]" "$work/lab" && grep -q "contact energy (log" "$work/lab" &&
  grep -q "sphere-plate (avi)" "$work/lab" || fail "plot_energy on sphere-plate: $(cat "$work/lab")"

# plot_energy.py with several files: one figure of total energy and its
# deviation (absolute here: spring-chain starts at E0 = 0), a line per run labelled by integrator and file, a table on
# stdout; a missing series names itself (exit 2).
"$AVI" run spring-chain --set time.end=0.3 --set integrator.type=sync-explicit -o "$work/qs.h5" --quiet ||
  fail "spring-chain sync-explicit run failed"
"$PYTHON" - "$ROOT/tools/plot_energy.py" "$work/q.h5" "$work/qs.h5" "$work/cmp.png" >"$work/lab" 2>&1 <<'PY' ||
import runpy, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.figure as mf
def savefig(self, *a, **k):
    for ax in self.axes:
        print(ax.get_title(), "|", ax.get_ylabel(), "|", ax.get_xlabel(), "|", ax.get_legend_handles_labels()[1])
mf.Figure.savefig = savefig
script, a, b, out = sys.argv[1:5]
sys.argv = [script, a, b, "-o", out]
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit as e:
    sys.exit(e.code)
PY
  fail "plot_energy A B: $(cat "$work/lab")"
grep -q "spring-chain: total energy | energy \[J\]" "$work/lab" && grep -q "^relative deviation of the total energy | E - E0 \[J\] (E0 = 0) | time \[ms\] | \['avi: q.h5', 'sync-explicit: qs.h5'\]" "$work/lab" &&
  grep -q "^sync-explicit  *qs.h5  *301 " "$work/lab" || fail "plot_energy A B: $(cat "$work/lab")"
"$PYTHON" "$ROOT/tools/plot_energy.py" "$work/q.h5" "$work/nope.h5" -o "$work/cmp.png" >"$work/lab" 2>&1
[ $? -eq 2 ] && grep -q "nope.h5: cannot open" "$work/lab" || fail "plot_energy A missing: $(cat "$work/lab")"

# plot_energy.py under an interpreter without h5py (`python3 -S`: no
# site-packages), as the `python3` first on PATH may be (the run's last lines
# name it): exit 2 and what to do, not a traceback.
if "$PYTHON" -S -c 'import h5py' 2>/dev/null; then
  echo "logs: python3 -S still imports h5py: not checking plot_energy.py without it"
else
  "$PYTHON" -S "$ROOT/tools/plot_energy.py" "$work/q.h5" -o "$work/noh5py.png" >"$work/lab" 2>&1; rc=$?
  [ "$rc" -eq 2 ] && grep -q "no module 'h5py'.*/usr/bin/python3.*pip install h5py" "$work/lab" &&
    ! grep -q Traceback "$work/lab" || fail "plot_energy.py without h5py: exit $rc: $(cat "$work/lab")"
fi

# COMMAND --help: its usage, exit 0.
for c in run resume info scenes; do
  "$AVI" $c --help >"$work/help" 2>&1; rc=$?
  [ "$rc" -eq 0 ] && grep -q "^usage: avi $c" "$work/help" || fail "avi $c --help: exit $rc: $(head -2 "$work/help")"
done
echo "logs: banner, progress, terminal width, provenance, help checked, $bad problems"
[ "$bad" -eq 0 ]
