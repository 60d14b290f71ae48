"""Circular plate (avi `disk` generator's triangulation, radius 0.1) with the
linear models: fundamental omega over Kirchhoff (clamped 10.2158, simply
supported nu = 0.3: 4.9351, times sqrt(D/(rho h))/a^2).
Usage: python3 disk.py [rings ...]
"""
import sys
import numpy as np
import linear_plate as lp


def disk(radius, r):
    x = [(0.0, 0.0)]
    for i in range(1, r + 1):
        ri = radius * i / r
        for j in range(6 * i):
            a = 2 * np.pi * j / (6 * i)
            x.append((ri * np.cos(a), ri * np.sin(a)))
    F = []
    for i in range(1, r + 1):
        o0, no = 1 + 3 * i * (i - 1), 6 * i
        i0, ni = (0, 1) if i == 1 else (1 + 3 * (i - 1) * (i - 2), 6 * (i - 1))
        for s in range(6):
            for k in range(i):
                O0, O1 = o0 + (s * i + k) % no, o0 + (s * i + k + 1) % no
                I0, I1 = i0 + (s * (i - 1) + k) % ni, i0 + (s * (i - 1) + k + 1) % ni
                F.append((I0, O0, O1))
                if k + 1 < i:
                    F.append((I0, O1, I1))
    return np.array(x), np.array(F)


if __name__ == '__main__':
    rings = [int(a) for a in sys.argv[1:]] or [8, 16, 32]
    a = 0.1
    c = np.sqrt(lp.D / (lp.RHO * lp.H)) / a**2
    ref = {'clamped': 10.2158 * c, 'ss': 4.9351 * c}
    for bc in ('clamped', 'ss'):
        print(f"disk {bc}, rings {rings}")
        for model in ('hinge', 'avg', 'midedge'):
            out = []
            for r in rings:
                P, F = disk(a, r)
                K, m, fx = lp.assemble(P, F, model, bc)
                mask = None
                if model == 'midedge':
                    mask = np.zeros(len(m), bool); mask[len(P):] = True
                out.append(lp.fundamental(K, m, fx, mask) / ref[bc])
            print(f"  {model:8s} " + " ".join(f"{v:7.4f}" for v in out), flush=True)
