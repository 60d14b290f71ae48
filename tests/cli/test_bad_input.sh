#!/usr/bin/env bash
# Every malformed scene exits with status 2, names its file in the message,
# does not crash and leaves no output file behind.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0; n=0
for scene in "$ROOT"/tests/data/scenes/*.yaml; do
  n=$((n + 1))
  out="$work/out.h5"
  "$AVI" run "$scene" -o "$out" --quiet 2>"$work/err"; rc=$?
  name=$(basename "$scene")
  if [ "$rc" -ne 2 ]; then echo "$name: exit status $rc, expected 2"; bad=$((bad + 1)); fi
  if ! grep -q "$name" "$work/err"; then echo "$name: message does not name the file: $(cat "$work/err")"; bad=$((bad + 1)); fi
  if [ -e "$out" ]; then echo "$name: left an output file"; bad=$((bad + 1)); rm -f "$out"; fi
done
# Bad usage.
for args in "run --bogus" "run a.yaml b.yaml" "frobnicate" "run --set" "run --set novalue" "info"; do
  "$AVI" $args >/dev/null 2>&1; rc=$?
  if [ "$rc" -ne 2 ]; then echo "'avi $args': exit status $rc, expected 2"; bad=$((bad + 1)); fi
done
"$AVI" run sphere-plate --set no.such.key=1 -o "$work/x.h5" --quiet 2>"$work/err"; rc=$?
[ "$rc" -eq 2 ] && grep -q "no.such.key" "$work/err" || { echo "--set unknown key: rc $rc: $(cat "$work/err")"; bad=$((bad + 1)); }
# contact.friction: mu >= 0 and finite, the message naming the key.
for mu in -0.1 nan inf; do
  "$AVI" run sphere-plate --set contact.friction=$mu -o "$work/x.h5" --quiet 2>"$work/err"; rc=$?
  [ "$rc" -eq 2 ] && grep -q "contact.friction" "$work/err" && [ ! -e "$work/x.h5" ] \
    || { echo "contact.friction=$mu: rc $rc: $(cat "$work/err")"; bad=$((bad + 1)); }
done
"$AVI" info "$work/missing.h5" 2>/dev/null; rc=$?
[ "$rc" -ne 0 ] || { echo "info on a missing file succeeded"; bad=$((bad + 1)); }
# An unwritable output path is bad input: a clear message naming it, exit 2.
"$AVI" run spring-chain --set time.end=0.01 -o /proc/avi-no-such-dir/x.h5 --quiet 2>"$work/err"; rc=$?
[ "$rc" -eq 2 ] && grep -q "/proc/avi-no-such-dir/x.h5" "$work/err" || { echo "unwritable output: rc $rc: $(cat "$work/err")"; bad=$((bad + 1)); }
echo "bad input: $n malformed scenes and usage errors checked, $bad problems"
[ "$bad" -eq 0 ]
