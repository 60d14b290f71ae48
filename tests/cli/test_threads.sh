#!/usr/bin/env bash
# Threads change no bit (issue 30). Every dataset under /observables and
# /particles (tests/cli/h5same.py: dtype, shape and bytes) of runs with 2,
# 3, 4 and 8 threads, and with auto (every processor), equals the serial run's
# (1 thread) on bar (tets), sheet (shells under gravity), sphere-plate past
# the first contact, two-spheres into contact with and without friction,
# spring-chain, rod_damped (sync-explicit with damping) and sphere-plate
# and two-spheres under dcr (a synchronous integrator with its contact
# stage). More threads than cores is allowed. Then 20 chaos seeds
# (AVI_CHAOS_SEED: random chunks, orders and yields in the pool) on
# two-spheres with friction, and checkpoints written with one thread count
# resumed with another.
# AVI_THREADS_QUICK=1 (make test-tsan, under ThreadSanitizer): two-spheres
# with friction and under dcr at 4 threads, one chaos seed, one resume.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
unset AVI_CHAOS_SEED
bad=0
same() { "$PYTHON" "$ROOT/tests/cli/h5same.py" "$@"; }

# The thread count goes as `--threads N` where avi has it, else as the
# scene key; an avi with neither cannot be tested (skipped, not passed).
if "$AVI" run --help 2>&1 | grep -q -- '--threads'; then
  threads() { T=(--threads "$1"); }
elif "$AVI" run spring-chain --set parallel.threads=2 --set time.end=1e-3 -o "$work/probe.h5" --quiet 2>/dev/null; then
  threads() { T=(--set "parallel.threads=$1"); }
else
  echo "test_threads: $AVI has neither --threads nor the scene key parallel.threads"; exit 77
fi

# Every run is a few seconds at most (under ThreadSanitizer too): one that
# takes minutes has hung (a deadlock in the pool) and is killed.
LIMIT=(timeout -k 10 300)

# run NAME THREADS|auto SCENE ARGS...: $work/NAME.THREADS.h5
run() {
  local name=$1 n=$2 out="$work/$1.$2.h5" rc; shift 2
  T=(); threads "$n"
  "${LIMIT[@]}" "$AVI" run "$@" "${T[@]}" -o "$out" --quiet 2> "$work/err"; rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "$name, $n threads: run failed (exit $rc$([ "$rc" -ge 124 ] && echo ", killed after ${LIMIT[3]} s")):"
    sed 's/^/  /' "$work/err" | head -n 20; bad=$((bad + 1)); return 1
  fi
}

# Each case: a scene with a short end time, output every 1/50 of it, and
# what its serial run must reach (contact, friction work) for the
# comparison to mean something.
A=observables/active_contact_potentials/value
every() { echo --set time.end="$1" --set output.energy_every="$(awk -v e="$1" 'BEGIN{print e/50}')" \
  --set output.frame_every="$(awk -v e="$1" 'BEGIN{print e/5}')" --set output.checkpoint_every="$(awk -v e="$1" 'BEGIN{print e/4}')"; }
# Two-spheres touch at 0.52 ms; friction does work from then on.
FRICTION=(two-spheres $(every 8e-4) --set contact.friction=0.3)
declare -A args=(
  [bar]="bar $(every 2e-3)"
  [sheet]="sheet $(every 2e-3)"
  [sphere-plate]="sphere-plate $(every 1e-4)"
  [friction]="${FRICTION[*]}"
  [two-spheres]="two-spheres $(every 8e-4)"
  [spring-chain]="spring-chain $(every 0.05)"
  [rod_damped]="rod_damped $(every 2)"
  [dcr]="sphere-plate $(every 8e-5) --set integrator.type=dcr"
  [dcr-spheres]="two-spheres $(every 8e-4) --set integrator.type=dcr")
# dcr keeps stencils at contact.thickness (1e-3) or more: it had contact
# when the smallest distance came within 1 % of it.
declare -A expect=(
  [sphere-plate]="--min $A=1" [friction]="--min $A=1 --min observables/friction_work/value=1e-6"
  [two-spheres]="--min $A=1" [dcr]="--max observables/min_contact_distance/value=1.01e-3"
  [dcr-spheres]="--max observables/min_contact_distance/value=1.01e-3")
cases="bar sheet sphere-plate friction two-spheres spring-chain rod_damped dcr dcr-spheres"
counts="2 3 4 8 auto"; seeds=$(seq 1 20)
if [ "${AVI_THREADS_QUICK:-0}" = 1 ]; then cases="friction dcr-spheres"; counts=4; seeds=1; fi

for c in $cases; do
  # shellcheck disable=SC2086  # the argument lists split on spaces
  run "$c" 1 ${args[$c]} || continue
  files=()
  for n in $counts; do
    run "$c" "$n" ${args[$c]} && files+=("$work/$c.$n.h5")
  done
  # shellcheck disable=SC2086
  same ${expect[$c]:-} "$work/$c.1.h5" "${files[@]}" || { echo "$c: differs from the serial run"; bad=$((bad + 1)); }
done

