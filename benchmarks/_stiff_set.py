"""Stiff initial value problems with reference gradients: a test set for the
accuracy of adsim's Radau and BDF derivatives.

The problems come from the Test Set for IVP Solvers (F. Mazzia and C.
Magherini, University of Bari, release 2.4, 2008) and from E. Hairer and G.
Wanner, *Solving Ordinary Differential Equations II*, 2nd ed., Springer,
1996 (sec. IV.10 and the problems of its chapter IV). Each is written as a
user writes it for ``scipy.integrate.solve_ivp``: ``fun(t, y, p)`` with the
parameters one NumPy array passed as ``args=(p,)``, rate constants as their
logarithms where they span orders of magnitude (as in
``examples/ode/robertson_fit.py``):

=============== ==== ===== ======================================================
name            n    p     what
=============== ==== ===== ======================================================
robertson       3    3     Robertson's kinetics on [0, 1e5] (log k)
hires           8    12    HIRES, plant physiology, on [0, 321.8122] (log c)
pollution       20   25    Pollution, air chemistry, on [0, 60] (log k)
vanderpol       2    1     Van der Pol, eps = 1e-6, scaled form, on [0, 2]: two
                           jumps (log eps)
oregonator      3    3     Oregonator (Field-Noyes) on [0, 360]: two spikes
                           (log s, log q, log w)
e5              4    4     E5 of Enright's stiff DETEST, on [0, 1e13]
                           (log A, log B, log C, log M)
brusselator2d   2N^2 3     2-D Brusselator with diffusion, periodic, N x N grid,
                           on [0, 11.5] (log A, log B, log alpha); ``size=N``
=============== ==== ===== ======================================================

Every problem carries:

* ``fun``, ``y0``, ``p``, ``t_span``, ``t_eval``: the call
  ``solve_ivp(fun, t_span, y0, t_eval=t_eval, args=(p,), ...)``;
* ``atol(rtol)``: the absolute tolerance to give with ``rtol`` (per
  component: ``rtol`` times the smallest magnitude that matters, except
  for E5, below);
* ``y_scale``: the typical magnitude of each component;
* ``weights`` (shape ``(n, len(t_eval))``): the loss
  ``L = sum(weights * sol.y)``, each component weighted by
  ``c_i / y_scale_i`` (``c_i`` from 1 to 2, so that no conservation law
  makes the loss flat), so that every component matters;
* ``y0_directions`` (shape ``(n, k)``): the gradient with respect to ``y0``
  is compared along these directions, ``dL/dy0 @ y0_directions``. For the
  small problems ``diag(y_scale)``: the derivative with respect to each
  initial value in units of its component's scale, comparable with the
  derivatives with respect to the log parameters. For the Brusselator above
  50 states, four fields (the initial ``u`` and ``v`` profiles and two
  Fourier modes), since a forward reference for all ``2 N^2`` initial values
  would integrate ``2 N^2`` sensitivities;
* ``jac(t, y, p)``: the analytic Jacobian ``df/dy`` (dense; sparse for the
  Brusselator), used only by the reference (``jac_sparsity`` for the
  Brusselator is the pattern SciPy and adsim are given).

The compared gradient is ``[dL/dp, dL/dy0 @ y0_directions]``
(:func:`gradient_vector`), its error the max-norm of the difference over
the max-norm of the reference (:func:`relative_error`).

Reference derivatives (:func:`reference_gradient`): the forward
sensitivities ``S = dy/d(p, y0 directions)``,

    S' = f_y S + [f_p | 0],      S(t0) = [0 | y0_directions],

integrated with the state by SciPy's Radau at ``rtol = 1e-12`` (``atol``
1e-12 times the problem's ``atol`` per unit ``rtol``; the integration
restarts at the problem's ``breakpoints``, where ``fun`` jumps in time).
``f_y S`` comes from the analytic Jacobian and ``f_p`` from the complex
step of ``fun`` (``Im fun(t, y, p + i h e_k) / h``, exact to rounding:
every ``fun`` and ``jac`` here is complex-analytic in ``y`` and ``p``).
Radau's Newton iterations get the exact Jacobian of the augmented system
(block lower triangular; its off-diagonal blocks ``d(f_y S_k + f_p e_k)/dy``
by the complex step of ``jac``, over groups of structurally orthogonal
columns for the Brusselator): with ``I (x) f_y`` alone, Newton's
convergence test fails so often that Radau takes 30 times the steps. The
gradient is ``sum_j weights[:, j] @ S(t_j)``. Its own accuracy is
estimated from a second integration at ``100 rtol``
(``uncertainty``: their relative difference, which bounds the error of
the tighter one as long as the error falls with the tolerance). References are cached in
``benchmarks/stiff_references.json``, keyed by problem and size, with a
fingerprint of the problem's data (a changed problem is computed again),
the time they took and their uncertainty:

    python -m benchmarks._stiff_set              # list the cache
    python -m benchmarks._stiff_set --refresh    # compute every reference again
    python -m benchmarks._stiff_set --refresh vanderpol brusselator2d:16

E5's absolute tolerance. Its components differ by up to 13 orders of
magnitude (y1 = 1.76e-3 decaying over 1e10, y2, y3, y4 below 1.4e-10, and
down to 1e-21 by t = 1e11) and the test set prescribes ``atol = 1.7e-24``
for every ``rtol``; with a larger one y2..y4 are not resolved at all (an
``atol`` of 1e-12 or 1e-15 is above the whole of them). ``atol(rtol)``
returns 1.7e-24 for E5 at every ``rtol``, and the reference uses 1.7e-26.
SciPy's Radau needs 10^5 evaluations of the sensitivity system at rtol
1e-8 there and did not finish at 1e-10 in 30 minutes, so E5's reference
is SciPy's LSODA at rtol 1e-10 (``reference_method``, ``reference_rtol``;
it agrees with Radau at 1e-8 to 1e-8). E5 compares the derivatives with
respect to its parameters and to y1(0) only: those with respect to the
initial values of y2, y3, y4 (zero) are set in the initial layer and
changed by 10 % between LSODA at rtol 1e-8 and 1e-10 and by 0.4 % between
1e-10 and 1e-11, so no reference within reach was accurate enough.
"""
import argparse
import hashlib
import json
import os
import sys
import time

