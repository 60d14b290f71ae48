#!/usr/bin/env bash
# Checkpoints and resume: runs killed with SIGKILL at random points (and one
# stopped with SIGINT) stay readable, resume, and end bitwise-identical to an
# uninterrupted run; a finished run extends with --set time.end; blow-ups,
# full disks and unwritable paths fail cleanly.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
S=(--set time.end=1 --set output.energy_every=0.01 --set output.frame_every=0.05 --set output.checkpoint_every=0.05
   --set bodies.0.mesh.nx=20 --set bodies.0.mesh.ny=3 --set bodies.0.mesh.nz=3)
t0=$EPOCHREALTIME
"$AVI" run bar "${S[@]}" -o "$work/ref.h5" --quiet || { echo "reference run failed"; exit 1; }
# Kill points: random fractions of the reference run's wall time.
ms=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%d", (b - a) * 1000}')

same() { # ref file: every dataset of /observables, /particles and /connectivity bitwise the same
  "$PYTHON" "$ROOT/tests/cli/h5same.py" --groups observables,particles,connectivity "$1" "$2"
}

readable() { # a killed file opens with h5py (SWMR) and with avi info; never hangs
  timeout 60 "$PYTHON" -c "
import h5py, sys
f = h5py.File(sys.argv[1], 'r', swmr=True)
f.visititems(lambda n, o: o[()] if isinstance(o, h5py.Dataset) else None)" "$1" \
    && timeout 60 "$AVI" info "$1" > /dev/null
}

kills=0; resumed=0; early=0; torn=0
RANDOM=7   # deterministic kill points
# AVI_TEST_KILLS: how many (default 10; more for a longer campaign).
for i in $(seq 1 "${AVI_TEST_KILLS:-10}"); do
  f="$work/k$i.h5"
  "$AVI" run bar "${S[@]}" -o "$f" --quiet & pid=$!
  r=$((RANDOM % 90 + 5))
  if [ $((i % 2)) -eq 0 ]; then
    # Every other kill waits for the first checkpoint, then lands within
    # the next third of the run: a busy machine (make test's other job)
    # slows the run against the reference's wall time, which would push
    # every kill before it.
    for _ in $(seq 6000); do [ -e "$f.ckpt" ] || ! kill -0 $pid 2>/dev/null && break; sleep 0.01; done
    r=$((r / 3))
  fi
  sleep "$(awk -v ms="$ms" -v r=$r 'BEGIN{printf "%.3f", ms * r / 100000}')"
  kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; kills=$((kills + 1))
  [ -e "$f" ] || { early=$((early + 1)); continue; }
  # The file appears only once it is in SWMR mode (it is built as
  # OUT.h5.part), so wherever the kill landed, SWMR readers open it.
  readable "$f" || { echo "kill $i: file not readable after SIGKILL"; torn=$((torn + 1)); continue; }
  if [ ! -e "$f.ckpt" ]; then
    "$AVI" resume "$f" --quiet 2>/dev/null; rc=$?
    [ "$rc" -eq 2 ] || { echo "kill $i: resume without checkpoint gave $rc"; bad=$((bad + 1)); }
    early=$((early + 1)); continue
  fi
  # Kill the resumed run too, at several points, then resume again.
  if [ "$i" -eq 3 ]; then
    for d in 0.002 0.01 0.03 "$(awk -v ms="$ms" 'BEGIN{printf "%.3f", ms / 3000}')"; do
    "$AVI" resume "$f" --quiet & pid=$!; sleep "$d"; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    # Killed before its new file was in place, the earlier one is aside
    # (OUT.h5.resume-old) and the next resume takes it from there.
    [ -e "$f" ] || [ -e "$f.resume-old" ] || { echo "kill $i: a killed resume lost the output"; bad=$((bad + 1)); }
    [ ! -e "$f" ] || readable "$f" || { echo "kill $i: file not readable after a killed resume"; bad=$((bad + 1)); }
    done
  fi
  "$AVI" resume "$f" --quiet || { echo "kill $i: resume failed"; bad=$((bad + 1)); continue; }
  same "$work/ref.h5" "$f" || { echo "kill $i: resumed data differ"; bad=$((bad + 1)); continue; }
  resumed=$((resumed + 1))
done
echo "SIGKILL: $kills kills, $resumed resumed bitwise-identical, $early before the first checkpoint, $torn unreadable"
[ "$torn" -eq 0 ] || { echo "killed files unreadable"; bad=$((bad + 1)); }
[ "$resumed" -ge 5 ] || { echo "too few kills landed after a checkpoint"; bad=$((bad + 1)); }

