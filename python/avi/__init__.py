"""avi from Python: runs scenes in this process through libavi.so (ctypes).

    import avi
    r = avi.run("bar", "bar.h5", overrides={"time.end": 0.5})
    r.observables["elastic_energy"]   # numpy array, one value per row
    r.observables["time"]             # the rows' times
    r.observables["total_energy"]     # one per synchronized row (output.synchronized_every)
    r.observables["synchronized_time"]  # their times
    t, x = r.frames("bar")            # frame times [F], positions [F][n][3]

A scene is a YAML file's path, a built-in name (avi.scenes() lists them) or
a dict (given to the library as JSON, which its YAML loader reads; its mesh
files are relative to the working directory).
Overrides are "key=value" strings or a dict {dotted.key: value}, as
`avi run --set`. threads=N runs the engine on N threads, as `avi run
--threads N` ('auto': every processor this process may run on; default:
the scene's parallel.threads, else avi's default: one thread per 25 000
clocks without contact or damping, else 1); the results are the same bits
for every N.
A failure raises avi.Error with the library's message and
status (2 bad input, 1 the run failed), the avi command's exit code.
Ctrl-C (KeyboardInterrupt) stops a run as SIGINT stops `avi run`: at the
next time boundary, with a checkpoint, the file closed as interrupted;
avi.resume(output) continues it.

The run is computed by the library in this process; the result is read
back from the HDF5 file it wrote, which needs h5py and numpy in this
interpreter (Debian: apt-get install python3-h5py; a venv: pip install
h5py); avi.Result(path) reads any avi output, a killed run's too (SWMR).
The library is found through $AVI_LIBRARY, then next to this module's
install prefix (PREFIX/lib/libavi.so.0), then in the source tree this
module is in (build/libavi.so.0, from `make shared`), then through the
dynamic loader. Paths, keys and values with a NUL byte, override keys that
are not dotted keys and override values with a comment or a line break
raise avi.Error (status 2) before anything reaches the library.
"""

import ctypes
import json
import operator
import os
import re
import threading

__all__ = ["Error", "Result", "run", "resume", "scenes"]

STATUS_RUN, STATUS_INPUT, STATUS_INTERRUPTED = 1, 2, 130
MAX_THREADS = 1024  # AVI_RUN_MAX_THREADS (include/avi/run.h)


