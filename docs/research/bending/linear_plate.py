"""Linearized bending stiffness of a flat plate about its flat rest state
(transverse displacement w only: in-plane motion decouples at first order),
and the fundamental frequency of a clamped / simply supported square plate.

Models (all derived in MEMO.md, section 2):
  hinge  : Grinspun et al. 2003 hinge, k_b = D/2, energy k_b 3 l^2/A_e theta^2
           (clamped: a boundary hinge against a flat pinned ghost triangle of
           the same area, i.e. the project's ghost ring of pinned vertices).
  avg    : mid-edge normal = average of the two face normals (libshell
           MidedgeAverageFormulation, Chen et al. 2018), per-triangle
           shape operator, Kirchhoff energy density with nu.
           Boundary edge: libshell's rule (no contribution) for simply
           supported / free; clamped: edge director fixed vertical.
  midedge: mid-edge normals carried by one scalar DOF per edge (Grinspun et al.
           2006; Weischedel et al. 2012; libshell Sin/Tan/Theta formulations
           all share this linearization = the Morley element). Clamped: boundary
           edge DOF fixed at 0; simply supported / free: DOF free.
           Edge DOFs either massless (statically condensed, what a static
           minimisation gives) or given rotary inertia rho h^3/12 * area/3.

Usage: python3 linear_plate.py [n ...]
"""
import sys
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spl
from meshes import square, topology

E, NU, RHO, H, A = 2e11, 0.3, 7850.0, 0.005, 0.1
D = E * H**3 / (12 * (1 - NU**2))
CV = np.array([[1, NU, 0], [NU, 1, 0], [0, 0, 2 * (1 - NU)]])
LAST_ELEMS = []   # (dofs, local stiffness) of the last assemble() call
OMEGA_K = {'clamped': 35.985 * np.sqrt(D / (RHO * H)) / A**2,
           'ss': 2 * np.pi**2 * np.sqrt(D / (RHO * H)) / A**2}


def tri_geom(P, F):
    """per face: area, edge lengths l_i, outward unit normals nu_i (edge opposite i),
    gradients of barycentric coordinates grad_i = -nu_i l_i / (2A)."""
    p = P[F]                                  # F x 3 x 2
    e = np.roll(p, -2, 1) - np.roll(p, -1, 1)  # e_i = p_{i+2} - p_{i+1}
    l = np.linalg.norm(e, axis=2)
    nu = np.stack([e[:, :, 1], -e[:, :, 0]], 2) / l[:, :, None]
    d1, d2 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]
    area = 0.5 * (d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0])
    assert (area > 0).all()
    grad = -nu * l[:, :, None] / (2 * area[:, None, None])
    return area, l, nu, grad