if __name__ == "__main__":     # one BLAS thread, set before NumPy loads it: the
    for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")   # small products spin threads for nothing
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.integrate import solve_ivp as scipy_solve_ivp

HERE = Path(__file__).resolve().parent
CACHE_PATH = HERE / "stiff_references.json"
REFERENCE_RTOL = 1e-12
COMPLEX_STEP = 1e-30


# ---- the right-hand sides, as a user writes them -------------------------------------

def robertson(t, y, p):
    """Robertson (1966): A -> B, B + B -> C + B, B + C -> A + C; p = log k."""
    k = np.exp(p)
    return [-k[0] * y[0] + k[2] * y[1] * y[2],
            k[0] * y[0] - k[1] * y[1] ** 2 - k[2] * y[1] * y[2],
            k[1] * y[1] ** 2]


def robertson_jac(t, y, p):
    k = np.exp(p)
    return np.array([[-k[0], k[2] * y[2], k[2] * y[1]],
                     [k[0], -2 * k[1] * y[1] - k[2] * y[2], -k[2] * y[1]],
                     [0 * k[0], 2 * k[1] * y[1], 0 * k[0]]])


def hires(t, y, p):
    """HIRES (Schaefer 1975; Gottwald 1977): light-induced growth of a plant,
    eight species; p = log of the twelve distinct constants
    (1.71, 0.43, 8.32, 0.0007, 8.75, 10.03, 0.035, 1.12, 1.745, 280, 0.69, 1.81)."""
    c = np.exp(p)
    return [-c[0] * y[0] + c[1] * y[1] + c[2] * y[2] + c[3],
            c[0] * y[0] - c[4] * y[1],
            -c[5] * y[2] + c[1] * y[3] + c[6] * y[4],
            c[2] * y[1] + c[0] * y[2] - c[7] * y[3],
            -c[8] * y[4] + c[1] * y[5] + c[1] * y[6],
            -c[9] * y[5] * y[7] + c[10] * y[3] + c[0] * y[4] - c[1] * y[5] + c[10] * y[6],
            c[9] * y[5] * y[7] - c[11] * y[6],
            -c[9] * y[5] * y[7] + c[11] * y[6]]


def hires_jac(t, y, p):
    c = np.exp(p)
    J = np.zeros((8, 8), dtype=np.result_type(y, p, float))
    J[0, :3] = -c[0], c[1], c[2]
    J[1, :2] = c[0], -c[4]
    J[2, 2:5] = -c[5], c[1], c[6]
    J[3, 1:4] = c[2], c[0], -c[7]
    J[4, 4:7] = -c[8], c[1], c[1]
    J[5, 3:8] = c[10], c[0], -c[9] * y[7] - c[1], c[10], -c[9] * y[5]
    J[6, 5:8] = c[9] * y[7], -c[11], c[9] * y[5]
    J[7, 5:8] = -c[9] * y[7], c[11], -c[9] * y[5]
    return J


POLLUTION_RATES = np.array([
    0.35, 26.6, 1.23e4, 8.6e-4, 8.2e-4, 1.5e4, 1.3e-4, 2.4e4, 1.65e4, 9.0e3, 0.022, 1.2e4,
    1.88, 1.63e4, 4.8e6, 3.5e-4, 0.0175, 1.0e8, 4.44e11, 1240.0, 2.1, 5.78, 0.0474, 1780.0,
    3.12])


def pollution(t, y, p):
    """Pollution (Verwer 1994): the chemistry of a model of air pollution, 25
    reactions among 20 species; p = log k."""
    k = np.exp(p)
    r = [k[0] * y[0], k[1] * y[1] * y[3], k[2] * y[4] * y[1], k[3] * y[6], k[4] * y[6],
         k[5] * y[6] * y[5], k[6] * y[8], k[7] * y[8] * y[5], k[8] * y[10] * y[1],
         k[9] * y[10] * y[0], k[10] * y[12], k[11] * y[9] * y[1], k[12] * y[13],
         k[13] * y[0] * y[5], k[14] * y[2], k[15] * y[3], k[16] * y[3], k[17] * y[15],
         k[18] * y[15], k[19] * y[16] * y[5], k[20] * y[18], k[21] * y[18],
         k[22] * y[0] * y[3], k[23] * y[18] * y[0], k[24] * y[19]]
    return [-r[0] - r[9] - r[13] - r[22] - r[23] + r[1] + r[2] + r[8] + r[10] + r[11] + r[21]
            + r[24],
            -r[1] - r[2] - r[8] - r[11] + r[0] + r[20],
            -r[14] + r[0] + r[16] + r[18] + r[21],
            -r[1] - r[15] - r[16] - r[22] + r[14],
            -r[2] + 2 * r[3] + r[5] + r[6] + r[12] + r[19],
            -r[5] - r[7] - r[13] - r[19] + r[2] + 2 * r[17],
            -r[3] - r[4] - r[5] + r[12],
            r[3] + r[4] + r[5] + r[6],
            -r[6] - r[7],
            -r[11] + r[6] + r[8],
            -r[8] - r[9] + r[7] + r[10],
            r[8],
            -r[10] + r[9],
            -r[12] + r[11],
            r[13],
            -r[17] - r[18] + r[15],
            -r[19],
            r[19],
            -r[20] - r[21] - r[23] + r[22] + r[24],
            -r[24] + r[23]]


