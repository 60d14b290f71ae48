"""avi from Python: runs scenes in this process through libavi.so (ctypes).

    import avi
    r = avi.run("bar", "bar.h5", overrides={"time.end": 0.5})
    r.observables["total_energy"]     # numpy array, one value per row
    r.observables["time"]             # the rows' times
    t, x = r.frames("bar")            # frame times [F], positions [F][n][3]

A scene is a YAML file's path, a built-in name (avi.scenes() lists them) or
a dict (given to the library as JSON, which its YAML loader reads; its mesh
files are relative to the working directory).
Overrides are "key=value" strings or a dict {dotted.key: value}, as
`avi run --set`. A failure raises avi.Error with the library's message and
status (2 bad input, 1 the run failed), the avi command's exit code.
Ctrl-C (KeyboardInterrupt) stops a run as SIGINT stops `avi run`: at the
next time boundary, with a checkpoint, the file closed as interrupted;
avi.resume(output) continues it.

The run is computed by the library in this process; the result is read
back from the HDF5 file it wrote (h5py). The library is found through
$AVI_LIBRARY, then next to this module's install prefix
(PREFIX/lib/libavi.so.0), then through the dynamic loader.
"""

import ctypes
import json
import os
import threading

__all__ = ["Error", "Result", "run", "resume", "scenes"]

STATUS_RUN, STATUS_INPUT, STATUS_INTERRUPTED = 1, 2, 130


class Error(Exception):
    """A failed load or run: str() is the library's message; .status the
    avi_status (AVI_ERR_INPUT 2, AVI_ERR_RUN 1, AVI_INTERRUPTED 130)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.message = message
        self.status = status


class _Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 512)]


class _Stats(ctypes.Structure):
    _fields_ = [("scene_name", ctypes.c_char_p), ("output", ctypes.c_char_p),
                ("checkpoint", ctypes.c_char_p), ("events", ctypes.c_uint64),
                ("time", ctypes.c_double), ("end_time", ctypes.c_double),
                ("wall", ctypes.c_double)]


class _Options(ctypes.Structure):
    # avi_run_options (include/avi/run.h), field for field; sig_atomic_t is
    # int on Linux. _load checks its size against avi_run_options_size().
    _fields_ = [("progress", ctypes.c_int), ("progress_every", ctypes.c_double),
                ("stop", ctypes.POINTER(ctypes.c_int)), ("scene_source", ctypes.c_char_p),
                ("command_line", ctypes.c_char_p)]


def _library_path():
    env = os.environ.get("AVI_LIBRARY")
    if env:
        return env
    # PREFIX/lib/python3/dist-packages/avi/__init__.py -> PREFIX/lib
    libdir = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
    here = os.path.join(libdir, "libavi.so.0")
    return here if os.path.exists(here) else "libavi.so.0"


def _load():
    lib = ctypes.CDLL(_library_path())
    P, E = ctypes.c_void_p, ctypes.POINTER(_Error)
    strs = ctypes.POINTER(ctypes.c_char_p)
    sigs = {
        "avi_scene_create": (P, []),
        "avi_scene_destroy": (None, [P]),
        "avi_scene_load": (ctypes.c_int, [ctypes.c_char_p, strs, ctypes.c_size_t, P, E]),
        "avi_scene_load_string": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                                 ctypes.c_char_p, strs, ctypes.c_size_t, P, E]),
        "avi_run_open": (P, [P, ctypes.c_char_p, ctypes.POINTER(_Options), E]),
        "avi_run_open_resume": (P, [ctypes.c_char_p, strs, ctypes.c_size_t, ctypes.POINTER(_Options), E]),
        "avi_run_evolve": (ctypes.c_int, [P, ctypes.c_double, E]),
        "avi_run_stats_of": (_Stats, [P]),
        "avi_run_close": (ctypes.c_int, [P, E]),
        "avi_scene_builtin_count": (ctypes.c_size_t, []),
        "avi_scene_builtin_name": (ctypes.c_char_p, [ctypes.c_size_t]),
        "avi_run_options_size": (ctypes.c_size_t, []),
        "avi_run_stats_size": (ctypes.c_size_t, []),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    # The structs above mirror C ones: a library of another layout would
    # be read wrongly, so refuse it.
    for mirror, size in ((_Options, lib.avi_run_options_size()), (_Stats, lib.avi_run_stats_size())):
        if ctypes.sizeof(mirror) != size:
            raise ImportError(f"{_library_path()}: {mirror.__name__} is {size} bytes there, "
                              f"{ctypes.sizeof(mirror)} here: the module and libavi do not match")
    return lib


_lib = None


def _get():
    global _lib
    if _lib is None:
        _lib = _load()
    return _lib


def scenes():
    """The built-in scenes' names."""
    lib = _get()
    return [lib.avi_scene_builtin_name(i).decode() for i in range(lib.avi_scene_builtin_count())]


def _override_list(overrides):
    if overrides is None:
        return []
    if isinstance(overrides, dict):
        return [f"{k}={json.dumps(v, allow_nan=True)}" for k, v in overrides.items()]
    if isinstance(overrides, str):
        return [overrides]
    return [str(o) for o in overrides]


