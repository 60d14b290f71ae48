"""Flat test meshes and their edge topology (numpy only).

square(n, pattern, a): n x n cells on [0, a]^2, counter-clockwise triangles.
  pattern 'one': every cell cut by the diagonal (i, j)-(i+1, j+1)
  pattern 'alt': the avi `rect` generator's pattern (diagonal chosen by the
                 parity of i + j, so vertex valences alternate 4 / 8)
  pattern 'irr': random diagonal per cell and interior vertices jittered by
                 up to +-0.25 of a cell (fixed seed): an unstructured stand-in
"""
import numpy as np


def square(n, pattern='one', a=0.1, seed=1):
    h = a / n
    I, J = np.meshgrid(np.arange(n + 1), np.arange(n + 1))
    P = np.stack([I.ravel() * h, J.ravel() * h], 1).astype(float)
    rng = np.random.default_rng(seed + n)
    F = []
    for j in range(n):
        for i in range(n):
            v00 = j * (n + 1) + i
            v10, v01, v11 = v00 + 1, v00 + n + 1, v00 + n + 2
            if pattern == 'one':
                d = True
            elif pattern == 'alt':
                d = (i + j) % 2 == 0
            else:
                d = rng.random() < 0.5
            if d:
                F += [(v00, v10, v11), (v00, v11, v01)]
            else:
                F += [(v00, v10, v01), (v10, v11, v01)]
    F = np.array(F)
    if pattern == 'irr':
        inner = (I.ravel() > 0) & (I.ravel() < n) & (J.ravel() > 0) & (J.ravel() < n)
        P[inner] += rng.uniform(-0.25, 0.25, (inner.sum(), 2)) * h
    bnd = np.isclose(P[:, 0], 0) | np.isclose(P[:, 0], a) | np.isclose(P[:, 1], 0) | np.isclose(P[:, 1], a)
    return P, F, bnd


def topology(F):
    """edges (E x 2, sorted), face_edges (F x 3: edge opposite local vertex i),
    edge_faces (E x 2, -1 if none)."""
    emap = {}
    edges = []
    fe = np.zeros((len(F), 3), int)
    ef = []
    for f, t in enumerate(F):
        for i in range(3):
            a, b = t[(i + 1) % 3], t[(i + 2) % 3]
            k = (min(a, b), max(a, b))
            if k not in emap:
                emap[k] = len(edges)
                edges.append(k)
                ef.append([f, -1])
            else:
                ef[emap[k]][1] = f
            fe[f, i] = emap[k]
    return np.array(edges), fe, np.array(ef)