# reactants of each reaction (0-based species) and the net stoichiometry of
# pollution(), for its Jacobian N @ dr/dy
_POLLUTION_REACTANTS = [(0,), (1, 3), (4, 1), (6,), (6,), (6, 5), (8,), (8, 5), (10, 1),
                        (10, 0), (12,), (9, 1), (13,), (0, 5), (2,), (3,), (3,), (15,), (15,),
                        (16, 5), (18,), (18,), (0, 3), (18, 0), (19,)]
_POLLUTION_CHANGES = {   # species: {reaction: coefficient}, as in the equations above
    0: {0: -1, 9: -1, 13: -1, 22: -1, 23: -1, 1: 1, 2: 1, 8: 1, 10: 1, 11: 1, 21: 1, 24: 1},
    1: {1: -1, 2: -1, 8: -1, 11: -1, 0: 1, 20: 1},
    2: {14: -1, 0: 1, 16: 1, 18: 1, 21: 1},
    3: {1: -1, 15: -1, 16: -1, 22: -1, 14: 1},
    4: {2: -1, 3: 2, 5: 1, 6: 1, 12: 1, 19: 1},
    5: {5: -1, 7: -1, 13: -1, 19: -1, 2: 1, 17: 2},
    6: {3: -1, 4: -1, 5: -1, 12: 1},
    7: {3: 1, 4: 1, 5: 1, 6: 1},
    8: {6: -1, 7: -1},
    9: {11: -1, 6: 1, 8: 1},
    10: {8: -1, 9: -1, 7: 1, 10: 1},
    11: {8: 1},
    12: {10: -1, 9: 1},
    13: {12: -1, 11: 1},
    14: {13: 1},
    15: {17: -1, 18: -1, 15: 1},
    16: {19: -1},
    17: {19: 1},
    18: {20: -1, 21: -1, 23: -1, 22: 1, 24: 1},
    19: {24: -1, 23: 1},
}
POLLUTION_STOICHIOMETRY = np.zeros((20, 25))
for _i, _changes in _POLLUTION_CHANGES.items():
    for _j, _c in _changes.items():
        POLLUTION_STOICHIOMETRY[_i, _j] = _c


def pollution_jac(t, y, p):
    k = np.exp(p)
    dr = np.zeros((25, 20), dtype=np.result_type(y, p, float))
    for j, species in enumerate(_POLLUTION_REACTANTS):
        for a in species:
            others = [b for b in species if b != a]
            dr[j, a] = k[j] * (y[others[0]] if others else 1.0)
    return POLLUTION_STOICHIOMETRY @ dr


def van_der_pol(t, y, p):
    """Van der Pol in Hairer and Wanner's scaled form (VDPOL), p = [log eps]:
    y1' = y2, y2' = ((1 - y1^2) y2 - y1) / eps; eps = 1e-6 is mu = 1000
    in the time scale t / mu."""
    eps = np.exp(p[0])
    return [y[1], ((1 - y[0] ** 2) * y[1] - y[0]) / eps]


def van_der_pol_jac(t, y, p):
    eps = np.exp(p[0])
    return np.array([[0 * eps, 1 + 0 * eps],
                     [(-2 * y[0] * y[1] - 1) / eps, (1 - y[0] ** 2) / eps]])


def oregonator(t, y, p):
    """Oregonator (Field and Noyes 1974), the Belousov-Zhabotinskii reaction, as
    in the test set (OREGO); p = log (s, q, w) = log (77.27, 8.375e-6, 0.161)."""
    s, q, w = np.exp(p)
    return [s * (y[1] - y[0] * y[1] + y[0] - q * y[0] ** 2),
            (-y[1] - y[0] * y[1] + y[2]) / s,
            w * (y[0] - y[2])]


def oregonator_jac(t, y, p):
    s, q, w = np.exp(p)
    return np.array([[s * (1 - y[1] - 2 * q * y[0]), s * (1 - y[0]), 0 * s],
                     [-y[1] / s, -(1 + y[0]) / s, 1 / s],
                     [w, 0 * w, -w]])


def e5(t, y, p):
    """E5 of the stiff DETEST set (Enright, Hull and Lindberg 1975), a chemical
    pyrolysis; p = log (A, B, C, M) = log (7.89e-10, 1.1e7, 1.13e3, 1e6)."""
    a, b, c, m = np.exp(p)
    r1, r2, r3, r4 = a * y[0], b * y[0] * y[2], m * c * y[1] * y[2], c * y[3]
    return [-r1 - r2, r1 - r3, r1 - r2 - r3 + r4, r2 - r4]


