"""``scipy.optimize.curve_fit`` on active data, differentiated through its fit.

``curve_fit(f, xdata, ydata, p0, sigma, ...)`` minimises ``0.5 ||r(p)||^2``
with the weighted residual ``r(p) = (f(xdata, *p) - ydata) / sigma`` (``sigma``
a vector of standard deviations; a matrix is a covariance, ``r = L^-1 (f -
ydata)`` with ``sigma = L L^T``). Written so, it is a least-squares problem in
``p`` whose parameters are ``xdata``, ``ydata``, ``sigma`` and what ``f``
reads from a closure: adsim/_scipy/solver_calls.py differentiates its
solution ``popt`` by the implicit function theorem, running SciPy's own
``curve_fit`` on plain values (on the residual, fitted to zeros), so the
fit, its method, bounds and options are SciPy's.

``pcov`` is recorded as a function of ``popt`` and the data: ``(J^T J)^-1``
with ``J`` the Jacobian of the residual at ``popt`` (a nested
``adsim.jacobian``, exact), times ``||r||^2 / (m - n)`` unless
``absolute_sigma``. SciPy computes the same matrix from its own Jacobian (by
differences, unless ``jac`` is given): the two agree to the accuracy of
those differences. Where SciPy could not estimate it (fewer points than
parameters, a singular ``J``) it is SciPy's ``inf``, a constant.
"""
import inspect

import numpy as np

from .._active import Active
from .._np.core import active_leaves
from ..api import jacobian
from ..errors import UnsupportedOperation
from .solver_calls import Spec, _bounds_check, differentiated_solve, plain_value

__all__ = ["fit_curve", "fit_spec", "fitter"]

# curve_fit's arguments passed on unchanged to SciPy's run on the residual
# (its bounds too, as an argument of their own: they may move with the parameters)
_PASSED_ON = ("absolute_sigma", "method", "check_finite")


def fit_curve(original, arguments):
    """SciPy's ``curve_fit`` (``original``) called with ``arguments`` (its
    bound arguments, ``**kwargs`` spread): its return value, ``popt`` and
    ``pcov`` active."""
    f = arguments["f"]
    xdata, ydata, sigma = arguments["xdata"], arguments["ydata"], arguments.get("sigma")
    _check_data(arguments)
    m = int(np.size(plain_value(ydata)))
    p0 = _start(f, arguments)
    n = p0.size
    user_jac = arguments.get("jac")
    options = {k: plain_value(arguments[k]) for k in _PASSED_ON if k in arguments}
    # SciPy's solver options (maxfev, ftol, ...) arrive through **kwargs
    known = {"f", "xdata", "ydata", "p0", "sigma", "jac", "full_output", "nan_policy",
             "bounds", *_PASSED_ON}
    options.update({k: v for k, v in arguments.items() if k not in known})

    def residual(p, xdata, ydata, sigma):
        return _weighted(np.ravel(_as_values(f(xdata, *p))) - np.ravel(ydata), sigma)

    def residual_jacobian(p, xdata, ydata, sigma):
        return _weighted(np.reshape(_as_values(user_jac(xdata, *p)), (m, n)), sigma)

    # the fit's data (m, options) are arguments of the call, so a tape file holds them
    problem = {"fun": residual, "x0": p0, "args": (xdata, ydata, sigma), "m": m,
               "options": options}
    if arguments.get("bounds") is not None:
        problem["bounds"] = arguments["bounds"]
    if callable(user_jac):
        problem["jac"] = residual_jacobian
    elif user_jac is not None:
        problem["jac"] = user_jac           # '2-point', '3-point', 'cs'
    fit = fitter(original)
    out = differentiated_solve("curve_fit", fit, inspect.signature(fit), problem,
                               spec=fit_spec)
    popt, pcov_scipy, rest = out[0], out[1], out[2:]
    full_output = arguments.get("full_output")
    r = residual(popt, xdata, ydata, sigma) \
        if full_output or not options.get("absolute_sigma", False) else None
    if np.all(np.isfinite(pcov_scipy)):
        J = jacobian(lambda p: residual(p, xdata, ydata, sigma))(popt)
        pcov = np.linalg.inv(J.T @ J)
        if not options.get("absolute_sigma", False):
            pcov = pcov * (np.sum(r * r) / (m - n))
    else:
        pcov = pcov_scipy
    if not full_output:
        return popt, pcov
    # infodict's fvec: the (weighted) residual at the active popt; the rest of
    # the full output are SciPy's plain values of the recorded fit
    return (popt, pcov, dict(rest[0], fvec=r)) + rest[1:]