# SIGINT: exit 130, a clean file marked interrupted, and an exact resume.
# The signal goes as soon as the output is in place (the run has started
# and its first rows are being written), not after a guess at the wall time,
# which a loaded machine can overrun.
"$AVI" run bar "${S[@]}" -o "$work/int.h5" --quiet & pid=$!
for _ in $(seq 1 2000); do [ -e "$work/int.h5" ] && break; sleep 0.005; done
kill -INT $pid; wait $pid; rc=$?
[ "$rc" -eq 130 ] || { echo "SIGINT: exit $rc, expected 130"; bad=$((bad + 1)); }
"$PYTHON" "$ROOT/tools/validate_h5.py" --quiet "$work/int.h5" || { echo "SIGINT: layout"; bad=$((bad + 1)); }
"$AVI" info "$work/int.h5" | grep -q "completion: *interrupted" || { echo "SIGINT: not marked interrupted"; bad=$((bad + 1)); }
"$AVI" resume "$work/int.h5" --quiet && same "$work/ref.h5" "$work/int.h5" || { echo "SIGINT: resume differs"; bad=$((bad + 1)); }

# Extending a finished run equals running to the later end directly.
"$AVI" run bar "${S[@]}" --set time.end=0.5 -o "$work/ext.h5" --quiet
"$AVI" resume "$work/ext.h5" --set time.end=1 --quiet && same "$work/ref.h5" "$work/ext.h5" \
  || { echo "extension differs from the direct run"; bad=$((bad + 1)); }
"$AVI" resume "$work/ext.h5" --set output.file=x.h5 --quiet 2>/dev/null; rc=$?
[ "$rc" -eq 2 ] || { echo "resume with another --set: exit $rc, expected 2"; bad=$((bad + 1)); }

# Contact state survives a checkpoint: sphere-plate through the impact.
C=(--set time.end=1.2e-4 --set output.energy_every=2e-6 --set output.frame_every=2e-5 --set output.checkpoint_every=2e-5
   --set bodies.sphere.mesh.subdivisions=2 --set bodies.plate.mesh.rings=8 --set bodies.sphere.translate=[0,0,0.1265])
"$AVI" run sphere-plate "${C[@]}" -o "$work/spref.h5" --quiet
"$AVI" run sphere-plate "${C[@]}" --set time.end=6e-5 -o "$work/sp.h5" --quiet
"$AVI" resume "$work/sp.h5" --set time.end=1.2e-4 --quiet && same "$work/spref.h5" "$work/sp.h5" \
  || { echo "sphere-plate: resume through contact differs"; bad=$((bad + 1)); }
# ... with friction too: an oblique impact, friction's running work
# (contact/friction_work in the checkpoint) carried over bitwise.
F=("${C[@]}" --set contact.friction=0.3 --set "bodies.sphere.velocity=[40,0,-100]")
"$AVI" run sphere-plate "${F[@]}" -o "$work/spfref.h5" --quiet
"$AVI" run sphere-plate "${F[@]}" --set time.end=6e-5 -o "$work/spf.h5" --quiet
"$PYTHON" -c "import h5py, sys; w = h5py.File(sys.argv[1], 'r')['/observables/friction_work/value'][()]; sys.exit(0 if w[-1] > 0 else 1)" \
  "$work/spf.h5" || { echo "sphere-plate with friction: no friction work before the checkpoint"; bad=$((bad + 1)); }
"$AVI" resume "$work/spf.h5" --set time.end=1.2e-4 --quiet && same "$work/spfref.h5" "$work/spf.h5" \
  || { echo "sphere-plate with friction: resume through contact differs"; bad=$((bad + 1)); }
# ... and with refined elastic clocks (src/core/refine.c): thin layers on
# two shells, the checkpoint taken while potentials run on refined steps.
R=(--set contact.thickness=5e-5 --set contact.inner_thickness=1e-5 --set time.end=2.2e-3)
"$AVI" run two-spheres "${R[@]}" -o "$work/tsref.h5" --quiet
"$AVI" run two-spheres "${R[@]}" --set time.end=1.7e-3 -o "$work/ts.h5" --quiet
"$PYTHON" -c "import h5py, sys; l = h5py.File(sys.argv[1], 'r')['/refine/potential_level'][()]; sys.exit(0 if l.max() >= 4 else 1)" \
  "$work/ts.h5.ckpt" || { echo "two-spheres: no refined clocks in the checkpoint"; bad=$((bad + 1)); }
"$AVI" resume "$work/ts.h5" --set time.end=2.2e-3 --quiet && same "$work/tsref.h5" "$work/ts.h5" \
  || { echo "two-spheres with refined clocks: resume differs"; bad=$((bad + 1)); }

# The synchronous integrators resume too (their state: vertices and the
# step count, no clocks).
for integ in sync-explicit sync-implicit explicit-euler dcr; do
  Y=(--set integrator.type=$integ --set time.end=0.2 --set output.checkpoint_every=0.05
     --set bodies.0.mesh.nx=8 --set bodies.0.mesh.ny=2 --set bodies.0.mesh.nz=2)
  "$AVI" run bar "${Y[@]}" -o "$work/$integ-ref.h5" --quiet
  "$AVI" run bar "${Y[@]}" --set time.end=0.1 -o "$work/$integ.h5" --quiet
  "$AVI" resume "$work/$integ.h5" --set time.end=0.2 --quiet && same "$work/$integ-ref.h5" "$work/$integ.h5" \
    || { echo "$integ: resume differs from the direct run"; bad=$((bad + 1)); }