def e5_jac(t, y, p):
    a, b, c, m = np.exp(p)
    z = 0 * a
    return np.array([[-a - b * y[2], z, -b * y[0], z],
                     [a, -m * c * y[2], -m * c * y[1], z],
                     [a - b * y[2], -m * c * y[2], -b * y[0] - m * c * y[1], c],
                     [b * y[2], z, b * y[0], -c]])


def brusselator_2d(size):
    """The 2-D Brusselator with diffusion of Hairer and Wanner (BRUSS-2D),
    periodic on the unit square, on a ``size`` x ``size`` grid (x_i = i / N):

        u' = A + u^2 v - (B + 1) u + alpha Lap u + f(x, y, t),
        v' = B u - u^2 v + alpha Lap v,

    A = 1, B = 3.4, alpha = 0.1, f = 5 in the disk (x - 0.3)^2 + (y - 0.6)^2
    <= 0.01 from t = 1.1 on. Returns ``(fun, jac, jac_sparsity, grid)``;
    ``fun(t, y, p)`` with y = [u.ravel(), v.ravel()], p = log (A, B, alpha)."""
    N = int(size)
    x = np.arange(N) / N
    X, Y = np.meshgrid(x, x, indexing="ij")
    disk = 5.0 * (((X - 0.3) ** 2 + (Y - 0.6) ** 2) <= 0.01).ravel()
    inv_dx2 = float(N * N)
    n = N * N

    def laplacian(w):
        w = w.reshape(N, N)
        return ((np.roll(w, 1, axis=0) + np.roll(w, -1, axis=0) + np.roll(w, 1, axis=1)
                 + np.roll(w, -1, axis=1) - 4 * w) * inv_dx2).ravel()

    def fun(t, y, p):
        A, B, alpha = np.exp(p)
        u, v = y[:n], y[n:]
        uuv = u * u * v
        du = A + uuv - (B + 1) * u + alpha * laplacian(u)
        if t >= 1.1:
            du = du + disk
        dv = B * u - uuv + alpha * laplacian(v)
        return np.concatenate([du, dv])

    one = sp.identity(N, format="csr")
    ring = sp.diags([1.0, 1.0, -2.0, 1.0, 1.0], [-(N - 1), -1, 0, 1, N - 1], shape=(N, N))
    lap = ((sp.kron(ring, one) + sp.kron(one, ring)) * inv_dx2).tocsr()
    eye = sp.identity(n, format="csr")
    # J = alpha [[lap, 0], [0, lap]] + [[diag a, diag c], [diag b, diag d]]: one CSR
    # structure, its data filled by index (where each term's entries sit in it)
    diffusion = sp.block_diag([lap, lap], format="csr")
    parts = [sp.bmat(b, format="csr") for b in
             ([[eye, None], [None, 0 * eye]], [[0 * eye, None], [eye, 0 * eye]],
              [[0 * eye, eye], [None, 0 * eye]], [[0 * eye, None], [None, eye]])]
    pattern = abs(diffusion) + sum(abs(q) for q in parts)
    pattern = sp.csr_matrix((np.ones(pattern.nnz), pattern.indices, pattern.indptr),
                            shape=pattern.shape)
    pattern.sort_indices()

    def positions(q):
        """Where the entries of ``q`` (row by row, as stored) sit in ``pattern.data``."""
        q = sp.csr_matrix(q)
        q.eliminate_zeros()
        q.sort_indices()
        index = sp.csr_matrix((np.arange(pattern.nnz) + 1.0, pattern.indices, pattern.indptr),
                              shape=pattern.shape)
        return (index.multiply(abs(q) > 0)).tocsr().data.astype(int) - 1, q

    at_diffusion, diffusion = positions(diffusion)
    at_part = [positions(q)[0] for q in parts]     # each a diagonal, rows in order

    def jac(t, y, p):
        A, B, alpha = np.exp(p)
        u, v = y[:n], y[n:]
        data = np.zeros(pattern.nnz, dtype=np.result_type(y, p, float))
        data[at_diffusion] += alpha * diffusion.data
        data[at_part[0]] += 2 * u * v - (B + 1)        # du'/du
        data[at_part[1]] += B - 2 * u * v              # dv'/du
        data[at_part[2]] += u * u                      # du'/dv
        data[at_part[3]] += -u * u                     # dv'/dv
        return sp.csr_matrix((data, pattern.indices, pattern.indptr), shape=pattern.shape)

    return fun, jac, pattern.copy(), (X, Y)


# ---- the problems -------------------------------------------------------------------

