#!/usr/bin/env bash
# A really full disk (a small tmpfs): the run fails with exit 1 and one line
# naming the file, never a crash (HDF5's at-exit shutdown used to crash
# `avi resume` on the file whose close failed) and never HDF5's own error
# stack; a resume on the still-full disk fails the same way; a resume that
# runs out of space itself keeps its last checkpoint; once there is room,
# the resume completes bitwise equal to an uninterrupted run.
# Needs root (mount); otherwise skipped (exit 77).
set -u
work=$(mktemp -d)
disk="$work/disk"
mkdir "$disk"
cleanup() { cd /; mountpoint -q "$disk" && umount "$disk"; rm -rf "$work"; }
trap cleanup EXIT
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=4m tmpfs "$disk" 2>/dev/null; then
  echo "skipped: mounting a tmpfs needs root"
  exit 77
fi
bad=0
R=(bar --set time.end=15 --set output.checkpoint_every=0.5)
"$AVI" run "${R[@]}" -o "$work/ref.h5" --quiet || { echo "reference run failed"; exit 1; }

# check NAME RC: exit status 1, one line naming the file (o.h5, its
# checkpoint or its XDMF sidecar), no HDF5 stack.
check() {
  [ "$2" -eq 1 ] || { echo "$1: exit $2, expected 1: $(head -c 600 "$work/err")"; bad=$((bad + 1)); }
  grep -q "o\.\(h5\|xmf\)" "$work/err" || { echo "$1: message does not name the file: $(head -c 600 "$work/err")"; bad=$((bad + 1)); }
  ! grep -q "HDF5-DIAG" "$work/err" || { echo "$1: HDF5's error stack on stderr ($(wc -l < "$work/err") lines)"; bad=$((bad + 1)); }
  [ "$(wc -l < "$work/err")" -eq 1 ] || { echo "$1: $(wc -l < "$work/err") lines on stderr"; bad=$((bad + 1)); }
}
ckpt_time() { "$PYTHON" -c "import h5py, sys; print(h5py.File(sys.argv[1], 'r')['time'][0])" "$disk/o.h5.ckpt"; }
same() { h5diff "$work/ref.h5" "$disk/o.h5" /observables /observables && h5diff "$work/ref.h5" "$disk/o.h5" /particles /particles; }

cd "$disk"
"$AVI" run "${R[@]}" -o o.h5 --quiet 2>"$work/err"; check "run on a full disk" $?
t1=$(ckpt_time)
"$AVI" resume o.h5 --quiet 2>"$work/err"; check "resume on the full disk" $?
# Room for the set-aside copy, not for the rest of the run: the resume
# itself runs out of space, after writing later checkpoints.
mount -o remount,size=8m "$disk"
"$AVI" resume o.h5 --quiet 2>"$work/err"; check "resume that fills the disk" $?
t2=$(ckpt_time)
awk -v a="$t1" -v b="$t2" 'BEGIN{exit !(b > a)}' || { echo "the resume that filled the disk wrote no later checkpoint ($t1, $t2)"; bad=$((bad + 1)); }
[ ! -e o.h5.resume-old ] || { echo "o.h5.resume-old left behind"; bad=$((bad + 1)); }
mount -o remount,size=64m "$disk"
"$AVI" resume o.h5 --quiet 2>"$work/err" || { echo "resume with room: $(cat "$work/err")"; bad=$((bad + 1)); }
"$AVI" info o.h5 | grep -q "completion: *complete" || { echo "resumed file not complete"; bad=$((bad + 1)); }
same >/dev/null || { echo "resumed file differs from the uninterrupted run"; bad=$((bad + 1)); }

# A tiny disk fills while the first rows are written on the output thread:
# HDF5's per-thread error stack must stay quiet there too.
cd /; umount "$disk"; mount -t tmpfs -o size=600k tmpfs "$disk"; cd "$disk"
"$AVI" run "${R[@]}" -o o.h5 --quiet 2>"$work/err"; check "run on a tiny disk" $?
# --verbose asks for HDF5's stack.
rm -f o.h5 o.h5.ckpt o.xmf
"$AVI" run "${R[@]}" -o o.h5 --quiet --verbose 2>"$work/err"
grep -q "HDF5-DIAG" "$work/err" || { echo "--verbose: no HDF5 error stack"; bad=$((bad + 1)); }

echo "full disk: $t1 s and $t2 s checkpoints before the disk filled, $bad problems"
[ "$bad" -eq 0 ]