done

# DCR's contact stage keeps no state between steps: a dcr run resumes
# bitwise through the impact (the sphere-plate variant above).
"$AVI" run sphere-plate "${C[@]}" --set integrator.type=dcr -o "$work/dcrref.h5" --quiet
"$AVI" run sphere-plate "${C[@]}" --set integrator.type=dcr --set time.end=6e-5 -o "$work/dcr.h5" --quiet
"$AVI" resume "$work/dcr.h5" --set time.end=1.2e-4 --quiet && same "$work/dcrref.h5" "$work/dcr.h5" \
  || { echo "sphere-plate dcr: resume through contact differs"; bad=$((bad + 1)); }

# Blow-up: an absurd fixed step stops the run with a message naming the
# time and the potential, exit 1, the file closed and marked failed.
"$AVI" run bar --set time.end=1 --set "time_step={fixed: 0.5}" -o "$work/blow.h5" --quiet 2>"$work/err"; rc=$?
[ "$rc" -eq 1 ] && grep -q "blow-up at t = " "$work/err" && grep -q "tet [0-9]* (vertices" "$work/err" \
  || { echo "blow-up: rc $rc: $(cat "$work/err")"; bad=$((bad + 1)); }
"$AVI" info "$work/blow.h5" | grep -q "completion: *failed" || { echo "blow-up: file not marked failed"; bad=$((bad + 1)); }

# Energy growth beyond output.max_energy_growth times its scale is a
# blow-up too, naming the time and the most energetic potential (the bar's
# reported energy moves by up to 7.8e-10 J over 1 s, the scale is 1.2e-2 J).
"$AVI" run bar "${S[@]}" --set output.max_energy_growth=1e-8 -o "$work/grow.h5" --quiet 2>"$work/err"; rc=$?
[ "$rc" -eq 1 ] && grep -q "blow-up at t = .*max_energy_growth" "$work/err" && grep -q "largest: tet [0-9]* (vertices" "$work/err" \
  || { echo "energy growth: rc $rc: $(cat "$work/err")"; bad=$((bad + 1)); }
"$AVI" info "$work/grow.h5" | grep -q "completion: *failed: blow-up" || { echo "energy growth: not marked failed"; bad=$((bad + 1)); }

# A full disk (a file-size limit): exit 1 with a message, never a crash.
( ulimit -f 300; trap '' XFSZ; exec "$AVI" run bar --set time.end=2 -o "$work/full.h5" --quiet ) 2>"$work/err"; rc=$?
[ "$rc" -eq 1 ] && grep -q "full.h5" "$work/err" || { echo "full disk: rc $rc: $(cat "$work/err")"; bad=$((bad + 1)); }

# A disk that fills while the file is being built: no file at the output
# path (it is built as OUT.h5.part, removed on failure), and an earlier file
# there is left as it was.
printf 'earlier output\n' > "$work/keep.h5"
( ulimit -f 1; trap '' XFSZ; exec "$AVI" run bar --set time.end=2 -o "$work/keep.h5" --quiet ) 2>"$work/err"; rc=$?
[ "$rc" -eq 1 ] && grep -q "keep.h5" "$work/err" || { echo "full disk at creation: rc $rc: $(cat "$work/err")"; bad=$((bad + 1)); }
[ "$(cat "$work/keep.h5")" = "earlier output" ] || { echo "full disk at creation: the earlier file was changed"; bad=$((bad + 1)); }
[ ! -e "$work/keep.h5.part" ] || { echo "full disk at creation: keep.h5.part left behind"; bad=$((bad + 1)); }

# A fresh run to a path takes the earlier run's checkpoint and set-aside
# output out of the way: a resume after it fails before its first
# checkpoint must not continue the earlier run into the new file.
"$AVI" run bar "${S[@]}" -o "$work/stale.h5" --quiet
printf 'not an output\n' > "$work/stale.h5.resume-old"
"$AVI" run bar "${S[@]}" --set output.checkpoint_every=0 --set output.max_energy_growth=1e-12 -o "$work/stale.h5" --quiet 2>/dev/null
[ ! -e "$work/stale.h5.ckpt" ] && [ ! -e "$work/stale.h5.resume-old" ] \
  || { echo "a fresh run kept the earlier run's checkpoint or set-aside output"; bad=$((bad + 1)); }
"$AVI" resume "$work/stale.h5" --quiet 2>/dev/null; rc=$?
[ "$rc" -eq 2 ] || { echo "resume of a run that failed before its first checkpoint: exit $rc, expected 2"; bad=$((bad + 1)); }

echo "resume: $bad problems"
[ "$bad" -eq 0 ]