@dataclass
class Problem:
    """One problem of the set: the call of ``solve_ivp``, its tolerances, its
    loss and what the reference needs (see the module docstring)."""

    name: str
    fun: object
    y0: np.ndarray
    p: np.ndarray
    t_span: tuple
    t_eval: np.ndarray
    y_scale: np.ndarray
    atol_per_rtol: np.ndarray = None     # atol = rtol * atol_per_rtol
    fixed_atol: float = None             # or one atol for every rtol (E5)
    jac: object = None
    jac_sparsity: object = None
    size: int = None
    breakpoints: tuple = ()              # times where fun jumps (for the reference)
    y0_directions: np.ndarray = None
    weights: np.ndarray = None
    p_names: tuple = ()
    reference_rtol: float = REFERENCE_RTOL
    reference_method: str = "Radau"
    note: str = ""

    def __post_init__(self):
        # weights=None: c_i / y_scale_i at every output time (replace() with
        # weights=None after changing t_eval makes them again)
        self.y0 = np.asarray(self.y0, dtype=float)
        self.p = np.asarray(self.p, dtype=float)
        self.t_eval = np.asarray(self.t_eval, dtype=float)
        self.y_scale = np.broadcast_to(np.asarray(self.y_scale, dtype=float),
                                       self.y0.shape).copy()
        n = self.y0.size
        if self.weights is None:
            c = np.linspace(1.0, 2.0, n) if n > 1 else np.ones(1)
            self.weights = np.repeat((c / self.y_scale)[:, None], self.t_eval.size, axis=1)
        if self.y0_directions is None:
            self.y0_directions = np.diag(self.y_scale)

    @property
    def key(self):
        return self.name if self.size is None else f"{self.name}:{self.size}"

    @property
    def n(self):
        return self.y0.size

    def atol(self, rtol):
        if self.fixed_atol is not None:
            return self.fixed_atol
        return rtol * self.atol_per_rtol

    def options(self, rtol):
        """Keyword arguments of solve_ivp besides method (SciPy's and adsim's)."""
        out = dict(t_eval=self.t_eval, rtol=rtol, atol=self.atol(rtol))
        if self.jac_sparsity is not None:
            out["jac_sparsity"] = self.jac_sparsity
        return out

    def loss_of(self, y):
        return np.sum(self.weights * y)

    def loss(self, solve_ivp, method, rtol, **options):
        """``L(y0, p)`` with ``solve_ivp`` (adsim's or SciPy's)."""
        kw = {**self.options(rtol), **options}

        def loss(y0, p):
            sol = solve_ivp(self.fun, self.t_span, y0, method=method, args=(p,), **kw)
            return np.sum(self.weights * sol.y)
        return loss

    def labels(self):
        names = list(self.p_names) or [f"p{k}" for k in range(self.p.size)]
        return [f"d/d{nm}" for nm in names] + [f"d/dy0.d{k}"
                                               for k in range(self.y0_directions.shape[1])]

    def fingerprint(self):
        """A hash of the data that defines the reference (to 10 digits)."""
        h = hashlib.sha1()
        h.update(self.key.encode())
        for a in (self.y0, self.p, np.asarray(self.t_span, dtype=float), self.t_eval,
                  self.weights, self.y0_directions):
            h.update(np.asarray(a).shape.__repr__().encode())
            h.update(" ".join(np.format_float_scientific(v, precision=9)
                              for v in np.ravel(a)).encode())
        return h.hexdigest()[:16]


def _robertson():
    return Problem("robertson", robertson, [1.0, 0.0, 0.0], np.log([0.04, 3e7, 1e4]),
                   (0.0, 1e5), [1e-3, 1e-1, 10.0, 1e3, 1e5], y_scale=[1.0, 3e-5, 1.0],
                   atol_per_rtol=np.array([1e-3, 1e-8, 1e-3]), jac=robertson_jac,
                   p_names=("log k1", "log k2", "log k3"))


def _hires():
    c = [1.71, 0.43, 8.32, 0.0007, 8.75, 10.03, 0.035, 1.12, 1.745, 280.0, 0.69, 1.81]
    return Problem("hires", hires, [1.0, 0, 0, 0, 0, 0, 0, 0.0057], np.log(c),
                   (0.0, 321.8122), [1.0, 5.0, 20.0, 100.0, 321.8122],
                   y_scale=[0.3, 0.05, 0.02, 0.3, 0.1, 0.5, 0.005, 0.003],
                   atol_per_rtol=np.full(8, 1e-4), jac=hires_jac,
                   p_names=tuple(f"log c{i + 1}" for i in range(12)))


def _pollution():
    y0 = np.zeros(20)
    y0[[1, 3, 6, 7, 8, 16]] = 0.2, 0.04, 0.1, 0.3, 0.01, 0.007
    return Problem("pollution", pollution, y0, np.log(POLLUTION_RATES), (0.0, 60.0),
                   [1.0, 5.0, 20.0, 60.0], y_scale=POLLUTION_SCALE,
                   atol_per_rtol=POLLUTION_SCALE * 1e-3, jac=pollution_jac,
                   p_names=tuple(f"log k{i + 1}" for i in range(25)))


# typical magnitudes of the pollution species: the largest value on [0, 60], to one digit
POLLUTION_SCALE = np.array([0.06, 0.2, 4e-9, 0.04, 4e-7, 6e-7, 0.1, 0.3, 0.01, 6e-8, 4e-8, 2e-3,
                            2e-4, 3e-5, 9e-3, 3e-17, 7e-3, 1e-4, 2e-6, 6e-5])


def _van_der_pol():
    return Problem("vanderpol", van_der_pol, [2.0, -0.66], np.log([1e-6]), (0.0, 2.0),
                   [0.5, 1.0, 1.5, 2.0], y_scale=[2.0, 1.0],
                   atol_per_rtol=np.array([1.0, 1.0]), jac=van_der_pol_jac,
                   p_names=("log eps",),
                   note="jumps near t = 0.81 and 1.62: outputs before, between and after")


def _oregonator():
    return Problem("oregonator", oregonator, [1.0, 2.0, 3.0], np.log([77.27, 8.375e-6, 0.161]),
                   (0.0, 360.0), [10.0, 50.0, 100.0, 200.0, 300.0, 360.0],
                   y_scale=[3.0, 500.0, 1000.0], atol_per_rtol=np.array([1.0, 1e-2, 1.0]),
                   jac=oregonator_jac, p_names=("log s", "log q", "log w"),
                   note="spikes near t = 25 and 325")


