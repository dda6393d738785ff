"""``scipy.stats`` distributions on active arrays, called unchanged (see
hooks.py): the methods of ``rv_continuous`` and ``rv_discrete`` are routed
here when an argument is active, so ``norm.logpdf(x, loc, scale)``, frozen
distributions (``norm(loc, scale).logpdf(x)``, which call the same methods),
``multivariate_normal`` (mvn.py) and ``dirichlet`` (dirichlet.py) are
recorded.

The families are the rows of distributions.py, each written with recorded
operations and special functions in the standardized variable
y = (x - loc) / scale; this module adds loc and scale, the support, invalid
parameters and the derived methods, so every argument (x, loc, scale, shape parameters) is differentiated in
every mode. Points outside the support get SciPy's constants (logpdf -inf,
cdf 0 or 1, ...) with derivative zero; invalid parameters (scale <= 0, a
shape outside its range) give NaN, as SciPy does. Whether a point is inside
is a recorded comparison. Distributions and methods without a rule raise
``UnsupportedOperation`` naming them.
"""
import types

import numpy as np

from .._np import joins
from .._np.integers import plain_if_constant
from ..errors import UnsupportedOperation
from . import dirichlet, kde, mvn, stats_functions, stats_rvs
from .arrays import array
from .distributions import CONTINUOUS, DISCRETE

# values outside the support: (below, above)
_OUTSIDE = {"pdf": (0.0, 0.0), "logpdf": (-np.inf, -np.inf), "pmf": (0.0, 0.0),
            "logpmf": (-np.inf, -np.inf), "cdf": (0.0, 1.0), "logcdf": (-np.inf, 0.0),
            "sf": (1.0, 0.0), "logsf": (0.0, -np.inf)}


# methods computed from another one when a family does not give them
_DERIVED = {"pdf": ("logpdf", np.exp), "pmf": ("logpmf", np.exp), "logcdf": ("cdf", np.log),
            "logsf": ("sf", np.log)}


def _family(dist, method, table):
    family = table.get(dist.name)
    if family is None or method not in _methods(family):
        supported = ", ".join(f"{name} ({' '.join(_methods(f))})" for name, f in table.items())
        raise UnsupportedOperation(
            f"adsim: scipy.stats.{dist.name}.{method} with active arguments has no rule; "
            f"supported: {supported}. Write the density with NumPy and scipy.special, or call "
            f"it on adsim.value(x) if no derivative is wanted")
    return family


def _methods(family):
    names = set(family.functions)
    return sorted(names | {m for m, (base, _) in _DERIVED.items() if base in names})


def _evaluate(family, method, y, shapes):
    f = family.functions.get(method)
    if f is None:
        base, outer = _DERIVED[method]
        return outer(family.functions[base](y, *shapes))
    return f(y, *shapes)


def unsupported(method):
    """The rule of a distribution method that has none (moments, entropy,
    random variates, fits): an error naming it, as users call it."""
    def rule(self, *args, **kwds):
        raise UnsupportedOperation(
            f"adsim: scipy.stats.{self.name}.{method} with active arguments is not supported; "
            f"adsim differentiates the pdf/pmf, cdf, sf, their logarithms, ppf and isf of "
            f"some distributions (docs/scipy.md). Call it on adsim.value(x) if no derivative "
            f"is wanted")
    return rule


def _select(inside, formula, safe_point, y, outside):
    """``formula(y)`` where ``inside``, the constants ``outside()`` elsewhere;
    the formula sees a safe point outside, so no NaN reaches derivatives."""
    if np.all(inside):
        return formula(y)
    return np.where(inside, formula(np.where(inside, y, safe_point)), outside())


def _inside(family, y, lo, hi, cumulative=False):
    """Whether y is in the support (a recorded comparison): open ends are
    outside; a discrete cdf or sf is a formula on [lo, hi) only."""
    if family.open:
        return (y > lo) & (y < hi)
    return (y >= lo) & ((y < hi) if cumulative else (y <= hi))


