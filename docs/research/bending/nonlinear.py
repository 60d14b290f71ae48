"""Nonlinear bending energies on prescribed shapes: hinge (Grinspun 2003),
mid-edge average (Chen 2018), and mid-edge with one rotation DOF per edge
(Grinspun 2006 / Weischedel 2012; f = sin or tan of the director angle as in
libshell's Sin / Tan formulations), edge DOFs minimised for the given shape.

Checks (free boundaries; energy / Kirchhoff value):
  cyl   flat square rolled onto a cylinder, wrap angle pi (large rotation)
  recyl rest = that half cylinder (R0), deformed = cylinder R1 = 2 R0 /3, isometric
  sphere icosphere (valence 5 and 6) and a jittered icosphere, rest flat metric
         = current metric, b_rest = 0 (Grinspun 2006-style shape-operator test):
         Kirchhoff D/2 [(2/R)^2 - 2 (1 - nu)/R^2] 4 pi R^2
  fdhess  linear-vs-nonlinear check: finite-difference Hessian of the nonlinear
         mid-edge energy at the flat state against linear_plate.assemble
Usage: python3 nonlinear.py [cyl|recyl|sphere|fdhess ...]
"""
import sys
import numpy as np
from scipy.optimize import minimize
from meshes import square, topology

E, NU, H = 2e11, 0.3, 0.005
D = E * H**3 / (12 * (1 - NU**2))


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


class Shell:
    def __init__(self, X, F, model, f='sin', clamped=False):
        self.F, self.model, self.f = F, model, f
        self.edges, self.fe, self.ef = topology(F)
        self.clamped = clamped
        self.phi = np.zeros(len(self.edges))
        g = self.geom(X, self.phi)
        self.area0, self.abar = g['area'], g['a']
        self.bbar = g['b']
        self.th0 = g['theta']
        self.m0 = g['m']                       # rest directors (clamped boundary keeps them)
        self.P = np.linalg.inv(self.abar)

    def geom(self, X, phi):
        F, fe, ef, edges = self.F, self.fe, self.ef, self.edges
        x = X[F]
        e1, e2 = x[:, 1] - x[:, 0], x[:, 2] - x[:, 0]
        nT = np.cross(e1, e2)
        area = 0.5 * np.linalg.norm(nT, axis=1)
        nT = nT / (2 * area[:, None])
        a = np.stack([np.stack([(e1 * e1).sum(1), (e1 * e2).sum(1)], 1),
                      np.stack([(e1 * e2).sum(1), (e2 * e2).sum(1)], 1)], 1)
        # edge directions (global orientation: low -> high vertex index)
        te = unit(X[edges[:, 1]] - X[edges[:, 0]])
        f0, f1 = ef[:, 0], ef[:, 1]
        interior = f1 >= 0
        n0 = nT[f0]
        n1 = np.where(interior[:, None], nT[np.maximum(f1, 0)], n0)
        avg = unit(n0 + n1)
        # signed dihedral angle about te (for the hinge)
        theta = np.arctan2((np.cross(n0, n1) * te).sum(1), (n0 * n1).sum(1))
        m = np.cos(phi)[:, None] * avg + np.sin(phi)[:, None] * np.cross(te, avg)
        if self.clamped and hasattr(self, 'm0'):
            m = np.where(interior[:, None], m, self.m0)
        # per face, per local edge i (opposite vertex i)
        xe = np.roll(x, -2, 1) - np.roll(x, -1, 1)
        l = np.linalg.norm(xe, axis=2)
        nu = np.cross(xe / l[:, :, None], nT[:, None, :])       # outward in-plane normals
        mf = m[fe]                                              # F x 3 x 3
        mn = (mf * nu).sum(2)
        if self.f == 'sin':
            fv = mn
        elif self.f == 'tan':
            fv = mn / (mf * nT[:, None, :]).sum(2)
        if self.model == 'avg':
            bnd = ef[fe, 1] < 0
            if not self.clamped:
                fv = np.where(bnd, 0.0, fv)
        c = np.stack([(e1[:, None, :] * nu).sum(2), (e2[:, None, :] * nu).sum(2)], 2)  # F x 3 x 2
        w = l / area[:, None] * fv
        b = np.einsum('fi,fij,fik->fjk', w, c, c)
        return dict(area=area, a=a, b=b, theta=theta, m=m, l=l, c=c, te=te, nu=nu, nT=nT)

    def bending(self, g):
        Db = g['b'] - self.bbar
        M = self.P @ Db
        tr = np.trace(M, axis1=1, axis2=2)
        trMM = np.einsum('fij,fji->f', M, M)
        return 0.5 * D * self.area0 * (NU * tr**2 + (1 - NU) * trMM)

    def energy(self, X, phi=None):
        if self.model == 'hinge':
            g = self.geom(X, self.phi)
            inter = self.ef[:, 1] >= 0
            d = (g['theta'] - self.th0)[inter]
            # rest edge length and rest area of the two wings
            f0, f1 = self.ef[inter, 0], self.ef[inter, 1]
            Ae = self.area0[f0] + self.area0[f1]
            le = self.le0[inter]
            return (0.5 * D * 3 * le**2 / Ae * d**2).sum()
        if self.model == 'avg':
            self.Ef = self.bending(self.geom(X, np.zeros(len(self.edges))))
            return self.Ef.sum()
        # midedge: minimise over phi
        def fun(p):
            g = self.geom(X, p)
            Ef = self.bending(g)
            # analytic dE/dphi
            Db = g['b'] - self.bbar
            M = self.P @ Db
            tr = np.trace(M, axis1=1, axis2=2)
            G = 0.5 * D * self.area0[:, None, None] * (2 * NU * tr[:, None, None] * self.P + 2 * (1 - NU) * self.P @ Db @ self.P)
            dEdf = np.einsum('fij,fjk,fik->fi', g['c'], G, g['c']) * g['l'] / g['area'][:, None]
            mf = g['m'][self.fe]
            dm = np.cross(g['te'][self.fe], mf)                    # d m / d phi
            if self.f == 'sin':
                dfdp = (dm * g['nu']).sum(2)
            else:
                mn = (mf * g['nu']).sum(2)
                mt = (mf * g['nT'][:, None, :]).sum(2)
                dfdp = (dm * g['nu']).sum(2) / mt - mn * (dm * g['nT'][:, None, :]).sum(2) / mt**2
            if self.clamped:
                dfdp = np.where(self.ef[self.fe, 1] < 0, 0.0, dfdp)
            grad = np.zeros(len(self.edges))
            np.add.at(grad, self.fe.ravel(), (dEdf * dfdp).ravel())
            return Ef.sum(), grad
        p0 = self.phi if phi is None else phi
        scale = fun(p0)[0] + 1e-30
        r = minimize(lambda p: tuple(v / scale for v in fun(p)), p0, jac=True, method='L-BFGS-B',
                     options=dict(maxiter=20000, gtol=1e-12, ftol=1e-15, maxcor=30))
        self.phi = r.x
        self.Ef = self.bending(self.geom(X, r.x))
        return r.fun * scale