def _e5():
    return Problem("e5", e5, [1.76e-3, 0.0, 0.0, 0.0], np.log([7.89e-10, 1.1e7, 1.13e3, 1e6]),
                   (0.0, 1e13), [10.0, 1e3, 1e5, 1e7, 1e9, 1e11, 1e13],
                   y_scale=[1.76e-3, 1e-10, 1e-11, 1e-10], fixed_atol=1.7e-24, jac=e5_jac,
                   y0_directions=np.array([[1.76e-3], [0.0], [0.0], [0.0]]),
                   p_names=("log A", "log B", "log C", "log M"), reference_rtol=1e-10,
                   reference_method="LSODA",
                   note="atol = 1.7e-24 at every rtol, as the test set prescribes")


def _brusselator(size=16, t_end=11.5, label=None):
    fun, jac, pattern, (X, Y) = brusselator_2d(size)
    u0 = (22.0 * Y * (1 - Y) ** 1.5).ravel()
    v0 = (27.0 * X * (1 - X) ** 1.5).ravel()
    n = 2 * size * size
    zero = np.zeros(size * size)
    # the loss: smooth weights over the grid, averaged
    wu = ((1 + 0.5 * np.cos(2 * np.pi * X)) * (1 + 0.5 * np.sin(2 * np.pi * Y))).ravel()
    wv = (1.5 + 0.5 * np.sin(2 * np.pi * (X + Y))).ravel()
    t_eval = np.array([1.0, 1.5, 3.0, 6.0, 11.5])
    t_eval = t_eval[t_eval <= t_end]
    weights = np.repeat((np.concatenate([wu, wv]) / (size * size))[:, None], t_eval.size,
                        axis=1)
    if n <= 50:
        directions = np.eye(n)
    else:
        modes = np.cos(2 * np.pi * X).ravel() * np.cos(2 * np.pi * Y).ravel()
        directions = np.stack([np.concatenate([u0, zero]), np.concatenate([zero, v0]),
                               np.concatenate([modes, zero]),
                               np.concatenate([zero, np.sin(2 * np.pi * X).ravel()])], axis=1)
    return Problem("brusselator2d", fun, np.concatenate([u0, v0]), np.log([1.0, 3.4, 0.1]),
                   (0.0, t_end), t_eval, y_scale=1.0, atol_per_rtol=np.full(n, 1.0), jac=jac,
                   jac_sparsity=pattern, size=size if label is None else label,
                   breakpoints=(1.1,),
                   y0_directions=directions, weights=weights,
                   p_names=("log A", "log B", "log alpha"),
                   note="the source switches on at t = 1.1")


PROBLEMS = {"robertson": _robertson, "hires": _hires, "pollution": _pollution,
            "vanderpol": _van_der_pol, "oregonator": _oregonator, "e5": _e5,
            "brusselator2d": _brusselator}
NAMES = tuple(PROBLEMS)


# the tests' versions of the problems whose full interval is slow to differentiate:
# a shorter interval and its outputs (the others are tested as they are; the
# Brusselator on a 4 x 4 grid over [0, 3], across the source's switch at 1.1)
SMALL = {"vanderpol": (1.0, [0.5, 1.0]),            # across the first jump only
         "oregonator": (50.0, [10.0, 30.0, 50.0]),  # across the first spike only
         "e5": (1e5, [10.0, 1e3, 1e5])}             # the first eight decades
SMALL_GRID, SMALL_GRID_END = 4, 3.0


def problem(name, size=None):
    """The problem ``name``; ``size``: the grid of the Brusselator (default 16),
    or "small" for the tests' version of any problem (:data:`SMALL`; key
    ``name:small``, or ``name`` where it is the full problem)."""
    if name == "brusselator2d":
        if size == "small":
            return _brusselator(SMALL_GRID, SMALL_GRID_END, label="small")
        return _brusselator(16 if size is None else int(size))
    full = PROBLEMS[name]()
    if size is None or name not in SMALL:
        if size not in (None, "small"):
            raise ValueError(f"{name} has no size {size!r} (None or 'small')")
        return full
    t_end, t_eval = SMALL[name]
    return replace(full, t_span=(full.t_span[0], t_end), t_eval=np.asarray(t_eval, dtype=float),
                   weights=None, size="small")


def problem_from_key(key):
    """The problem of a cache key, ``name`` or ``name:size``."""
    name, _, size = key.partition(":")
    return problem(name, None if not size else size if not size.isdigit() else int(size))


# ---- gradients and their errors ------------------------------------------------------

def gradient_vector(problem, g_y0, g_p):
    """The compared gradient: ``[dL/dp, dL/dy0 @ y0_directions]``."""
    return np.concatenate([np.ravel(g_p), np.ravel(g_y0) @ problem.y0_directions])


def relative_error(gradient, reference):
    """max |gradient - reference| / max |reference|."""
    gradient, reference = np.asarray(gradient), np.asarray(reference)
    return float(np.max(np.abs(gradient - reference)) / np.max(np.abs(reference)))


# ---- the reference: forward sensitivities -------------------------------------------

def _column_groups(pattern):
    """Greedy grouping of the columns of a sparse ``pattern`` so that no two
    columns of a group share a row."""
    pattern = sp.csc_matrix(pattern)
    n_rows, n_cols = pattern.shape
    groups, covered = [], []
    for j in range(n_cols):
        rows = pattern.indices[pattern.indptr[j]:pattern.indptr[j + 1]]
        for g, used in zip(groups, covered):
            if not used[rows].any():
                g.append(j)
                used[rows] = True
                break
        else:
            used = np.zeros(n_rows, dtype=bool)
            used[rows] = True
            groups.append([j])
            covered.append(used)
    return groups