def _fail(err, default=STATUS_INPUT):
    raise Error(err.message.decode("utf-8", "replace"), err.status or default)


def _load_scene(lib, scene, ov, err):
    arr = _strings(ov)
    s = lib.avi_scene_create()
    if not s:
        raise MemoryError("avi: out of memory")
    if isinstance(scene, dict):
        text = json.dumps(scene, allow_nan=True).encode()
        rc = lib.avi_scene_load_string(text, len(text), b"<dict>", None, arr, len(ov), s, err)
    elif isinstance(scene, (str, os.PathLike)):
        rc = lib.avi_scene_load(os.fsencode(scene), arr, len(ov), s, err)
    else:
        lib.avi_scene_destroy(s)
        raise TypeError("scene: a file path, a built-in name or a dict")
    if rc:
        lib.avi_scene_destroy(s)
        _fail(err)
    return s


def _strings(items):
    return (ctypes.c_char_p * max(len(items), 1))(*[o.encode() for o in items])


def run(scene, output, overrides=None, progress=False):
    """Runs `scene` to its end time writing `output` (HDF5, with its .xmf
    sidecar) and returns a Result. Raises avi.Error on bad input or a
    failed run (the file is then closed marked failed, as by `avi run`).
    progress=True draws avi's progress line on stderr."""
    lib = _get()
    err = _Error()
    s = _load_scene(lib, scene, _override_list(overrides), err)
    try:
        opt = _Options(int(progress), 0.0, None, None, b"python: avi.run")
        return _evolve(lib, lambda o: lib.avi_run_open(s, os.fsencode(output), o, ctypes.byref(err)),
                       opt, err, output)
    finally:
        lib.avi_scene_destroy(s)


def resume(output, overrides=None, progress=False):
    """Continues the run that wrote `output` from its checkpoint (after an
    interruption, a kill or a failure), as `avi resume`; overrides may only
    set time.end (extending a finished run)."""
    lib = _get()
    err = _Error()
    ov = _override_list(overrides)
    opt = _Options(int(progress), 0.0, None, None, b"python: avi.resume")
    return _evolve(lib, lambda o: lib.avi_run_open_resume(os.fsencode(output), _strings(ov), len(ov), o,
                                                          ctypes.byref(err)), opt, err, output)


def _evolve(lib, open_run, opt, err, output):
    """Opens a run, evolves it to its end on a worker thread (ctypes lets go
    of the GIL) so that Ctrl-C in this thread can set the run's stop flag,
    closes it and returns its Result."""
    stop = ctypes.c_int(0)
    opt.stop = ctypes.pointer(stop)
    r = open_run(ctypes.byref(opt))
    if not r:
        _fail(err)
    status, done = [], threading.Event()

    def evolve():
        try:
            status.append(lib.avi_run_evolve(r, lib.avi_run_stats_of(r).end_time, ctypes.byref(err)))
        finally:
            done.set()

    threading.Thread(target=evolve, daemon=True).start()
    # Not Thread.join: a KeyboardInterrupt inside it can leave is_alive()
    # false while the thread still runs (CPython 3.11), and closing the run
    # under it would free what it uses.
    interrupted = False
    while not done.is_set():
        try:
            done.wait(0.1)
        except KeyboardInterrupt:
            stop.value, interrupted = 2, True
    stats = lib.avi_run_stats_of(r)
    info = {"scene": stats.scene_name.decode(), "events": stats.events, "wall": stats.wall}
    cerr = _Error()
    crc = lib.avi_run_close(r, ctypes.byref(cerr))
    if interrupted and status[0] == STATUS_INTERRUPTED:
        raise KeyboardInterrupt(f"avi: interrupted at t = {stats.time:.6e} s; avi.resume({os.fspath(output)!r}) "
                                "continues it")
    if status[0]:
        _fail(err, STATUS_RUN)
    if crc:
        _fail(cerr, STATUS_RUN)
    return Result(os.fspath(output), **info)


class Result:
    """A finished run: its file, scene name, event count and wall time;
    observables and frames read from the file."""

    def __init__(self, path, scene, events, wall):
        self.path, self.scene, self.events, self.wall = path, scene, events, wall
        self._observables = None

    @property
    def observables(self):
        """{name: numpy array} for every /observables dataset, plus "time"
        (the rows' times, shared by all of them)."""
        if self._observables is None:
            import h5py
            with h5py.File(self.path, "r") as f:
                g = f["observables"]
                obs = {name: g[name]["value"][()] for name in g}
                obs["time"] = g[next(iter(g))]["time"][()]
            self._observables = obs
        return self._observables

    def frames(self, body):
        """(time[F], position[F][n][3]) of `body`'s frames."""
        import h5py
        with h5py.File(self.path, "r") as f:
            if body not in f["particles"]:
                raise KeyError(f"{self.path}: no body '{body}' (bodies: {', '.join(f['particles'])})")
            p = f["particles"][body]["position"]
            return p["time"][()], p["value"][()]

    def __repr__(self):
        return f"avi.Result({self.path!r}, scene={self.scene!r}, events={self.events})"
