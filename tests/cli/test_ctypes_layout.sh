#!/usr/bin/env bash
# The Python module mirrors C structs in ctypes (python/avi: every
# ctypes.Structure there names its C struct in _c_struct_). For each one,
# the field names (read from the header in include/avi), offsets and sizes
# (a C program of offsetof/sizeof, compiled here) and the total size must
# be the ctypes class's; a struct changed on one side only fails here, not
# silently at run time. The check is shown to catch a field planted in a
# copy of the header and a ctypes field of the wrong type.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
command -v "${CC:-gcc}" > /dev/null || { echo "ctypes layout: no C compiler (${CC:-gcc})"; exit 77; }
"$PYTHON" - "$ROOT" "$work" "${CC:-gcc}" <<'PY'
import ctypes, os, re, shutil, subprocess, sys
root, work, cc = sys.argv[1:4]
sys.path.insert(0, os.path.join(root, "python"))
import avi  # importing loads no library


def header_structs(include):
    """{struct name: (header, [field names])} for every typedef struct in
    include/avi/*.h."""
    out = {}
    for h in sorted(os.listdir(os.path.join(include, "avi"))):
        text = open(os.path.join(include, "avi", h)).read()
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
        for body, name in re.findall(r"typedef\s+struct\s*\w*\s*\{([^{}]*)\}\s*(\w+)\s*;", text):
            fields = []
            for decl in filter(None, (d.strip() for d in body.split(";"))):
                for part in decl.split(","):
                    m = re.search(r"(\w+)\s*(\[[^\]]*\]\s*)*$", part.strip())
                    fields.append(m.group(1) if m else None)
            # A declaration this reader does not follow (a function
            # pointer): the struct cannot be checked, so none may mirror it.
            if None not in fields:
                out[name] = ("avi/" + h, fields)
    return out


def c_layout(include, structs, tag):
    """{struct: ([(field, offset, size)], total size)} from a C program."""
    lines = ["#include <stddef.h>", "#include <stdio.h>"]
    lines += sorted({f'#include "{h}"' for h, _ in structs.values()})
    lines.append("int main(void)\n{")
    for s, (_, fields) in structs.items():
        lines.append(f'    printf("S {s} %zu\\n", sizeof({s}));')
        for f in fields:
            lines.append(f'    printf("F {s} {f} %zu %zu\\n", offsetof({s}, {f}), sizeof((({s} *)0)->{f}));')
    lines.append("    return 0;\n}\n")
    src, exe = os.path.join(work, f"layout_{tag}.c"), os.path.join(work, f"layout_{tag}")
    open(src, "w").write("\n".join(lines))
    subprocess.run([cc, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Werror", "-I", include, "-o", exe, src],
                   check=True)
    out = {s: ([], None) for s in structs}
    for line in subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines():
        w = line.split()
        if w[0] == "S":
            out[w[1]] = (out[w[1]][0], int(w[2]))
        else:
            out[w[1]][0].append((w[2], int(w[3]), int(w[4])))
    return out


def mirrors(module):
    return [c for c in vars(module).values()
            if isinstance(c, type) and issubclass(c, ctypes.Structure) and c is not ctypes.Structure]


def check(include, classes, tag):
    """The differences between the ctypes classes and the C structs."""
    problems = []
    hs = header_structs(include)
    named = {}
    for c in classes:
        s = getattr(c, "_c_struct_", None)
        if s not in hs:
            problems.append(f"{c.__name__}: _c_struct_ {s!r} is no typedef struct in {include}/avi "
                            "(with plain fields)")
        else:
            named[s] = (c, hs[s])
    layout = c_layout(include, {s: h for s, (_, h) in named.items()}, tag)
    for s, (c, _) in named.items():
        mine = [(f[0], getattr(c, f[0]).offset, getattr(c, f[0]).size) for f in c._fields_]
        theirs, size = layout[s]
        if [f[0] for f in mine] != [f[0] for f in theirs]:
            problems.append(f"{s}: fields {[f[0] for f in theirs]} in C, {[f[0] for f in mine]} in {c.__name__}")
        for a, b in zip(mine, theirs):
            if a[0] == b[0] and a[1:] != b[1:]:
                problems.append(f"{s}.{a[0]}: offset {b[1]} size {b[2]} in C, offset {a[1]} size {a[2]} in ctypes")
        if ctypes.sizeof(c) != size:
            problems.append(f"{s}: {size} bytes in C, {ctypes.sizeof(c)} in {c.__name__}")
    return problems


include = os.path.join(root, "include")
classes = mirrors(avi)
bad = []
problems = check(include, classes, "real")
bad += [f"drift: {p}" for p in problems]
if len(classes) < 3:
    bad.append(f"only {len(classes)} ctypes structs found in the module")

# Planted drifts, each of which must be caught: a field added in the C
# header where padding hides it from sizeof (after avi_run_options'
# leading int), and a ctypes field of the wrong type.
planted = os.path.join(work, "include")
shutil.copytree(include, planted)
run_h = os.path.join(planted, "avi", "run.h")
text = open(run_h).read()
open(run_h, "w").write(text.replace("    int progress;", "    int progress;\n    int planted;", 1))
caught = check(planted, classes, "planted_c")
if not any("planted" in p for p in caught):
    bad.append(f"a field planted in avi_run_options was not caught: {caught}")
wrong = [type(c.__name__, (ctypes.Structure,), {"_c_struct_": c._c_struct_, "_fields_": [
    (n, ctypes.c_long if t is ctypes.c_int else t) for n, t in c._fields_]}) for c in classes]
caught2 = check(include, wrong, "planted_py")
if not any("offset" in p or "bytes" in p for p in caught2):
    bad.append(f"int fields made long in ctypes were not caught: {caught2}")
for b in bad:
    print("ctypes layout:", b)
if not bad:
    print(f"ctypes layout: {', '.join(c._c_struct_ for c in classes)} match their headers; planted drifts caught: "
          f"{caught[0]}; {caught2[0]}")
sys.exit(1 if bad else 0)
PY