def assemble(P, F, model, bc, edge_mass=None):
    """returns K (sparse, over [w (N); s (E)]), mass diagonal, fixed-dof mask, topology"""
    N = len(P)
    edges, fe, ef = topology(F)
    Ne = len(edges)
    area, l, nu, grad = tri_geom(P, F)
    # global edge normal = outward normal of the edge's first face
    ne = np.zeros((Ne, 2))
    for f in range(len(F)):
        for i in range(3):
            if ef[fe[f, i], 0] == f:
                ne[fe[f, i]] = nu[f, i]
    rows, cols, vals = [], [], []

    LAST_ELEMS.clear()

    def add(dofs, Kloc):
        dofs = np.asarray(dofs)
        LAST_ELEMS.append((dofs, Kloc))
        rows.append(np.repeat(dofs, len(dofs)))
        cols.append(np.tile(dofs, len(dofs)))
        vals.append(Kloc.ravel())

    if model == 'hinge':
        for e in range(Ne):
            f0, f1 = ef[e]
            if f1 < 0 and bc != 'clamped':
                continue
            # theta = (g_f1 - g_f0) . n_e ; g_f = sum_j w_j grad_j
            dofs = list(F[f0])
            b = list(-(grad[f0] @ ne[e]))
            Ae = 2 * area[f0]
            if f1 >= 0:
                dofs += list(F[f1])
                b += list(grad[f1] @ ne[e])
                Ae = area[f0] + area[f1]
            b = np.array(b)
            add(dofs, D * 3 * l[f0][list(fe[f0]).index(e)]**2 / Ae * np.outer(b, b))
    else:
        for f in range(len(F)):
            dofs = list(F[f])
            Bs = []   # each: coefficient vector c_i over dofs (3 vertex dofs + extras)
            extra = []
            for i in range(3):
                e = fe[f, i]
                other = ef[e, 1] if ef[e, 0] == f else ef[e, 0]
                c = -(grad[f] @ nu[f, i])            # - g_T . nu_i  on own vertices
                ext = []
                if model == 'midedge':
                    sig = float(np.dot(nu[f, i], ne[e]))
                    ext = [(N + e, sig)]
                elif model == 'avg':
                    if other >= 0:                   # s = (g_T + g_T').n_e / 2
                        c = c + 0.5 * (grad[f] @ nu[f, i])
                        ext = [(F[other][k], 0.5 * float(grad[other][k] @ nu[f, i])) for k in range(3)]
                    elif bc == 'clamped':
                        pass                          # s = 0: c = -g_T . nu
                    else:
                        c = 0 * c                     # libshell: no contribution
                Bs.append((c, ext))
                extra += [d for d, _ in ext]
            alld = dofs + [d for d in dict.fromkeys(extra) if d not in dofs]
            idx = {d: k for k, d in enumerate(alld)}
            B = np.zeros((3, len(alld)))   # Voigt (Hxx, Hyy, Hxy)
            for i, (c, ext) in enumerate(Bs):
                v = nu[f, i]
                vv = np.array([v[0] * v[0], v[1] * v[1], v[0] * v[1]]) * l[f, i] / area[f]
                coef = np.zeros(len(alld))
                coef[:3] += c
                for d, s in ext:
                    coef[idx[d]] += s
                B += np.outer(vv, coef)
            add(alld, area[f] * D * B.T @ CV @ B)
    ndof = N + (Ne if model == 'midedge' else 0)
    K = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(ndof, ndof))
    m = np.zeros(ndof)
    rot = np.zeros(Ne)
    for f in range(len(F)):
        m[F[f]] += RHO * H * area[f] / 3
        rot[fe[f]] += RHO * H**3 / 12 * area[f] / 3
    if model == 'midedge':
        m[N:] = rot
        if edge_mass is not None:      # beta: m_e = beta * rho h (area share) l_e^2
            le = np.linalg.norm(P[edges[:, 0]] - P[edges[:, 1]], axis=1)
            m[N:] = edge_mass * rot * 12 / H**2 * le**2
    bnd_v = np.zeros(N, bool)
    bnd_v[np.unique(edges[ef[:, 1] < 0])] = True
    fixed = np.zeros(ndof, bool)
    fixed[:N] = bnd_v
    if model == 'midedge' and bc == 'clamped':
        fixed[N:] = ef[:, 1] < 0
    return K, m, fixed


def fundamental(K, m, fixed, massless_extra=None):
    """smallest omega. massless_extra: mask of dofs whose mass is set to zero
    (static condensation), done by inverse iteration on K^-1 M."""
    free = ~fixed
    Kf = K[free][:, free].tocsc()
    mf = m[free].copy()
    if massless_extra is not None:
        mf[massless_extra[free]] = 0.0
    lu = spl.splu(Kf)
    x = np.ones(len(mf))
    x[mf == 0] = 0
    lam_old = 0
    for it in range(500):
        y = lu.solve(mf * x)
        lam = (x @ (mf * x)) / (x @ (mf * y)) if it else 0
        x = y / np.sqrt(y @ (mf * y))
        if it > 5 and abs(lam - lam_old) < 1e-12 * lam:
            break
        lam_old = lam
    # one Rayleigh quotient at the end
    lam = (x @ (Kf @ x)) / (x @ (mf * x))
    return np.sqrt(lam)


def omega_max(K, m, fixed):
    free = ~fixed
    Kf = K[free][:, free]
    Dm = sp.diags(1 / np.sqrt(m[free]))
    v = spl.eigsh(Dm @ Kf @ Dm, k=1, which='LA', return_eigenvectors=False, tol=1e-6)
    return np.sqrt(v[0])


def run(ns, patterns=('one', 'alt', 'irr'), models=('hinge', 'avg', 'midedge')):
    for bc in ('clamped', 'ss'):
        print(f"\n{bc}: omega / omega_Kirchhoff  (omega_K = {OMEGA_K[bc]:.1f} rad/s)")
        print(f"{'model':22s} {'pattern':5s} " + " ".join(f"n={n:<5d}" for n in ns))
        for model in models:
            variants = ['static', 'rotary'] if model == 'midedge' else ['']
            for var in variants:
                for pat in patterns:
                    out = []
                    for n in ns:
                        P, F, _ = square(n, pat, A)
                        K, m, fixed = assemble(P, F, model, bc)
                        mask = None
                        if model == 'midedge' and var == 'static':
                            mask = np.zeros(len(m), bool)
                            mask[len(P):] = True
                        out.append(fundamental(K, m, fixed, mask) / OMEGA_K[bc])
                    name = model + (f" ({var})" if var else "")
                    print(f"{name:22s} {pat:5s} " + " ".join(f"{r:7.4f}" for r in out), flush=True)


if __name__ == '__main__':
    ns = [int(a) for a in sys.argv[1:]] or [8, 16, 32]
    run(ns)
