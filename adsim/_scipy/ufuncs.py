"""More ``scipy.special`` ufuncs on active arrays: Bessel functions of the
second kind and modified ones (y0 y1 yn yv k0 k1 k0e k1e kv kve), gamma
relatives (gammasgn rgamma loggamma; multigammaln, a Python function, is
in special.py), error and exponential integrals (erfcx erfi dawsn exp1
expi expn spence), hypergeometric and elliptic functions (hyp2f1 hyp1f1
in x, ellipk ellipe), binom, the Box-Cox transforms, huber, pseudo_huber,
kl_div, owens_t, exprel, powm1, cosm1, radian, voigt_profile (voigt.py),
and SciPy's copies of NumPy functions (expm1 log1p cbrt exp2 -> NumPy's
recorded ops; exp10 cosdg sindg tandg cotdg with SciPy's exact values).

Each rule gives the partial derivatives written with functions adsim
differentiates, so Hessian-vector products are exact (as in
adsim/_np/special.py, whose ``elementwise`` makes the primitives). The
dispatcher asks ``scipy_ufunc`` after adsim/_np/special.py's table.

An order (``v`` of kv, ``n`` of yn and expn) or a hypergeometric parameter
has no closed-form derivative: it must be plain, and an active one raises ``UnsupportedOperation`` naming
it. Derivatives: DLMF 10.6.2, 10.29.2 (Bessel recurrences), 13.3.15,
15.5.1 (hypergeometric), 19.4.1, 19.5 (elliptic integrals), 5.2.1, 5.5.3
(reflection), 6.2.1, 7.2.3, 7.5.1, 8.19.13, 25.12.1 (dilogarithm, SciPy's
``spence(z) = Li2(1 - z)``), 26.3 (binomials), Owen (1956) for T(h, a).
"""
import threading

import numpy as np
import scipy.special as sc
from scipy.special import _spherical_bessel

from .._np.integers import plain_if_constant
from .._np.special import elementwise
from .._active import Active
from ..errors import UnsupportedOperation
from . import cdf_ufuncs, voigt

_SQRT_PI = np.sqrt(np.pi)
_SQRT_2PI = np.sqrt(2.0 * np.pi)
_DEGREE = np.pi / 180.0


def _horner(coefficients, u):
    """sum_j c_j u^j (highest power last)."""
    total = 0.0 * u + coefficients[-1]
    for c in coefficients[-2::-1]:
        total = total * u + c
    return total


# -log1p(u) / u = -sum_j (-u)^j / (j + 1); 17 terms are exact to rounding for |u| < 0.1
_LOG1P_OVER_U = [-((-1.0) ** j) / (j + 1) for j in range(17)]
# d/dlam (e^(lam L) - 1) / lam = sum_{j>=2} (j - 1) lam^(j-2) L^j / j!, in powers of t = lam L
# times L^2: sum_{j>=2} (j - 1) t^(j-2) / j!; exact to rounding for |t| < 0.1
_BOXCOX_SERIES = [(j - 1) / np.prod(np.arange(1.0, j + 1)) for j in range(2, 16)]


def _safe(condition, x, stand_in):
    return np.where(condition, x, stand_in)


def _rgamma_derivative(x):
    """d/dx 1/Gamma(x): -psi(x)/Gamma(x) from x = 1/2 up; below, the
    derivative of the reflection sin(pi x) Gamma(1 - x) / pi, finite at
    the poles of Gamma (the zeros of 1/Gamma)."""
    low = x < 0.5
    xl, xh = _safe(low, x, 0.0), _safe(low, 1.0, x)
    g = sc.gamma(1.0 - xl)
    below = g * (np.cos(np.pi * xl) - np.sin(np.pi * xl) * sc.digamma(1.0 - xl) / np.pi)
    return np.where(low, below, -sc.rgamma(xh) * sc.digamma(xh))


def _expn_derivative(n, x):
    """E_n' = -E_(n-1) for n >= 1; E_0 = exp(-x) / x (SciPy has no E_-1)."""
    return np.where(n > 0, -sc.expn(np.maximum(n - 1, 0), x),
                    -np.exp(-x) * (1.0 + x) / (x * x))


