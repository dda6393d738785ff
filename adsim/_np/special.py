"""SciPy's special functions (``scipy.special`` ufuncs) on active arrays.

Each is an elementwise primitive: its value is SciPy's, its partial
derivatives are written with functions adsim differentiates (often other
special functions here), so Hessian-vector products, which record the
reverse rule, are exact too. One Python call per op and sweep.

Derivatives: Abramowitz & Stegun, *Handbook of Mathematical Functions*
(6.1.17, 6.3.1, 6.4.1, 6.5.25, 7.1.19, 9.1.27, 9.6.26, 26.5.1, 26.7.1) and the NIST DLMF (5.15.1,
7.10.1, 10.29.1).
"""
import numpy as np

from .._active import Active
from ..primitives import primitive
from .reductions import sum as reduce_sum

_SQRT_PI = np.sqrt(np.pi)
_SQRT_2PI = np.sqrt(2.0 * np.pi)


def _sum_to(a, shape):
    """Sum a broadcast adjoint back to an argument's ``shape``."""
    shape = tuple(shape)
    extra = np.ndim(a) - len(shape)
    axes = tuple(range(extra)) + tuple(extra + i for i, d in enumerate(shape)
                                       if d == 1 and np.shape(a)[extra + i] != 1)
    if axes:
        a = reduce_sum(a, axis=axes, keepdims=True) if isinstance(a, Active) else \
            np.sum(a, axis=axes, keepdims=True)
    return a.reshape(shape)


def _chain(d, t):
    """d * t, and 0 where either is 0: the sweeps' zero-times-infinity rule,
    so that xlogy(x, y)'s partial log(y) = -inf at y = 0 passes nothing to a
    direction that does not move x there. On recorded values (second
    derivatives record these rules) the product is recorded as it is: a
    selected constant 0 would have no derivative, and the product's own
    sweeps follow the rule."""
    if isinstance(d, Active) or isinstance(t, Active):
        return d * t
    with np.errstate(invalid="ignore"):
        return np.where((d == 0) | (t == 0), 0.0, d * t)


def elementwise(ufunc, partials, static=()):
    """The primitive for ``ufunc`` whose partial derivatives are
    ``partials(*args)`` (one per argument; arguments at positions ``static``
    are plain integers such as an order, with no derivative)."""
    def jvp(args, out, tangents):
        total = np.zeros(np.shape(out))
        for i, (d, t) in enumerate(zip(partials(*args), tangents)):
            if t is not None and i not in static:
                total = total + _chain(d, t)
        return total

    def vjp(args, out, w):
        return tuple(None if i in static else _sum_to(_chain(d, w), np.shape(a))
                     for i, (d, a) in enumerate(zip(partials(*args), args)))

    public = ufunc.__name__.lstrip("_")          # _zeta is the ufunc behind zeta
    return primitive(ufunc, jvp=jvp, vjp=vjp, name=f"scipy.special.{public}",
                     elementwise=True, nondiff_argnums=static)


def gamma_density(a, x):
    """d/dx gammainc(a, x) (A&S 6.5.25)."""
    import scipy.special as sc
    return np.exp(sc.xlogy(a - 1.0, x) - x - sc.gammaln(a))


def beta_density(a, b, x):
    """d/dx betainc(a, b, x) (A&S 26.5.1)."""
    import scipy.special as sc
    return np.exp(sc.xlogy(a - 1.0, x) + sc.xlog1py(b - 1.0, -x) - sc.betaln(a, b))


def t_density(df, t):
    """d/dt stdtr(df, t) (A&S 26.7.1)."""
    import scipy.special as sc
    return np.exp(sc.gammaln(0.5 * (df + 1.0)) - sc.gammaln(0.5 * df)
                  - 0.5 * np.log(np.pi * df) - 0.5 * (df + 1.0) * np.log1p(t * t / df))


