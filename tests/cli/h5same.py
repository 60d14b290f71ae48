#!/usr/bin/env python3
"""Bitwise comparison of avi output files, shared by the command-line tests.

    h5same.py [--groups G,G] [--min|--max DATASET=VALUE]... REF FILE [FILE ...]

Every dataset under the groups (default observables,particles) of REF must
be in each FILE with the same dtype, shape and bytes: the bits, so NaN
equals the same NaN and -0.0 differs from 0.0; strings by value. A dataset
only FILE has counts too (the same run must write the same datasets).
--min DATASET=VALUE requires REF's DATASET to reach VALUE somewhere (a
contact scene had contact, friction did work), --max to fall to VALUE
somewhere (a distance), so that an equal pair of runs that skipped the
interesting part does not pass. Prints one line per
differing FILE naming the datasets and the first differing element; exit
1 when any differs or a --min fails, 2 on bad usage or an unreadable file.
"""
import sys

import h5py
import numpy as np


def datasets(path, groups):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and name.split("/")[0] in groups:
                out[name] = obj[()]
        f.visititems(visit)
    return out


def first_difference(a, b):
    """Where two arrays of one dtype and shape first differ, bit for bit."""
    if a.dtype.kind == "O":
        for i, (x, y) in enumerate(zip(a.ravel().tolist(), b.ravel().tolist())):
            if x != y:
                return np.unravel_index(i, a.shape), x, y
        return None
    ab = np.ascontiguousarray(a).view(np.uint8).reshape(a.size, -1) if a.size else a
    bb = np.ascontiguousarray(b).view(np.uint8).reshape(b.size, -1) if b.size else b
    rows = np.nonzero(np.any(ab != bb, axis=1))[0] if a.size else []
    if len(rows) == 0:
        return None
    i = int(rows[0])
    return np.unravel_index(i, a.shape), a.ravel()[i], b.ravel()[i]


def same(a, b):
    if a.dtype.str != b.dtype.str or a.shape != b.shape:
        return False
    if a.dtype.kind == "O":
        return a.ravel().tolist() == b.ravel().tolist()
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def main(argv):
    groups, mins, files = ("observables", "particles"), [], []
    args = iter(argv)
    for a in args:
        if a == "--groups":
            groups = tuple(next(args, "").split(","))
        elif a in ("--min", "--max"):
            name, _, value = next(args, "").partition("=")
            try:
                mins.append((a, name.strip("/"), float(value)))
            except ValueError:
                print(f"h5same: {a} {name}={value}: not DATASET=NUMBER", file=sys.stderr)
                return 2
        else:
            files.append(a)
    if len(files) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        ref = datasets(files[0], groups)
    except OSError as e:
        print(f"h5same: {files[0]}: {e}", file=sys.stderr)
        return 2
    bad = 0
    if not ref:
        print(f"h5same: {files[0]}: no dataset under {', '.join(groups)}")
        bad += 1
    for opt, name, value in mins:
        if name not in ref:
            print(f"h5same: {files[0]}: no dataset {name}")
            bad += 1
        elif opt == "--min" and not (ref[name].size and np.nanmax(ref[name]) >= value):
            print(f"h5same: {files[0]}: {name} never reaches {value:g}")
            bad += 1
        elif opt == "--max" and not (ref[name].size and np.nanmin(ref[name]) <= value):
            print(f"h5same: {files[0]}: {name} never falls to {value:g}")
            bad += 1
    for path in files[1:]:
        try:
            got = datasets(path, groups)
        except OSError as e:
            print(f"h5same: {path}: {e}", file=sys.stderr)
            return 2
        missing = sorted(set(ref) - set(got))
        added = sorted(set(got) - set(ref))
        diff = sorted(n for n in set(ref) & set(got) if not same(ref[n], got[n]))
        if missing or added or diff:
            bad += 1
            what = []
            if missing:
                what.append(f"{len(missing)} missing, e.g. {missing[:3]}")
            if added:
                what.append(f"{len(added)} added, e.g. {added[:3]}")
            if diff:
                what.append(f"{len(diff)} differ, e.g. {diff[:3]}")
                a, b = ref[diff[0]], got[diff[0]]
                if a.dtype.str != b.dtype.str or a.shape != b.shape:
                    what.append(f"{diff[0]}: {a.dtype.str} {a.shape} against {b.dtype.str} {b.shape}")
                else:
                    where, x, y = first_difference(a, b)
                    what.append(f"{diff[0]}{list(map(int, where))}: {x!r} against {y!r}")
            print(f"h5same: {path} against {files[0]}: " + "; ".join(what))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
