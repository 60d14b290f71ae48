#!/usr/bin/env bash
# The source directories form layers that include each other in one
# direction only (docs/ARCHITECTURE.md, "Layers"): every #include "dir/..."
# in src/<dir> names a layer below <dir> in LAYERS (or the public avi/), and
# the public headers include only each other. A cycle or an upward include
# fails, naming the file and line. Calls obey the same order: a global
# symbol that an object of src/<dir> (in the build tree of $AVI) uses and
# another source file defines must be defined in <dir> or a layer below,
# whatever header declared it (nm; a self-check plants an upward call).
# Inside a folder, files that call each other in a circle (a strongly
# connected component of the file call graph) fail unless KNOWN_CIRCLES
# names that circle exactly; every circle found is listed.
set -u
cd "$ROOT" || exit 1
LAYERS=(base potentials core contact mesh output sync scene run cli)
# Circles of files inside a folder still to be broken: "folder: a.c b.c"
# (sorted). Remove a line when its circle is gone; add none.
KNOWN_CIRCLES=()
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

# Calls. symbols: one line "def|use LAYER SOURCE SYMBOL" per global symbol
# that the object of a src/*/*.c defines or leaves undefined (static
# functions and inlined header functions never cross objects).
B=$(dirname "$AVI")
objs=()
for c in src/*/*.c; do
  [ "$c" = src/cli/mpi_main.c ] && [ ! -x "$B/avi-mpi" ] && continue # built only where Open MPI is (make mpi)
  o=$B/${c%.c}.o
  if [ ! -f "$o" ]; then echo "$o: missing (make programs builds it)"; bad=$((bad + 1))
  elif [ "$c" -nt "$o" ]; then echo "$o: older than $c (make programs rebuilds it)"; bad=$((bad + 1))
  else objs+=("$o"); fi
done
symbols() {
  nm -A "${objs[@]}" | awk -v b="$B/" '{
    f = $1; sub(/:.*/, "", f); f = substr(f, length(b) + 1); sub(/\.o$/, ".c", f)
    split(f, d, "/"); t = $(NF - 1)
    if (t == "U") print "use", d[2], f, $NF
    else if (t ~ /^[A-Z]$/) print "def", d[2], f, $NF }'
}
# upward: from symbols lines, one line per use of a symbol defined in a
# layer above the user's.
upward() {
  awk -v layers="${LAYERS[*]}" '
    BEGIN { n = split(layers, L, " "); for (i = 1; i <= n; i++) rank[L[i]] = i }
    $1 == "def" && !($4 in owner) { owner[$4] = $2; where[$4] = $3 }
    $1 == "use" { u++; ul[u] = $2; uf[u] = $3; us[u] = $4 }
    END { for (i = 1; i <= u; i++) {
            s = us[i]
            if ((s in owner) && rank[owner[s]] > rank[ul[i]])
              printf "%s: %s calls %s, defined in %s, a layer above it (%s)\n", uf[i], ul[i], s, where[s], layers } }'
}
# circles: from symbols lines, one line "folder: a.c b.c ..." per set of
# two or more files of one folder that reach each other by calls.
circles() {
  awk '$1 == "def" && !($4 in owner) { owner[$4] = $3 }
       $1 == "use" { u++; uf[u] = $3; us[u] = $4 }
       function dir(f) { sub(/\/[^\/]*$/, "", f); sub(/^src\//, "", f); return f }
       function base(f) { sub(/^.*\//, "", f); return f }
       END {
         for (i = 1; i <= u; i++) {
           a = uf[i]; b = owner[us[i]]
           if (b == "" || a == b || dir(a) != dir(b)) continue
           if (!(a in id)) { id[a] = ++n; name[n] = a }
           if (!(b in id)) { id[b] = ++n; name[n] = b }
           r[id[a], id[b]] = 1
         }
         for (k = 1; k <= n; k++) for (i = 1; i <= n; i++) if (r[i, k]) for (j = 1; j <= n; j++) if (r[k, j]) r[i, j] = 1
         for (i = 1; i <= n; i++) {
           if (done[i]) continue
           m = 0
           for (j = 1; j <= n; j++) if (j == i || (r[i, j] && r[j, i])) { m++; c[m] = base(name[j]); done[j] = 1 }
           if (m < 2) continue
           for (x = 2; x <= m; x++) for (y = x; y > 1 && c[y - 1] > c[y]; y--) { t = c[y]; c[y] = c[y - 1]; c[y - 1] = t }
           line = dir(name[i]) ":"; for (x = 1; x <= m; x++) line = line " " c[x]
           print line
         } }' | sort
}
calls=0; ncircles=0
if [ ${#objs[@]} -gt 0 ]; then
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  symbols > "$work/symbols"
  calls=$(awk '$1 == "use"' "$work/symbols" | wc -l)
  # Self-check: base calling a function of the run layer must be reported.
  read -r src sym < <(awk '$1 == "def" && $2 == "run" { print $3, $4; exit }' "$work/symbols")
  if [ -z "${sym:-}" ]; then echo "layers: nm found no symbol defined in src/run"; bad=$((bad + 1))
  else
    { cat "$work/symbols"; echo "use base src/base/planted.c $sym"; } | upward |
      grep -qF "src/base/planted.c: base calls $sym, defined in $src," ||
      { echo "layers: self-check: a planted upward call (base -> $sym) was not reported"; bad=$((bad + 1)); }
  fi
  upward < "$work/symbols" > "$work/upward"
  cat "$work/upward"
  bad=$((bad + $(wc -l < "$work/upward")))
  # Self-check: two files of one folder calling each other are a circle.
  { cat "$work/symbols"; printf '%s\n' "def sync src/sync/planted_a.c planted_a" "def sync src/sync/planted_b.c planted_b" \
      "use sync src/sync/planted_a.c planted_b" "use sync src/sync/planted_b.c planted_a"; } | circles |
    grep -qx 'sync: planted_a.c planted_b.c' ||
    { echo "layers: self-check: a planted circle (sync: planted_a.c <-> planted_b.c) was not reported"; bad=$((bad + 1)); }
  circles < "$work/symbols" > "$work/circles"
  ncircles=$(wc -l < "$work/circles")
  while IFS= read -r circle; do
    known=0
    for k in "${KNOWN_CIRCLES[@]}"; do [ "$circle" = "$k" ] && known=1; done
    if [ $known = 1 ]; then echo "circle (known, to be broken): src/$circle"
    else echo "circle: src/$circle call each other (move the shared piece down or invert a call; docs/ARCHITECTURE.md, \"Layers\")"; bad=$((bad + 1)); fi
  done < "$work/circles"
  for k in "${KNOWN_CIRCLES[@]}"; do
    grep -qxF "$k" "$work/circles" || echo "note: known circle src/$k is gone: remove it from KNOWN_CIRCLES"
  done
fi
echo "layers: ${#LAYERS[@]} layers (${LAYERS[*]}), $edges includes between source files, $calls undefined symbols in the objects of $B/src, $ncircles circles of files inside a folder, $bad problems"
[ "$bad" -eq 0 ]
