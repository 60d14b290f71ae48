#!/usr/bin/env bash
# libavi.so exports exactly the public API: the dynamic symbols it defines
# (nm -D --defined-only) are the functions declared in include/avi/*.h,
# parsed from the preprocessed headers, in both directions: no internal
# function leaks (every export is an ABI promise) and no public function is
# missing. A self-check first plants an extra export and drops a public
# function, and the comparison must report both.
set -u
cd "$ROOT" || exit 1
B=$(dirname "$AVI")
so=$B/libavi.so
[ -e "$so" ] || { echo "exports: no $so (make $B/libavi.so.VERSION builds it)"; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# The public functions: every header preprocessed (comments and macros gone),
# only lines from include/avi/ kept, split into file-scope declarations at
# ';' and at the end of a function body; typedefs and static inline
# functions are no exports, the rest with a '(' declares a function, and
# an extern without one a variable.
for h in include/avi/*.h; do echo "#include \"${h#include/}\""; done |
  ${CC:-gcc} -E -Iinclude -x c - 2> "$work/cpp.err" |
  awk '/^# [0-9]+ "/ { keep = ($3 ~ /^"include\/avi\//); next } keep' | tr '\n' ' ' |
  awk '{ n = length($0); depth = 0; body = 0; s = ""
         for (i = 1; i <= n; i++) {
           c = substr($0, i, 1)
           if (c == "{") { if (depth++ == 0) body = (s ~ /\)[ \t]*$/); continue }
           if (c == "}") { if (--depth == 0 && body) { print s; s = "" } continue }
           if (depth > 0) continue
           if (c == ";") { print s; s = ""; continue }
           s = s c } }' |
  awk '$1 == "typedef" || $1 == "static" { next }
       /\(/ { sub(/[ \t]*\(.*/, ""); sub(/.*[^A-Za-z0-9_]/, ""); print; next }
       $1 == "extern" { sub(/[ \t]*(\[.*|=.*)?[ \t]*$/, ""); sub(/.*[^A-Za-z0-9_]/, ""); print }' |
  sort -u > "$work/public"
[ -s "$work/cpp.err" ] && { echo "exports: preprocessing include/avi: $(head -3 "$work/cpp.err")"; exit 1; }
npub=$(wc -l < "$work/public")
# A parse that finds almost nothing would pass against a library that
# exports almost nothing: the API has over a hundred functions.
[ "$npub" -ge 100 ] || { echo "exports: only $npub functions parsed from include/avi (parser broken?)"; exit 1; }
grep -qx avi_run_open "$work/public" && grep -qx avi_engine_create "$work/public" ||
  { echo "exports: avi_run_open or avi_engine_create not among the parsed functions"; exit 1; }

# What the library defines for others to link: every global dynamic symbol
# (functions and data, weak ones included).
nm -D --defined-only "$so" | awk 'NF == 3 && $2 ~ /^[A-Z]$/ { print $3 }' | sed 's/@.*//' | sort -u > "$work/exported"

# compare PUBLIC EXPORTED: one line per difference, none when they agree.
compare() {
  comm -13 "$1" "$2" | sed 's/^/exported but not in include\/avi: /'
  comm -23 "$1" "$2" | sed 's/^/declared in include\/avi but not exported: /'
}

# Self-check: a planted export and a missing public function are reported.
{ cat "$work/exported"; echo avi_planted_internal; } | sort > "$work/planted_extra"
grep -vx avi_run_open "$work/exported" > "$work/planted_missing"
compare "$work/public" "$work/planted_extra" | grep -q 'not in include/avi: avi_planted_internal$' ||
  { echo "exports: self-check: a planted extra export was not reported"; exit 1; }
compare "$work/public" "$work/planted_missing" | grep -q 'but not exported: avi_run_open$' ||
  { echo "exports: self-check: a public function left unexported was not reported"; exit 1; }

compare "$work/public" "$work/exported" > "$work/diff"
bad=$(wc -l < "$work/diff")
head -n 40 "$work/diff" | sed "s|^|$so: |"
echo "exports: $(wc -l < "$work/exported") exported, $npub public functions in include/avi, $bad differences"
[ "$bad" -eq 0 ]