def _sensitivity_system(problem):
    """The augmented right-hand side ``(t, w) -> w'`` with ``w = [y, S[:, 0],
    S[:, 1], ...]``, its Jacobian ``(t, w) -> sparse matrix`` and the initial
    value; ``m`` columns of ``S``.

    ``S_k' = f_y S_k + f_p e_k``; ``f_y`` from ``problem.jac``, ``f_p`` by
    the complex step of ``fun``. The Jacobian of ``w'`` is block lower
    triangular: ``f_y`` on the diagonal, and in the first block column
    ``H_k = d(f_y S_k + f_p e_k)/dy``, whose columns ``l`` are
    ``(d f_y / d y_l) S_k + (d f_y / d p_k)[:, l]``, both by the complex step
    of ``jac`` (over groups of structurally orthogonal columns when the
    problem has a ``jac_sparsity``, which must cover the pattern of ``H_k``).
    """
    fun, jac, p, n = problem.fun, problem.jac, problem.p, problem.n
    m_p, m = problem.p.size, problem.p.size + problem.y0_directions.shape[1]
    h = COMPLEX_STEP
    if problem.jac_sparsity is not None:
        pattern = sp.csc_matrix(problem.jac_sparsity)
        groups = _column_groups(pattern)
    else:
        pattern, groups = None, [[j] for j in range(n)]

    def p_step(k):
        dp = p.astype(complex)
        dp[k] += 1j * h
        return dp

    def rhs(t, w):
        y = w[:n]
        S = w[n:].reshape(m, n).T
        dS = np.asarray(jac(t, y, p) @ S)
        for k in range(m_p):
            dS[:, k] += np.asarray(fun(t, y, p_step(k)), dtype=complex).imag / h
        return np.concatenate([np.asarray(fun(t, y, p), dtype=float), dS.T.ravel()])

    def augmented_jacobian(t, w):
        y = w[:n]
        S = w[n:].reshape(m, n).T
        J = sp.csr_matrix(jac(t, y, p))
        rows_of, cols_of, vals_of = [], [], [[] for _ in range(m)]
        for group in groups:
            d = np.zeros(n)
            d[group] = 1.0
            dJ = jac(t, y + 1j * h * d, p)          # sum of d f_y / d y_j over the group
            dJS = np.asarray((dJ @ S).imag / h)       # (n, m)
            for j in group:
                rows = (np.arange(n) if pattern is None
                        else pattern.indices[pattern.indptr[j]:pattern.indptr[j + 1]])
                rows_of.append(rows)
                cols_of.append(np.full(rows.size, j))
                for k in range(m):
                    vals_of[k].append(dJS[rows, k])
        rows, cols = np.concatenate(rows_of), np.concatenate(cols_of)
        H = [sp.csr_matrix((np.concatenate(v), (rows, cols)), shape=(n, n)) for v in vals_of]
        for k in range(m_p):
            dJp = jac(t, y, p_step(k))
            H[k] = H[k] + sp.csr_matrix(dJp.imag / h if sp.issparse(dJp)
                                        else np.asarray(dJp).imag / h)
        blocks = [[None] * (m + 1) for _ in range(m + 1)]
        for k in range(m + 1):
            blocks[k][k] = J
        for k in range(m):
            blocks[k + 1][0] = sp.csr_matrix(H[k])
        return sp.bmat(blocks, format="csc")

    start = np.concatenate([problem.y0, np.zeros(n * m_p), problem.y0_directions.T.ravel()])
    return rhs, augmented_jacobian, start, m


def _reference_atol(problem, rtol):
    if problem.fixed_atol is not None:
        return np.full(problem.n, problem.fixed_atol * 1e-2)
    return rtol * problem.atol_per_rtol


def _block_radau(n, m):
    """SciPy's Radau for the augmented system, its linear algebra block by
    block: Newton's matrices ``c I - J_aug`` are block lower triangular with
    ``m + 1`` equal diagonal blocks ``c I - f_y`` and the others in the first
    block column, so one LU of the ``n x n`` block and a block forward
    substitution solve them exactly (an LU of the whole matrix mixes the
    blocks: for the Brusselator on 16 x 16 points it made the reference take
    hours). The steps are SciPy's."""
    from scipy.integrate import Radau
    from scipy.sparse.linalg import splu

    class BlockRadau(Radau):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)

            def lu(A):
                self.nlu += 1
                A = sp.csc_matrix(A)
                return splu(A[:n, :n].tocsc()), A[n:, :n].tocsr()

            def solve_lu(factors, b):
                diagonal, lower = factors
                first = diagonal.solve(b[:n])
                rest = diagonal.solve(np.ascontiguousarray(
                    (b[n:] - lower @ first).reshape(m, n).T))
                return np.concatenate([first, rest.T.ravel()])
            self.lu, self.solve_lu = lu, solve_lu
    return BlockRadau