def make(X, F, model, f='sin', clamped=False):
    s = Shell(X, F, model, f, clamped)
    s.le0 = np.linalg.norm(X[s.edges[:, 1]] - X[s.edges[:, 0]], axis=1)
    return s


def cylinder(P, R):
    u, v = P[:, 0], P[:, 1]
    return np.stack([R * np.sin(u / R), v, R * (1 - np.cos(u / R))], 1)


MODELS = [('hinge', 'hinge', 'sin'), ('avg', 'avg', 'sin'), ('midedge-sin', 'midedge', 'sin'), ('midedge-tan', 'midedge', 'tan')]


def interior_ratio(s, P, F, L, dens):
    """energy of the faces with no vertex on the boundary over dens * their rest area
    (triangle models only)"""
    if s.model == 'hinge':
        return float('nan')
    on = np.isclose(P[:, 0], 0) | np.isclose(P[:, 0], L) | np.isclose(P[:, 1], 0) | np.isclose(P[:, 1], L)
    inner = ~on[F].any(1)
    return s.Ef[inner].sum() / (dens * s.area0[inner].sum())


def check_cyl(ns=(8, 16, 32)):
    L = 0.1
    R = L / np.pi
    print(f"\ncyl: flat square L = {L} rolled to R = L/pi (half cylinder), E / (D/2 A / R^2); in brackets: faces off the boundary only")
    for pat in ('one', 'alt', 'irr'):
        for name, model, f in MODELS:
            out = []
            for n in ns:
                P, F, _ = square(n, pat, L)
                X0 = np.c_[P, np.zeros(len(P))]
                s = make(X0, F, model, f)
                out.append(s.energy(cylinder(P, R)) / (0.5 * D * L * L / R**2))
                out.append(interior_ratio(s, P, F, L, 0.5 * D / R**2))
            print(f"  {pat:4s} {name:12s} " + " ".join(f"{r:8.4f} ({q:6.4f})" for r, q in zip(out[::2], out[1::2])), flush=True)


def check_recyl(ns=(8, 16, 32)):
    L = 0.1
    R0 = L / np.pi
    R1 = 2 * R0 / 3
    print(f"\nrecyl: rest half cylinder R0 = L/pi, deformed R1 = 2 R0/3 (isometric), E / (D/2 (1/R1 - 1/R0)^2 A); in brackets: faces off the boundary only")
    for pat in ('one', 'alt', 'irr'):
        for name, model, f in MODELS:
            out = []
            for n in ns:
                P, F, _ = square(n, pat, L)
                s = make(cylinder(P, R0), F, model, f)
                out.append(s.energy(cylinder(P, R1)) / (0.5 * D * L * L * (1 / R1 - 1 / R0)**2))
                out.append(interior_ratio(s, P, F, L, 0.5 * D * (1 / R1 - 1 / R0)**2))
            print(f"  {pat:4s} {name:12s} " + " ".join(f"{r:8.4f} ({q:6.4f})" for r, q in zip(out[::2], out[1::2])), flush=True)