class Error(Exception):
    """A failed load or run: str() is the library's message; .status the
    avi_status (AVI_ERR_INPUT 2, AVI_ERR_RUN 1, AVI_INTERRUPTED 130)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.message = message
        self.status = status


# The ctypes mirrors of C structs: each names its struct in _c_struct_, and
# tests/cli/test_ctypes_layout.sh compares every field's name, offset and
# size, and the total size, with the C header's.
class _Error(ctypes.Structure):
    _c_struct_ = "avi_error"
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 512)]


class _Stats(ctypes.Structure):
    _c_struct_ = "avi_run_stats"
    _fields_ = [("scene_name", ctypes.c_char_p), ("output", ctypes.c_char_p),
                ("checkpoint", ctypes.c_char_p), ("events", ctypes.c_uint64),
                ("time", ctypes.c_double), ("end_time", ctypes.c_double),
                ("wall", ctypes.c_double)]


class _Options(ctypes.Structure):
    # sig_atomic_t is int on Linux. _load also checks the size against
    # avi_run_options_size(), for a library of another version.
    _c_struct_ = "avi_run_options"
    _fields_ = [("progress", ctypes.c_int), ("progress_every", ctypes.c_double),
                ("stop", ctypes.POINTER(ctypes.c_int)), ("scene_source", ctypes.c_char_p),
                ("command_line", ctypes.c_char_p), ("threads", ctypes.c_int)]


def _library_candidates():
    """Where libavi.so.0 may be, in order: (description, path)."""
    env = os.environ.get("AVI_LIBRARY")
    if env:
        return [("$AVI_LIBRARY", env)]
    here = os.path.dirname(os.path.abspath(__file__))
    # Installed: PREFIX/lib/python3/dist-packages/avi -> PREFIX/lib.
    prefix_lib = os.path.normpath(os.path.join(here, "..", "..", ".."))
    # The source tree: ROOT/python/avi -> ROOT/build (the Makefile's $(SO)).
    root = os.path.normpath(os.path.join(here, "..", ".."))
    found = [("the install prefix", os.path.join(prefix_lib, "libavi.so.0"))]
    if os.path.exists(os.path.join(root, "include", "avi", "run.h")):
        found.append(("the source tree", os.path.join(root, "build", "libavi.so.0")))
    return found


def _open_library():
    candidates = _library_candidates()
    if candidates[0][0] == "$AVI_LIBRARY":
        try:
            return ctypes.CDLL(candidates[0][1]), candidates[0][1]
        except OSError as e:
            raise Error(f"AVI_LIBRARY={candidates[0][1]}: cannot load it: {e}", STATUS_INPUT) from None
    for _, path in candidates:
        if os.path.exists(path):
            try:
                return ctypes.CDLL(path), path
            except OSError as e:
                raise Error(f"{path}: cannot load it: {e}", STATUS_INPUT) from None
    try:
        return ctypes.CDLL("libavi.so.0"), "libavi.so.0"
    except OSError:
        looked = ", ".join(path for _, path in candidates)
        tree = [path for what, path in candidates if what == "the source tree"]
        build = (f"in the source tree run `make shared` (it builds {tree[0]}), " if tree else "")
        raise Error(f"libavi.so.0 not found (looked at {looked} and in the dynamic loader's path): "
                    f"{build}install avi with `make install` or set AVI_LIBRARY to the library's path",
                    STATUS_INPUT) from None


def _load():
    lib, path = _open_library()
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
            raise Error(f"{path}: {mirror._c_struct_} is {size} bytes there, "
                        f"{ctypes.sizeof(mirror)} here: the module and libavi do not match", STATUS_INPUT)
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


# An override's key, as `avi run --set` walks it (src/scene/scene_set.c): a
# dotted path of mapping keys, sequence indices and body or material names.
_KEY = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*")


def _check_key(key):
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise Error(f"override key {key!r}: not a scene key (a dotted path of letters, digits, '_' "
                    "and '-', e.g. time.end or bodies.0.velocity)", STATUS_INPUT)


def _check_value(key, text):
    """A value as text must be one YAML flow node: no line break, and no
    comment, which would hide the rest of it (e.g. a second assignment)."""
    if "\0" in text or "\n" in text or "\r" in text:
        raise Error(f"override {key}: the value {text!r} has a NUL byte or a line break", STATUS_INPUT)
    quote, prev, i = None, " ", 0
    while i < len(text):
        c = text[i]
        if quote == '"':
            if c == "\\":
                i, prev = i + 2, "x"  # an escape: the next character is text
                continue
            if c == '"':
                quote = None
        elif quote == "'":
            if c == "'" and text[i + 1:i + 2] == "'":
                i += 2  # '' is a quote inside single quotes
                continue
            if c == "'":
                quote = None
        elif c in "'\"" and prev in " \t[{,:":
            quote = c
        elif c == "#" and prev in " \t":
            raise Error(f"override {key}: the value {text!r} has a comment (' #'); quote it if '#' is "
                        "meant", STATUS_INPUT)
        prev, i = c, i + 1
    return text


def _check_text(what, value):
    """Refuses a NUL byte anywhere in a dict's keys and strings: the library
    reads C strings, and would take "victim\\0.h5" as "victim"."""
    if isinstance(value, str):
        if "\0" in value:
            raise Error(f"{what}: {value!r} has a NUL byte", STATUS_INPUT)
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_text(what, k)
            _check_text(f"{what}.{k}", v)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_text(f"{what}.{i}", v)


def _override_list(overrides):
    """The overrides as "key=value" strings, each key and value checked."""
    if overrides is None:
        return []
    out = []
    if isinstance(overrides, dict):
        for k, v in overrides.items():
            _check_key(k)
            _check_text(f"override {k}", v)
            out.append(f"{k}={json.dumps(v, allow_nan=True)}")
        return out
    for o in [overrides] if isinstance(overrides, str) else overrides:
        o = str(o)
        key, eq, value = o.partition("=")
        if not eq:
            raise Error(f"override {o!r}: expected KEY=VALUE", STATUS_INPUT)
        _check_key(key)
        out.append(f"{key}={_check_value(key, value)}")
    return out


def _path(what, path):
    """A path as bytes for the library; one with a NUL byte would be cut
    there (writing another file), so it is refused."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"{what}: a path (str, bytes or os.PathLike), not {type(path).__name__}")
    b = os.fsencode(path)
    if b"\0" in b:
        raise Error(f"{what} {os.fsdecode(b)!r}: a path with a NUL byte", STATUS_INPUT)
    return b


def _fail(err, default=STATUS_INPUT):
    raise Error(err.message.decode("utf-8", "replace"), err.status or default)


def _scene_arg(scene):
    """The scene as the library takes it: ("text", JSON bytes) for a dict,
    ("path", bytes) for a file or built-in name; checked for NUL bytes."""
    if isinstance(scene, dict):
        _check_text("scene", scene)
        return "text", json.dumps(scene, allow_nan=True).encode()
    if isinstance(scene, (str, bytes, os.PathLike)):
        return "path", _path("scene", scene)
    raise TypeError("scene: a file path, a built-in name or a dict")


def _load_scene(lib, scene, ov, err):
    kind, arg = scene
    arr = _strings(ov)
    s = lib.avi_scene_create()
    if not s:
        raise MemoryError("avi: out of memory")
    if kind == "text":
        rc = lib.avi_scene_load_string(arg, len(arg), b"<dict>", None, arr, len(ov), s, err)
    else:
        rc = lib.avi_scene_load(arg, arr, len(ov), s, err)
    if rc:
        lib.avi_scene_destroy(s)
        _fail(err)
    return s