def sensitivities(problem, rtol=REFERENCE_RTOL):
    """States ``y`` (n, k) and sensitivities ``S`` (n, m, k) at ``t_eval``
    by SciPy's Radau (E5: LSODA), and the number of right-hand side evaluations."""
    rhs, augmented_jacobian, w, m = _sensitivity_system(problem)
    n = problem.n
    if problem.reference_method == "LSODA":      # a dense Jacobian
        method = "LSODA"

        def jacobian(t, w):
            return augmented_jacobian(t, w).toarray()
    else:
        method, jacobian = _block_radau(n, m), augmented_jacobian
    atol = np.tile(_reference_atol(problem, rtol), m + 1)
    t0, tf = problem.t_span
    cuts = [t0] + [c for c in problem.breakpoints if t0 < c < tf] + [tf]
    ys, nfev = [], 0
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        after = problem.t_eval >= a if i == 0 else problem.t_eval > a
        wanted = problem.t_eval[after & (problem.t_eval <= b)]
        sol = scipy_solve_ivp(rhs, (a, b), w, method=method, t_eval=np.union1d(wanted, [b]),
                              rtol=rtol, atol=atol, jac=jacobian)
        if not sol.success:
            raise RuntimeError(f"{problem.key}: the sensitivity integration failed on "
                               f"[{a:g}, {b:g}]: {sol.message}")
        nfev += sol.nfev
        w = sol.y[:, -1]
        ys.append(sol.y[:, np.isin(sol.t, wanted)])
    Y = np.concatenate(ys, axis=1)
    assert Y.shape[1] == problem.t_eval.size
    return Y[:n], Y[n:].reshape(m, n, -1).transpose(1, 0, 2), nfev


def compute_reference(problem, rtol=None, check=True):
    """The reference gradient (no cache) and a record of how it was computed
    (``rtol``: the problem's ``reference_rtol`` unless given)."""
    rtol = problem.reference_rtol if rtol is None else rtol
    t0, c0 = time.perf_counter(), time.process_time()
    y, S, nfev = sensitivities(problem, rtol)
    seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    gradient = np.einsum("ij,imj->m", problem.weights, S)
    record = dict(gradient=gradient.tolist(), labels=problem.labels(), rtol=rtol,
                  seconds=round(seconds, 3), cpu_seconds=round(cpu_seconds, 3), nfev=int(nfev),
                  loss=float(problem.loss_of(y)),
                  fingerprint=problem.fingerprint(), method=problem.reference_method,
                  computed=time.strftime("%Y-%m-%d %H:%M:%S"))
    if check:
        t1 = time.perf_counter()
        _, S_loose, _ = sensitivities(problem, 100 * rtol)
        loose = np.einsum("ij,imj->m", problem.weights, S_loose)
        record["uncertainty"] = relative_error(loose, gradient)
        record["uncertainty_rtol"] = 100 * rtol
        record["check_seconds"] = round(time.perf_counter() - t1, 3)
    return gradient, record


def load_cache(path=CACHE_PATH):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {"format": 1, "references": {}}


def save_cache(cache, path=CACHE_PATH):
    Path(path).write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")


def cached_reference(problem, path=CACHE_PATH):
    """The cached record of ``problem`` when it matches the problem's data, else None."""
    record = load_cache(path)["references"].get(problem.key)
    if record is None or record.get("fingerprint") != problem.fingerprint():
        return None
    return record


def reference_gradient(problem, rtol=None, refresh=False, cache=True, path=CACHE_PATH):
    """d loss / d (p, y0 directions) of the exact solution (see the module
    docstring), from the cache when it holds this problem at this ``rtol``;
    otherwise computed and, with ``cache``, stored. ``rtol``: the problem's
    ``reference_rtol`` (1e-12; E5 1e-10) unless given."""
    rtol = problem.reference_rtol if rtol is None else rtol
    if not refresh:
        record = cached_reference(problem, path)
        if record is not None and record["rtol"] == rtol:
            return np.array(record["gradient"])
    gradient, record = compute_reference(problem, rtol)
    if cache:
        data = load_cache(path)
        data["references"][problem.key] = record
        save_cache(data, path)
    return gradient


# the references the benchmark (stiff_accuracy) and the tests use
BENCHMARK_KEYS = ("robertson", "hires", "pollution", "vanderpol", "oregonator", "e5",
                  "brusselator2d:16")
TEST_KEYS = ("vanderpol:small", "oregonator:small", "e5:small", "brusselator2d:small")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks._stiff_set",
                                     description="List or compute the cached reference "
                                                 "gradients of the stiff test set.")
    parser.add_argument("--refresh", action="store_true",
                        help="compute the references (again): all, or those named")
    parser.add_argument("keys", nargs="*", help="problems, as name or name:size "
                                                f"(default {' '.join(BENCHMARK_KEYS + TEST_KEYS)})")
    args = parser.parse_args(argv)
    keys = args.keys or list(BENCHMARK_KEYS + TEST_KEYS)
    for key in keys:
        prob = problem_from_key(key)
        record = cached_reference(prob)
        if args.refresh:
            print(f"{key}: computing ...", flush=True)
            reference_gradient(prob, refresh=True)
            record = cached_reference(prob)
        if record is None:
            print(f"{key:18s} not cached (or the problem changed): --refresh {key}")
            continue
        print(f"{key:18s} n = {prob.n:5d}, {len(record['gradient']):3d} derivatives, "
              f"{record['seconds']:8.1f} s (check {record.get('check_seconds', float('nan')):.1f} s"
              f" at rtol {record.get('uncertainty_rtol', float('nan')):g}: "
              f"uncertainty {record.get('uncertainty', float('nan')):.1e}), nfev {record['nfev']}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