def icosphere(level, jitter=0.0, seed=3):
    t = (1 + 5**0.5) / 2
    V = [[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t], [0, -1, -t], [0, 1, -t],
         [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]]
    F = [[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4], [11, 10, 2], [10, 7, 6],
         [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8], [3, 8, 9], [4, 9, 5], [2, 4, 11], [6, 2, 10],
         [8, 6, 7], [9, 8, 1]]
    V = [np.array(v, float) / np.linalg.norm(v) for v in V]
    for _ in range(level):
        mid = {}
        NF = []
        for a, b, c in F:
            ids = []
            for p, q in ((a, b), (b, c), (c, a)):
                k = (min(p, q), max(p, q))
                if k not in mid:
                    mid[k] = len(V)
                    V.append(unit(V[p] + V[q]))
                ids.append(mid[k])
            ab, bc, ca = ids
            NF += [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
        F = NF
    V = np.array(V)
    if jitter:
        rng = np.random.default_rng(seed + level)
        hmean = np.sqrt(4 * np.pi / len(F))
        V = unit(V + jitter * hmean * rng.uniform(-1, 1, V.shape))
    return V, np.array(F)


def check_sphere(levels=(2, 3, 4, 5)):
    R = 1.0
    kirch = 0.5 * D * (4 - 2 * (1 - NU)) / R**2 * 4 * np.pi * R**2
    print(f"\nsphere R = 1, rest b = 0 with the current metric: E / (D/2 [(2H)^2 - 2(1-nu)K] 4 pi R^2)   (levels {levels})")
    for jit in (0.0, 0.3):
        for name, model, f in MODELS:
            out = []
            for lev in levels:
                X, F = icosphere(lev, jit)
                s = make(X, F, model, f)
                s.bbar = np.zeros_like(s.bbar)
                s.th0 = np.zeros_like(s.th0)
                out.append(s.energy(X) / kirch)
            print(f"  jitter {jit:3.1f} {name:12s} " + " ".join(f"{r:8.4f}" for r in out), flush=True)


def check_fdhess(n=3, pat='irr'):
    import linear_plate as lp
    P, F, _ = square(n, pat, 0.1)
    X0 = np.c_[P, np.zeros(len(P))]
    for model, f in (('avg', 'sin'), ('midedge', 'sin'), ('midedge', 'tan')):
        s = make(X0, F, model, f)
        N, Ne = len(P), len(s.edges)
        def En(z):
            X = X0.copy()
            X[:, 2] = z[:N]
            if model == 'avg':
                return s.bending(s.geom(X, np.zeros(Ne))).sum()
            # phi measured from the average; the linear DOF is the edge slope along the global
            # edge normal: the director angle about te relative to the face-average director
            return s.bending(s.geom(X, z[N:])).sum()
        nd = N + (Ne if model == 'midedge' else 0)
        eps = 1e-6
        Hn = np.zeros((nd, nd))
        z0 = np.zeros(nd)
        for i in range(nd):
            for j in range(i, nd):
                zpp = z0.copy(); zpp[i] += eps; zpp[j] += eps
                zpm = z0.copy(); zpm[i] += eps; zpm[j] -= eps
                zmp = z0.copy(); zmp[i] -= eps; zmp[j] += eps
                zmm = z0.copy(); zmm[i] -= eps; zmm[j] -= eps
                Hn[i, j] = Hn[j, i] = (En(zpp) - En(zpm) - En(zmp) + En(zmm)) / (4 * eps * eps)
        K, m, fx = lp.assemble(P, F, model, 'ss')
        K = K.toarray()
        if model == 'midedge':
            # linear s_e is the slope along the first face's outward normal ne; the nonlinear
            # phi is measured from the average director. Compare Schur complements on w
            # (both minimise over their edge variables, which differ by a change of variables)
            def schur(Km):
                return Km[:N, :N] - Km[:N, N:] @ np.linalg.solve(Km[N:, N:], Km[N:, :N])
            A1, A2 = schur(Hn), schur(K)
        else:
            A1, A2 = Hn, K
        print(f"fdhess {model}-{f}: max |H_fd - K_lin| / max |K| = {np.abs(A1 - A2).max() / np.abs(A2).max():.2e}")


if __name__ == '__main__':
    todo = sys.argv[1:] or ['fdhess', 'cyl', 'recyl', 'sphere']
    for t in todo:
        {'cyl': check_cyl, 'recyl': check_recyl, 'sphere': check_sphere, 'fdhess': check_fdhess}[t]()
