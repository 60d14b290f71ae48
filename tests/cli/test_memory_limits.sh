#!/usr/bin/env bash
# Memory estimated up front (src/scene/scene_memory.c): a generated mesh, from
# its generator's parameters before generating, and the contact broad
# phase's candidate lists, from the surfaces and contact.thickness, are
# refused with exit 2 naming the key and the estimate when they exceed what
# the process may use (physical memory, or half of ulimit -v). Here under
# ulimit -v, so that the limit is small and known; the old code generated
# and ran into "out of memory" instead. The same scenes within the limit run.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
# limit (KB), expected exit, expected words ('' for none), scene, --set arguments...
case_() {
  local lim=$1 want_rc=$2 want=$3 scene=$4; shift 4
  local start=$EPOCHREALTIME
  (ulimit -v "$lim"; exec "$AVI" run "$scene" "$@" -o "$work/out.h5" --quiet) 2> "$work/err"; local rc=$?
  local took; took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  if [ "$rc" -ne "$want_rc" ] || { [ -n "$want" ] && ! grep -qF -- "$want" "$work/err"; }; then
    echo "$scene $* (ulimit -v $lim): exit $rc in $took s, expected $want_rc and '$want': $(cat "$work/err")"; bad=$((bad + 1))
  else
    echo "$scene (ulimit -v $lim): exit $rc in $took s$([ -n "$want" ] && echo ": $want")"
  fi
  if [ "$want_rc" -eq 2 ] && [ -e "$work/out.h5" ]; then echo "$scene: left an output file"; bad=$((bad + 1)); fi
  rm -f "$work/out.h5" "$work/out.xmf" "$work/out.h5.ckpt"
}
BOX='bodies.0.mesh={generator: tet_box, lx: 1, ly: 1, lz: 1, nx: 100, ny: 100, nz: 100}'
BALL='bodies.0.mesh={generator: ball, radius: 0.1, n: 100}'
# time.end above the 10^3 box's smallest step (2e-3 s): a shorter run is refused since the stop merge
SHORT=(--set time.end=3e-3 --set output.energy_every=1e-3 --set output.frame_every=1e-3)
case_ 1000000 2 "bodies.0.mesh.nx: the generated meshes would need about 1.77 GB of memory (this body 1.03e+06 vertices and 6e+06 tetrahedra" bar --set "$BOX"
case_ 1000000 2 "more than half the address-space limit (ulimit -v), 0.512 GB" bar --set "$BOX"
case_ 1000000 2 "bodies.0.mesh.n: the generated meshes would need about 1.77 GB" bar --set "$BALL"
case_ 1000000 0 "" bar --set 'bodies.0.mesh={generator: tet_box, lx: 1, ly: 1, lz: 1, nx: 10, ny: 10, nz: 10}' "${SHORT[@]}"
# Contact reach far beyond the triangles: every point a candidate of
# hundreds of triangles.
TS=(--set bodies.0.mesh.subdivisions=3 --set bodies.1.mesh.subdivisions=3 --set time.end=1e-5)
case_ 400000 2 "contact.thickness: the contact broad phase would keep about 6e+06 candidate pairs" two-spheres "${TS[@]}" --set contact.thickness=0.05
case_ 400000 0 "" two-spheres "${TS[@]}"
[ "$bad" -eq 0 ] || { echo "test_memory_limits: $bad failed"; exit 1; }
echo "test_memory_limits: all passed"
