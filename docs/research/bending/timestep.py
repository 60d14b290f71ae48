"""Stable-step estimate: largest frequencies, global and element-local (the AVI
rule omega_P^2 = lambda_max(M_S^-1 Hess V_P) with the full nodal masses),
for the hinge, the mid-edge model with edge DOFs (physical rotary inertia
rho h^3/12 per area, or a mass-scaled inertia beta rho h A l_e^2), and the
membrane (constant-strain triangle, in-plane) for reference.
Also the fundamental-frequency error the mass scaling causes.

Usage: python3 timestep.py [n] [pattern]
"""
import sys
import numpy as np
import linear_plate as lp
from meshes import square


def set_thickness(h):
    lp.H = h
    lp.D = lp.E * h**3 / (12 * (1 - lp.NU**2))
    c = np.sqrt(lp.D / (lp.RHO * h)) / lp.A**2
    lp.OMEGA_K = {'clamped': 35.985 * c, 'ss': 2 * np.pi**2 * c}


def local_max(m):
    best = 0.0
    for dofs, Kl in lp.LAST_ELEMS:
        Mi = 1 / np.sqrt(m[dofs])
        w = np.linalg.eigvalsh(Mi[:, None] * Kl * Mi[None, :])
        best = max(best, w[-1])
    return np.sqrt(best)


def membrane_local_max(P, F):
    area, l, nu, grad = lp.tri_geom(P, F)
    C = lp.E / (1 - lp.NU**2) * np.array([[1, lp.NU, 0], [lp.NU, 1, 0], [0, 0, (1 - lp.NU) / 2]])
    m = np.zeros(len(P))
    for f in range(len(F)):
        m[F[f]] += lp.RHO * lp.H * area[f] / 3
    best = 0.0
    for f in range(len(F)):
        B = np.zeros((3, 6))
        for j in range(3):
            gx, gy = grad[f, j]
            B[:, 2 * j] = [gx, 0, gy]
            B[:, 2 * j + 1] = [0, gy, gx]
        Kl = lp.H * area[f] * B.T @ C @ B
        Mi = 1 / np.sqrt(np.repeat(m[F[f]], 2))
        best = max(best, np.linalg.eigvalsh(Mi[:, None] * Kl * Mi[None, :])[-1])
    return np.sqrt(best)


if __name__ == '__main__':
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    pat = sys.argv[2] if len(sys.argv) > 2 else 'one'
    for h in (0.005, 0.0005):
        set_thickness(h)
        P, F, _ = square(n, pat, lp.A)
        print(f"\nh = {h}, n = {n}, pattern {pat}, cell {lp.A / n:.4g} m; omega in rad/s")
        print(f"  membrane CST, element-local omega_max        {membrane_local_max(P, F):10.4g}")
        for name, model, beta in [('hinge', 'hinge', None), ('mid-edge, rotary rho h^3/12', 'midedge', None),
                                  ('mid-edge, beta = 1/12', 'midedge', 1 / 12), ('mid-edge, beta = 1/4', 'midedge', 0.25),
                                  ('mid-edge, beta = 1', 'midedge', 1.0)]:
            K, m, fx = lp.assemble(P, F, model, 'clamped', edge_mass=beta)
            wl = local_max(m)
            wg = lp.omega_max(K, m, fx)
            r = lp.fundamental(K, m, fx) / lp.OMEGA_K['clamped']
            print(f"  {name:30s} local {wl:10.4g}  global {wg:10.4g}   clamped fundamental / Kirchhoff {r:.4f}")