def _spence_derivative(z):
    """d/dz spence(z) = log(z) / (1 - z) = -log1p(u) / u, u = z - 1
    (a series near z = 1, where the quotient is 0 / 0)."""
    u = z - 1.0
    near = np.abs(u) < 0.1
    far = _safe(near, 1.0, u)
    return np.where(near, _horner(_LOG1P_OVER_U, _safe(near, u, 0.0)), -np.log1p(far) / far)


def _boxcox_in_lambda(log_x, lam):
    """d/dlam (x^lam - 1) / lam = (t e^t - expm1(t)) / lam^2, t = lam
    log x; a series in t near 0, where the difference cancels."""
    t = lam * log_x
    near = np.abs(t) < 0.1
    tn, tf, lf = _safe(near, t, 0.0), _safe(near, 1.0, t), _safe(near, 1.0, lam)
    series = _horner(_BOXCOX_SERIES, tn) * log_x * log_x
    return np.where(near, series, (tf * np.exp(tf) - np.expm1(tf)) / (lf * lf))


def _boxcox(x, lam):
    return (x ** (lam - 1.0), _boxcox_in_lambda(np.log(x), lam))


def _boxcox1p(x, lam):
    return ((1.0 + x) ** (lam - 1.0), _boxcox_in_lambda(np.log1p(x), lam))


def _binom(n, k):
    """d binom / dn = binom (psi(n+1) - psi(n-k+1)), d/dk = binom
    (psi(n-k+1) - psi(k+1)), where the three Gamma arguments are
    positive (elsewhere binom is a limit; refused)."""
    _require_positive_gamma_arguments(n, k)
    b = sc.binom(n, k)
    return (b * (sc.digamma(n + 1.0) - sc.digamma(n - k + 1.0)),
            b * (sc.digamma(n - k + 1.0) - sc.digamma(k + 1.0)))


def _huber(delta, r):
    """r^2 / 2 inside |r| <= delta, delta (|r| - delta / 2) outside:
    C^1, partials continuous at |r| = delta; delta < 0 (value inf) gets 0."""
    inside = np.abs(r) <= delta
    valid = delta >= 0
    return (np.where(valid & ~inside, np.abs(r) - delta, 0.0),
            np.where(valid, np.where(inside, r, delta * np.sign(r)), 0.0))


def _pseudo_huber(delta, r):
    """delta^2 (s - 1), s = sqrt(1 + (r / delta)^2): d/dr = r / s,
    d/ddelta = r^4 / (delta^3 s (s + 1)^2) (no cancellation). SciPy's
    value is 0 at delta = 0 (derivative in delta undefined: NaN) and inf
    below (derivative 0)."""
    positive = delta > 0
    d = _safe(positive, delta, 1.0)
    s = np.sqrt(1.0 + (r / d) ** 2)
    return (np.where(positive, r ** 4 / (d ** 3 * s * (s + 1.0) ** 2),
                     np.where(delta == 0, np.nan, 0.0)),
            np.where(positive, r / s, 0.0))


def _kl_div(x, y):
    """x log(x / y) - x + y: (log(x / y), 1 - x / y)."""
    return (np.log(x / y), 1.0 - x / y)


def _elliptic_series(coefficients, m):
    """d/dm sum_n c_n m^n = sum_n n c_n m^(n-1)."""
    return _horner([n * c for n, c in enumerate(coefficients)][1:], m)


# K(m) = pi/2 sum_n c_n m^n, E(m) = pi/2 sum_n c_n m^n / (1 - 2n), c_n = (binom(2n, n) / 4^n)^2
# (DLMF 19.5.1, 19.5.2); 14 terms are exact to rounding for |m| < 0.05
_K_SERIES = [np.pi / 2 * (np.prod(np.arange(1.0, 2 * n, 2)) / np.prod(np.arange(2.0, 2 * n + 1, 2)))
             ** 2 for n in range(14)]
_E_SERIES = [c / (1.0 - 2 * n) for n, c in enumerate(_K_SERIES)]


