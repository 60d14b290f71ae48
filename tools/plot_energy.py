#!/usr/bin/python3
"""Plots the energies, the relative total-energy drift and the relative
momentum errors of an avi output file (finished or still being written),
or compares the total energies of several.

usage: plot_energy.py OUT.h5 [-o OUT.png]
       plot_energy.py A.h5 B.h5 ... -o CMP.png [--midstep]

Panels: kinetic, elastic, contact, external and total energy against time;
the contact energy alone on a log scale (when the run has any: it is often
decades below the total); (E - E0) / |E0|; |p - p0| and |L - L0| relative
to the larger of |q0| and the state's own scale at t = 0 (sum over
vertices of m|v|, or m|x||v|). Where the scene does not conserve momentum
(pinned vertices, gravity or damping) that panel shows the change, not an
error, in kg m s-1 and kg m2 s-1. Time is in s, ms or us, whichever fits
the run; the title names the scene and the integrator.

With several files: one figure of two panels, the total energy and its
relative deviation (E - E0) / |E0| of every run, each line labelled by its
integrator (from /parameters) and file name; a table of E0, the final
deviation and the deviation's peak-to-peak goes to stdout. --midstep
plots total_energy_midstep instead (the mid-step estimate,
docs/energy_observable.md), for files that have it.
"""
import argparse
import os
import re
import sys

# A python3 first on PATH may lack these (a venv or pyenv one, while
# `make deps` installs them for /usr/bin/python3): say so, not a traceback.
try:
    import h5py
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
    import numpy as np  # noqa: E402
except ImportError as e:
    print(f"plot_energy.py: {sys.executable} has no module {e.name!r}: run it with /usr/bin/python3 "
          "(after `make deps`: apt-get install python3-h5py python3-matplotlib) "
          "or `pip install h5py matplotlib numpy` into this one", file=sys.stderr)
    sys.exit(2)

ENERGIES = ["kinetic_energy", "elastic_energy", "contact_energy", "external_energy", "total_energy"]


def read_series(f, name):
    path = f"/observables/{name}/value"
    if path not in f:
        raise KeyError(f"no {path}")
    ds = f[path]
    ds.refresh()  # SWMR: see rows flushed since the file was opened
    return ds[()]


def momentum_scales(f):
    """sum m|v| and sum m|x||v| over all vertices at the first frame."""
    p_scale = l_scale = 0.0
    for body in f.get("/particles", {}):
        g = f["/particles"][body]
        try:
            x, v, m = g["position/value"][0], g["velocity/value"][0], g["mass"][()]
        except (KeyError, IndexError, ValueError):
            continue
        speed = np.linalg.norm(v, axis=1)
        p_scale += float(np.sum(m * speed))
        l_scale += float(np.sum(m * speed * np.linalg.norm(x, axis=1)))
    return p_scale, l_scale


def text(f, path):
    v = f[path][()] if path in f else b""
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def conserves_momentum(f):
    """False when a vertex is pinned (mass 0) or the scene has gravity or
    damping: then momentum changes by design."""
    for body in f.get("/particles", {}):
        m = f["/particles"][body]["mass"][()]
        if np.any(~np.isfinite(m)) or np.any(m == 0):
            return False
    resolved = text(f, "/parameters/scene_resolved")
    g = re.search(r"^gravity:\s*\[([^\]]*)\]", resolved, re.M)
    if g and any(float(c) != 0 for c in g.group(1).split(",")):
        return False
    return not re.search(r"^damping:.*[1-9]", resolved, re.M)


def time_unit(t_end):
    """(factor, name): the unit in which the run's times read best."""
    if t_end >= 1.0:
        return 1.0, "s"
    if t_end >= 1e-3:
        return 1e3, "ms"
    return 1e6, "us"


def read_run(path, names):
    """The rows of a run: the named series, each with its own times under
    "time:NAME" (output.synchronized_every gives kinetic_energy,
    total_energy and friction_work rows of their own; each truncated to
    the shorter of its time and value, a live file may have a row more in
    one), "t" the first one's; scene and integrator. Raises OSError
    (cannot open) or KeyError (not avi output)."""
    f = h5py.File(path, "r", swmr=True)
    with f:
        run = {"path": path}
        for n in names:
            v = read_series(f, n)
            t_ds = f[f"/observables/{n}/time"]
            t_ds.refresh()
            t = t_ds[()]
            m = min(len(t), len(v))
            run[n], run["time:" + n] = v[:m], t[:m]
        run["t"] = run["time:" + names[0]]
        run["scene"] = text(f, "/parameters/scene_name")
        run["integrator"] = text(f, "/parameters/integrator")
        if "linear_momentum" in names:
            run["conserved"] = conserves_momentum(f)
            run["p_scale"], run["l_scale"] = momentum_scales(f)
    return run


def open_run(path, names):
    """read_run, or (None, exit status) with the reason on stderr."""
    try:
        run = read_run(path, names)
    except KeyError as e:
        print(f"{path}: not an avi output file ({e})", file=sys.stderr)
        return None, 2
    except Exception as e:  # noqa: BLE001 - any failure to open is reported the same way
        print(f"{path}: cannot open ({e})", file=sys.stderr)
        return None, 2
    if len(run["t"]) == 0:
        print(f"{path}: no rows yet", file=sys.stderr)
        return None, 1
    return run, 0