def fitter(original):
    """``fit(fun, x0, jac, args, m, options, bounds)``: SciPy's curve_fit
    (``original``) run on the residual ``fun`` (a function of p and
    ``args``, ``m`` numbers) fitted to zeros, with curve_fit's ``options``
    and ``bounds`` (files written before bounds were an argument of their
    own hold them among the options)."""
    def fit(fun, x0, jac=None, args=(), m=0, options=None, bounds=None):
        def model(_, *p):
            return fun(np.asarray(p), *args)
        model_jac = (lambda _, *p: jac(np.asarray(p), *args)) if callable(jac) else jac
        options = dict(options or {})
        if bounds is not None:
            options["bounds"] = bounds
        return original(model, np.zeros(m), np.zeros(m), p0=x0, jac=model_jac,
                        full_output=True, **options)
    return fit


def fit_spec(a):
    """The :class:`Spec` of a call of :func:`fitter`'s ``fit``."""
    def run(solve, call):
        try:
            raw = solve(**call)
        except RuntimeError as err:     # "Optimal parameters not found: ..."
            return err, None, False, str(err)
        return raw, raw[0], True, ""
    n = int(np.size(a["x0"]))
    return Spec("least_squares", "fun", "x0", (n,), run, lambda raw, x: (x,) + raw[1:],
                lifted=("jac",), check=_bounds_check("curve_fit", a.get("bounds")))


def _as_values(out):
    if isinstance(out, Active) or not active_leaves(out):
        return out if isinstance(out, Active) else np.asarray(out, dtype=float)
    return np.stack(list(out))


def _weighted(r, sigma):
    """The residual (or its Jacobian, rows per point) weighted as curve_fit
    does: divided by standard deviations, or by the Cholesky factor of a
    covariance matrix."""
    if sigma is None:
        return r
    if np.ndim(sigma) == 2:
        return np.linalg.solve(np.linalg.cholesky(sigma), r)
    s = np.ravel(sigma) if np.ndim(sigma) else sigma
    return r / (s if np.ndim(r) == 1 else np.reshape(s, (-1, 1)))


def _check_data(arguments):
    """SciPy's checks of the data, which its run on the residual (fitted to
    zeros) would not see."""
    policy = arguments.get("nan_policy")
    if policy not in (None, "raise"):
        raise UnsupportedOperation(
            f"adsim: scipy.optimize.curve_fit with nan_policy={policy!r} is not differentiated "
            f"(the points fitted would depend on where the NaNs are). Remove the NaN points "
            f"before the fit, or use nan_policy=None")
    check = arguments.get("check_finite")
    if check is None:
        check = policy is None
    if check or policy == "raise":
        for name in ("xdata", "ydata"):
            value = plain_value(arguments[name])
            if isinstance(value, np.ndarray) and value.dtype.kind in "fc" \
                    and not np.all(np.isfinite(value)):
                raise ValueError(f"scipy.optimize.curve_fit: {name} must not contain infs or "
                                 f"NaNs (adsim checks the data as SciPy does)")


def _start(f, arguments):
    """``p0`` as SciPy would take it: given, or ones (inside finite bounds,
    their midpoint or one step from the finite one), one per parameter of ``f``
    after the first."""
    p0 = arguments.get("p0")
    if p0 is not None:
        return np.atleast_1d(np.asarray(plain_value(p0), dtype=float)).ravel()
    try:
        parameters = [p for p in inspect.signature(f).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        parameters = []
    if len(parameters) < 2:
        raise ValueError("scipy.optimize.curve_fit: unable to determine the number of fit "
                         "parameters; give p0")
    n = len(parameters) - 1
    bounds = arguments.get("bounds", (-np.inf, np.inf))
    lb, ub = (np.broadcast_to(np.asarray(plain_value(b), dtype=float), (n,)) for b in bounds)
    p0 = np.ones(n)
    both = np.isfinite(lb) & np.isfinite(ub)
    p0[both] = 0.5 * (lb[both] + ub[both])
    low = np.isfinite(lb) & ~np.isfinite(ub)
    p0[low] = lb[low] + 1
    high = ~np.isfinite(lb) & np.isfinite(ub)
    p0[high] = ub[high] - 1
    return p0