# The count reached the run: /parameters/threads says N (auto: the
# processors avi may run on, its affinity; not nproc, which follows
# OMP_NUM_THREADS), so that equal files do not come from runs that all
# ignored it.
"$PYTHON" - "$work"/friction.*.h5 <<'PY' || { echo "friction: /parameters/threads is not the count asked for"; bad=$((bad + 1)); }
import os, sys, h5py
bad = 0
for path in sys.argv[1:]:
    n = path.rsplit(".", 2)[-2]
    want = len(os.sched_getaffinity(0)) if n == "auto" else int(n)
    with h5py.File(path, "r") as f:
        got = f["parameters/threads"][()] if "parameters/threads" in f else None
    if got != want:
        print(f"{path}: /parameters/threads {got}, expected {want}")
        bad += 1
sys.exit(1 if bad else 0)
PY

# The comparison itself: one bit flipped in a copy must be found.
if [ -e "$work/friction.4.h5" ]; then
  cp "$work/friction.4.h5" "$work/flip.h5"
  "$PYTHON" - "$work/flip.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    d = f["particles/left/position/value"]
    a = d[()]
    a.view(np.uint64)[-1, 0, 0] ^= np.uint64(1)
    d[...] = a
PY
  if same "$work/friction.1.h5" "$work/flip.h5" > /dev/null; then
    echo "h5same.py missed a flipped bit"; bad=$((bad + 1))
  fi
fi

# Chaos: every seed, on 2 or 3 threads (4 in the quick run), the serial bits.
chaos=()
for s in $seeds; do
  n=$((s % 2 + 2)); [ "${AVI_THREADS_QUICK:-0}" = 1 ] && n=4
  AVI_CHAOS_SEED=$s run "chaos$s" "$n" "${FRICTION[@]}" && chaos+=("$work/chaos$s.$n.h5")
done
same "$work/friction.1.h5" "${chaos[@]}" || { echo "chaos seeds: differ from the serial run"; bad=$((bad + 1)); }

# Resume with another thread count: a run to an earlier end (its final
# checkpoint there; two-spheres in contact, friction's work carried),
# extended by resume with M threads, equals the serial run straight to the end.
# resume NAME FIRST_THREADS SECOND_THREADS EARLY_END REF SCENE ARGS...
resume() {
  local name=$1 n=$2 m=$3 early=$4 ref=$5; shift 5
  local end; end=$(printf '%s\n' "$@" | sed -n 's/^time.end=//p' | tail -n 1)
  run "$name" "$n" "$@" --set time.end="$early" || return
  threads "$m"
  if ! "${LIMIT[@]}" "$AVI" resume "$work/$name.$n.h5" "${T[@]}" --set time.end="$end" --quiet 2> "$work/err"; then
    echo "$name: resume with $m threads of a $n-thread run failed:"; sed 's/^/  /' "$work/err" | head -n 20
    bad=$((bad + 1)); return
  fi
  same "$ref" "$work/$name.$n.h5" || { echo "$name: $n threads then $m differ from the serial run"; bad=$((bad + 1)); }
}
if [ "${AVI_THREADS_QUICK:-0}" = 1 ]; then
  resume r42 4 2 6e-4 "$work/friction.1.h5" "${FRICTION[@]}"
else
  resume r32 3 2 6e-4 "$work/friction.1.h5" "${FRICTION[@]}"
  resume r31 3 1 6e-4 "$work/friction.1.h5" "${FRICTION[@]}"
  resume r18 1 8 6e-4 "$work/friction.1.h5" "${FRICTION[@]}"
  # shellcheck disable=SC2086
  resume bar32 3 2 1e-3 "$work/bar.1.h5" ${args[bar]}
  # shellcheck disable=SC2086
  resume dcr41 4 1 4e-5 "$work/dcr.1.h5" ${args[dcr]}

  # SIGTERM at whatever point a 3-thread run has reached (in contact, mid
  # round for a parallel executor) once its output is in place: exit 130,
  # then resumed with 2 threads, the serial bits.
  L=(two-spheres $(every 3e-3) --set contact.friction=0.3)
  if run sig 1 "${L[@]}"; then
    threads 3
    "$AVI" run "${L[@]}" "${T[@]}" -o "$work/sig.3.h5" --quiet 2> "$work/sig.err" & pid=$!
    for _ in $(seq 1 2000); do [ -e "$work/sig.3.h5" ] && break; sleep 0.005; done
    sleep 0.1; kill -TERM $pid 2>/dev/null
    # Promptly: within 30 s (a worker that never returns would hold it).
    for _ in $(seq 1 600); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
    kill -0 $pid 2>/dev/null && { echo "SIGTERM: still running 30 s later"; kill -9 $pid; }
    wait $pid; rc=$?
    threads 2
    if [ "$rc" -eq 130 ]; then
      "${LIMIT[@]}" "$AVI" resume "$work/sig.3.h5" "${T[@]}" --quiet && same "$work/sig.1.h5" "$work/sig.3.h5" \
        || { echo "SIGTERM: a 3-thread run stopped and resumed with 2 differs from the serial run"; bad=$((bad + 1)); }
    elif [ "$rc" -eq 0 ]; then  # a fast machine: the run ended first
      echo "SIGTERM: the run ended before the signal; compared whole"
      same "$work/sig.1.h5" "$work/sig.3.h5" || { echo "SIGTERM: 3 threads differ"; bad=$((bad + 1)); }
    else
      echo "SIGTERM: exit $rc, expected 130:"; sed "s/^/  /" "$work/sig.err" | head -n 20; bad=$((bad + 1))
    fi
  fi
fi

echo "test_threads: $bad problems"
[ "$bad" -eq 0 ]
