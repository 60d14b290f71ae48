#!/usr/bin/env bash
# The build from a clean checkout of HEAD (git archive: no build/ tree, no
# generated files) into an outside directory, make B=<dir>: the library and
# avi build there (at -O0, to stay cheap), avi lists the built-in scenes,
# nothing is written into the checkout, and libavi holds one event queue
# (the benchmark queues live in bench/). Also, without building: the
# compiler default is gcc (make's predefined cc does not win), and a
# user CFLAGS adds to OPT, ARCH and the fixed flags instead of replacing
# them. AVI_BUILD_REV checks another commit (default HEAD).
set -u
rev=${AVI_BUILD_REV:-HEAD}
command -v git >/dev/null && git -C "$ROOT" rev-parse --verify -q "$rev^{commit}" >/dev/null \
  || { echo "skipped: needs git and a git checkout at $ROOT"; exit 77; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
src="$work/src" b="$work/out/b"
mkdir -p "$src" && git -C "$ROOT" archive "$rev" | tar -x -C "$src" || { echo "git archive $rev failed"; exit 1; }
bad=0
fail() { echo "$*"; bad=$((bad + 1)); }

# The compile line of one object, printed only (-n), with a user CFLAGS.
line=$(env -u CC make -s -n -C "$src" B="$b" CFLAGS=-DAVI_USER_FLAG "$b/src/core/model.o" 2>&1 | grep -- ' -c src/core/model.c')
[ -n "$line" ] || fail "no compile line for model.o"
[[ $line == gcc\ * ]] || fail "compiler is not gcc by default: $line"
for f in -O3 -DAVI_USER_FLAG -std=c11 -ffp-contract=off -Wall "-I$b/gen"; do
  [[ " $line " == *" $f "* ]] || fail "compile line lacks $f: $line"
done
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  [[ " $line " == *" -mavx2 -mfma "* ]] || fail "compile line lacks the ARCH flags -mavx2 -mfma: $line"
fi
# An environment CC is used as given; an environment ARCH (often x86_64) is not.
line=$(CC=my-cc ARCH=x86_64 make -s -n -C "$src" B="$b" "$b/src/core/model.o" 2>&1 | grep -- ' -c src/core/model.c')
[[ $line == my-cc\ * ]] || fail "CC from the environment not used: $line"
[[ " $line " != *" x86_64 "* ]] || fail "ARCH from the environment used as flags: $line"

# The library and avi, built from the clean tree into $b.
if make -s -C "$src" -j2 B="$b" OPT=-O0 CFLAGS= "$b/avi" >"$work/make.log" 2>&1; then
  n=$("$b/avi" scenes | wc -l)
  [ "$n" -eq "$("$AVI" scenes | wc -l)" ] && [ "$n" -gt 0 ] || fail "$b/avi lists $n built-in scenes"
  syms=$(nm "$b/libavi.a" 2>/dev/null)
  grep -q ' T avi_tl_push$' <<<"$syms" || fail "libavi.a lacks the engine's queue (avi_tl_push)"
  q=$(grep -i -E 'calendar|heap|cq_|eq_' <<<"$syms")
  [ -z "$q" ] || fail "libavi.a holds benchmark queue symbols: $(head -3 <<<"$q")"
else
  fail "make B=$b failed: $(tail -5 "$work/make.log")"
fi
[ ! -e "$src/build" ] || fail "make B=$b wrote into the checkout: $(ls "$src/build" | head -3)"
echo "build: clean checkout of $rev into B=<outside dir>, compiler default, user CFLAGS: $bad problems"
[ "$bad" -eq 0 ]
