#!/usr/bin/env bash
# The source directories form layers that include each other in one
# direction only (docs/ARCHITECTURE.md, "Layers"): every #include "dir/..."
# in src/<dir> names a layer below <dir> in LAYERS (or the public avi/), and
# the public headers include only each other. A cycle or an upward include
# fails, naming the file and line. Calls obey the same order: a global
# symbol that an object of src/<dir> (in the build tree of $AVI) uses and
# another source file defines must be defined in <dir> or a layer below,
# whatever header declared it (nm; a self-check plants an upward call).
# Inside the folders of ACYCLIC the files' calls form no circle either
# (a.c calls b.c and b.c calls a.c, directly or through others): one is
# printed file by file (a self-check plants one in core).
set -u
cd "$ROOT" || exit 1
LAYERS=(base potentials core contact sync io run cli)
ACYCLIC=(base potentials core contact run)
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
# circles: from symbols lines, one line per call circle among the files of
# one folder of ACYCLIC ("a.c -> b.c -> a.c: a call circle in DIR").
circles() {
  awk -v dirs="${ACYCLIC[*]}" '
    BEGIN { n = split(dirs, D, " "); for (i = 1; i <= n; i++) acyclic[D[i]] = 1 }
    $1 == "def" && !($4 in owner) { owner[$4] = $3 }
    $1 == "use" && ($2 in acyclic) { u++; ul[u] = $2; uf[u] = $3; us[u] = $4 }
    function dfs(a,    i, b, k, path) {
      state[a] = 1; stack[++sp] = a; pos[a] = sp
      for (i = 1; i <= deg[a]; i++) {
        b = adj[a, i]
        if (state[b] == 1) {
          path = ""
          for (k = pos[b]; k <= sp; k++) path = path stack[k] " -> "
          printf "%s%s: a call circle in %s (folders without one: %s)\n", path, b, layer[b], dirs
        } else if (!state[b]) dfs(b)
      }
      sp--; state[a] = 2
    }
    END {
      for (i = 1; i <= u; i++) {
        s = us[i]; a = uf[i]
        if (!(s in owner) || owner[s] == a) continue
        split(owner[s], p, "/"); if (p[2] != ul[i] || seen[a, owner[s]]++) continue
        adj[a, ++deg[a]] = owner[s]; layer[a] = layer[owner[s]] = ul[i]; nodes[a] = 1
      }
      for (a in nodes) if (!state[a]) dfs(a)
    }'
}
calls=0
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
  # Self-check: a core file a.c calling b.c, planted a call back from b.c
  # to a.c, must be reported as a circle.
  read -r fa fb sym < <(awk '$1 == "def" && !($4 in owner) { owner[$4] = $3 }
    $1 == "def" && $2 == "core" && !($3 in some) { some[$3] = $4 }
    $1 == "use" && $2 == "core" { u++; uf[u] = $3; us[u] = $4 }
    END { for (i = 1; i <= u; i++) { b = owner[us[i]]
            if (b ~ /^src\/core\// && b != uf[i] && (uf[i] in some)) { print uf[i], b, some[uf[i]]; exit } } }' "$work/symbols")
  if [ -z "${sym:-}" ]; then echo "layers: no call between two files of src/core to plant a circle on"; bad=$((bad + 1))
  else
    { cat "$work/symbols"; echo "use core $fb $sym"; } | circles | grep -qF "$fa -> $fb -> $fa: a call circle in core" ||
      { echo "layers: self-check: a planted call circle ($fa -> $fb -> $fa) was not reported"; bad=$((bad + 1)); }
  fi
  circles < "$work/symbols" > "$work/circles"
  cat "$work/circles"
  bad=$((bad + $(wc -l < "$work/circles")))
fi
echo "layers: ${#LAYERS[@]} layers (${LAYERS[*]}), $edges includes between source files, $calls undefined symbols in the objects of $B/src, no call circle in ${ACYCLIC[*]}, $bad problems"
[ "$bad" -eq 0 ]
