#!/usr/bin/env bash
# The documentation names only files the repository has: every path under a
# top-level directory and every file name (*.c, *.h, *.sh, *.py, *.md,
# *.yaml) in a Markdown file, and every *.md named in a source comment, must
# exist. Paths under build*/ are generated and not checked; names with a
# placeholder (<kind>, $X, ...) are skipped; globs must match something.
set -u
cd "$ROOT" || exit 1
"$PYTHON" - <<'EOF'
import glob, os, re, sys

SKIP_DIRS = {".git"}
files = []
for top, dirs, names in os.walk("."):
    dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
    files += [os.path.normpath(os.path.join(top, n)) for n in names]
basenames = {os.path.basename(f) for f in files}
docs = sorted(f for f in files if f.endswith(".md"))
sources = sorted(f for f in files if f.startswith(("src/", "include/", "tests/", "tools/", "bench/"))
                 and f.endswith((".c", ".h", ".sh", ".py")) or f == "Makefile")

TOP = r"(?:src|include|tests|bench|tools|docs|data)/[\w./*{},-]*"
PATH = re.compile(r"(?<![\w./-])(" + TOP + r")")
NAME = re.compile(r"(?<![\w/.-])([\w-]+\.(?:c|h|sh|py|md|yaml))(?![\w.-]*\w)")
# In sources: README.md-style names and paths with a directory (not a.md fields).
MD = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[A-Z][A-Z0-9_]*\.md|(?:[\w.-]+/)+[\w-]+\.md)(?!\w)")

def exists(p, here):
    p = p.rstrip(".,:;)")
    if not p or any(c in p for c in "<>$") or "..." in p:
        return True
    if "{" in p:  # a.{h,c}
        m = re.match(r"(.*)\{([^}]*)\}(.*)", p)
        return all(exists(m.group(1) + alt + m.group(3), here) for alt in m.group(2).split(","))
    for base in ("", here):
        q = os.path.normpath(os.path.join(base, p))
        if glob.glob(q):
            return True
    return False

bad = 0
def check(f, n, tok, ok):
    global bad
    if not ok:
        print(f"{f}:{n}: {tok}: no such file in the repository")
        bad += 1

checked = 0
for f in docs:
    here = os.path.dirname(f)
    for n, line in enumerate(open(f, encoding="utf-8"), 1):
        for tok in PATH.findall(line):
            checked += 1
            check(f, n, tok, exists(tok, here))
        for tok in NAME.findall(line):
            checked += 1
            check(f, n, tok, tok in basenames or exists(tok, here))
for f in sources:
    here = os.path.dirname(f)
    for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
        for tok in MD.findall(line):
            checked += 1
            check(f, n, tok, exists(tok, here) or os.path.basename(tok) in basenames and "/" not in tok)
print(f"doc paths: {checked} references in {len(docs)} Markdown and {len(sources)} source files, {bad} missing")
sys.exit(1 if bad else 0)
EOF
