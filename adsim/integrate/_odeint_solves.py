"""The derivatives of ``odeint``'s solution: the continuous adjoint (reverse
mode) and the forward sensitivity equations (forward mode), integrated by
SciPy's LSODA (``scipy.integrate.odeint``), stiff problems included.

For ``y' = f(t, y, p)``, ``y(t_0) = y0``, and outputs ``Y_j = y(t_j)``:

- **Forward.** ``S = dy/d(inputs) · direction`` solves
  ``S' = f_y S + f_p ṗ`` from ``S(t_0) = ẏ0 - f(t_0, y0) ṫ_0``, integrated
  with ``y`` as one system; then ``Ẏ_j = S(t_j) + f(t_j, Y_j) ṫ_j`` for
  ``j ≥ 1`` and ``Ẏ_0 = ẏ0`` (row 0 is ``y0`` whatever ``t_0``).
- **Reverse.** For output adjoints ``Ȳ_j``, ``λ`` solves
  ``λ' = -f_yᵀ λ`` backwards from ``t_{m-1}`` to ``t_0``, jumping by
  ``Ȳ_j`` at each ``t_j``, and ``μ' = -f_pᵀ λ`` accumulates the parameter
  adjoint ``p̄ = μ(t_0) = ∫ f_pᵀ λ dt``. Then ``ȳ0 = λ(t_0) + Ȳ_0``,
  ``t̄_j = Ȳ_j · f(t_j, Y_j)`` (``j ≥ 1``) and
  ``t̄_0 = -λ(t_0⁺) · f(t_0, y0)`` (``λ`` before ``Ȳ_0`` is added).
  ``f_y`` and ``f_p`` are taken along the forward solution, which comes from
  SciPy's ``LSODA`` solver (``solve_ivp(method="LSODA", dense_output=True)``)
  at the call's tolerances: its interpolant is accurate to about the
  tolerance everywhere, which is what the adjoint needs (odeint's own
  outputs are SciPy's values, but only at the output times).

Each backward interval ``[t_{j-1}, t_j]`` is one LSODA solve that stops
exactly at its end (``tcrit``: no evaluation beyond it), restarted after the
jump. Several adjoint or tangent directions are one system (up to 64
equations; more directions make several) whose Jacobian is block diagonal,
given to LSODA dense: given as a band (``ml = mu =`` block size - 1), the
same matrix made LSODA's stiff mode fail on Robertson's sensitivities. Every
direction is scaled to unit size first, so that the absolute tolerance
means the same for each.

References
----------
Y. Cao, S. Li, L. Petzold and R. Serban, "Adjoint sensitivity analysis for
differential-algebraic equations: the adjoint DAE system and its numerical
solution", SIAM J. Sci. Comput. 24(3), 1076–1089, 2003.
A. C. Hindmarsh and R. Serban, *User Documentation for CVODES*, LLNL
(forward sensitivities, the adjoint method with quadratures).
L. Petzold, "Automatic selection of methods for solving stiff and nonstiff
systems of ordinary differential equations", SIAM J. Sci. Stat. Comput.
4(1), 136–148, 1983 (LSODA).
"""
import bisect
import warnings

import numpy as np
from scipy.integrate import LSODA, ODEintWarning, odeint as scipy_odeint

from ..errors import UndefinedDerivative

__all__ = ["Settings", "trajectory", "adjoint_solve", "sensitivity_solve", "groups"]

_SUCCESS = "Integration successful."
SMALL = 8        # systems up to this size take the adjoint's right-hand side from f_y


