#!/usr/bin/env bash
# The checkpoint format across versions: checkpoints written by an earlier
# main (tests/data/checkpoints/written_by_COMMIT.tar.gz: output and
# checkpoint of an AVI run with contact, friction and refined clocks, of an
# AVI bar with clock groups and of a dcr bar; made with the commands below)
# resume with this avi bitwise as this avi's uninterrupted runs, and this
# avi's checkpoints at the same times have the same groups, datasets,
# types, shapes and attributes, and the same values but for the run's
# identity (run id, last row digest, program version, content hash).
# A change that alters the bits of one of these runs on purpose (physics)
# checks by hand that the old checkpoints still load, then replaces the
# archive with its own binary's, named by the commit that built it:
#   MAKE_CHECKPOINTS=tests/data/checkpoints/written_by_COMMIT.tar.gz AVI=... tests/cli/test_resume_format.sh
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
if [ -n "${MAKE_CHECKPOINTS:-}" ]; then
  case $MAKE_CHECKPOINTS in /*) archive=$MAKE_CHECKPOINTS ;; *) archive=$PWD/$MAKE_CHECKPOINTS ;; esac
else
  archives=("$ROOT"/tests/data/checkpoints/written_by_*.tar.gz)
  [ ${#archives[@]} -eq 1 ] && [ -f "${archives[0]}" ] || { echo "expected one tests/data/checkpoints/written_by_*.tar.gz"; exit 1; }
  archive=${archives[0]}
fi
old=${archive##*/written_by_}; old=${old%.tar.gz}
cd "$work"
if [ -z "${MAKE_CHECKPOINTS:-}" ]; then
  mkdir old && tar xzf "$archive" -C old || { echo "cannot unpack the checkpoints"; exit 1; }
fi

# The scenes as the files were made: avi run SCENE ARGS --set time.end=T -o NAME.h5
SP=(--set output.energy_every=4e-6 --set output.frame_every=6e-5 --set output.checkpoint_every=2e-5
    --set bodies.sphere.mesh.subdivisions=2 --set bodies.plate.mesh.rings=8 --set bodies.sphere.translate=[0,0,0.1265]
    --set contact.friction=0.3 --set "bodies.sphere.velocity=[40,0,-100]" --set contact.thickness=5e-5
    --set contact.inner_thickness=1e-5)
BAR=(--set output.energy_every=0.004 --set output.frame_every=0.1 --set output.checkpoint_every=0.05
     --set bodies.0.mesh.nx=8 --set bodies.0.mesh.ny=2 --set bodies.0.mesh.nz=2)
DCR=("${BAR[@]}" --set integrator.type=dcr)

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

# layout OLD NEW: the same tree, types, shapes, attributes and values.
layout() {
  "$PYTHON" - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
identity = {"output_run_id", "output_last_row_sha256", "program_version"}
# Arrays added since 549844c, absent from its checkpoints (which load without
# them): friction's owed-impulse cache (src/core/vertex_sync.h).
added = {"contact/friction_owed_tick", "contact/friction_owed_gradient"}
def tree(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, o):
            if isinstance(o, h5py.Dataset):
                out[name] = ("dataset", o.dtype.str, o.shape, o[()] if name not in identity else None)
            else:
                out[name] = ("group",)
        f.visititems(visit)
        out["/attrs"] = sorted((k, np.asarray(f.attrs[k]).dtype.str) for k in f.attrs)
    return out
a, b = tree(sys.argv[1]), tree(sys.argv[2])
problems = []
for n in sorted(set(a) | set(b)):
    if n not in a and n in added: continue
    if n not in a or n not in b:
        problems.append("%s only in the %s checkpoint" % (n, "old" if n in a else "new")); continue
    x, y = a[n], b[n]
    if n == "/attrs" or x[0] == "group":
        if x != y: problems.append("%s: %s vs %s" % (n, x, y))
    elif x[:3] != y[:3]:
        problems.append("%s: dtype/shape %s %s vs %s %s" % (n, x[1], x[2], y[1], y[2]))
    elif x[3] is not None and np.asarray(x[3]).tobytes() != np.asarray(y[3]).tobytes():  # bitwise: NaN (an empty cache slot) equals itself
        problems.append("%s: values differ" % n)
if problems:
    print("\n".join(problems[:10])); sys.exit(1)
PY
}

# case NAME SCENE T_CHECKPOINT T_END ARGS...
case_() {
  local name=$1 scene=$2 tc=$3 te=$4; shift 4
  if [ -n "${MAKE_CHECKPOINTS:-}" ]; then
    (mkdir -p old && cd old && "$AVI" run "$scene" "$@" --set time.end="$tc" -o "$name.h5" --quiet) ||
      { echo "$name: run failed"; bad=$((bad + 1)); }
    return
  fi
  "$AVI" run "$scene" "$@" --set time.end="$te" -o "$name-ref.h5" --quiet || { echo "$name: reference run failed"; bad=$((bad + 1)); return; }
  # in new/, so that the checkpoint records the same output name
  (mkdir -p new && cd new && "$AVI" run "$scene" "$@" --set time.end="$tc" -o "$name.h5" --quiet) ||
    { echo "$name: first part failed"; bad=$((bad + 1)); return; }
  layout "old/$name.h5.ckpt" "new/$name.h5.ckpt" || { echo "$name: this avi's checkpoint differs in layout or values from $old's"; bad=$((bad + 1)); }
  cp "old/$name.h5" "old/$name.h5.ckpt" .
  "$AVI" resume "$name.h5" --set time.end="$te" --quiet 2>err || { echo "$name: resuming $old's checkpoint failed: $(cat err)"; bad=$((bad + 1)); return; }
  same "$name-ref.h5" "$name.h5" || { echo "$name: resumed from $old's checkpoint, differs from the uninterrupted run"; bad=$((bad + 1)); }
}

case_ sp sphere-plate 8e-5 1.2e-4 "${SP[@]}"
"$PYTHON" -c "import h5py, sys; f = h5py.File(sys.argv[1], 'r'); sys.exit(0 if f['/refine/potential_level'][()].max() > 0 and f['/contact/friction_work'][0] > 0 else 1)" \
  old/sp.h5.ckpt || { echo "sp: $old's checkpoint holds no refined clock or no friction work"; bad=$((bad + 1)); }
case_ bar bar 0.1 0.2 "${BAR[@]}"
case_ dcr bar 0.1 0.2 "${DCR[@]}"
if [ -n "${MAKE_CHECKPOINTS:-}" ]; then
  [ "$bad" -eq 0 ] && mkdir -p "${archive%/*}" && tar czf "$archive" -C old . && echo "wrote $archive" && exit 0
  exit 1
fi
echo "resume format: $bad problems (checkpoints of $old)"
[ "$bad" -eq 0 ]