def _continuous(method):
    def rule(self, x, *args, **kwds):
        name = f"scipy.stats.{self.name}.{method}"
        family = _family(self, method, CONTINUOUS)
        shapes, loc, scale = self._parse_args(*args, **kwds)
        x, loc, scale = array(x, name), array(loc, name), array(scale, name)
        shapes = _shapes(shapes, name, self.shapes, family.plain.get(method, ()))
        valid = (scale > 0) & family.valid(*shapes)
        scale, shapes = _stand_in(valid, family, scale, shapes)
        lo, hi = family.support(*shapes)
        if method in ("ppf", "isf"):
            ends = (lo, hi) if method == "ppf" else (hi, lo)
            y = _select((x > 0) & (x < 1), lambda q: _evaluate(family, method, q, shapes), 0.5,
                        x, lambda: np.where(x == 0, ends[0], np.where(x == 1, ends[1], np.nan)))
            return _invalid_to_nan(loc + scale * y, valid)
        y = (x - loc) / scale
        below, above = _OUTSIDE[method]
        if np.all(np.isneginf(lo)) and np.all(np.isposinf(hi)):
            out = _evaluate(family, method, y, shapes)
        else:
            out = _select(_inside(family, y, lo, hi),
                          lambda z: _evaluate(family, method, z, shapes),
                          family.interior(*shapes) if callable(family.interior)
                          else family.interior, y,
                          lambda: np.where(y <= lo, below, np.where(y >= hi, above, np.nan)))
        if method == "logpdf":
            out = out - np.log(scale)
        elif method == "pdf":
            out = out / scale
        return _invalid_to_nan(out, valid)
    return rule


def _entropy(self, *args, **kwds):
    """Differential entropy: the family's entropy of its shapes + log(scale)."""
    name = f"scipy.stats.{self.name}.entropy"
    family = CONTINUOUS.get(self.name)
    if family is None or "entropy" not in family.functions:
        return unsupported("entropy")(self)
    shapes, loc, scale = self._parse_args(*args, **kwds)
    loc, scale = array(loc, name), array(scale, name)
    shapes = _shapes(shapes, name, self.shapes, ())
    valid = (scale > 0) & family.valid(*shapes) & (loc == loc)
    scale, shapes = _stand_in(valid, family, scale, shapes)
    out = family.functions["entropy"](*shapes) + np.log(scale) + 0.0 * loc
    return _invalid_to_nan(out, valid)


_CUMULATIVE = ("cdf", "logcdf", "sf", "logsf")


def _discrete(method):
    def rule(self, k, *args, **kwds):
        name = f"scipy.stats.{self.name}.{method}"
        family = _family(self, method, DISCRETE)
        shapes, loc, _ = self._parse_args(*args, **kwds)
        k, loc = plain_if_constant(k), plain_if_constant(loc)
        if joins.holds_active(k) or joins.holds_active(loc):
            raise UnsupportedOperation(f"adsim: {name} with an active count k or loc: the "
                                       f"probability of an integer has no derivative in it; pass "
                                       f"plain values (the parameters may be active)")
        shapes = _shapes(shapes, name, self.shapes, family.plain.get(method, ()))
        k = np.asarray(k, dtype=float) - np.asarray(loc, dtype=float)
        valid = family.valid(*shapes)
        lo, hi = family.support(*shapes)
        _, shapes = _stand_in(valid, family, 1.0, shapes)
        below, above = _OUTSIDE[method]
        if method in _CUMULATIVE:        # of floor(k), as SciPy: constant between counts
            k = np.floor(k)
            inside, outside = _inside(family, k, lo, hi, cumulative=True), \
                lambda: np.where(np.isnan(k), np.nan, np.where(k < lo, below, above))
        else:
            inside, outside = (k >= lo) & (k <= hi) & (k == np.floor(k)), \
                lambda: np.where(np.isnan(k), np.nan, below)
        out = _select(inside, lambda z: _evaluate(family, method, z, shapes), family.interior, k,
                      outside)
        return _invalid_to_nan(out, valid)
    return rule


