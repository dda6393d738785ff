"""``scipy.integrate.nquad`` (and so ``dblquad`` and ``tplquad``, which
call it) with active integrand parameters or limits.

SciPy's ``nquad`` nests ``quad``: the outer integral's integrand is a
method of an object that holds the limits and options in lists, and
adsim's ``quad`` refuses an integrand reading a list that holds active
values (a limit given as ``[a, b]`` with active ``b``, or a ``dblquad``
upper limit). Here the same nesting is written with closures that hold
each limit as its own value: every level is SciPy's call
``quad(f, low, high, args=args, **opts)`` with the same arguments, ranges
and options as ``nquad`` makes, so the values are SciPy's, and each
``quad`` is differentiated by adsim's rule (adsim/_scipy/quadrature.py),
an inner one with limits that depend on the outer variables included.
"""
from .._nesting.nested import reads_recorded_values
from ..errors import UnsupportedOperation


def _bounds(rng):
    """``rng(*args) -> (low, high)`` for a callable range or a pair."""
    if callable(rng):
        return rng
    low, high = rng

    def constant(*args):
        return low, high
    return constant


def _options(opt):
    if callable(opt):
        return lambda *args: dict(opt(*args))
    fixed = dict(opt or {})
    return lambda *args: dict(fixed)


def _level(func, bounds, options, errors):
    """The integral over the outermost of ``bounds`` (levels listed
    innermost first, as nquad's ranges are) as a function of the outer
    variables and args: (value, SciPy's error estimate)."""
    if len(bounds) == 1:
        inner = func
    else:
        nested = _level(func, bounds[:-1], options[:-1], errors)

        def inner(*args):
            return nested(*args)[0]
    span, opt = bounds[-1], options[-1]

    def level(*args):
        low, high = span(*args)
        o = opt(*args)
        if "points" in o:
            o["points"] = [x for x in o["points"] if low <= x <= high]
        value, error = _quad()(inner, low, high, args=args, **o)[:2]
        errors[0] = max(errors[0], error)
        return value, error
    return level


def _quad():
    """``quad`` taking adsim's rule on active arguments, with interposition
    on or off (``adsim.scipy.integrate.nquad`` calls it too)."""
    from ..scipy import integrate
    return integrate.quad


def nquad(func, ranges, args=None, opts=None, full_output=False):
    if full_output:
        raise UnsupportedOperation("adsim: scipy.integrate.nquad with active parameters: "
                                   "full_output is not differentiated; call it without "
                                   "full_output")
    depth = len(ranges)
    args = () if args is None else tuple(args)
    if opts is None or isinstance(opts, dict):
        opts = [opts] * depth
    errors = [0.0]
    value, _ = _level(func, [_bounds(r) for r in ranges], [_options(o) for o in opts],
                      errors)(*args)
    return value, errors[0]


def _reads_active_values(args, kwargs):
    """Whether the integrand or a callable range reads active values from
    outside its arguments (a closure, an object, a global)."""
    func = args[0] if args else kwargs.get("func")
    ranges = args[1] if len(args) > 1 else kwargs.get("ranges", ())
    candidates = [func] + [r for r in (ranges or ()) if callable(r)]
    return any(callable(c) and reads_recorded_values(c) for c in candidates)


nquad.routes_also = _reads_active_values
