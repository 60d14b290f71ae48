#!/usr/bin/env bash
# avi-mpi (issue 31): one simulation on 1-4 MPI ranks (oversubscribed), every
# /particles and /observables dataset bitwise the serial avi's (bar on 1 and
# 3, sheet on 2, sphere-plate and two-spheres on 2 and 4, short); a run of 3 ranks resumed on 2 and
# on one process; SIGTERM to mpirun (interrupted, resumed on 3 ranks); a
# rank killed with SIGKILL (the file readable, resumed by avi); bad input
# refused once, exit 2; rank 0's file valid for tools/validate_h5.py;
# --exchange-stats prints a line for every rank; ranks with 2 threads each;
# a 1000 m/s impact on 3 ranks x 2 threads.
# Skipped without avi-mpi or mpirun (make mpi builds it where Open MPI is).
set -u
MPI_BIN=${AVI_MPI_BIN:-$ROOT/build/avi-mpi}
if [ ! -x "$MPI_BIN" ] || ! command -v mpirun > /dev/null; then
  echo "mpi: skipped (no $MPI_BIN or no mpirun: make mpi)"; exit 77
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export TMPDIR=$work # the other ranks' private directories
bad=0
MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
same() { "$PYTHON" "$ROOT/tests/cli/h5same.py" "$1" "$2" > /dev/null || { echo "$3: differs from the serial run"; bad=$((bad + 1)); }; }

# Every dataset equal to the serial run's, on 1 to 4 ranks.
declare -A ends=([bar]=0.2 [sheet]=2e-3 [sphere-plate]=1e-4 [two-spheres]=5e-4)
for scene in bar sheet sphere-plate two-spheres; do
  set_end=(--set time.end="${ends[$scene]}")
  "$AVI" run "$scene" "${set_end[@]}" -o "$work/$scene.h5" --quiet || { echo "$scene: serial run failed"; bad=$((bad + 1)); continue; }
  # bar on 1 and 3 ranks (on 2 below: resumed, interrupted), sheet on 2, the
  # contact scenes on 2 and 4 (make test's time).
  case $scene in bar) counts="1 3" ;; sheet) counts=2 ;; *) counts="2 4" ;; esac
  for np in $counts; do
    out="$work/$scene.$np.h5"
    stats=(); [ "$scene" = sheet ] && stats=(--exchange-stats)
    if ! timeout 300 "${MPIRUN[@]}" -np "$np" "$MPI_BIN" run "$scene" "${set_end[@]}" -o "$out" --quiet "${stats[@]}" > "$work/log" 2>&1; then
      echo "$scene on $np ranks failed: $(tail -3 "$work/log")"; bad=$((bad + 1)); continue
    fi
    same "$work/$scene.h5" "$out" "$scene on $np ranks"
    if [ "$scene" = sheet ]; then # one line a rank, each with exchanges and bytes
      for r in $(seq 0 $((np - 1))); do
        grep -Eq "^avi-mpi: rank $r: [1-9][0-9]* exchanges \(allgather\), [1-9][0-9]* to neighbours \(alltoallv\), [0-9]+ agreements \(allreduce\), [1-9][0-9]* bytes sent, [1-9][0-9]* received$" "$work/log" \
          || { echo "--exchange-stats: no line for rank $r: $(cat "$work/log")"; bad=$((bad + 1)); }
      done
    fi
  done
done
# Ranks with threads (--threads N a rank: N parts each): bar and sphere-plate on 2 ranks x 2 threads.
for scene in bar sphere-plate; do
  out="$work/$scene.2x2.h5"
  timeout 300 "${MPIRUN[@]}" -np 2 "$MPI_BIN" run "$scene" --set time.end="${ends[$scene]}" --threads 2 -o "$out" --quiet > "$work/log" 2>&1 \
    || { echo "$scene on 2 ranks x 2 threads failed: $(tail -3 "$work/log")"; bad=$((bad + 1)); continue; }
  same "$work/$scene.h5" "$out" "$scene on 2 ranks x 2 threads"
done
# A 1000 m/s impact (speed triggers, deep layers) on 3 ranks x 2 threads.
FAST=(--set time.end=6e-5 --set "bodies.sphere.velocity=[0,0,-1000]")
"$AVI" run sphere-plate "${FAST[@]}" -o "$work/fast.h5" --quiet || { echo "1000 m/s: serial run failed"; bad=$((bad + 1)); }
if timeout 300 "${MPIRUN[@]}" -np 3 "$MPI_BIN" run sphere-plate "${FAST[@]}" --threads 2 -o "$work/fast.3x2.h5" --quiet > "$work/log" 2>&1; then
  same "$work/fast.h5" "$work/fast.3x2.h5" "sphere-plate at 1000 m/s on 3 ranks x 2 threads"
else
  echo "1000 m/s on 3 ranks x 2 threads failed: $(tail -3 "$work/log")"; bad=$((bad + 1))
fi
"$PYTHON" "$ROOT/tools/validate_h5.py" "$work/sphere-plate.2.h5" > /dev/null || { echo "validate_h5: sphere-plate on 2 ranks"; bad=$((bad + 1)); }
[ -e "$work/two-spheres.4.xmf" ] || { echo "no XDMF beside the 4-rank output"; bad=$((bad + 1)); }
ls "$work" | grep -q '^avi-mpi-' && { echo "a rank's private directory was left behind"; bad=$((bad + 1)); }