def _ellipk_derivative(m):
    """K'(m) = (E - (1 - m) K) / (2 m (1 - m)); its series near m = 0 (0 / 0)."""
    near = np.abs(m) < 0.05
    mf, mn = _safe(near, 0.5, m), _safe(near, m, 0.0)
    closed = (sc.ellipe(mf) - (1.0 - mf) * sc.ellipk(mf)) / (2.0 * mf * (1.0 - mf))
    return np.where(near, _elliptic_series(_K_SERIES, mn), closed)


def _ellipe_derivative(m):
    """E'(m) = (E - K) / (2 m); its series near m = 0 (0 / 0)."""
    near = np.abs(m) < 0.05
    mf, mn = _safe(near, 0.5, m), _safe(near, m, 0.0)
    return np.where(near, _elliptic_series(_E_SERIES, mn),
                    (sc.ellipe(mf) - sc.ellipk(mf)) / (2.0 * mf))


def _owens_t(h, a):
    """dT/dh = -phi(h) erf(a h / sqrt 2) / 2, dT/da = exp(-h^2 (1 + a^2) / 2)
    / (2 pi (1 + a^2))."""
    return (-0.5 * np.exp(-0.5 * h * h) / _SQRT_2PI * sc.erf(a * h / np.sqrt(2.0)),
            np.exp(-0.5 * h * h * (1.0 + a * a)) / (2.0 * np.pi * (1.0 + a * a)))


def _inverse_boxcox(log_x, x_power, lam):
    """The partials of x = inv_boxcox(y, lam) from those of y = boxcox(x,
    lam) (the inverse function theorem): dx/dy = 1 / boxcox_x, dx/dlam =
    -boxcox_lam / boxcox_x, with boxcox_x = x^(lam - 1) (``x_power``)."""
    dy = 1.0 / x_power
    return (dy, -_boxcox_in_lambda(log_x, lam) * dy)


def _inv_boxcox(y, lam):
    x = sc.inv_boxcox(y, lam)
    return _inverse_boxcox(np.log(x), x ** (lam - 1.0), lam)


def _inv_boxcox1p(y, lam):
    x = sc.inv_boxcox1p(y, lam)
    return _inverse_boxcox(np.log1p(x), (1.0 + x) ** (lam - 1.0), lam)


def _struve_derivative(function):
    """(x^v H_v)' = x^v H_(v-1), so H_v' = H_(v-1) - (v / x) H_v (DLMF
    11.4.25); the same for the modified L_v (DLMF 11.4.27)."""
    return lambda v, x: (None, function(v - 1.0, x) - v / x * function(v, x))


def _lower_degree(n):
    """n - 1, and where n is 0 (a constant polynomial) the 0 the derivative
    is multiplied by."""
    return np.maximum(n - 1.0, 0.0), np.where(n > 0, 1.0, 0.0)


def _gegenbauer_derivative(n, alpha, x):
    """d/dx C_n^(alpha) = 2 alpha C_(n-1)^(alpha+1) (DLMF 18.9.19)."""
    m, nonzero = _lower_degree(n)
    return nonzero * 2.0 * alpha * sc.eval_gegenbauer(m, alpha + 1.0, x)


def _polynomials():
    """The classical orthogonal polynomials, differentiated in x (degree and
    parameters plain) by DLMF 18.9.15-18.9.23."""
    def lowered(rule):
        def partials(*args):
            m, nonzero = _lower_degree(args[0])
            return (None,) * (len(args) - 1) + (nonzero * rule(m, *args[1:]),)
        return partials
    return {
        sc.eval_legendre: (lowered(lambda m, x: sc.eval_gegenbauer(m, 1.5, x)), (0,)),
        sc.eval_sh_legendre: (lowered(lambda m, x: 2.0 * sc.eval_gegenbauer(m, 1.5, 2 * x - 1)),
                              (0,)),
        sc.eval_chebyt: (lambda n, x: (None, n * _chebyu(n - 1.0, x)), (0,)),
        sc.eval_chebyu: (lowered(lambda m, x: 2.0 * sc.eval_gegenbauer(m, 2.0, x)), (0,)),
        sc.eval_gegenbauer: (lambda n, a, x: (None, None, _gegenbauer_derivative(n, a, x)),
                             (0, 1)),
        sc.eval_hermite: (lambda n, x: (None, 2.0 * n * sc.eval_hermite(_degree_below(n), x)),
                          (0,)),
        sc.eval_hermitenorm: (lambda n, x: (None, n * sc.eval_hermitenorm(_degree_below(n), x)),
                              (0,)),
        sc.eval_laguerre: (lowered(lambda m, x: -sc.eval_genlaguerre(m, 1.0, x)), (0,)),
        sc.eval_genlaguerre: (lowered(lambda m, a, x: -sc.eval_genlaguerre(m, a + 1.0, x)),
                              (0, 1)),
        sc.eval_jacobi: (lowered(lambda m, a, b, x: 0.5 * (m + a + b + 2.0) * sc.eval_jacobi(
            m, a + 1.0, b + 1.0, x)), (0, 1, 2)),
    }


