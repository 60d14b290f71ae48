#!/usr/bin/env bash
# Bad geometry is bad input: overlapping tetrahedra and self-intersecting
# surfaces in mesh files, bodies that intersect or come within the
# contact's inner thickness at t = 0. Each exits with status 2 at once,
# names the file or the bodies and the elements, and leaves no output file;
# bodies just outside the inner thickness still run.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0; n=0

# name expected-status scene args... ; then the words the message must hold
# in $want (|-separated).
check() {
  local name=$1 status=$2 scene=$3; shift 3
  n=$((n + 1))
  local out="$work/$name.h5"
  "$AVI" run "$scene" "$@" -o "$out" --quiet 2>"$work/err"; local rc=$?
  if [ "$rc" -ne "$status" ]; then echo "$name: exit status $rc, expected $status: $(cat "$work/err")"; bad=$((bad + 1)); fi
  local IFS='|'
  for w in $want; do
    grep -qF -- "$w" "$work/err" || { echo "$name: message lacks '$w': $(cat "$work/err")"; bad=$((bad + 1)); }
  done
  if [ "$status" -ne 0 ]; then
    for f in "$out" "$out.part" "$out.ckpt" "${out%.h5}.xmf"; do
      [ -e "$f" ] && { echo "$name: left $f behind"; bad=$((bad + 1)); }
    done
  fi
}

data="$ROOT/tests/data"
want="mesh_file_overlapping_tets.yaml:7: bodies.0.mesh.file|overlapping_tets.msh:15: tetrahedra 0 (vertices 0, 1, 2, 3) and 1 (vertices 0, 1, 2, 4) overlap|shared face (0, 1, 2)"
check overlapping_tets 2 "$data/scenes/mesh_file_overlapping_tets.yaml"
want="obj_folded_strip.obj:13: the surface self-intersects: triangles 0 (vertices 0, 2, 3) and 6 (vertices 6, 8, 9)"
check folded_strip 2 "$data/scenes/mesh_file_self_intersecting.yaml"

# The sphere pushed 3 cm into the plate; two spheres overlapping.
want="bodies 'sphere' (bodies.0) and 'plate' (bodies.1) intersect at t = 0|of 'sphere' passes through surface triangle|of 'plate'|bodies.0.translate"
check sphere_in_plate 2 sphere-plate --set 'bodies.0.translate=[0, 0, 0.1]'
want="bodies 'left' (bodies.0) and 'right' (bodies.1) intersect at t = 0"
check spheres_overlap 2 two-spheres --set 'bodies.0.translate=[-0.05, 0, 0]'
# 0.1 mm above the plate, inside the inner thickness 0.2 mm; then 0.3 mm.
want="come closer than contact.inner_thickness = 0.0002 at t = 0|vertex 0 of 'plate' is 0.0001 from surface triangle|of 'sphere'|lower contact.inner_thickness"
check sphere_too_close 2 sphere-plate --set 'bodies.0.translate=[0, 0, 0.1251]'
want=""
check sphere_clear 0 sphere-plate --set 'bodies.0.translate=[0, 0, 0.1253]' --set time.end=1e-6

# An existing output file is left as it was.
echo keep > "$work/keep.h5"
"$AVI" run sphere-plate --set 'bodies.0.translate=[0, 0, 0.1]' -o "$work/keep.h5" --quiet 2>/dev/null
[ "$(cat "$work/keep.h5")" = keep ] || { echo "an existing output was changed"; bad=$((bad + 1)); }

echo "geometry input: $n runs checked, $bad problems"
[ "$bad" -eq 0 ]
