#!/usr/bin/python3
"""Energy of the rigid pendulum over time for explicit Euler (grows),
implicit Euler (decays) and the symplectic update (bounded), all with the
same step (Kharevych et al. 2006, Fig. 1; Stern 2006).

usage: plot_pendulum.py [-o pendulum_energy.png] [--avi build/avi]
                        [--scene pendulum] [--set KEY=VALUE]...

Runs `avi run SCENE --set integrator.type=T` for each integrator into a
temporary directory and plots the total energy of each run; --set is
passed on to every run (e.g. --set time_step.fixed=0.005).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

RUNS = [
    ("explicit-euler", "explicit Euler", "tab:red"),
    ("implicit-euler", "implicit Euler", "tab:blue"),
    ("sync-explicit", "symplectic (sync-explicit)", "tab:green"),
    ("sync-implicit", "midpoint (sync-implicit, alpha = 1/2)", "tab:olive"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="pendulum_energy.png")
    ap.add_argument("--avi", default=os.path.join(os.path.dirname(__file__), "..", "build", "avi"))
    ap.add_argument("--scene", default="pendulum")
    ap.add_argument("--set", action="append", default=[], dest="sets")
    a = ap.parse_args()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    with tempfile.TemporaryDirectory() as tmp:
        for integ, label, color in RUNS:
            out = os.path.join(tmp, integ + ".h5")
            cmd = [a.avi, "run", a.scene, "-o", out, "--quiet", "--set", "integrator.type=" + integ]
            for s in a.sets:
                cmd += ["--set", s]
            rc = subprocess.run(cmd).returncode
            if rc not in (0, 1) or not os.path.exists(out):
                print(f"plot_pendulum: {' '.join(cmd)} failed ({rc})", file=sys.stderr)
                return 1
            with h5py.File(out, "r") as f:
                t = f["/observables/total_energy/time"][()]
                e = f["/observables/total_energy/value"][()]
            ax.plot(t, e, color=color, label=label + ("" if rc == 0 else " (blew up)"))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("total energy (J)")
    ax.set_title(f"{a.scene}: same step for every integrator" + (f" ({', '.join(a.sets)})" if a.sets else ""))
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.output, dpi=120)
    print(f"wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
