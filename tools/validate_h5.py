#!/usr/bin/python3
"""Checks that an avi output file follows the layout of include/avi/output.h
(H5MD 1.1, SI units): every group, attribute, dtype, shape, unit, dimension
scale (one on every dimension of every dataset), hard link, connectivity range and the monotonicity of times.

usage: validate_h5.py OUT.h5 [--complete] [--quiet]

Exits 0 when the file is valid, 1 with one problem per line otherwise, 2 when
the file cannot be opened. A file still being written is read in SWMR mode.
"""
import argparse
import re
import sys

import h5py
import numpy as np

KINDS = ["spring", "membrane", "hinge", "tet", "midedge", "gravity", "contact"]

# name: (width or None for value[T], integer?, unit)
OBSERVABLES = {
    "kinetic_energy": (None, False, "J"),
    "elastic_energy": (None, False, "J"),
    "contact_energy": (None, False, "J"),
    "external_energy": (None, False, "J"),
    "total_energy": (None, False, "J"),
    "linear_momentum": (3, False, "kg m s-1"),
    "angular_momentum": (3, False, "kg m2 s-1"),
    "events": (None, True, "1"),
    "active_contact_potentials": (None, True, "1"),
    "min_contact_distance": (None, False, "m"),
    "events_by_kind": (len(KINDS), True, "1"),
    "friction_work": (None, False, "J"),
    "kinetic_energy_midstep": (None, False, "J"),
    "total_energy_midstep": (None, False, "J"),
}

# Dimension scales of the connectivity datasets' second dimension, shared.
CORNER_SCALES = ("triangle_corner", "tetrahedron_corner")

PARAMETER_TEXT = ["scene", "scene_resolved", "scene_name", "integrator", "program_version",
                  "command_line", "started", "host", "build", "resumed", "run_id"]
PARAMETER_SECONDS = ["end_time", "energy_every", "frame_every"]
SYNCHRONIZED = {"kinetic_energy", "total_energy", "friction_work"}


def text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.shape == ():
        return text(value[()])
    return value if isinstance(value, str) else None


