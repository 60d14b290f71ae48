#!/usr/bin/env bash
# A YAML escape ("\0", "\x00", "\u0000") puts a NUL byte in a scene string,
# and every name and path is a C string that would end there: a scene
# whose output.file is "victim\0.h5" wrote the file "victim". Such a string,
# in a scene file or a --set value, in a value or a key, is bad input:
# exit 2 naming the file and line, and nothing is written.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
bad=0
body='bodies:
  - name: pair
    particles: [{x: [0, 0, 0], mass: 1}, {x: [1.5, 0, 0], mass: 1}]
    springs: [{a: 0, b: 1, stiffness: 100, rest: 1}]'
printf 'time: {end: 0.1}\n%s\n' "$body" > good.yaml
check() {  # what, expected message part, avi arguments...
  local what=$1 want=$2; shift 2
  printf 'keep me\n' > victim
  "$AVI" "$@" --quiet > out.txt 2>&1; rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q -- "$want" out.txt; then
    echo "nul: $what: exit $rc: $(head -3 out.txt)"; bad=$((bad + 1))
  fi
  printf 'keep me\n' | cmp -s - victim || { echo "nul: $what: victim was written"; bad=$((bad + 1)); }
  for f in *; do
    case $f in victim | out.txt | good.yaml | bad.yaml) ;;
      *) echo "nul: $what: left $f"; bad=$((bad + 1)); rm -f "$f" ;;
    esac
  done
}
for esc in '\0' '\x00' '\u0000'; do
  printf 'time: {end: 0.1}\noutput: {file: "victim%s.h5"}\n%s\n' "$esc" "$body" > bad.yaml
  check "output.file \"victim$esc.h5\"" "bad.yaml:2: a NUL byte in a string" run bad.yaml
done
printf '"ti\\0me": {end: 0.1}\n%s\n' "$body" > bad.yaml
check "a key with \\0" "bad.yaml:1: a NUL byte in a string" run bad.yaml -o out.h5
check "--set output.file" "a NUL byte in a string" run good.yaml --set 'output.file="victim\0.h5"'
check "--set name" "a NUL byte in a string" run good.yaml -o out.h5 --set 'name="a\x00b"'
[ "$bad" -eq 0 ] && echo "nul: NUL escapes in scene files, keys and --set values: exit 2, nothing written"
[ "$bad" -eq 0 ]