def _table():
    from math import factorial

    import scipy.special as sc
    from scipy.special import _ufuncs

    def polygamma(n, x):         # n >= 1, through Hurwitz's zeta (A&S 6.4.10)
        return (-1.0) ** (n + 1) * factorial(n) * _ufuncs._zeta(n + 1.0, x)

    return {
        sc.gammaln: lambda x: (sc.digamma(x),),
        sc.gamma: lambda x: (sc.gamma(x) * sc.digamma(x),),
        sc.digamma: lambda x: (polygamma(1, x),),
        _ufuncs._zeta: (lambda s, q: (None, -s * _ufuncs._zeta(s + 1.0, q)), (0,)),
        sc.beta: lambda a, b: (sc.beta(a, b) * (sc.digamma(a) - sc.digamma(a + b)),
                               sc.beta(a, b) * (sc.digamma(b) - sc.digamma(a + b))),
        sc.betaln: lambda a, b: (sc.digamma(a) - sc.digamma(a + b),
                                 sc.digamma(b) - sc.digamma(a + b)),
        sc.erf: lambda x: (2.0 / _SQRT_PI * np.exp(-x * x),),
        sc.erfc: lambda x: (-2.0 / _SQRT_PI * np.exp(-x * x),),
        sc.erfinv: lambda y: (0.5 * _SQRT_PI * np.exp(sc.erfinv(y) ** 2),),
        sc.erfcinv: lambda y: (-0.5 * _SQRT_PI * np.exp(sc.erfcinv(y) ** 2),),
        sc.expit: lambda x: (sc.expit(x) * sc.expit(-x),),
        sc.log_expit: lambda x: (sc.expit(-x),),
        sc.logit: lambda p: (1.0 / (p * (1.0 - p)),),
        # d/dy = x / y, written so that its x-derivative 1 / y survives at x = 0
        # (a constant 0 there would lose the mixed second derivative)
        sc.xlogy: lambda x, y: (np.log(y), x / np.where((x == 0) & (y == 0), 1.0, y)),
        sc.xlog1py: lambda x, y: (np.log1p(y), x / np.where((x == 0) & (y == -1), 1.0, 1.0 + y)),
        sc.entr: lambda x: (-np.log(x) - 1.0,),
        sc.rel_entr: lambda x, y: (np.log(x / y) + 1.0, -x / y),
        sc.ndtr: lambda x: (np.exp(-0.5 * x * x) / _SQRT_2PI,),
        sc.log_ndtr: lambda x: (np.exp(-0.5 * x * x - sc.log_ndtr(x)) / _SQRT_2PI,),
        sc.ndtri: lambda p: (_SQRT_2PI * np.exp(0.5 * sc.ndtri(p) ** 2),),
        sc.jv: (lambda v, x: (None, 0.5 * (sc.jv(v - 1, x) - sc.jv(v + 1, x))), (0,)),
        sc.iv: (lambda v, x: (None, 0.5 * (sc.iv(v - 1, x) + sc.iv(v + 1, x))), (0,)),
        sc.j0: lambda x: (-sc.j1(x),),
        sc.j1: lambda x: (0.5 * (sc.j0(x) - sc.jv(2, x)),),
        sc.i0: lambda x: (sc.i1(x),),
        sc.i1: lambda x: (0.5 * (sc.i0(x) + sc.iv(2, x)),),
        sc.i0e: lambda x: (sc.i1e(x) - np.sign(x) * sc.i0e(x),),
        sc.i1e: lambda x: (0.5 * (sc.i0e(x) + sc.ive(2, x)) - np.sign(x) * sc.i1e(x),),
        sc.ive: (lambda v, x: (None, 0.5 * (sc.ive(v - 1, x) + sc.ive(v + 1, x))
                               - np.sign(x) * sc.ive(v, x)), (0,)),
        # incomplete gamma and beta functions, Student's t distribution and
        # their inverses: in the last argument only (inverse: 1 / density)
        sc.gammainc: (lambda a, x: (None, gamma_density(a, x)), (0,)),
        sc.gammaincc: (lambda a, x: (None, -gamma_density(a, x)), (0,)),
        sc.gammaincinv: (lambda a, p: (None, 1.0 / gamma_density(a, sc.gammaincinv(a, p))), (0,)),
        sc.gammainccinv: (lambda a, p: (None, -1.0 / gamma_density(a, sc.gammainccinv(a, p))),
                          (0,)),
        sc.betainc: (lambda a, b, x: (None, None, beta_density(a, b, x)), (0, 1)),
        sc.betaincinv: (lambda a, b, y: (None, None, 1.0 / beta_density(a, b, sc.betaincinv(
            a, b, y))), (0, 1)),
        sc.stdtr: (lambda df, t: (None, t_density(df, t)), (0,)),
        sc.stdtrit: (lambda df, p: (None, 1.0 / t_density(df, sc.stdtrit(df, p))), (0,)),
        **({sc.betaincc: (lambda a, b, x: (None, None, -beta_density(a, b, x)), (0, 1))}
           if hasattr(sc, "betaincc") else {}),          # SciPy >= 1.11
    }


_FUNCTIONS = {}


def special_ufunc(uf):
    """The recorded version of a scipy.special ufunc, or None."""
    if not _FUNCTIONS:
        for u, rule in _table().items():
            partials, static = rule if isinstance(rule, tuple) else (rule, ())
            _FUNCTIONS[u] = elementwise(u, partials, static)
    return _FUNCTIONS.get(uf)