def _shapes(shapes, name, names, plain):
    """The shape parameters as arrays; those at positions ``plain`` (an
    integer count, an argument of an incomplete function) must be plain."""
    for i in plain:
        if i < len(shapes) and joins.holds_active(shapes[i]):
            raise UnsupportedOperation(f"adsim: {name} is not differentiated in its shape "
                                       f"parameter {names.split(', ')[i]}; pass it as a plain "
                                       f"value (the other arguments may be active)")
    return [array(s, name) for s in shapes]


def _stand_in(valid, family, scale, shapes):
    """scale and shapes with valid stand-ins where they are invalid (the
    result there is NaN; the formulas must not make NaN derivatives)."""
    if np.all(valid):
        return scale, shapes
    return (np.where(valid, scale, 1.0),
            [np.where(valid, s, safe) for s, safe in zip(shapes, family.stand_ins)])


def _invalid_to_nan(out, valid):
    return out if np.all(valid) else np.where(valid, out, np.nan)


_INFRA = "scipy.stats._distn_infrastructure"
# methods without a rule, by the base class that defines them
_UNSUPPORTED = {"rv_discrete": ("ppf", "isf", "rvs", "expect"), "rv_continuous": ("fit", "expect"),
                "rv_generic": ("mean", "var", "std", "stats", "moment", "support", "nnlf")}


def _overrides(methods):
    """{(module, "Class.method"): name} for the distribution classes of
    scipy.stats that define their own ``method`` among ``methods`` (norm,
    gamma, beta... have their own fit): calls of those never reach the base
    class's hook, so each needs one."""
    import scipy.stats
    found, todo = {}, [scipy.stats.rv_continuous, scipy.stats.rv_discrete]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if not cls.__module__.startswith("scipy.stats.") or cls.__name__ in _UNSUPPORTED:
            continue
        for m in methods:
            if isinstance(vars(cls).get(m), types.FunctionType):
                found[(cls.__module__, f"{cls.__qualname__}.{m}")] = m
    return found


HOOKS = {
    **{(_INFRA, f"rv_continuous.{m}"): _continuous(m)
       for m in ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")},
    **{(_INFRA, f"rv_discrete.{m}"): _discrete(m)
       for m in ("pmf", "logpmf", "cdf", "logcdf", "sf", "logsf")},
    **{(_INFRA, f"{base}.{m}"): unsupported(m) for base, ms in _UNSUPPORTED.items() for m in ms},
    **{key: unsupported(m) for key, m in
       _overrides({m for ms in _UNSUPPORTED.values() for m in ms}).items()},
    (_INFRA, "rv_generic.entropy"): _entropy,
    (_INFRA, "rv_generic.rvs"): stats_rvs.rvs,
    **{key: unsupported(m) for key, m in _overrides({"rvs"}).items()},
    **mvn.HOOKS,
    **dirichlet.HOOKS,
    **stats_functions.HOOKS,
    **kde.HOOKS,
}
CLASSES = kde.CLASSES


def covers(obj):
    """Whether the ``scipy.stats`` object ``obj`` has rules here (what
    ``adsim.scipy.stats`` holds): a distribution with a row in
    distributions.py, or one of a class with rules of its own
    (``multivariate_normal``, ``dirichlet``)."""
    import scipy.stats
    if isinstance(obj, scipy.stats.rv_continuous):
        return getattr(obj, "name", None) in CONTINUOUS
    if isinstance(obj, scipy.stats.rv_discrete):
        return getattr(obj, "name", None) in DISCRETE
    cls = type(obj)
    return any((module, path.rsplit(".", 1)[0]) == (cls.__module__, cls.__qualname__)
               for module, path in {**mvn.HOOKS, **dirichlet.HOOKS})
