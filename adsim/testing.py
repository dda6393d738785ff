"""Derivative checks for users' functions and primitives.

``check_grads(f, x)`` compares adsim's derivatives of ``f`` at ``x`` with
central finite differences along random directions, checks forward against
reverse mode with the dot-product test <w, J v> = <J^T w, v> (no differences
needed, so it holds to rounding), optionally against the complex step
(Squire & Trapp, SIAM Review 40(1), 1998) and, for ``order=2``, checks
Hessian-vector products against differences of the gradient.
"""
import numpy as np

from . import api
from ._validate import real_array


def _dot(a, b):
    return float(np.sum(np.asarray(a) * np.asarray(b)))


def _close(name, got, want, rtol, atol):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    err = np.max(np.abs(got - want)) if got.size else 0.0
    scale = np.max(np.abs(want)) if want.size else 0.0
    if not err <= atol + rtol * scale:
        raise AssertionError(f"adsim.check_grads: {name} differs: max abs error {err:.3e} "
                             f"(scale {scale:.3e}, rtol {rtol}, atol {atol})\n got:  {got}\n want: {want}")


def check_grads(f, x, modes=("fwd", "rev"), order=1, *, eps=1e-6, rtol=1e-5, atol=1e-7,
                seed=0, n_directions=2):
    """Check adsim's derivatives of ``f`` at ``x``; raise AssertionError naming
    the first mismatch.

    Parameters
    ----------
    f : callable
        Function of one float64 array returning an array.
    x : array_like
        Point of the check.
    modes : tuple of {"fwd", "rev", "cs"}
        "fwd": J v against central differences; "rev": J^T w against the same
        differences projected on w, and the dot-product test between modes;
        "cs": J v against the complex step (f must accept complex input).
    order : {1, 2}
        With 2, also H v of w·f against central differences of its gradient.
    eps, rtol, atol : float
        Difference step (relative to |x| + 1) and tolerances.
    seed : int
        Seed of the random directions.
    """
    x = real_array(x, "the point x of check_grads")
    rng = np.random.default_rng(seed)
    y0 = real_array(f(x), "the value of f")
    h = eps * (1.0 + np.max(np.abs(x))) if x.size else eps
    for _ in range(n_directions):
        v = rng.standard_normal(x.shape)
        w = rng.standard_normal(y0.shape)
        fd = (np.asarray(f(x + h * v), float) - np.asarray(f(x - h * v), float)) / (2 * h)
        y, jv = api.jvp(f, x, v)
        _close("value", y, y0, 1e-12, 1e-12)
        if "fwd" in modes:
            _close("forward mode J v vs central differences", jv, fd, rtol, atol)
        if "rev" in modes:
            _, jtw = api.vjp(f, x, w)
            _close("reverse mode <J^T w, v> vs central differences <w, (f(x+hv)-f(x-hv))/2h>",
                   _dot(jtw, v), _dot(w, fd), rtol, atol * max(1.0, np.sqrt(x.size)))
            _close("dot-product test <J^T w, v> vs <w, J v>", _dot(jtw, v), _dot(w, jv),
                   1e-10, 1e-12)
        if "cs" in modes:
            hc = 1e-30
            cs = np.imag(f(x + 1j * hc * v)) / hc
            _close("forward mode J v vs complex step", jv, cs, 1e-10, 1e-12)
        if order >= 2:
            wf = lambda z: np.sum(w * f(z))  # noqa: E731
            hv = api.hvp(wf, x, v)
            g_plus = api.grad(wf)(x + h * v)
            g_minus = api.grad(wf)(x - h * v)
            _close("Hessian-vector product vs central differences of the gradient", hv,
                   (g_plus - g_minus) / (2 * h), rtol * 10, atol * 10)
    return True
