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
from ._containers.tree import flatten, is_container, unflatten
from ._validate import count, function, given, real_array
from .errors import InvalidArgument, InvalidArgumentValue

_MODES = ("fwd", "rev", "cs")


def _dot(a, b):
    return float(np.sum(np.asarray(a) * np.asarray(b)))


def _close(name, got, want, rtol, atol):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    err = np.max(np.abs(got - want)) if got.size else 0.0
    scale = np.max(np.abs(want)) if want.size else 0.0
    if not err <= atol + rtol * scale:
        raise AssertionError(f"adsim.check_grads: {name} differs: max abs error {err:.3e} "
                             f"(scale {scale:.3e}, rtol {rtol}, atol {atol})\n got:  {got}\n want: {want}")


def _leaves(tree_value, what):
    """(real array leaves, a function rebuilding the structure from leaves)."""
    if tree_value is None or not is_container(tree_value):
        return [real_array(tree_value, what)], lambda leaves: leaves[0]
    leaves, tree = flatten(tree_value)
    return ([real_array(leaf, f"{what}{p}") for p, leaf in zip(tree.paths(), leaves)],
            lambda leaves: unflatten(tree, leaves))


def _flat(tree_value, what="the value of f"):
    leaves = _leaves(tree_value, what)[0]
    return np.concatenate([np.ravel(a) for a in leaves]) if leaves else np.zeros(0)


def check_grads(f, x, modes=("fwd", "rev"), order=1, *, eps=1e-6, rtol=1e-5, atol=1e-7,
                seed=0, n_directions=2):
    """Check adsim's derivatives of ``f`` at ``x``; raise AssertionError naming
    the first mismatch.

    Parameters
    ----------
    f : callable
        Function of one argument (a float64 array or a container of arrays)
        returning an array or a container of arrays.
    x : array_like or container
        Point of the check (directions and weights get its and f's structure).
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
    _check_options(f, modes, order, eps, rtol, atol, n_directions)
    xs, point = _leaves(x, "the point x of check_grads")
    rng = np.random.default_rng(seed)
    ys, output = _leaves(f(point(xs)), "the value of f")
    y0 = _flat(output(ys))
    if not np.all(np.isfinite(y0)):
        raise InvalidArgumentValue(f"adsim.check_grads: f(x) is not finite at the point x given "
                                   f"(it holds {'NaN' if np.any(np.isnan(y0)) else 'infinities'})"
                                   f"; differences cannot check derivatives there: pass a point "
                                   f"where f is finite")
    n = sum(a.size for a in xs)
    h = eps * (1.0 + max(np.max(np.abs(a)) for a in xs if a.size)) if n else eps
    for _ in range(n_directions):
        vs = [rng.standard_normal(a.shape) for a in xs]
        ws = [rng.standard_normal(a.shape) for a in ys]
        v, w = _flat(point(vs)), _flat(output(ws))
        shifted = lambda s: point([a + s * d for a, d in zip(xs, vs)])  # noqa: E731
        fd = (_flat(f(shifted(h))) - _flat(f(shifted(-h)))) / (2 * h)
        jv = None
        if "fwd" in modes or "cs" in modes:   # forward mode only where asked for (a
            y, jv = api.jvp(f, (point(xs),), (point(vs),))  # primitive may lack a jvp rule)
            _close("value", _flat(y), y0, 1e-12, 1e-12)
            jv = _flat(jv)
        if "fwd" in modes:
            _close("forward mode J v vs central differences", jv, fd, rtol, atol)
        if "rev" in modes:
            y, jtw = api.vjp(f, (point(xs),), output(ws))
            _close("value", _flat(y), y0, 1e-12, 1e-12)
            jtw = _flat(jtw[0])
            _close("reverse mode <J^T w, v> vs central differences <w, (f(x+hv)-f(x-hv))/2h>",
                   _dot(jtw, v), _dot(w, fd), rtol, atol * max(1.0, np.sqrt(n)))
            if jv is not None:
                _close("dot-product test <J^T w, v> vs <w, J v>", _dot(jtw, v), _dot(w, jv),
                       1e-10, 1e-12)
        if "cs" in modes:
            hc = 1e-30
            cs = np.imag(_complex_flat(f(point([a + 1j * hc * d for a, d in zip(xs, vs)])))) / hc
            _close("forward mode J v vs complex step", jv, cs, 1e-10, 1e-12)
        if order >= 2:
            def wf(z):
                return sum(np.sum(c * a) for c, a in zip(ws, _output_leaves(f(z))))
            hv = _flat(api.hvp(wf, point(xs), point(vs)))
            g_plus = _flat(api.grad(wf)(shifted(h)))
            g_minus = _flat(api.grad(wf)(shifted(-h)))
            _close("Hessian-vector product vs central differences of the gradient", hv,
                   (g_plus - g_minus) / (2 * h), rtol * 10, atol * 10)
    return True


def _check_options(f, modes, order, eps, rtol, atol, n_directions):
    function(f, "check_grads", usage="adsim.testing.check_grads(f, x)")
    if not isinstance(modes, (tuple, list)) or not modes or \
            not all(isinstance(m, str) and m in _MODES for m in modes):
        raise InvalidArgument(f"adsim.check_grads: modes must be a non-empty tuple of "
                              f"{', '.join(map(repr, _MODES))}, got {given(modes)}")
    if isinstance(order, bool) or order not in (1, 2):
        raise InvalidArgumentValue(f"adsim.check_grads: order must be 1 (first derivatives) or "
                                   f"2 (also Hessian-vector products), got {given(order)}")
    for name, value in (("eps", eps), ("rtol", rtol), ("atol", atol)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
            raise InvalidArgument(f"adsim.check_grads: {name} must be a real number, got "
                                  f"{given(value)}")
        if not (np.isfinite(value) and (value > 0 or name == "atol" and value == 0)):
            raise InvalidArgumentValue(f"adsim.check_grads: {name} must be a finite number "
                                       f"{'>= 0' if name == 'atol' else '> 0'}, got {value!r}")
    count(n_directions, "n_directions", "check_grads", minimum=1)


def _output_leaves(y):
    """The leaves of f's value (active arrays while recording)."""
    return flatten(y)[0] if y is not None and is_container(y) else [y]


def _complex_flat(y):
    leaves = _output_leaves(y)
    return np.concatenate([np.ravel(np.asarray(a)) for a in leaves]) if leaves else np.zeros(0)