def _degree_below(n):
    """n - 1 (0 for n = 0) as the integers SciPy's Hermite polynomials take."""
    return np.maximum(np.asarray(n) - 1, 0).astype(np.int64)


def _chebyu(m, x):
    """U_m(x), and 0 for m = -1 (T_0' = 0)."""
    return np.where(m >= 0, sc.eval_chebyu(np.maximum(m, 0.0), x), 0.0)


# scipy.special.spherical_jn/yn/in/kn (Python functions) call these private
# ufuncs of (integer order n, z); ``derivative=True`` calls the _d ones
_SPHERICAL = {name: getattr(_spherical_bessel, f"_spherical_{name}") for name in
              ("jn", "yn", "in", "kn", "jn_d", "yn_d", "in_d", "kn_d")}


def _spherical(kind, derivative, sign):
    """The z-derivative of a spherical Bessel function of order n (of its
    derivative, with ``derivative``): (n f_{n-1} + sign (n + 1) f_{n+1}) /
    (2n + 1) times -1 for kn (DLMF 10.51.2, 10.51.5, with f_{-1} weighed by
    n = 0 out: j_0' = -j_1, i_0' = i_1, k_0' = -k_1), no division by z."""
    f = _SPHERICAL[kind + ("_d" if derivative else "")]

    def partials(n, z):
        below = np.maximum(n - 1, 0).astype(np.int64)
        terms = n * f(below, z) + sign * (n + 1) * f(np.asarray(n + 1, dtype=np.int64), z)
        return (None, (-1.0 if kind == "kn" else 1.0) * terms / (2 * n + 1))
    return partials


def _spherical_table():
    signs = {"jn": -1.0, "yn": -1.0, "in": 1.0, "kn": 1.0}
    return {_SPHERICAL[kind + suffix]: (_spherical(kind, bool(suffix), sign), (0,))
            for kind, sign in signs.items() for suffix in ("", "_d")}


