#!/usr/bin/python3
"""Writes the malformed binary Gmsh 4.1 files of tests/data/meshes (and the
binary seed of tests/fuzz/corpus_msh) from data/meshes/unit_cube_v41.msh,
through msh_binary.py (its docstring gives the layout). Run from the
repository root: tests/data/msh_binary_bad.py"""
import os
import struct
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
with tempfile.TemporaryDirectory() as tmp:
    cube = os.path.join(tmp, "cube.msh")
    subprocess.run([sys.executable, os.path.join(here, "msh_binary.py"), "data/meshes/unit_cube_v41.msh", cube], check=True)
    good = open(cube, "rb").read()

nodes = good.index(b"$Nodes\n") + 7           # numEntityBlocks numNodes minTag maxTag (size_t)
block = nodes + 32                            # entityDim entityTag parametric (int) count (size_t)
elements = good.index(b"$Elements\n") + 10
eblock = elements + 32                        # entityDim entityTag elementType (int) count (size_t)
last = good.index(b"\n$EndElements\n") - 8     # the last node tag of the last tetrahedron


def put(data, at, fmt, value):
    b = bytearray(data)
    struct.pack_into(fmt, b, at, value)
    return bytes(b)


bad = {
    # ends in the node tags of the first block
    "binary_truncated_nodes_v41.msh": good[:block + 20 + 16],
    # a block count (and the header's) far beyond the file's size
    "binary_count_beyond_file_v41.msh": put(put(good, nodes + 8, "<Q", 1 << 40), block + 12, "<Q", 1 << 40),
    "binary_undefined_node_v41.msh": put(good, last, "<Q", 99),
    "binary_unknown_type_v41.msh": put(good, eblock + 8, "<i", 99),
    "binary_bad_data_size_v41.msh": good.replace(b"4.1 1 8\n", b"4.1 1 3\n", 1),
    "binary_bad_byte_order_v41.msh": put(good, 20, "<i", 2),
    "binary_v22.msh": good.replace(b"4.1 1 8\n", b"2.2 1 8\n", 1),
    # the element counts do not add up to the header's
    "binary_element_count_v41.msh": put(good, elements + 8, "<Q", 99),
}
for name, data in bad.items():
    with open(os.path.join("tests/data/meshes", name), "wb") as f:
        f.write(data)
with open("tests/fuzz/corpus_msh/binary_unit_cube_v41.msh", "wb") as f:
    f.write(good)