class Settings:
    """The options of the user's call that the derivative solves take over:
    tolerances (a scalar for the adjoint and sensitivity variables: the
    smallest given), ``hmax``, ``hmin``, ``mxordn``, ``mxords``, ``tcrit``,
    and ``mxstep`` (ten times the call's, default 500: the derivative
    systems are larger and start anew at every output time)."""

    def __init__(self, n, rtol, atol, tcrit, hmax, hmin, mxstep, mxordn, mxords):
        self.rtol = np.broadcast_to(np.asarray(1.49012e-8 if rtol is None else rtol, float), (n,))
        self.atol = np.broadcast_to(np.asarray(1.49012e-8 if atol is None else atol, float), (n,))
        self.tcrit = None if tcrit is None else np.sort(np.ravel(np.asarray(tcrit, float)))
        self.hmax, self.hmin = float(hmax), float(hmin)
        self.mxstep = 10 * (int(mxstep) if mxstep and mxstep > 0 else 500)
        self.mxordn, self.mxords = int(mxordn), int(mxords)

    def pieces(self, a, b):
        """``[a, b]`` cut at the critical times strictly inside it, in the
        direction from ``a`` to ``b``."""
        inside = [] if self.tcrit is None else \
            [c for c in self.tcrit if min(a, b) < c < max(a, b)]
        cuts = sorted(inside, reverse=bool(b < a))
        return list(zip([a] + cuts, cuts + [b]))

    def lsoda(self, rhs, z0, times, jac, atol, rtol, tcrit, what):
        """``scipy.integrate.odeint`` (LSODA) of ``z' = rhs(t, z)`` with the
        Jacobian ``jac``; refuses a failed solve (which it reports itself,
        so SciPy's warning is not passed on)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ODEintWarning)
            z, info = scipy_odeint(rhs, z0, times, Dfun=jac, rtol=rtol, atol=atol, tcrit=tcrit,
                                   hmax=self.hmax, hmin=self.hmin, mxstep=self.mxstep,
                                   mxordn=self.mxordn, mxords=self.mxords, full_output=True,
                                   tfirst=True)
        if info["message"] != _SUCCESS:
            raise UndefinedDerivative(
                f"adsim: the {what} of scipy.integrate.odeint failed between t = {times[0]!r} "
                f"and t = {times[-1]!r} (LSODA: {info['message']}); its derivative could not be "
                f"computed. Raise mxstep= (the derivative solves take ten times the call's), "
                f"or check that the solution exists on the whole interval")
        return z


def block_diagonal(block, count):
    """The block-diagonal matrix with ``count`` copies of ``block``."""
    return np.kron(np.eye(count), block)


def groups(count, block, fixed=0, largest=64):
    """Slices of ``count`` directions, each few enough that a system of
    ``fixed`` equations and ``block`` more per direction has at most
    ``largest`` equations (but at least one direction): LSODA factors its
    Jacobian densely."""
    size = max(1, (largest - fixed) // block)
    return [slice(i, min(i + size, count)) for i in range(0, count, size)]


class Trajectory:
    """The forward solution ``y(t)`` between the first and last output time,
    step by step: ``times`` are LSODA's step ends (the first the start),
    ``steps`` each step's interpolant, looked up by bisection. Each is the
    Nordsieck polynomial of its step, ``y(t) = yh · ((t - t_n) / h)^(0..q)``,
    evaluated here directly (SciPy's ``LsodaDenseOutput`` call, whose checks
    cost more than the sum)."""

    def __init__(self, times, steps):
        self.ascending = times[-1] >= times[0]
        keys = np.asarray(times) if self.ascending else -np.asarray(times)
        self.keys = keys[1:-1].tolist()       # interior step ends
        self.steps = steps
        self._last = (None, None)

    def __call__(self, t):
        if t == self._last[0]:        # LSODA's corrector iterations ask again at one time
            return self._last[1]
        y = self._at(t)
        self._last = (t, y)
        return y

    def _at(self, t):
        i = bisect.bisect_left(self.keys, t if self.ascending else -t)
        step = self.steps[i]
        if callable(step):
            return step(t)
        tn, h, yh, powers = step
        return yh @ (((t - tn) / h) ** powers)


def _nordsieck(interpolant):
    """(t_n, h, yh, powers) of an LSODA step's interpolant, or the
    interpolant itself where it is not one (it is then called)."""
    try:
        return (float(interpolant.t), float(interpolant.h), np.asarray(interpolant.yh),
                np.asarray(interpolant.p, dtype=float))
    except AttributeError:
        return interpolant


def trajectory(rhs, field, y0, t0, tf, settings):
    """``y`` on ``[t0, tf]`` from ``y(t0) = y0`` (``rhs(t, y)`` plain): SciPy's
    ``LSODA`` solver stepped to ``tf`` (``solve_ivp``'s, without its
    bookkeeping), pieced at the critical times; the Jacobian from the
    recorded ``field``."""
    times, steps = [t0], []
    y = np.asarray(y0, dtype=float)
    rtol = float(np.min(settings.rtol))
    max_step = settings.hmax if settings.hmax > 0 else np.inf
    for a, b in settings.pieces(t0, tf):
        solver = LSODA(rhs, a, y, b, rtol=rtol, atol=settings.atol, max_step=max_step,
                       min_step=settings.hmin, jac=lambda t, z: field.jacobians(t, z)[0])
        while solver.status == "running":
            message = solver.step()
            if solver.status == "failed":
                raise UndefinedDerivative(
                    f"adsim: the forward solution that the adjoint of scipy.integrate.odeint "
                    f"needs could not be computed between t = {a!r} and t = {b!r} (LSODA "
                    f"stopped at t = {solver.t!r}: {message}); its derivative is not defined "
                    f"there")
            steps.append(_nordsieck(solver.dense_output()))
            times.append(solver.t)
        y = solver.y
    return Trajectory(times, steps)


def adjoint_solve(field, path, t, Y, W, settings, times=True):
    """Reverse mode: for output adjoints ``W`` (q, m, n) of the outputs
    ``Y`` (m, n) at times ``t`` (m,), the adjoints of ``y0`` (q, n), ``t``
    (q, m; zero unless ``times``) and the parameters (q, parameters);
    ``path(s)`` is ``y(s)``."""
    q, m, n = W.shape
    P = field.n_params
    b = n + P
    lam, mu, tbar = np.zeros((q, n)), np.zeros((q, P)), np.zeros((q, m))
    atol = float(np.min(settings.atol))
    rtol = float(np.min(settings.rtol))
    rows = _rows_along(field, path)

    if n <= max(q, SMALL):
        # the right-hand side is linear in lambda: with [f_y | f_p] kept for
        # the latest time (LSODA evaluates at one time several times) it is
        # a product, and a new time costs one sweep with n weights
        def rhs(s, z):
            return -(z.reshape(q, b)[:, :n] @ rows(s)).ravel()
    else:
        def rhs(s, z):
            _, ay, ap, _ = field.adjoint(s, path(s), z.reshape(q, b)[:, :n])
            return -np.concatenate((ay, ap), axis=1).ravel()

    def jac(s, z):
        block = np.zeros((b, b))
        block[:, :n] = -rows(s).T
        return block_diagonal(block, q)

    for j in range(m - 1, 0, -1):
        lam = lam + W[:, j]
        if times:
            tbar[:, j] = W[:, j] @ field.value(t[j], Y[j])
        if t[j] == t[j - 1] or not lam.any():
            continue
        for a, c in settings.pieces(t[j], t[j - 1]):
            z = np.concatenate([lam, mu], axis=1).ravel()
            z = settings.lsoda(rhs, z, [a, c], jac, atol, rtol, [c],
                               "adjoint solve")[-1].reshape(q, b)
            lam, mu = z[:, :n], z[:, n:]
    if times:
        tbar[:, 0] = -lam @ field.value(t[0], Y[0])
    return lam + W[:, 0], tbar, mu


def _rows_along(field, path):
    """``s -> [f_y | f_p]`` at ``(s, y(s))``, kept for the latest ``s``."""
    last = [None, None]

    def rows(s):
        if s != last[0]:
            fy, fp = field.jacobians(s, path(s))
            last[0], last[1] = s, np.concatenate((fy, fp), axis=1)
        return last[1]
    return rows


def sensitivity_solve(field, t, Y, dy0, dt, dp, settings):
    """Forward mode: the output tangents (k, m, n) for tangents ``dy0``
    (k, n), ``dt`` (k, m) and ``dp`` (k, parameters) of the inputs; ``Y``
    (m, n) are the outputs at times ``t``."""
    k, n = dy0.shape
    m = t.shape[0]
    dp = np.ascontiguousarray(dp)
    S0 = dy0 - np.outer(dt[:, 0], field.value(t[0], Y[0])) if dt[:, 0].any() else dy0
    rtol = np.concatenate([settings.rtol, np.full(k * n, np.min(settings.rtol))])
    atol = np.concatenate([settings.atol, np.full(k * n, np.min(settings.atol))])

    def rhs(s, z):
        f, fS = field.tangent(s, z[:n], z[n:].reshape(k, n), dp)
        return np.concatenate((f, fS.ravel()))

    def jac(s, z):
        return block_diagonal(field.jacobians(s, z[:n])[0], k + 1)

    out = np.empty((k, m, n))
    out[:, 0] = dy0
    if m > 1:
        Z = settings.lsoda(rhs, np.concatenate([Y[0], S0.ravel()]), t, jac, atol, rtol,
                           settings.tcrit, "forward sensitivity solve")
        for j in range(1, m):
            out[:, j] = Z[j, n:].reshape(k, n)
            if dt[:, j].any():
                out[:, j] += np.outer(dt[:, j], field.value(t[j], Y[j]))
    return out
