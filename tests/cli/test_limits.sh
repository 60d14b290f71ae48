#!/usr/bin/env bash
# Settings that would write or compute practically forever, and material
# values whose masses, moduli or stable steps are not positive normal
# numbers, are refused before the run: exit 2, a message naming the scene
# key (with the estimate), no output file. Ordinary scenes are unaffected.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0; n=0
refused() { # scene, expected words, --set arguments...
  local scene=$1 want=$2; shift 2
  n=$((n + 1))
  timeout -k 5 30 "$AVI" run "$scene" "$@" -o "$work/out.h5" --quiet 2>"$work/err"; local rc=$?  # 124: it ran on
  if [ "$rc" -ne 2 ] || ! grep -qF -- "$want" "$work/err"; then
    echo "$scene $*: exit $rc, expected 2 and '$want': $(cat "$work/err")"; bad=$((bad + 1))
  fi
  [ ! -e "$work/out.h5" ] || { echo "$scene $*: left an output file"; bad=$((bad + 1)); rm -f "$work/out.h5"; }
}
S=(--set time.end=1e-2)
refused sheet "output.checkpoint_every (--set): 1e-11 s gives about 1e+09 checkpoints" "${S[@]}" --set output.checkpoint_every=1e-11
refused sheet "time_step.fixed: about 2.02e+301 events" "${S[@]}" --set "time_step={fixed: 1e-300}"
refused sphere-plate "output.frame_every: the output would need about 7.03e+12 bytes" --set output.frame_every=2e-11
refused sheet "materials.cloth.density: the areal density" "${S[@]}" --set materials.cloth.density=1e-308
refused sheet "materials.cloth.density: membrane 0: time step 0" "${S[@]}" --set materials.cloth.density=1e-300
refused sheet "materials.cloth.thickness: the bending modulus" "${S[@]}" --set materials.cloth.thickness=1e300
refused sheet "materials.cloth.youngs: the bending modulus" "${S[@]}" --set materials.cloth.youngs=1e-300
refused sheet "materials.cloth.youngs: about 2.81e+151 events" "${S[@]}" --set materials.cloth.youngs=1e300
refused bar "materials.soft.density: the density is 1e-310" --set materials.soft.density=1e-310
refused spring-chain "bodies.0.particles.2.mass: 1e-310 kg is not a positive normal number" --set bodies.chain.particles.2.mass=1e-310
# A step longer than the run: no step would complete, under every integrator
# (before: exit 0 and "complete" with 0 steps, or one full step past the end).
for i in avi sync-explicit sync-implicit sync-rootfind explicit-euler implicit-euler dcr; do
  refused bar "time_step.fixed: the time step 3 s (tet 0, the smallest) is longer than time.end = 2 s" \
    --set time.end=2 --set integrator.type=$i --set "time_step={fixed: 3}"
done
refused sphere-plate "time_step.fixed: the time step 1 s" --set integrator.type=dcr --set "time_step={fixed: 1}"
refused two-spheres "time_step.fixed: the time step 1e+200 s" --set "time_step={fixed: 1e200}"
# Contact counts: the manager runs every 0.2 contact.thickness / speed.
refused two-spheres "contact.thickness: about 4.05e+13 events" --set contact.thickness=1e-12 \
  --set contact.inner_thickness=2e-13
refused two-spheres "contact.thickness: about 8.1e+103 events" --set "bodies.0.velocity=[1e100,0,0]"
# An initial speed whose kinetic energy overflows (before: a NaN "blow-up"
# at t = 0, exit 1; with contact a run SIGTERM did not stop, the contact
# window estimate being 0 and skipped).
refused two-spheres "bodies.0 ('left'): vertex 0 starts at 1e+200 m/s, whose kinetic energy overflows" \
  --set "bodies.0.velocity=[1e200,0,0]"
refused bar "bodies.0 ('bar'): vertex 0 starts at 1e+200 m/s" --set "bodies.0.velocity=[1e200,0,0]"
# Raised limits let the same settings through (checked here without running).
# (Each run at least one of its smallest steps long: sheet 1.5e-4 s, bar 5e-4 s.)
"$AVI" run sheet "${S[@]}" --set output.checkpoint_every=1e-6 --set output.max_checkpoints=2e4 --set time.end=3e-4 \
  -o "$work/ok.h5" --quiet || { echo "raised output.max_checkpoints: the run failed"; bad=$((bad + 1)); }
# Ordinary scenes: the defaults are far above what they need.
for s in sheet:3e-4 bar:1e-3 sphere-plate:1e-4; do
  "$AVI" run "${s%%:*}" --set time.end="${s#*:}" -o "$work/${s%%:*}.h5" --quiet ||
    { echo "$s: an ordinary run failed"; bad=$((bad + 1)); }
done
echo "limits: $n refusals checked, $bad problems"
[ "$bad" -eq 0 ]