def _table():
    order = (0,)
    return {
        **_spherical_table(),
        # Bessel functions of the second kind and modified ones (orders plain)
        sc.y0: lambda x: (-sc.y1(x),),
        sc.y1: lambda x: (0.5 * (sc.y0(x) - sc.yn(2, x)),),
        sc.yn: (lambda n, x: (None, 0.5 * (sc.yn(n - 1, x) - sc.yn(n + 1, x))), order),
        sc.yv: (lambda v, x: (None, 0.5 * (sc.yv(v - 1.0, x) - sc.yv(v + 1.0, x))), order),
        sc.k0: lambda x: (-sc.k1(x),),
        sc.k1: lambda x: (-0.5 * (sc.k0(x) + sc.kv(2, x)),),
        sc.kv: (lambda v, x: (None, -0.5 * (sc.kv(v - 1.0, x) + sc.kv(v + 1.0, x))), order),
        sc.k0e: lambda x: (sc.k0e(x) - sc.k1e(x),),
        sc.k1e: lambda x: (sc.k1e(x) - 0.5 * (sc.k0e(x) + sc.kve(2, x)),),
        sc.kve: (lambda v, x: (None, sc.kve(v, x) - 0.5 * (sc.kve(v - 1.0, x)
                                                           + sc.kve(v + 1.0, x))), order),
        sc.kn: (lambda n, x: (None, -0.5 * (sc.kn(n - 1, x) + sc.kn(n + 1, x))), order),
        # for real x the exponentially scaled J_v and Y_v are J_v and Y_v
        sc.jve: (lambda v, x: (None, 0.5 * (sc.jve(v - 1.0, x) - sc.jve(v + 1.0, x))), order),
        sc.yve: (lambda v, x: (None, 0.5 * (sc.yve(v - 1.0, x) - sc.yve(v + 1.0, x))), order),
        sc.struve: (_struve_derivative(sc.struve), order),
        sc.modstruve: (_struve_derivative(sc.modstruve), order),
        # gamma relatives
        sc.gammasgn: lambda x: (np.zeros(np.shape(x)),),
        sc.rgamma: lambda x: (_rgamma_derivative(x),),
        sc.loggamma: lambda x: (sc.digamma(x),),
        sc.binom: _binom,
        # poch(z, m) = Gamma(z + m) / Gamma(z)
        sc.poch: lambda z, m: (sc.poch(z, m) * (sc.digamma(z + m) - sc.digamma(z)),
                               sc.poch(z, m) * sc.digamma(z + m)),
        # ndtri_exp(y) = ndtri(exp(y)): exp(y) / phi(x)
        sc.ndtri_exp: lambda y: (_SQRT_2PI * np.exp(y + 0.5 * sc.ndtri_exp(y) ** 2),),
        # error functions and exponential integrals
        sc.erfcx: lambda x: (2.0 * x * sc.erfcx(x) - 2.0 / _SQRT_PI,),
        sc.erfi: lambda x: (2.0 / _SQRT_PI * np.exp(x * x),),
        sc.dawsn: lambda x: (1.0 - 2.0 * x * sc.dawsn(x),),
        sc.exp1: lambda x: (-np.exp(-x) / x,),
        sc.expi: lambda x: (np.exp(x) / x,),
        sc.expn: (lambda n, x: (None, _expn_derivative(n, x)), order),
        sc.spence: lambda z: (_spence_derivative(z),),
        sc.owens_t: _owens_t,
        # hypergeometric and elliptic functions (parameters plain)
        sc.hyp2f1: (lambda a, b, c, x: (None, None, None,
                                        a * b / c * sc.hyp2f1(a + 1.0, b + 1.0, c + 1.0, x)),
                    (0, 1, 2)),
        sc.hyp1f1: (lambda a, b, x: (None, None, a / b * sc.hyp1f1(a + 1.0, b + 1.0, x)),
                    (0, 1)),
        sc.ellipk: lambda m: (_ellipk_derivative(m),),
        sc.ellipe: lambda m: (_ellipe_derivative(m),),
        sc.ellipkm1: lambda p: (-_ellipk_derivative(1.0 - p),),      # K(1 - p)
        # transforms and losses
        sc.boxcox: _boxcox,
        sc.boxcox1p: _boxcox1p,
        sc.inv_boxcox: _inv_boxcox,
        sc.inv_boxcox1p: _inv_boxcox1p,
        sc.huber: _huber,
        sc.pseudo_huber: _pseudo_huber,
        sc.kl_div: _kl_div,
        # convenience functions
        sc.exprel: lambda x: (_boxcox_in_lambda(1.0, x),),      # (e^x - 1) / x: lam = x, L = 1
        sc.powm1: lambda x, y: (y * x ** (y - 1.0), x ** y * np.log(x)),
        sc.cosm1: lambda x: (-np.sin(x),),
        sc.radian: lambda d, m, s: (_DEGREE + 0.0 * d, _DEGREE / 60.0 + 0.0 * m,
                                    _DEGREE / 3600.0 + 0.0 * s),
        sc.exp10: lambda x: (np.log(10.0) * sc.exp10(x),),
        sc.cosdg: lambda x: (-_DEGREE * sc.sindg(x),),
        sc.sindg: lambda x: (_DEGREE * sc.cosdg(x),),
        sc.tandg: lambda x: (_DEGREE * (1.0 + sc.tandg(x) ** 2),),
        sc.cotdg: lambda x: (-_DEGREE * (1.0 + sc.cotdg(x) ** 2),),
        **_polynomials(),
        **cdf_ufuncs.table(),
        **voigt.table(scipy_ufunc),
    }


