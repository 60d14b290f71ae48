#!/usr/bin/env bash
# Every run answers SIGTERM / SIGINT (and Ctrl-C in Python) within a second,
# also where time crawls and no potential event comes due: a contact window
# of 4e-14 s (the manager's loop), rows every 2e-12 s (the observers' loop).
# Each case starts in the background, gets the signal after about 1.5 s and
# must exit 130 within 2 s, having drawn progress lines, with no OUT.lock
# left, a file `avi info` reads as interrupted, and a checkpoint `avi resume`
# continues from (it is stopped the same way again, further on).
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0; n=0

# Waits up to 2 s for pid $1 to end; its exit status in $rc, or 999 if it
# still ran (then it is killed).
wait_end() {
  local pid=$1 i
  for i in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rc=999
  else wait "$pid"; rc=$?; fi
}

# The time the interruption message names ("interrupted by signal N at t = T s").
stop_time() { sed -n 's/.*interrupted by signal [0-9]* at t = \([^ ]*\) s.*/\1/p' "$1" | tail -1; }

# name, signal, avi arguments...
stops() {
  local name=$1 sig=$2; shift 2
  local out=$work/$name.h5 log=$work/$name.log
  n=$((n + 1))
  "$AVI" run "$@" -o "$out" --progress-every 0.2 2>"$log" &
  local pid=$!
  sleep 1.5
  kill -"$sig" "$pid"
  wait_end "$pid"
  if [ "$rc" -ne 130 ]; then
    echo "$name: SIG$sig: exit $rc (999: still running 2 s after it), expected 130; $(tail -2 "$log")"
    bad=$((bad + 1)); return
  fi
  local lines; lines=$(grep -c '^avi: [0-9.]*%' "$log")
  [ "$lines" -ge 3 ] || { echo "$name: $lines progress lines in 1.5 s (every 0.2 s asked)"; bad=$((bad + 1)); }
  [ ! -e "$out.lock" ] || { echo "$name: $out.lock left behind"; bad=$((bad + 1)); }
  "$AVI" info "$out" >"$work/info" 2>&1 && grep -q 'completion: *interrupted' "$work/info" ||
    { echo "$name: avi info: $(cat "$work/info")"; bad=$((bad + 1)); }
  local t1; t1=$(stop_time "$log")
  # The resume goes on from the checkpoint and stops again, later.
  "$AVI" resume "$out" --progress-every 0.2 2>"$log.2" &
  pid=$!
  sleep 1.5
  kill -"$sig" "$pid"
  wait_end "$pid"
  local t2; t2=$(stop_time "$log.2")
  if [ "$rc" -ne 130 ] || ! awk -v a="$t1" -v b="$t2" 'BEGIN{exit !(b + 0 > a + 0)}'; then
    echo "$name: resume: exit $rc, stopped at t = '$t2' after t = '$t1'; $(tail -2 "$log.2")"; bad=$((bad + 1))
  fi
  [ ! -e "$out.lock" ] || { echo "$name: resume left $out.lock behind"; bad=$((bad + 1)); }
}

# Contact window 0.2 eta_1 / v = 4e-14 s: the manager runs ~1e11 times, no
# potential event for 4.8 us of simulated time (refused up front unless
# time_step.max_events allows it).
THIN=(--set contact.thickness=1e-12 --set contact.inner_thickness=2e-13 --set time_step.max_events=1e20)
stops thin_term TERM two-spheres "${THIN[@]}"
stops thin_int INT two-spheres "${THIN[@]}"
# Rows every 2e-12 s: the observers' loop, with no event in between.
stops rows_int INT sphere-plate --set output.energy_every=2e-12 --set output.max_bytes=1e15
stops rows_term TERM sphere-plate --set output.energy_every=2e-12 --set output.max_bytes=1e15

# Stopped between two runs of the contact manager (window 4e-10 s, the next
# potential event at 4.8e-6 s), the resumed file is bitwise that of an
# uninterrupted run.
n=$((n + 1))
B=(--set contact.thickness=1e-8 --set contact.inner_thickness=2e-9 --set time.end=5e-6 --set output.energy_every=1e-7
   --set output.frame_every=1e-6)
"$AVI" run two-spheres "${B[@]}" -o "$work/ref.h5" --quiet || { echo "bitwise: the reference run failed"; bad=$((bad + 1)); }
"$AVI" run two-spheres "${B[@]}" -o "$work/int.h5" 2>"$work/int.log" &
pid=$!
sleep 0.3
kill -TERM "$pid"
wait_end "$pid"
if [ "$rc" -eq 0 ]; then
  echo "bitwise: the run ended before the signal (nothing to check)"
elif [ "$rc" -ne 130 ]; then
  echo "bitwise: exit $rc, expected 130"; bad=$((bad + 1))
elif ! "$AVI" resume "$work/int.h5" --quiet; then
  echo "bitwise: the resume failed"; bad=$((bad + 1))
else
  "$PYTHON" - "$work/ref.h5" "$work/int.h5" "$(stop_time "$work/int.log")" <<'PY' || bad=$((bad + 1))
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) and n.split("/")[0] in ("observables", "particles") else None)
diff = [n for n in names if n not in b or not np.array_equal(a[n][()], b[n][()])]
if diff:
    print(f"bitwise: stopped at t = {sys.argv[3]} s and resumed, differs from the uninterrupted run:", diff[:5])
    sys.exit(1)
PY
fi

# Ctrl-C in Python: the module's run goes through the same loop.
lib=$(dirname "$AVI")/libavi.so.0
if [ -e "$lib" ]; then
  n=$((n + 1))
  AVI_LIBRARY=$lib PYTHONPATH="$ROOT/python" timeout 60 "$PYTHON" - "$work" "${THIN[@]}" <<'PY' || bad=$((bad + 1))
import os, signal, sys, threading, time
import h5py
import avi
work, sets = sys.argv[1], sys.argv[2:]
ov = [sets[i + 1] for i in range(0, len(sets), 2)]
out, bad = os.path.join(work, "py.h5"), []
def ctrl_c(run):
    sent = []
    threading.Timer(1.5, lambda: (sent.append(time.monotonic()), os.kill(os.getpid(), signal.SIGINT))).start()
    try:
        run()
        bad.append("Ctrl-C did not stop the run")
    except KeyboardInterrupt as e:
        took = time.monotonic() - sent[0]
        if took > 1.0:
            bad.append(f"KeyboardInterrupt {took:.2f} s after Ctrl-C")
        if "avi.resume" not in str(e):
            bad.append(f"KeyboardInterrupt without the resume hint: {e}")
    if os.path.exists(out + ".lock"):
        bad.append("OUT.lock left behind")
    with h5py.File(out, "r") as f:
        c = f["parameters/completion"][()].decode()
    if c != "interrupted":
        bad.append(f"completion {c}")
ctrl_c(lambda: avi.run("two-spheres", out, overrides=ov))
ctrl_c(lambda: avi.resume(out))
for b in bad:
    print("python:", b)
sys.exit(1 if bad else 0)
PY
fi
echo "signals: $n cases, $bad problems"
[ "$bad" -eq 0 ] || exit 1
[ -e "$lib" ] || { echo "signals: the Python case needs $lib (make $lib): skipped"; exit 77; }
