#!/usr/bin/python3
"""Writes an ASCII Gmsh 4.1 mesh as binary Gmsh 4.1, for the tests.

usage: msh_binary.py IN.msh OUT.msh [--big-endian] [--size-t 4|8]

The binary format (Gmsh reference manual, "MSH file format", version 4.1):
"$MeshFormat\\n4.1 1 SIZE\\n", the int 1 in the writer's byte order (what a
reader uses to detect it), "\\n$EndMeshFormat\\n". Each section keeps its
"$Name\\n" and "\\n$EndName\\n" lines; its data is raw values: size_t (SIZE
bytes), int (4 bytes), double (8 bytes).
  $Entities: numPoints numCurves numSurfaces numVolumes (size_t), then the
    entities; written here with none (four zeros).
  $Nodes: numEntityBlocks numNodes minNodeTag maxNodeTag (size_t); per block
    entityDim entityTag parametric (int) numNodesInBlock (size_t), the node
    tags (size_t), then x y z (double) per node.
  $Elements: numEntityBlocks numElements minElementTag maxElementTag
    (size_t); per block entityDim entityTag elementType (int)
    numElementsInBlock (size_t), then per element its tag and node tags
    (size_t).
Sections other than these (e.g. $Comments) are copied as text.
"""
import argparse
import struct


def sections(text):
    out, name, body = {}, None, []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("$End"):
            out[name] = body
            name = None
        elif s.startswith("$"):
            name, body = s[1:], []
        elif name and s:
            body.append(s.split())
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--big-endian", action="store_true")
    ap.add_argument("--size-t", type=int, choices=(4, 8), default=8)
    a = ap.parse_args()
    with open(a.src, encoding="ascii") as f:
        sec = sections(f.read())
    if sec["MeshFormat"][0][:2] != ["4.1", "0"]:
        raise SystemExit(f"{a.src}: not an ASCII 4.1 mesh")
    e = ">" if a.big_endian else "<"
    st = e + ("Q" if a.size_t == 8 else "I")

    def sizes(*v):
        return b"".join(struct.pack(st, int(x)) for x in v)

    def ints(*v):
        return struct.pack(e + "%di" % len(v), *map(int, v))

    out = [b"$MeshFormat\n4.1 1 %d\n" % a.size_t, ints(1), b"\n$EndMeshFormat\n"]
    out += [b"$Entities\n", sizes(0, 0, 0, 0), b"\n$EndEntities\n"]
    for name, body in sec.items():
        if name not in ("MeshFormat", "Entities", "Nodes", "Elements"):
            out += [b"$%s\n" % name.encode(), *(" ".join(r).encode() + b"\n" for r in body), b"$End%s\n" % name.encode()]
    rows = iter(sec["Nodes"])
    head = next(rows)
    data = [sizes(*head)]
    for _ in range(int(head[0])):
        dim, tag, par, n = next(rows)
        data.append(ints(dim, tag, par) + sizes(n))
        tags = [next(rows)[0] for _ in range(int(n))]
        xyz = [next(rows) for _ in range(int(n))]
        data.append(sizes(*tags))
        data += [struct.pack(e + "%dd" % len(p), *map(float, p)) for p in xyz]
    out += [b"$Nodes\n", *data, b"\n$EndNodes\n"]
    rows = iter(sec["Elements"])
    head = next(rows)
    data = [sizes(*head)]
    for _ in range(int(head[0])):
        dim, tag, typ, n = next(rows)
        data.append(ints(dim, tag, typ) + sizes(n))
        data += [sizes(*next(rows)) for _ in range(int(n))]
    out += [b"$Elements\n", *data, b"\n$EndElements\n"]
    with open(a.dst, "wb") as f:
        f.write(b"".join(out))


if __name__ == "__main__":
    main()