def _same_as_numpy():
    """SciPy's ufuncs that compute what a NumPy ufunc adsim records does."""
    return {sc.expm1: np.expm1, sc.log1p: np.log1p, sc.cbrt: np.cbrt, sc.exp2: np.exp2}


def _require_positive_gamma_arguments(n, k):
    """binom's digamma rule holds where n + 1, k + 1 and n - k + 1 are
    positive; elsewhere (binom(3, 5) = 0, negative n) refuse by name."""
    def plain(v):
        if isinstance(v, Active):
            from .._np.integers import current
            return current(v)
        return np.asarray(v)
    n, k = plain(n), plain(k)
    bad = ~((n > -1.0) & (k > -1.0) & (n - k > -1.0))
    if np.any(bad):
        at_n, at_k = np.broadcast_to(n, bad.shape)[bad][:3], np.broadcast_to(k, bad.shape)[bad][:3]
        raise UnsupportedOperation(
            "adsim: the derivative of scipy.special.binom(n, k) is computed where n > -1, "
            f"k > -1 and n - k > -1 (the Gamma function form); at n = {at_n}, k = {at_k} it "
            "is not: pass these arguments as plain values")


# the arguments without a closed-form derivative, by name, for the message
# refusing an active one
_PLAIN_NAMES = {"yn": "order n", "yv": "order v", "kv": "order v", "kve": "order v",
                "kn": "order n", "jve": "order v", "yve": "order v", "struve": "order v",
                "modstruve": "order v", "expn": "order n", "hyp2f1": "parameters a, b, c",
                "hyp1f1": "parameters a, b",
                **{f"_spherical_{name}": "order n" for name in _SPHERICAL},
                **{name: "degree n" for name in (
                    "eval_legendre", "eval_sh_legendre", "eval_chebyt", "eval_chebyu",
                    "eval_hermite", "eval_hermitenorm", "eval_laguerre")},
                "eval_gegenbauer": "degree n and parameter alpha",
                "eval_genlaguerre": "degree n and parameter alpha",
                "eval_jacobi": "degree n and parameters alpha, beta",
                **cdf_ufuncs.PLAIN_NAMES}
_FUNCTIONS = {}
_MAKING = threading.Lock()


def _with_plain_arguments(uf, recorded, static):
    name = uf.__name__

    def call(*args):
        args = tuple(plain_if_constant(a) if i in static else a for i, a in enumerate(args))
        if any(isinstance(args[i], Active) for i in static if i < len(args)):
            raise UnsupportedOperation(
                f"adsim: scipy.special.{name} is not differentiated in its "
                f"{_PLAIN_NAMES[name]} (no closed form); pass them as plain values "
                f"(adsim.value(v) if computed from active values)")
        return recorded(*args)
    return call


def _integer_arguments(uf):
    """``uf``, or for the ufuncs whose counts or degrees SciPy takes as
    integers only (a float there is deprecated or refused) ``uf`` with those
    arguments made integers again: the tape holds its constants as floats."""
    positions = {sc.bdtr: (0, 1), sc.bdtrc: (0, 1), sc.bdtri: (0, 1),
                 sc.eval_hermite: (0,), sc.eval_hermitenorm: (0,),
                 **{f: (0,) for f in _SPHERICAL.values()}}.get(uf)
    if positions is None:
        return uf

    def with_integers(*args):
        return uf(*(np.asarray(a).astype(np.int64) if i in positions else a
                    for i, a in enumerate(args)))
    with_integers.__name__ = uf.__name__
    return with_integers


def scipy_ufunc(uf):
    """The recorded version of one of the ufuncs above, or None (made on
    first use, once, also when threads ask at the same time)."""
    if not _FUNCTIONS:
        with _MAKING:
            if not _FUNCTIONS:
                made = dict(_same_as_numpy())
                for u, rule in _table().items():
                    partials, static = rule if isinstance(rule, tuple) else (rule, ())
                    recorded = elementwise(_integer_arguments(u), partials, static)
                    made[u] = _with_plain_arguments(u, recorded, static) if static else recorded
                _FUNCTIONS.update(made)
    return _FUNCTIONS.get(uf)