def deviation(e):
    """(E - E0) / |E0|, or E - E0 when E0 = 0; and the axis label."""
    if e[0] != 0:
        return (e - e[0]) / abs(e[0]), "(E - E0) / |E0|"
    return e - e[0], "E - E0 [J] (E0 = 0)"


def compare(paths, out, midstep):
    """Several runs' total energies and deviations in one figure."""
    name = "total_energy_midstep" if midstep else "total_energy"
    runs = []
    for path in paths:
        run, rc = open_run(path, [name])
        if run is None:
            return rc
        runs.append(run)
    factor, unit_name = time_unit(max(float(r["t"][-1]) for r in runs))
    fig, ax = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    print(f"{'integrator':<16} {'file':<28} {'rows':>6} {'E0 [J]':>12} {'final dev':>11} {'dev p-p':>10}")
    for k, r in enumerate(runs):
        e = r[name]
        dev, dev_label = deviation(e)
        label = f"{r['integrator'] or 'unknown integrator'}: {os.path.basename(r['path'])}"
        t = r["t"] * factor
        ax[0].plot(t, e, label=label, color=f"C{k}")
        ax[1].plot(t, dev, label=label, color=f"C{k}")
        print(f"{r['integrator'] or '?':<16} {os.path.basename(r['path']):<28} {len(e):>6} {e[0]:>12.6g} "
              f"{dev[-1]:>11.3e} {np.ptp(dev):>10.3e}")
    scenes = sorted({r["scene"] for r in runs if r["scene"]})
    what = "total energy" + (" (mid-step estimate)" if midstep else "")
    ax[0].set_title(f"{', '.join(scenes) or 'runs'}: {what}")
    ax[0].set_ylabel("energy [J]")
    ax[0].legend(loc="best", fontsize="small")
    ax[1].set_title("relative deviation of the total energy")
    ax[1].set_ylabel(dev_label)
    ax[1].axhline(0, color="gray", lw=0.5)
    ax[1].set_xlabel(f"time [{unit_name}]")
    ax[1].legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(out)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("-o", "--output", help="PNG to write (default: FILE with .png; required with several files)")
    ap.add_argument("--midstep", action="store_true", help="several files: plot total_energy_midstep")
    args = ap.parse_args()
    if len(args.files) > 1:
        if not args.output:
            ap.error("several files need -o CMP.png")
        return compare(args.files, args.output, args.midstep)
    if args.midstep:
        ap.error("--midstep compares several files")
    return single(args.files[0], args.output)


def single(path, output):
    out = output or os.path.splitext(path)[0] + ".png"
    run, rc = open_run(path, ENERGIES + ["linear_momentum", "angular_momentum"])
    if run is None:
        return rc
    series = {n: run[n] for n in ENERGIES}
    p, L = run["linear_momentum"], run["angular_momentum"]
    scene, integrator, conserved = run["scene"], run["integrator"], run["conserved"]
    p_scale, l_scale = run["p_scale"], run["l_scale"]
    factor, unit_name = time_unit(float(run["time:elastic_energy"][-1]))
    times = {n: run["time:" + n] * factor for n in ENERGIES + ["linear_momentum"]}
    t = times["linear_momentum"]
    contact = series["contact_energy"]
    has_contact = bool(np.any(contact > 0))

    rows = 4 if has_contact else 3
    fig, axes = plt.subplots(rows, 1, figsize=(8, 3.3 * rows), sharex=True)
    ax = [axes[0]] + list(axes[2:] if has_contact else axes[1:])
    for name in ENERGIES:
        ax[0].plot(times[name], series[name], label=name.replace("_energy", ""),
                   lw=2 if name == "total_energy" else 1)
    ax[0].set_ylabel("energy [J]")
    ax[0].legend(loc="best", fontsize="small")
    ax[0].set_title(f"{scene or os.path.basename(path)} ({integrator or 'unknown integrator'}): energies")
    if has_contact:
        axes[1].plot(times["contact_energy"], np.where(contact > 0, contact, np.nan), color="C2")
        axes[1].set_yscale("log")
        axes[1].set_ylabel("contact energy [J]")
        axes[1].set_title("contact energy (log scale)")

    dev, dev_label = deviation(series["total_energy"])
    ax[1].plot(times["total_energy"], dev)
    ax[1].set_ylabel(dev_label)
    ax[1].set_title("total-energy drift")
    ax[1].axhline(0, color="gray", lw=0.5)

    # Log scale: these errors span decades. Errors are relative to the larger
    # of |q0| and the state's own scale (sum m|v|, sum m|x||v| at t = 0),
    # since an error relative to a nearly vanishing total says little. A
    # scene that does not conserve momentum gets the change, in its unit.
    what = "error" if conserved else "change"
    for q, label, unit, scale in ((p, "p", "kg m s-1", p_scale), (L, "L", "kg m2 s-1", l_scale)):
        ref = max(np.linalg.norm(q[0]), scale)
        d = np.linalg.norm(q - q[0], axis=1)
        if conserved and ref > 0:
            d = d / ref
            legend = f"|{label} - {label}0| / {ref:.3g} {unit}"
        else:
            legend = f"|{label} - {label}0| [{unit}]"
        ax[2].plot(t, np.where(d > 0, d, np.nan), label=legend)
    ax[2].set_yscale("log")
    ax[2].set_ylabel(f"momentum {what}")
    ax[2].set_xlabel(f"time [{unit_name}]")
    ax[2].legend(loc="best", fontsize="small")
    ax[2].set_title(f"linear and angular momentum {what}" +
                    ("" if conserved else " (pinned vertices, gravity or damping)"))
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
