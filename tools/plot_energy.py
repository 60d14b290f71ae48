#!/usr/bin/python3
"""Plots the energies, the relative total-energy drift and the relative
momentum errors of an avi output file (finished or still being written).

usage: plot_energy.py OUT.h5 [-o OUT.png]

Panels: kinetic, elastic, contact, external and total energy against time;
the contact energy alone on a log scale (when the run has any: it is often
decades below the total); (E - E0) / |E0|; |p - p0| and |L - L0| relative
to the larger of |q0| and the state's own scale at t = 0 (sum over
vertices of m|v|, or m|x||v|). Where the scene does not conserve momentum
(pinned vertices, gravity or damping) that panel shows the change, not an
error, in kg m s-1 and kg m2 s-1. Time is in s, ms or us, whichever fits
the run; the title names the scene and the integrator.
"""
import argparse
import os
import re
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402

ENERGIES = ["kinetic_energy", "elastic_energy", "contact_energy", "external_energy", "total_energy"]


def read_series(f, name):
    ds = f[f"/observables/{name}/value"]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("-o", "--output", help="PNG to write (default: FILE with .png)")
    args = ap.parse_args()
    out = args.output or os.path.splitext(args.file)[0] + ".png"
    try:
        f = h5py.File(args.file, "r", swmr=True)
    except Exception as e:  # noqa: BLE001 - any failure to open is reported the same way
        print(f"{args.file}: cannot open ({e})", file=sys.stderr)
        return 2
    with f:
        try:
            t_ds = f["/observables/total_energy/time"]
            t_ds.refresh()
            t = t_ds[()]
            series = {n: read_series(f, n) for n in ENERGIES}
            p = read_series(f, "linear_momentum")
            L = read_series(f, "angular_momentum")
            scene = text(f, "/parameters/scene_name")
            integrator = text(f, "/parameters/integrator")
            conserved = conserves_momentum(f)
            p_scale, l_scale = momentum_scales(f)
        except KeyError as e:
            print(f"{args.file}: not an avi output file ({e})", file=sys.stderr)
            return 2
    # A live file may have a row more in one dataset than another.
    n = min([len(t), len(p), len(L)] + [len(v) for v in series.values()])
    if n == 0:
        print(f"{args.file}: no rows yet", file=sys.stderr)
        return 1
    factor, unit_name = time_unit(float(t[n - 1]))
    t = t[:n] * factor
    contact = series["contact_energy"][:n]
    has_contact = bool(np.any(contact > 0))

    rows = 4 if has_contact else 3
    fig, axes = plt.subplots(rows, 1, figsize=(8, 3.3 * rows), sharex=True)
    ax = [axes[0]] + list(axes[2:] if has_contact else axes[1:])
    for name in ENERGIES:
        ax[0].plot(t, series[name][:n], label=name.replace("_energy", ""),
                   lw=2 if name == "total_energy" else 1)
    ax[0].set_ylabel("energy [J]")
    ax[0].legend(loc="best", fontsize="small")
    ax[0].set_title(f"{scene or os.path.basename(args.file)} ({integrator or 'unknown integrator'}): energies")
    if has_contact:
        axes[1].plot(t, np.where(contact > 0, contact, np.nan), color="C2")
        axes[1].set_yscale("log")
        axes[1].set_ylabel("contact energy [J]")
        axes[1].set_title("contact energy (log scale)")

    e = series["total_energy"][:n]
    if e[0] != 0:
        ax[1].plot(t, (e - e[0]) / abs(e[0]))
        ax[1].set_ylabel("(E - E0) / |E0|")
    else:
        ax[1].plot(t, e - e[0])
        ax[1].set_ylabel("E - E0 [J] (E0 = 0)")
    ax[1].set_title("total-energy drift")
    ax[1].axhline(0, color="gray", lw=0.5)

    # Log scale: these errors span decades. Errors are relative to the larger
    # of |q0| and the state's own scale (sum m|v|, sum m|x||v| at t = 0),
    # since an error relative to a nearly vanishing total says little. A
    # scene that does not conserve momentum gets the change, in its unit.
    what = "error" if conserved else "change"
    for q, label, unit, scale in ((p[:n], "p", "kg m s-1", p_scale), (L[:n], "L", "kg m2 s-1", l_scale)):
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
