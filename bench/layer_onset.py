#!/usr/bin/env python3
"""One unit mass through one penalty layer (docs/research/contact_energy.md,
"Tried in issue 29"): x'' = -omega^2 f(s), s the penetration, leapfrog at
omega h, 200 entry phases; the largest |E_out - E_in| / E_in over the phases.
Laws: Harmon's layer f = s (stiffness jumps at s = 0; delta 0) and the smooth
onset tried in issue 29 (stiffness 3 r^2 - 2 r^3, r = s / delta, up to delta;
energy its exact integral; branch `contact`, 42f008f, not in src/). The mass reaches s_max = 1 with the
kinked law (speed omega); delta is given relative to that.
    bench/layer_onset.py [OMEGA_H...]      (default 0.125 0.0625 0.03125)"""
import sys


def force(s, delta):
    if s <= 0.0:
        return 0.0
    if s >= delta:
        return s - 0.5 * delta
    r = s / delta
    return delta * r ** 3 * (1.0 - 0.5 * r)


def energy(s, delta):
    if s <= 0.0:
        return 0.0
    if s >= delta:
        return s * (0.5 * s - 0.5 * delta) + 0.15 * delta * delta
    r = s / delta
    return delta * delta * r ** 4 * (0.25 - 0.1 * r)


def bounce(h, delta, phase):
    """Enters at a fraction `phase` of a step; returns (E_out - E_in) / E_in."""
    s, v = -phase * h - 1e-12, 1.0  # s: penetration, v = s'
    e_in = 0.5
    v -= 0.5 * h * force(s, delta)  # leapfrog: half kick, then drift + kick
    n = 0
    while True:
        s += h * v
        f = force(s, delta)
        n += 1
        if s < 0.0 and v < 0.0 and n > 2:
            break
        v -= h * f
    return (0.5 * v * v + energy(s, delta) - e_in) / e_in


for oh in [float(a) for a in sys.argv[1:]] or [0.125, 0.0625, 0.03125]:
    for delta in (0.0, 0.1, 0.3, 1.0):
        errs = [bounce(oh, delta, i / 200.0) for i in range(200)]
        worst = max(abs(e) for e in errs)
        print(f"omega h {oh:<8g} delta / s_max {delta:<4g} largest |dE|/E {worst:.2e} "
              f"= {worst / oh ** 2:.4f} (omega h)^2, mean {sum(errs) / len(errs):+.1e}")
