#!/usr/bin/env bash
# The source directories form layers that include each other in one
# direction only (docs/ARCHITECTURE.md, "Layers"): every #include "dir/..."
# in src/<dir> names a layer below <dir> in LAYERS (or the public avi/), and
# the public headers include only each other. A cycle or an upward include
# fails, naming the file and line.
set -u
cd "$ROOT" || exit 1
LAYERS=(base potentials core contact sync io run cli)
declare -A rank
for i in "${!LAYERS[@]}"; do rank[${LAYERS[$i]}]=$i; done
bad=0; edges=0
for dir in src/*/; do
  d=$(basename "$dir")
  [ -n "${rank[$d]+x}" ] || { echo "src/$d: not a known layer (add it to LAYERS and docs/ARCHITECTURE.md)"; bad=$((bad + 1)); continue; }
  while IFS=: read -r file line inc; do
    to=${inc%%/*}
    [ "$to" = avi ] && continue
    edges=$((edges + 1))
    if [ -z "${rank[$to]+x}" ]; then echo "$file:$line: includes \"$inc\" from no known layer"; bad=$((bad + 1))
    elif [ "$to" != "$d" ] && [ "${rank[$to]}" -ge "${rank[$d]}" ]; then
      echo "$file:$line: $d includes \"$inc\", a layer above or beside it (${LAYERS[*]})"; bad=$((bad + 1))
    fi
  done < <(grep -Ho -n '^#include "[a-z_]*/[^"]*"' "$dir"*.[ch] 2>/dev/null | sed 's/#include "//; s/"$//')
done
while IFS=: read -r file line inc; do
  case "$inc" in avi/*) ;; *) echo "$file:$line: a public header includes \"$inc\""; bad=$((bad + 1)) ;; esac
done < <(grep -Ho -n '^#include "[^"]*"' include/avi/*.h | sed 's/#include "//; s/"$//')
echo "layers: ${#LAYERS[@]} layers (${LAYERS[*]}), $edges includes between source files, $bad problems"
[ "$bad" -eq 0 ]