# Resume: 3 ranks to 0.2 s, then 2 ranks to 0.4 s, and one process (avi).
"$AVI" run bar --set time.end=0.4 -o "$work/direct.h5" --quiet || bad=$((bad + 1))
"${MPIRUN[@]}" -np 3 "$MPI_BIN" run bar --set time.end=0.2 -o "$work/r.h5" --quiet > "$work/log" 2>&1 || { echo "3 ranks: failed"; bad=$((bad + 1)); }
cp "$work/r.h5" "$work/r1.h5" && cp "$work/r.h5.ckpt" "$work/r1.h5.ckpt"
"${MPIRUN[@]}" -np 2 "$MPI_BIN" resume "$work/r.h5" --set time.end=0.4 --quiet > "$work/log" 2>&1 || { echo "resume on 2 ranks failed"; bad=$((bad + 1)); }
same "$work/direct.h5" "$work/r.h5" "3 ranks resumed on 2"
"$AVI" resume "$work/r1.h5" --set time.end=0.4 --quiet || { echo "resume by avi failed"; bad=$((bad + 1)); }
same "$work/direct.h5" "$work/r1.h5" "3 ranks resumed by one process"

# SIGTERM to mpirun after the first checkpoint: interrupted, then resumed on 3 ranks.
LONG=(--set time.end=60 --set output.checkpoint_every=0.5)
"${MPIRUN[@]}" -np 2 "$MPI_BIN" run bar "${LONG[@]}" -o "$work/t.h5" --quiet > "$work/tlog" 2>&1 & pid=$!
for _ in $(seq 3000); do [ -e "$work/t.h5.ckpt" ] && break; sleep 0.01; done
sleep 0.3; kill -TERM $pid; wait $pid; rc=$?
[ "$rc" != 0 ] || { echo "SIGTERM: mpirun exit 0"; bad=$((bad + 1)); }
grep -q "interrupted by signal 15" "$work/tlog" || { echo "SIGTERM: no 'interrupted' message: $(tail -2 "$work/tlog")"; bad=$((bad + 1)); }
t_end=$("$PYTHON" -c "import h5py,sys; f=h5py.File(sys.argv[1],'r'); print(repr(float(f['/observables/elastic_energy/time'][-1])*1.5))" "$work/t.h5")
"${MPIRUN[@]}" -np 3 "$MPI_BIN" resume "$work/t.h5" --set time.end="$t_end" --quiet > "$work/log" 2>&1 || { echo "resume after SIGTERM failed: $(tail -2 "$work/log")"; bad=$((bad + 1)); }
"$AVI" run bar --set time.end="$t_end" -o "$work/t_direct.h5" --quiet
same "$work/t_direct.h5" "$work/t.h5" "SIGTERM on 2 ranks, resumed on 3"

# A rank killed (SIGKILL, not rank 0): the job ends, rank 0's file reads and resumes.
"${MPIRUN[@]}" -np 3 "$MPI_BIN" run bar "${LONG[@]}" -o "$work/k.h5" --quiet > "$work/klog" 2>&1 & pid=$!
for _ in $(seq 3000); do [ -e "$work/k.h5.ckpt" ] && break; sleep 0.01; done
sleep 0.3
victim=$(pgrep -f -- "$MPI_BIN run bar .*-o $work/k.h5" | grep -vx "$pid" | sort -n | tail -1)
[ -n "$victim" ] && kill -KILL "$victim"
wait $pid; rc=$?
[ "$rc" != 0 ] || { echo "killed rank: mpirun exit 0"; bad=$((bad + 1)); }
timeout 60 "$PYTHON" -c "import h5py,sys; f=h5py.File(sys.argv[1],'r',swmr=True); f.visititems(lambda n,o: o[()] if isinstance(o,h5py.Dataset) else None)" "$work/k.h5" \
  || { echo "killed rank: the file does not read"; bad=$((bad + 1)); }
t_end=$("$PYTHON" -c "import h5py,sys; f=h5py.File(sys.argv[1],'r',swmr=True); print(repr(float(f['/observables/elastic_energy/time'][-1])*1.5+0.5))" "$work/k.h5")
"$AVI" resume "$work/k.h5" --set time.end="$t_end" --quiet || { echo "killed rank: resume failed"; bad=$((bad + 1)); }
"$AVI" run bar --set time.end="$t_end" -o "$work/k_direct.h5" --quiet
same "$work/k_direct.h5" "$work/k.h5" "a killed rank's run, resumed"
pkill -f -- "$work/k.h5" 2> /dev/null

# Bad input: one message, exit 2.
"${MPIRUN[@]}" -np 3 "$MPI_BIN" run nosuchscene -o "$work/x.h5" > "$work/out" 2> "$work/err"; rc=$?
[ "$rc" = 2 ] || { echo "bad input: exit $rc, expected 2"; bad=$((bad + 1)); }
n=$(grep -c '^avi: nosuchscene' "$work/err" "$work/out" | awk -F: '{s += $NF} END {print s}')
[ "$n" = 1 ] || { echo "bad input: $n messages, expected 1"; bad=$((bad + 1)); }

echo "mpi: $bad problems"
[ "$bad" = 0 ]
