#!/usr/bin/python3
"""The sphere-plate impact under the AVI and under DCR in one figure (the
comparison of Vouga et al. 2009, Fig. 1): total energy and its relative
deviation (E - E0) / E0 against time, one curve per run, labelled by the
integrator each file records. Until tools/plot_energy.py draws several runs,
this is the figure behind docs/sphere_plate_dcr.png:

    bench/sphere_plate.sh build/bench/sphere_plate_runs default dcr
    bench/plot_dcr.py build/bench/sphere_plate_runs/{default,dcr}.h5 -o docs/sphere_plate_dcr.png
"""
import argparse

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("files", nargs="+")
ap.add_argument("-o", "--output", default="sphere_plate_dcr.png")
a = ap.parse_args()
fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
for path in a.files:
    with h5py.File(path, "r") as f:
        t = f["/observables/total_energy/time"][()] * 1e3
        e = f["/observables/total_energy/value"][()]
        name = f["/parameters/integrator"][()]
        name = name.decode() if isinstance(name, bytes) else str(name)
    rel = (e - e[0]) / e[0]
    top.plot(t, e, lw=0.8, label=name)
    bottom.plot(t, rel, lw=0.8, label=f"{name}: drift {np.polyfit(t, rel, 1)[0] * t[-1]:+.1e}, "
                f"peak-to-peak {rel.max() - rel.min():.1e}")
top.set_ylabel("total energy (J)")
top.legend()
bottom.set_ylabel("(E - E0) / E0")
bottom.set_xlabel("time (ms)")
bottom.legend(fontsize=8)
top.set_title("sphere-plate impact: AVI (ACM) against DCR")
fig.tight_layout()
fig.savefig(a.output, dpi=110)
