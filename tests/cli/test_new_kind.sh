#!/usr/bin/env bash
# A potential kind is one unit (docs/ARCHITECTURE.md, "New kind"): for every
# kind, counts the files under src/, include/ and python/ outside the kind's
# own files that name it, and fails when a kind is named in more files than
# the recipe's number (the "at most N files" of that section).
#   kind       every AVI_KIND_<NAME> of include/avi/types.h but COUNT and
#              CONTACT (contact stands outside the list: src/contact/)
#   own files  src/potentials/<stem>*, <stem>.h the header that declares
#              the record type avi_<name>
#   naming     AVI_KIND_<NAME> or <NAME> as a word, avi_<name>, avi_kind_<name>,
#              avi_<stem>_*, "potentials/<stem>..." and the string "<name>"
# Usage: test_new_kind.sh [TREE] (default $ROOT); TREE=another checkout
# (e.g. the base commit) only prints its counts. Set VERBOSE=1 for the files.
set -u
tree=${1:-${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}}
cd "$tree" || exit 1
limit=$(awk '/^## New kind/ { on = 1; next } /^## / { on = 0 } on && match($0, /at most [0-9]+ files/) {
  s = substr($0, RSTART + 8, RLENGTH - 14); print s + 0; exit }' docs/ARCHITECTURE.md 2>/dev/null)
kinds=$(grep -o 'AVI_KIND_[A-Z0-9_]* *=' include/avi/types.h | sed 's/ *=//; s/AVI_KIND_//' | grep -v -x -e COUNT -e CONTACT)
[ -n "$kinds" ] || { echo "include/avi/types.h: no kinds found"; exit 1; }
bad=0; worst=0; total=0
for K in $kinds; do
  k=$(echo "$K" | tr 'A-Z' 'a-z')
  hdr=$(grep -l -E "^} avi_${k};" src/potentials/*.h | head -1)
  [ -n "$hdr" ] || { echo "kind $k: no header in src/potentials/ declares its record avi_$k"; bad=$((bad + 1)); continue; }
  stem=$(basename "$hdr" .h)
  pat="\\bAVI_KIND_${K}\\b|\\b${K}\\b|\\bavi_${k}\\b|\\bavi_kind_${k}\\b|\\bavi_${stem}_[a-z0-9_]+|\"potentials/${stem}[._]|\"${k}\""
  files=$(grep -rlE "$pat" src include python --include='*.c' --include='*.h' --include='*.py' --include='*.map' 2>/dev/null |
    grep -v -E "^src/potentials/${stem}[._]" | sort)
  n=$(printf '%s' "$files" | grep -c .)
  total=$((total + n)); [ "$n" -gt "$worst" ] && worst=$n
  echo "  $k ($stem): $n files"
  [ "${VERBOSE:-0}" = 1 ] && printf '    %s\n' $files
  if [ -n "$limit" ] && [ "$n" -gt "$limit" ]; then
    echo "kind $k is named in $n files outside src/potentials/$stem*, more than the $limit of docs/ARCHITECTURE.md, \"New kind\":"
    printf '    %s\n' $files
    bad=$((bad + 1))
  fi
done
echo "new kind: at most $worst files per kind ($total in all), recipe limit ${limit:-none}"
if [ "$tree" = "${ROOT:-}" ] && [ -z "$limit" ]; then
  echo "docs/ARCHITECTURE.md: no \"at most N files\" in its \"## New kind\" section"; bad=$((bad + 1))
fi
[ "$bad" -eq 0 ]
