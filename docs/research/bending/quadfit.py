"""Extra candidate, linear flat plate only: 6-node rotation-free triangle whose
constant Hessian is the quadratic through its 3 vertices and the 3 vertices
across its edges (the idea behind Oñate-type BST/EBST and Liang 2025's
'smoothed hinge'). Straight boundaries: ghost vertex = mirror of the
triangle's third vertex, w_ghost = +w (clamped, even) or -w (simply supported, odd).
Usage: python3 quadfit.py [n ...]
"""
import sys
import numpy as np
import scipy.sparse as sp
import linear_plate as lp
from meshes import square, topology


def assemble_quadfit(P, F, bc):
    N = len(P)
    edges, fe, ef = topology(F)
    area, l, nu, grad = lp.tri_geom(P, F)
    rows, cols, vals = [], [], []
    for f in range(len(F)):
        pts, coef = [], []          # each point: position, {dof: weight}
        for i in range(3):
            pts.append(P[F[f, i]]); coef.append({F[f, i]: 1.0})
        for i in range(3):
            e = fe[f, i]
            o = ef[e, 1] if ef[e, 0] == f else ef[e, 0]
            if o >= 0:
                v = [k for k in F[o] if k not in F[f]][0]
                pts.append(P[v]); coef.append({v: 1.0})
            else:   # mirror vertex i across edge i
                a, b = P[F[f, (i + 1) % 3]], P[F[f, (i + 2) % 3]]
                t = (b - a) / np.linalg.norm(b - a)
                r = P[F[f, i]] - a
                pts.append(a + 2 * (r @ t) * t - r)
                coef.append({F[f, i]: 1.0 if bc == 'clamped' else -1.0})
        c0 = P[F[f]].mean(0)
        V = np.array([[1, x, y, 0.5 * x * x, 0.5 * y * y, x * y] for x, y in (np.array(pts) - c0)])
        Vi = np.linalg.inv(V)[3:]          # rows: Hxx, Hyy, Hxy in terms of the 6 point values
        dofs = sorted({d for c in coef for d in c})
        idx = {d: k for k, d in enumerate(dofs)}
        B = np.zeros((3, len(dofs)))
        for p, c in enumerate(coef):
            for d, wgt in c.items():
                B[:, idx[d]] += Vi[:, p] * wgt
        Kl = area[f] * lp.D * B.T @ lp.CV @ B
        d = np.array(dofs)
        rows.append(np.repeat(d, len(d))); cols.append(np.tile(d, len(d))); vals.append(Kl.ravel())
    K = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(N, N))
    m = np.zeros(N)
    for f in range(len(F)):
        m[F[f]] += lp.RHO * lp.H * area[f] / 3
    fixed = np.zeros(N, bool)
    fixed[np.unique(edges[ef[:, 1] < 0])] = True
    return K, m, fixed


if __name__ == '__main__':
    ns = [int(a) for a in sys.argv[1:]] or [8, 16, 32, 64]
    for bc in ('clamped', 'ss'):
        print(f"{bc}: quadfit omega / omega_Kirchhoff, n = {ns}")
        for pat in ('one', 'alt', 'irr'):
            out = []
            for n in ns:
                P, F, _ = square(n, pat, lp.A)
                K, m, fx = assemble_quadfit(P, F, bc)
                out.append(lp.fundamental(K, m, fx) / lp.OMEGA_K[bc])
            print(f"  {pat:4s} " + " ".join(f"{r:7.4f}" for r in out), flush=True)