class Checker:
    def __init__(self, f):
        self.f = f
        self.problems = []

    def problem(self, msg):
        self.problems.append(msg)

    def get(self, path, kind=None):
        obj = self.f.get(path)
        if obj is None:
            self.problem(f"{path}: missing")
            return None
        if kind == "group" and not isinstance(obj, h5py.Group):
            self.problem(f"{path}: not a group")
            return None
        if kind == "dataset" and not isinstance(obj, h5py.Dataset):
            self.problem(f"{path}: not a dataset")
            return None
        return obj

    def attr_text(self, obj, name, expected=None):
        if name not in obj.attrs:
            self.problem(f"{obj.name}: attribute {name} missing")
            return None
        v = text(obj.attrs[name])
        if v is None:
            self.problem(f"{obj.name}: attribute {name} is not a string")
        elif expected is not None and v != expected:
            self.problem(f"{obj.name}: attribute {name} is {v!r}, expected {expected!r}")
        return v

    def attr_ints(self, obj, name, expected):
        if name not in obj.attrs:
            self.problem(f"{obj.name}: attribute {name} missing")
            return
        v = np.asarray(obj.attrs[name])
        if v.dtype.kind not in "iu" or v.tolist() != expected:
            self.problem(f"{obj.name}: attribute {name} is {v.tolist()!r} ({v.dtype}), expected {expected!r} (int)")

    def dtype(self, ds, kind, size=8):
        if ds.dtype.kind != kind or ds.dtype.itemsize != size:
            self.problem(f"{ds.name}: dtype {ds.dtype}, expected {'float' if kind == 'f' else 'int'}{8 * size}")

    def units(self, ds, expected):
        for name in ("unit", "units"):
            self.attr_text(ds, name, expected)

    def extendible(self, ds, chunk_rows=None):
        if ds.maxshape[0] is not None:
            self.problem(f"{ds.name}: first dimension is not unlimited")
        if ds.chunks is None:
            self.problem(f"{ds.name}: not chunked")
        elif chunk_rows is not None:
            lo, hi = chunk_rows
            if not lo <= ds.chunks[0] <= hi:
                self.problem(f"{ds.name}: chunk of {ds.chunks[0]} rows, expected {lo}..{hi}")
        if ds.compression is not None:
            self.problem(f"{ds.name}: compressed ({ds.compression}); time series must be uncompressed")

    def time_series(self, group, width, integer, unit, chunk_rows, value_shape_tail=None):
        """Checks step, time and value of an H5MD time-dependent group; returns (rows, time)."""
        step = self.get(group.name + "/step", "dataset")
        time = self.get(group.name + "/time", "dataset")
        value = self.get(group.name + "/value", "dataset")
        if step is None or time is None or value is None:
            return None, None
        self.dtype(step, "i")
        self.dtype(time, "f")
        self.dtype(value, "i" if integer else "f")
        self.units(step, "1")
        self.units(time, "s")
        self.units(value, unit)
        for ds in (step, time):
            if ds.ndim != 1:
                self.problem(f"{ds.name}: rank {ds.ndim}, expected 1")
            self.extendible(ds)
        tail = value_shape_tail if value_shape_tail is not None else (() if width is None else (width,))
        if value.shape[1:] != tail:
            self.problem(f"{value.name}: shape {value.shape}, expected (T,{','.join(map(str, tail))})")
        self.extendible(value, chunk_rows)
        rows = min(step.shape[0], time.shape[0], value.shape[0])
        if not (step.shape[0] == time.shape[0] == value.shape[0]):
            self.problem(f"{group.name}: step, time and value have {step.shape[0]}, {time.shape[0]}, "
                         f"{value.shape[0]} rows")
        # Dimension scale attached to dimension 0 of value.
        if not h5py.h5ds.is_scale(time.id):
            self.problem(f"{time.name}: not a dimension scale")
        elif not h5py.h5ds.is_attached(value.id, time.id, 0):
            self.problem(f"{value.name}: time is not attached to dimension 0")
        t = time[:rows]
        s = step[:rows]
        if rows and not np.all(np.isfinite(t)):
            self.problem(f"{time.name}: non-finite times")
        if rows > 1 and not np.all(np.diff(t) > 0):
            self.problem(f"{time.name}: times are not strictly increasing")
        if rows > 1 and not np.all(np.diff(s) >= 0):
            self.problem(f"{step.name}: steps decrease")
        return rows, t

    def hard_link(self, group, name, target):
        link = group.get(name, getlink=True)
        if not isinstance(link, h5py.HardLink):
            self.problem(f"{group.name}/{name}: not a hard link")
            return
        a = h5py.h5o.get_info(group[name].id)
        b = h5py.h5o.get_info(self.f[target].id)
        if (a.fileno, a.addr) != (b.fileno, b.addr):
            self.problem(f"{group.name}/{name}: not the same object as {target}")

    def check_h5md(self):
        g = self.get("/h5md", "group")
        if g is None:
            return
        self.attr_ints(g, "version", [1, 1])
        a = self.get("/h5md/author", "group")
        if a is not None:
            self.attr_text(a, "name")
        c = self.get("/h5md/creator", "group")
        if c is not None:
            self.attr_text(c, "name", "avi")
            self.attr_text(c, "version")
        u = self.get("/h5md/modules/units", "group")
        if u is not None:
            self.attr_ints(u, "version", [1, 0])
            self.attr_text(u, "system", "SI")

    def check_particles(self):
        g = self.get("/particles", "group")
        conn = self.get("/connectivity", "group")
        bodies = {}
        if g is None:
            return bodies
        if len(g) == 0:
            self.problem("/particles: no bodies")
        for name, body in g.items():
            p = body.name
            if not isinstance(body, h5py.Group):
                self.problem(f"{p}: not a group")
                continue
            box = self.get(p + "/box", "group")
            if box is not None:
                if "dimension" not in box.attrs or int(np.asarray(box.attrs["dimension"])) != 3:
                    self.problem(f"{box.name}: attribute dimension is not 3")
                b = box.attrs.get("boundary")
                if b is None or [text(x) for x in np.asarray(b).ravel()] != ["none"] * 3:
                    self.problem(f"{box.name}: attribute boundary is not ['none', 'none', 'none']")
            mass = self.get(p + "/mass", "dataset")
            n = None
            if mass is not None:
                self.dtype(mass, "f")
                self.units(mass, "kg")
                if mass.ndim != 1:
                    self.problem(f"{mass.name}: rank {mass.ndim}, expected 1")
                else:
                    n = mass.shape[0]
                    m = mass[()]
                    if n == 0:
                        self.problem(f"{mass.name}: no vertices")
                    if np.any(np.isnan(m)) or np.any(m < 0):
                        self.problem(f"{mass.name}: negative or NaN masses")
            pos = self.get(p + "/position", "group")
            vel = self.get(p + "/velocity", "group")
            if pos is None or vel is None or n is None:
                continue
            rows, _ = self.time_series(pos, None, False, "m", None, (n, 3))
            self.hard_link(vel, "step", pos.name + "/step")
            self.hard_link(vel, "time", pos.name + "/time")
            vrows, _ = self.time_series(vel, None, False, "m s-1", None, (n, 3))
            for ds in (pos.get("value"), vel.get("value")):
                if isinstance(ds, h5py.Dataset) and ds.chunks is not None and ds.chunks != (1, n, 3):
                    self.problem(f"{ds.name}: chunk {ds.chunks}, expected one frame (1, {n}, 3)")
            if rows is not None and vrows is not None and rows != vrows:
                self.problem(f"{p}: position has {rows} frames, velocity {vrows}")
            bodies[name] = (n, rows)
            if conn is not None:
                self.check_connectivity(conn, name, n)
        if conn is not None:
            for cname in conn:
                owner = cname.rsplit("_", 1)[0]
                if cname in CORNER_SCALES or (owner in bodies and cname.endswith(("_triangle", "_tetrahedron"))):
                    # The dimension scales of the connectivity datasets.
                    if not h5py.h5ds.is_scale(conn[cname].id):
                        self.problem(f"{conn.name}/{cname}: not a dimension scale")
                elif owner not in bodies and cname.endswith(("_triangles", "_tetrahedra")):
                    self.problem(f"{conn.name}/{cname}: no body named {owner!r}")
                elif not cname.endswith(("_triangles", "_tetrahedra")):
                    self.problem(f"{conn.name}/{cname}: unexpected dataset")
        frames = {r for _, r in bodies.values() if r is not None}
        if len(frames) > 1:
            self.problem(f"/particles: bodies have different frame counts {sorted(frames)}")
        return bodies

    def check_connectivity(self, conn, body, n):
        for suffix, per, required in (("triangles", 3, True), ("tetrahedra", 4, False)):
            path = f"{conn.name}/{body}_{suffix}"
            if path not in self.f:
                if required:
                    self.problem(f"{path}: missing")
                continue
            ds = self.get(path, "dataset")
            if ds is None:
                continue
            if ds.dtype != np.dtype("<i4") and ds.dtype != np.dtype(">i4"):
                self.problem(f"{path}: dtype {ds.dtype}, expected int32")
            if ds.ndim != 2 or ds.shape[1] != per:
                self.problem(f"{path}: shape {ds.shape}, expected (M, {per})")
                continue
            self.units(ds, "1")
            target = self.attr_text(ds, "particles_group", f"/particles/{body}")
            if target is not None and target not in self.f:
                self.problem(f"{path}: particles_group {target!r} does not exist")
            idx = ds[()]
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                self.problem(f"{path}: indices outside [0, {n})")

    def check_observables(self):
        g = self.get("/observables", "group")
        if g is None:
            return
        # output.synchronized_every N > 1: the synchronized energies and the
        # friction work have rows of their own (rows 0, N, 2N, ... and any
        # row off the energy grid), a subset of the others'.
        p = self.f.get("/parameters/synchronized_every")
        every = int(p[()]) if isinstance(p, h5py.Dataset) and p.shape == () else 1
        if every < 1:
            self.problem(f"/parameters/synchronized_every: {every}, not a row count >= 1")
        rows = {False: set(), True: set()}
        axis = {}
        for name, (width, integer, unit) in OBSERVABLES.items():
            og = self.get(f"/observables/{name}", "group")
            if og is None:
                continue
            synced = every > 1 and name in SYNCHRONIZED
            r, _ = self.time_series(og, width, integer, unit, (1024, 4096))
            if r is not None:
                rows[synced].add(r)
                axis.setdefault(synced, og)
        for synced, lengths in rows.items():
            if len(lengths) > 1:
                self.problem(f"/observables: {'synchronized ' if synced else ''}series have different lengths "
                             f"{sorted(lengths)}")
        if every > 1 and True in axis and False in axis:
            st, ss = axis[True]["time"][()], axis[True]["step"][()]
            rt, rs = axis[False]["time"][()], axis[False]["step"][()]
            at = np.searchsorted(rt, st)
            if (at >= len(rt)).any() or not np.array_equal(rt[np.minimum(at, len(rt) - 1)], st) or \
                    not np.array_equal(rs[np.minimum(at, len(rs) - 1)], ss):
                self.problem(f"{axis[True].name}: synchronized rows that are not rows of the other observables")
            elif len(rt) and len(st) < -(-len(rt) // every) - 1:
                self.problem(f"{axis[True].name}: {len(st)} synchronized rows for {len(rt)} rows at every {every}")
        ek = g.get("events_by_kind/value")
        if isinstance(ek, h5py.Dataset):
            kinds = ek.attrs.get("kinds")
            if kinds is None or [text(x) for x in np.asarray(kinds).ravel()] != KINDS:
                self.problem(f"{ek.name}: attribute kinds is not {KINDS}")
            ev = g.get("events/value")
            if isinstance(ev, h5py.Dataset):
                r = min(ek.shape[0], ev.shape[0])
                if r and not np.array_equal(ek[:r].sum(axis=1), ev[:r]):
                    self.problem(f"{ek.name}: per-kind counts do not add up to /observables/events")

    def check_parameters(self, require_complete):
        g = self.get("/parameters", "group")
        if g is None:
            return
        for name in PARAMETER_TEXT:
            ds = self.get(f"/parameters/{name}", "dataset")
            if ds is not None:
                if ds.dtype.kind not in "SOU" or ds.shape != ():
                    self.problem(f"{ds.name}: not a scalar string")
                elif name == "started" and not re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)?", text(ds[()]) or ""):
                    self.problem(f"{ds.name}: {text(ds[()])!r} is not ISO 8601 UTC (YYYY-MM-DDTHH:MM:SSZ)")
                elif name == "run_id" and not re.fullmatch(r"([0-9a-f]{32})?", text(ds[()]) or ""):
                    self.problem(f"{ds.name}: {text(ds[()])!r} is not 32 lower-case hex digits")
                self.units(ds, "")
        for name in PARAMETER_SECONDS:
            ds = self.get(f"/parameters/{name}", "dataset")
            if ds is not None:
                self.dtype(ds, "f")
                self.units(ds, "s")
        ds = self.get("/parameters/vertex_count", "dataset")
        if ds is not None:
            self.dtype(ds, "i")
            self.units(ds, "1")
        ds = self.get("/parameters/synchronized_every", "dataset") if "synchronized_every" in g else None
        if ds is not None:
            self.dtype(ds, "i")
            self.units(ds, "1")
        # threads (issue 30): files from before it have none.
        ds = self.get("/parameters/threads", "dataset") if "threads" in g else None
        if ds is not None:
            self.dtype(ds, "i")
            self.units(ds, "1")
            if ds.shape != () or not 0 <= int(ds[()]) <= 1024:
                self.problem(f"{ds.name}: not a thread count (a scalar in 0..1024)")
        ts = self.get("/parameters/time_step", "group")
        if ts is not None:
            k = self.get(ts.name + "/kind", "dataset")
            if k is not None:
                if [text(x) for x in k[()]] != KINDS:
                    self.problem(f"{k.name}: {[text(x) for x in k[()]]}, expected {KINDS}")
                self.units(k, "")
            for name, kind, unit in (("min", "f", "s"), ("max", "f", "s"), ("count", "i", "1")):
                ds = self.get(f"{ts.name}/{name}", "dataset")
                if ds is None:
                    continue
                self.dtype(ds, kind)
                self.units(ds, unit)
                if ds.shape != (len(KINDS),):
                    self.problem(f"{ds.name}: shape {ds.shape}, expected ({len(KINDS)},)")
            lo, hi = ts.get("min"), ts.get("max")
            if isinstance(lo, h5py.Dataset) and isinstance(hi, h5py.Dataset) and lo.shape == hi.shape:
                if np.any(lo[()] > hi[()]) or np.any(lo[()] < 0):
                    self.problem(f"{ts.name}: min > max or negative time steps")
        c = self.get("/parameters/completion", "dataset")
        if c is not None:
            # Fixed 64 bytes while running (and in a file killed before it
            # closed); variable-length UTF-8 with the whole text once closed.
            info = h5py.check_string_dtype(c.dtype)
            fixed = c.dtype.kind == "S" and c.dtype.itemsize == 64
            whole = info is not None and info.length is None and info.encoding == "utf-8"
            if c.shape != () or not (fixed or whole):
                self.problem(f"{c.name}: {c.dtype} {c.shape}, expected a scalar 64-byte or variable-length UTF-8 string")
            self.units(c, "")
            state = text(c[()])
            if state is None or not (state in ("running", "complete", "interrupted") or state.startswith("failed: ")):
                self.problem(f"{c.name}: unknown completion state {state!r}")
            elif whole and state == "running":
                self.problem(f"{c.name}: a closed file's state is 'running'")
            elif require_complete and state != "complete":
                self.problem(f"{c.name}: run is {state!r}, not 'complete'")

    def check_units_everywhere(self):
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                for a in ("unit", "units"):
                    if a not in obj.attrs:
                        self.problem(f"{obj.name}: attribute {a} missing")
                    elif text(obj.attrs[a]) is None:
                        self.problem(f"{obj.name}: attribute {a} is not a string")
            # Every time dataset is a dimension scale.
            if isinstance(obj, h5py.Dataset) and name.rsplit("/", 1)[-1] == "time":
                if not h5py.h5ds.is_scale(obj.id):
                    self.problem(f"{obj.name}: not a dimension scale")
            # Every dimension of every other dataset has one (netCDF readers
            # such as xarray and ncdump name dimensions after them).
            if isinstance(obj, h5py.Dataset) and not h5py.h5ds.is_scale(obj.id):
                for axis, dim in enumerate(obj.dims):
                    if len(dim) == 0:
                        self.problem(f"{obj.name}: no dimension scale on dimension {axis}")
        self.f.visititems(visit)

    def run(self, require_complete):
        for top in ("h5md", "particles", "connectivity", "observables", "parameters"):
            if top not in self.f:
                self.problem(f"/{top}: missing")
        self.check_h5md()
        self.check_particles()
        self.check_observables()
        self.check_parameters(require_complete)
        self.check_units_everywhere()
        # Several checks can report one defect twice; keep the first.
        seen = set()
        self.problems = [p for p in self.problems if not (p in seen or seen.add(p))]
        return self.problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--complete", action="store_true", help="also require completion state 'complete'")
    ap.add_argument("--quiet", action="store_true", help="print problems only")
    args = ap.parse_args()
    try:
        f = h5py.File(args.file, "r", swmr=True)
    except Exception as e:  # noqa: BLE001 - any failure to open is reported the same way
        print(f"{args.file}: cannot open in SWMR mode ({e})", file=sys.stderr)
        return 2
    with f:
        problems = Checker(f).run(args.complete)
    if problems:
        print(f"{args.file}: {len(problems)} problem(s)", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"{args.file}: valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