def _threads(threads):
    """threads= as avi_run_options.threads: None is 0 (the scene's or the
    default); else a whole number from 1 to MAX_THREADS, checked here."""
    if threads is None:
        return 0
    if threads == "auto":
        return -1  # AVI_RUN_THREADS_AUTO
    try:
        n = None if isinstance(threads, bool) else operator.index(threads)
    except TypeError:
        n = None
    if n is None or not 1 <= n <= MAX_THREADS:
        raise Error(f"threads={threads!r}: expected a whole number of threads from 1 to {MAX_THREADS} "
                    "or 'auto' (None: the scene's parallel.threads, else the default)", STATUS_INPUT)
    return n


def _strings(items):
    return (ctypes.c_char_p * max(len(items), 1))(*[o.encode() for o in items])


def run(scene, output, overrides=None, progress=False, threads=None):
    """Runs `scene` to its end time writing `output` (HDF5, with its .xmf
    sidecar) and returns a Result. Raises avi.Error on bad input or a
    failed run (the file is then closed marked failed, as by `avi run`).
    progress=True draws avi's progress line on stderr; threads=N runs on N
    threads ('auto': every processor; None: the scene's parallel.threads,
    else 1)."""
    # Every argument is checked before the library sees any of them.
    scene, out, ov = _scene_arg(scene), _path("output", output), _override_list(overrides)
    nthreads = _threads(threads)
    lib = _get()
    err = _Error()
    s = _load_scene(lib, scene, ov, err)
    try:
        opt = _Options(int(progress), 0.0, None, None, b"python: avi.run", nthreads)
        return _evolve(lib, lambda o: lib.avi_run_open(s, out, o, ctypes.byref(err)), opt, err, output)
    finally:
        lib.avi_scene_destroy(s)


def resume(output, overrides=None, progress=False, threads=None):
    """Continues the run that wrote `output` from its checkpoint (after an
    interruption, a kill or a failure), as `avi resume`; overrides may only
    set time.end (extending a finished run); threads as for run(), any
    count, the bits do not depend on it."""
    out, ov, nthreads = _path("output", output), _override_list(overrides), _threads(threads)
    lib = _get()
    err = _Error()
    opt = _Options(int(progress), 0.0, None, None, b"python: avi.resume", nthreads)
    return _evolve(lib, lambda o: lib.avi_run_open_resume(out, _strings(ov), len(ov), o, ctypes.byref(err)),
                   opt, err, output)


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


def _h5py():
    """h5py, or avi.Error saying how to get it into this interpreter."""
    try:
        import importlib
        import h5py
        importlib.import_module("numpy")  # h5py returns numpy arrays
    except ImportError as e:
        import sys
        raise Error(f"h5py and numpy are needed to read avi's HDF5 output ({e.name or e}: not found in "
                    f"{sys.executable}): apt-get install python3-h5py for the system python3, or "
                    "pip install h5py in a venv or pyenv interpreter", STATUS_INPUT) from None
    return h5py


def _open_h5(path):
    """Opens an avi output for reading in SWMR mode, so that the file of a
    live or killed run (still marked as being written) opens too; without
    it where SWMR is refused (the file is open in this process already)."""
    h5py = _h5py()
    try:
        return h5py.File(path, "r", swmr=True)
    except OSError as e:
        try:
            return h5py.File(path, "r")
        except OSError:
            raise Error(f"{path}: cannot read it: {e}", STATUS_INPUT) from None


class Result:
    """A run's output file: avi.run and avi.resume return one; avi.Result(path)
    reads any file avi wrote, also one of a running or killed run. Its file,
    scene name, event count and wall time (None when not known);
    observables and frames read from the file (with h5py)."""

    def __init__(self, path, scene=None, events=None, wall=None):
        self.path, self.scene, self.events, self.wall = os.fspath(path), scene, events, wall
        self._observables = None

    @property
    def observables(self):
        """{name: numpy array} for every /observables dataset, plus "time"
        (the rows' times) and "synchronized_time": the times of
        kinetic_energy, total_energy and friction_work, which have a row at
        every output.synchronized_every-th row only (every row when it is 1;
        /parameters/synchronized_every)."""
        if self._observables is None:
            with _open_h5(self.path) as f:
                g = f["observables"]
                obs = {name: g[name]["value"][()] for name in g}
                obs["time"] = g["elastic_energy"]["time"][()]
                obs["synchronized_time"] = g["total_energy"]["time"][()]
            self._observables = obs
        return self._observables

    def frames(self, body):
        """(time[F], position[F][n][3]) of `body`'s frames."""
        with _open_h5(self.path) as f:
            if body not in f["particles"]:
                raise KeyError(f"{self.path}: no body '{body}' (bodies: {', '.join(f['particles'])})")
            p = f["particles"][body]["position"]
            return p["time"][()], p["value"][()]

    def __repr__(self):
        return f"avi.Result({self.path!r}, scene={self.scene!r}, events={self.events})"
