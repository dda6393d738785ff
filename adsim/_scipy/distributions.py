"""The ``scipy.stats`` distributions adsim differentiates: one row each.

A continuous family is written in the standardized variable y = (x - loc) /
scale (stats.py adds loc and scale, the support, invalid parameters and the
derived methods); a discrete one in the count k - loc. A row gives:

- ``support(*shapes)``: (lo, hi) of y; ``open``: whether its finite ends are
  outside (where the density's formula is 0 * inf, as lognorm at 0);
- ``interior``: a point inside, where formulas are evaluated for points
  outside (so that no NaN reaches the derivatives);
- ``valid(*shapes)`` and ``stand_ins``: valid values that replace invalid
  shapes (the result there is NaN);
- ``functions``: method -> formula of (y, *shapes): logpdf or logpmf, cdf,
  sf, ppf, isf, ..., and ``entropy`` of the shapes alone (stats.py adds
  log(scale)); a missing pdf/logcdf/logsf comes from logpdf/cdf/sf;
- ``plain``: method -> positions of shape parameters it does not
  differentiate (an argument of an incomplete gamma or beta function).

Formulas: the distributions' definitions as SciPy documents them
(N. L. Johnson, S. Kotz, N. Balakrishnan, *Continuous Univariate
Distributions*, 1994-95), written with recorded NumPy operations and the
special functions adsim differentiates.
"""
from collections import namedtuple

import numpy as np
import scipy.special as sc

from .._np.special import _sum_to
from ..primitives import primitive

Family = namedtuple("Family", "support interior valid stand_ins functions plain open",
                    defaults=(False,))
# ``interior``: a number, or a function of the shapes (truncnorm: the midpoint
# of its bounds)

_LOG_2PI = np.log(2.0 * np.pi)
_EULER = np.euler_gamma
_INCOMPLETE = ("cdf", "logcdf", "sf", "logsf", "ppf", "isf")


def _anywhere(*shapes):
    return -np.inf, np.inf


def _positive(*shapes):
    return 0.0, np.inf


def _always(*shapes):
    return True


def _positive_shape(s):
    return s > 0


def _levy_entropy():
    import scipy.stats
    return scipy.stats.levy.entropy()


def _log1mexp(t):
    """log(1 - exp(-t)) for t > 0, accurate at both ends (Maechler 2012)."""
    large = t > np.log(2.0)
    return np.where(large, np.log1p(-np.exp(-np.where(large, t, 1.0))),
                    np.log(-np.expm1(-np.where(large, 1.0, t))))


def _symmetric(logpdf, cdf, logcdf, ppf, entropy):
    """The methods of a distribution symmetric about 0: sf(y) = cdf(-y),
    isf(q) = -ppf(q)."""
    return {"logpdf": logpdf, "cdf": cdf, "logcdf": logcdf, "sf": lambda y: cdf(-y),
            "logsf": lambda y: logcdf(-y), "ppf": ppf, "isf": lambda q: -ppf(q),
            "entropy": lambda: entropy}


def _minus_abs(y):
    """-|y| with the derivative of the side y is on (at 0 that of y >= 0),
    so second derivatives are those of a smooth function on each side."""
    return np.where(y < 0, y, -y)


def _student_t_logpdf(y, df):
    return (sc.gammaln(0.5 * (df + 1.0)) - sc.gammaln(0.5 * df) - 0.5 * np.log(np.pi * df)
            - 0.5 * (df + 1.0) * np.log1p(y * y / df))


def _student_t_entropy(df):
    half = 0.5 * (df + 1.0)
    return (half * (sc.digamma(half) - sc.digamma(0.5 * df)) + 0.5 * np.log(df)
            + sc.betaln(0.5 * df, 0.5))


def _gamma_entropy(a):
    return a + sc.gammaln(a) + (1.0 - a) * sc.digamma(a)


def _beta_logpdf(y, a, b):
    return sc.xlogy(a - 1.0, y) + sc.xlog1py(b - 1.0, -y) - sc.betaln(a, b)


def _beta_entropy(a, b):
    return (sc.betaln(a, b) - (a - 1.0) * sc.digamma(a) - (b - 1.0) * sc.digamma(b)
            + (a + b - 2.0) * sc.digamma(a + b))


def _chi2_logpdf(y, df):
    half = 0.5 * df
    return sc.xlogy(half - 1.0, y) - 0.5 * y - half * np.log(2.0) - sc.gammaln(half)


def _lognorm_logpdf(y, s):
    log_y = np.log(y)
    return -log_y - np.log(s) - 0.5 * _LOG_2PI - 0.5 * (log_y / s) ** 2


def _laplace_cdf(y):
    half_tail = 0.5 * np.exp(_minus_abs(y))
    return np.where(y < 0, half_tail, 1.0 - half_tail)


def _laplace_logcdf(y):
    m = _minus_abs(y)
    return np.where(y < 0, m - np.log(2.0), np.log1p(-0.5 * np.exp(m)))


def _laplace_ppf(q):
    low = q < 0.5
    return np.where(low, np.log(2.0 * np.where(low, q, 0.25)),
                    -np.log(2.0 - 2.0 * np.where(low, 0.75, q)))


def _skewnorm_cdf_partials(y, a):
    """dF/dy = 2 phi(y) Phi(a y) (the density), dF/da = -2 dT(y, a)/da =
    -exp(-y^2 (1 + a^2) / 2) / (pi (1 + a^2)) (Owen's T function)."""
    return (2.0 * np.exp(-0.5 * y * y - 0.5 * _LOG_2PI) * sc.ndtr(a * y),
            -np.exp(-0.5 * y * y * (1.0 + a * a)) / (np.pi * (1.0 + a * a)))


def _skewnorm_cdf_value(y, a):
    import scipy.stats
    return np.asarray(scipy.stats.skewnorm.cdf(y, a), dtype=float)


def _skewnorm_cdf_jvp(args, out, tangents):
    total = np.zeros(np.shape(out))
    for d, t in zip(_skewnorm_cdf_partials(*args), tangents):
        if t is not None:
            total = total + d * t
    return total


def _skewnorm_cdf_vjp(args, out, w):
    return tuple(_sum_to(d * w, np.shape(x)) for d, x in zip(_skewnorm_cdf_partials(*args), args))


# SciPy's value (ndtr(y) - 2 T(y, a) cancels in the left tail for a > 0),
# derivatives in closed form
_skewnorm_cdf = primitive(_skewnorm_cdf_value, jvp=_skewnorm_cdf_jvp, vjp=_skewnorm_cdf_vjp,
                          name="scipy.stats.skewnorm.cdf", elementwise=True)


def _skewnorm_quantile_partials(y, a, sign):
    """dy/dq and dy/da of the quantile y(q, a) with F(y, a) = q (ppf,
    sign 1) or 1 - F(y, a) = q (isf, sign -1), by the implicit function
    theorem: dy/dq = sign / f(y, a), dy/da = -dF/da / f(y, a)."""
    density, d_shape = _skewnorm_cdf_partials(y, a)
    return sign / density, -d_shape / density


def _skewnorm_quantile(method, sign):
    def value(q, a):
        import scipy.stats
        return np.asarray(getattr(scipy.stats.skewnorm, method)(q, a), dtype=float)

    def jvp(args, out, tangents):
        total = np.zeros(np.shape(out))
        for d, t in zip(_skewnorm_quantile_partials(out, args[1], sign), tangents):
            if t is not None:
                total = total + d * t
        return total

    def vjp(args, out, w):
        return tuple(_sum_to(d * w, np.shape(x))
                     for d, x in zip(_skewnorm_quantile_partials(out, args[1], sign), args))
    # SciPy's value (a root of the cdf), derivatives by the implicit function theorem
    return primitive(value, jvp=jvp, vjp=vjp, name=f"scipy.stats.skewnorm.{method}",
                     elementwise=True)


_skewnorm_ppf = _skewnorm_quantile("ppf", 1.0)
_skewnorm_isf = _skewnorm_quantile("isf", -1.0)


def _gumbel(sign):
    """Gumbel for the maximum (sign 1, gumbel_r) or the minimum (sign -1,
    gumbel_l) in the standardized variable."""
    if sign > 0:
        return {"logpdf": lambda y: -y - np.exp(-y), "cdf": lambda y: np.exp(-np.exp(-y)),
                "logcdf": lambda y: -np.exp(-y), "sf": lambda y: -np.expm1(-np.exp(-y)),
                "logsf": lambda y: _log1mexp(np.exp(-y)),
                "ppf": lambda q: -np.log(-np.log(q)), "isf": lambda q: -np.log(-np.log1p(-q)),
                "entropy": lambda: _EULER + 1.0}
    return {"logpdf": lambda y: y - np.exp(y), "cdf": lambda y: -np.expm1(-np.exp(y)),
            "logcdf": lambda y: _log1mexp(np.exp(y)), "sf": lambda y: np.exp(-np.exp(y)),
            "logsf": lambda y: -np.exp(y), "ppf": lambda q: np.log(-np.log1p(-q)),
            "isf": lambda q: np.log(-np.log(q)), "entropy": lambda: _EULER + 1.0}


def _truncnorm_log_mass(a, b):
    """log(Phi(b) - Phi(a)), b > a: with both bounds in the upper tail
    log(Phi(-a) - Phi(-b)), in the lower one log(Phi(b) - Phi(a)), each as
    log_ndtr of the nearer bound + log(1 - exp(-difference)) (no
    cancellation or underflow); across 0 the plain difference. Each branch is
    evaluated at stand-in bounds where it is not taken (no NaN reaches the
    derivatives)."""
    upper, lower = a > 0, b < 0
    au, bu = np.where(upper, a, 1.0), np.where(upper, b, 2.0)
    al, bl = np.where(lower, a, -2.0), np.where(lower, b, -1.0)
    am = np.where(upper | lower, -1.0, a)
    bm = np.where(upper | lower, 1.0, b)
    in_upper = sc.log_ndtr(-au) + _log1mexp(sc.log_ndtr(-au) - sc.log_ndtr(-bu))
    in_lower = sc.log_ndtr(bl) + _log1mexp(sc.log_ndtr(bl) - sc.log_ndtr(al))
    across = np.log(sc.ndtr(bm) - sc.ndtr(am))
    return np.where(upper, in_upper, np.where(lower, in_lower, across))


def _truncnorm_cdf(y, a, b):
    """(Phi(y) - Phi(a)) / (Phi(b) - Phi(a)), upper-tail differences of the
    survival function where a > 0."""
    upper = a > 0
    mass = np.exp(_truncnorm_log_mass(a, b))
    return np.where(upper, sc.ndtr(-a) - sc.ndtr(-y), sc.ndtr(y) - sc.ndtr(a)) / mass


def _truncnorm_sf(y, a, b):
    upper = a > 0
    mass = np.exp(_truncnorm_log_mass(a, b))
    return np.where(upper, sc.ndtr(-y) - sc.ndtr(-b), sc.ndtr(b) - sc.ndtr(y)) / mass


CONTINUOUS = {
    "norm": Family(_anywhere, 0.0, _always, (), _symmetric(
        lambda y: -0.5 * y * y - 0.5 * _LOG_2PI, sc.ndtr, sc.log_ndtr, sc.ndtri,
        0.5 * (1.0 + _LOG_2PI)), {}),
    "t": Family(_anywhere, 0.0, _positive_shape, (1.0,), {
        "logpdf": _student_t_logpdf,
        "cdf": lambda y, df: sc.stdtr(df, y), "sf": lambda y, df: sc.stdtr(df, -y),
        "ppf": lambda q, df: sc.stdtrit(df, q), "isf": lambda q, df: -sc.stdtrit(df, q),
        "entropy": _student_t_entropy}, dict.fromkeys(_INCOMPLETE, (0,))),
    "gamma": Family(_positive, 1.0, _positive_shape, (1.0,), {
        "logpdf": lambda y, a: sc.xlogy(a - 1.0, y) - y - sc.gammaln(a),
        "cdf": lambda y, a: sc.gammainc(a, y), "sf": lambda y, a: sc.gammaincc(a, y),
        "ppf": lambda q, a: sc.gammaincinv(a, q), "isf": lambda q, a: sc.gammainccinv(a, q),
        "entropy": _gamma_entropy}, dict.fromkeys(_INCOMPLETE, (0,))),
    "beta": Family(lambda a, b: (0.0, 1.0), 0.5, lambda a, b: (a > 0) & (b > 0), (1.0, 1.0), {
        "logpdf": _beta_logpdf,
        "cdf": lambda y, a, b: sc.betainc(a, b, y), "sf": lambda y, a, b: sc.betainc(b, a, 1.0 - y),
        "ppf": lambda q, a, b: sc.betaincinv(a, b, q),
        # P(X > x) = q for X ~ Beta(a, b) is P(1 - X < 1 - x) = q, 1 - X ~ Beta(b, a)
        "isf": lambda q, a, b: 1.0 - sc.betaincinv(b, a, q), "entropy": _beta_entropy},
        dict.fromkeys(_INCOMPLETE, (0, 1))),
    "expon": Family(_positive, 1.0, _always, (), {
        "logpdf": lambda y: -y, "cdf": lambda y: -np.expm1(-y),
        "logcdf": lambda y: _log1mexp(y), "sf": lambda y: np.exp(-y),
        "logsf": lambda y: -y, "ppf": lambda q: -np.log1p(-q), "isf": lambda q: -np.log(q),
        "entropy": lambda: 1.0}, {}),
    "chi2": Family(_positive, 1.0, _positive_shape, (1.0,), {
        "logpdf": _chi2_logpdf,
        "cdf": lambda y, df: sc.gammainc(0.5 * df, 0.5 * y),
        "sf": lambda y, df: sc.gammaincc(0.5 * df, 0.5 * y),
        "ppf": lambda q, df: 2.0 * sc.gammaincinv(0.5 * df, q),
        "isf": lambda q, df: 2.0 * sc.gammainccinv(0.5 * df, q),
        "entropy": lambda df: _gamma_entropy(0.5 * df) + np.log(2.0)},
        dict.fromkeys(_INCOMPLETE, (0,))),
    "lognorm": Family(_positive, 1.0, _positive_shape, (1.0,), {
        "logpdf": _lognorm_logpdf,
        "cdf": lambda y, s: sc.ndtr(np.log(y) / s),
        "logcdf": lambda y, s: sc.log_ndtr(np.log(y) / s),
        "sf": lambda y, s: sc.ndtr(-np.log(y) / s),
        "logsf": lambda y, s: sc.log_ndtr(-np.log(y) / s),
        "ppf": lambda q, s: np.exp(s * sc.ndtri(q)), "isf": lambda q, s: np.exp(-s * sc.ndtri(q)),
        "entropy": lambda s: 0.5 * (1.0 + _LOG_2PI) + np.log(s)}, {}, open=True),
    "laplace": Family(_anywhere, 0.0, _always, (), _symmetric(
        lambda y: _minus_abs(y) - np.log(2.0), _laplace_cdf, _laplace_logcdf, _laplace_ppf,
        1.0 + np.log(2.0)), {}),
    "cauchy": Family(_anywhere, 0.0, _always, (), _symmetric(
        lambda y: -np.log(np.pi) - np.log1p(y * y), lambda y: 0.5 + np.arctan(y) / np.pi,
        lambda y: np.log(0.5 + np.arctan(y) / np.pi), lambda q: np.tan(np.pi * (q - 0.5)),
        np.log(4.0 * np.pi)), {}),
    "logistic": Family(_anywhere, 0.0, _always, (), _symmetric(
        lambda y: _minus_abs(y) - 2.0 * np.log1p(np.exp(_minus_abs(y))), sc.expit, sc.log_expit,
        sc.logit, 2.0), {}),
    "uniform": Family(lambda: (0.0, 1.0), 0.5, _always, (), {
        "logpdf": lambda y: 0.0 * y, "cdf": lambda y: 1.0 * y, "sf": lambda y: 1.0 - y,
        "logcdf": lambda y: np.log(y), "logsf": lambda y: np.log1p(-y),
        "ppf": lambda q: 1.0 * q, "isf": lambda q: 1.0 - q, "entropy": lambda: 0.0}, {}),
    "invgamma": Family(_positive, 1.0, _positive_shape, (1.0,), {
        "logpdf": lambda y, a: -(a + 1.0) * np.log(y) - 1.0 / y - sc.gammaln(a),
        "cdf": lambda y, a: sc.gammaincc(a, 1.0 / y), "sf": lambda y, a: sc.gammainc(a, 1.0 / y),
        "ppf": lambda q, a: 1.0 / sc.gammainccinv(a, q),
        "isf": lambda q, a: 1.0 / sc.gammaincinv(a, q),
        "entropy": lambda a: a - (a + 1.0) * sc.digamma(a) + sc.gammaln(a)},
        dict.fromkeys(_INCOMPLETE, (0,)), open=True),
    "weibull_min": Family(_positive, 1.0, _positive_shape, (1.0,), {
        "logpdf": lambda y, c: np.log(c) + sc.xlogy(c - 1.0, y) - y ** c,
        "cdf": lambda y, c: -np.expm1(-y ** c), "logcdf": lambda y, c: _log1mexp(y ** c),
        "sf": lambda y, c: np.exp(-y ** c), "logsf": lambda y, c: -y ** c,
        "ppf": lambda q, c: (-np.log1p(-q)) ** (1.0 / c),
        "isf": lambda q, c: (-np.log(q)) ** (1.0 / c),
        "entropy": lambda c: -_EULER / c - np.log(c) + _EULER + 1.0}, {}),
    "truncnorm": Family(lambda a, b: (a, b), lambda a, b: 0.5 * (a + b), lambda a, b: a < b,
                        (-1.0, 1.0), {
        "logpdf": lambda y, a, b: -0.5 * y * y - 0.5 * _LOG_2PI - _truncnorm_log_mass(a, b),
        "cdf": _truncnorm_cdf, "sf": _truncnorm_sf}, {}),
    "halfnorm": Family(_positive, 1.0, _always, (), {
        "logpdf": lambda y: 0.5 * np.log(2.0 / np.pi) - 0.5 * y * y,
        "cdf": lambda y: sc.erf(y / np.sqrt(2.0)), "sf": lambda y: sc.erfc(y / np.sqrt(2.0)),
        "logsf": lambda y: np.log(2.0) + sc.log_ndtr(-y),
        "ppf": lambda q: sc.ndtri(0.5 * (1.0 + q)), "isf": lambda q: -sc.ndtri(0.5 * q),
        "entropy": lambda: 0.5 * np.log(0.5 * np.pi) + 0.5}, {}),
    "skewnorm": Family(_anywhere, 0.0, _always, (), {
        "logpdf": lambda y, a: np.log(2.0) - 0.5 * y * y - 0.5 * _LOG_2PI + sc.log_ndtr(a * y),
        "cdf": _skewnorm_cdf, "sf": lambda y, a: _skewnorm_cdf(-y, -a),
        "ppf": _skewnorm_ppf, "isf": _skewnorm_isf}, {}),
    "gumbel_r": Family(_anywhere, 0.0, _always, (), _gumbel(1), {}),
    "gumbel_l": Family(_anywhere, 0.0, _always, (), _gumbel(-1), {}),
    "rayleigh": Family(_positive, 1.0, _always, (), {
        "logpdf": lambda y: np.log(y) - 0.5 * y * y, "cdf": lambda y: -np.expm1(-0.5 * y * y),
        "logcdf": lambda y: _log1mexp(0.5 * y * y), "sf": lambda y: np.exp(-0.5 * y * y),
        "logsf": lambda y: -0.5 * y * y, "ppf": lambda q: np.sqrt(-2.0 * np.log1p(-q)),
        "isf": lambda q: np.sqrt(-2.0 * np.log(q)),
        "entropy": lambda: 0.5 * _EULER + 1.0 - 0.5 * np.log(2.0)}, {}, open=True),
    "pareto": Family(lambda b: (1.0, np.inf), 2.0, _positive_shape, (1.0,), {
        "logpdf": lambda y, b: np.log(b) - (b + 1.0) * np.log(y),
        "cdf": lambda y, b: -np.expm1(-b * np.log(y)),
        "logcdf": lambda y, b: _log1mexp(b * np.log(y)),
        "sf": lambda y, b: np.exp(-b * np.log(y)), "logsf": lambda y, b: -b * np.log(y),
        "ppf": lambda q, b: np.exp(-np.log1p(-q) / b), "isf": lambda q, b: np.exp(-np.log(q) / b),
        "entropy": lambda b: 1.0 + 1.0 / b - np.log(b)}, {}),
    "halfcauchy": Family(_positive, 1.0, _always, (), {
        "logpdf": lambda y: np.log(2.0 / np.pi) - np.log1p(y * y),
        "cdf": lambda y: 2.0 / np.pi * np.arctan(y),
        "sf": lambda y: 2.0 / np.pi * np.arctan(1.0 / y),
        "ppf": lambda q: np.tan(0.5 * np.pi * q), "isf": lambda q: 1.0 / np.tan(0.5 * np.pi * q),
        "entropy": lambda: np.log(2.0 * np.pi)}, {}),
    # Pareto of the second kind: sf = (1 + y)^-c
    "lomax": Family(_positive, 1.0, _positive_shape, (1.0,), {
        "logpdf": lambda y, c: np.log(c) - (c + 1.0) * np.log1p(y),
        "cdf": lambda y, c: -np.expm1(-c * np.log1p(y)),
        "logcdf": lambda y, c: _log1mexp(c * np.log1p(y)),
        "sf": lambda y, c: np.exp(-c * np.log1p(y)), "logsf": lambda y, c: -c * np.log1p(y),
        "ppf": lambda q, c: np.expm1(-np.log1p(-q) / c),
        "isf": lambda q, c: np.expm1(-np.log(q) / c),
        "entropy": lambda c: 1.0 + 1.0 / c - np.log(c)}, {}),
    # log-logistic: cdf = expit(c log y)
    "fisk": Family(_positive, 1.0, _positive_shape, (1.0,), {
        "logpdf": lambda y, c: np.log(c) + (c - 1.0) * np.log(y) - 2.0 * np.log1p(y ** c),
        "cdf": lambda y, c: sc.expit(c * np.log(y)),
        "logcdf": lambda y, c: sc.log_expit(c * np.log(y)),
        "sf": lambda y, c: sc.expit(-c * np.log(y)),
        "logsf": lambda y, c: sc.log_expit(-c * np.log(y)),
        "ppf": lambda q, c: np.exp(sc.logit(q) / c), "isf": lambda q, c: np.exp(-sc.logit(q) / c),
        "entropy": lambda c: 2.0 - np.log(c)}, {}, open=True),
    "weibull_max": Family(lambda c: (-np.inf, 0.0), -1.0, _positive_shape, (1.0,), {
        "logpdf": lambda y, c: np.log(c) + sc.xlogy(c - 1.0, -y) - (-y) ** c,
        "cdf": lambda y, c: np.exp(-(-y) ** c), "logcdf": lambda y, c: -(-y) ** c,
        "sf": lambda y, c: -np.expm1(-(-y) ** c), "logsf": lambda y, c: _log1mexp((-y) ** c),
        "ppf": lambda q, c: -(-np.log(q)) ** (1.0 / c),
        "isf": lambda q, c: -(-np.log1p(-q)) ** (1.0 / c),
        "entropy": lambda c: -_EULER / c - np.log(c) + _EULER + 1.0}, {}),
    # Frechet: cdf = exp(-y^-c)
    "invweibull": Family(_positive, 1.0, _positive_shape, (1.0,), {
        "logpdf": lambda y, c: np.log(c) - (c + 1.0) * np.log(y) - y ** -c,
        "cdf": lambda y, c: np.exp(-y ** -c), "logcdf": lambda y, c: -y ** -c,
        "sf": lambda y, c: -np.expm1(-y ** -c), "logsf": lambda y, c: _log1mexp(y ** -c),
        "ppf": lambda q, c: (-np.log(q)) ** (-1.0 / c),
        "isf": lambda q, c: (-np.log1p(-q)) ** (-1.0 / c),
        "entropy": lambda c: 1.0 + _EULER + _EULER / c - np.log(c)}, {}, open=True),
    # on the whole line, 2 pi periodic: kappa cos y - log(2 pi I0(kappa))
    "vonmises": Family(_anywhere, 0.0, lambda kappa: kappa >= 0, (1.0,), {
        "logpdf": lambda y, kappa: kappa * (np.cos(y) - 1.0) - _LOG_2PI - np.log(sc.i0e(kappa))},
        {}),
    "levy": Family(_positive, 1.0, _always, (), {
        "logpdf": lambda y: -0.5 * _LOG_2PI - 1.5 * np.log(y) - 0.5 / y,
        "cdf": lambda y: 2.0 * sc.ndtr(-1.0 / np.sqrt(y)),
        "sf": lambda y: sc.erf(1.0 / np.sqrt(2.0 * y)),
        "ppf": lambda q: 1.0 / sc.ndtri(0.5 * q) ** 2,
        "isf": lambda q: 0.5 / sc.erfinv(q) ** 2,
        # SciPy integrates it numerically (1e-10 from the closed form (1 + 3 gamma +
        # log(16 pi)) / 2): its number, so that the values agree
        "entropy": lambda: _levy_entropy()}, {}, open=True),
}


def _binom_logpmf(k, n, p):
    return (sc.gammaln(n + 1.0) - sc.gammaln(k + 1.0) - sc.gammaln(n - k + 1.0)
            + sc.xlogy(k, p) + sc.xlog1py(n - k, -p))


def _binom_cdf(k, n, p):          # P(K <= k), k = 0..n-1 (the ends are constants)
    return sc.betainc(n - k, k + 1.0, 1.0 - p)


def _binom_sf(k, n, p):
    return sc.betainc(k + 1.0, n - k, p)


def _nbinom_logpmf(k, n, p):
    return (sc.gammaln(n + k) - sc.gammaln(k + 1.0) - sc.gammaln(n) + n * np.log(p)
            + sc.xlog1py(k, -p))


# counts k (whole numbers for pmf; the floor for cdf and sf, as SciPy)
DISCRETE = {
    "poisson": Family(lambda mu: (0.0, np.inf), 0.0, lambda mu: mu >= 0, (1.0,), {
        "logpmf": lambda k, mu: sc.xlogy(k, mu) - sc.gammaln(k + 1.0) - mu,
        "cdf": lambda k, mu: sc.gammaincc(k + 1.0, mu),
        "sf": lambda k, mu: sc.gammainc(k + 1.0, mu)}, {}),
    "binom": Family(lambda n, p: (0.0, n), 0.0,
                    lambda n, p: (n >= 0) & (n == np.floor(n)) & (0 <= p) & (p <= 1), (0.0, 0.5),
                    {"logpmf": _binom_logpmf, "cdf": _binom_cdf, "sf": _binom_sf},
                    dict.fromkeys(("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"), (0,))),
    "bernoulli": Family(lambda p: (0.0, 1.0), 0.0, lambda p: (0 <= p) & (p <= 1), (0.5,), {
        "logpmf": lambda k, p: _binom_logpmf(k, 1.0, p),
        "cdf": lambda k, p: _binom_cdf(k, 1.0, p), "sf": lambda k, p: _binom_sf(k, 1.0, p)}, {}),
    # failures before the n-th success: P(K <= k) = I_p(n, k + 1)
    "nbinom": Family(lambda n, p: (0.0, np.inf), 0.0, lambda n, p: (n > 0) & (0 < p) & (p <= 1),
                     (1.0, 0.5),
                     {"logpmf": _nbinom_logpmf,
                      "cdf": lambda k, n, p: sc.betainc(n, k + 1.0, p),
                      "sf": lambda k, n, p: sc.betainc(k + 1.0, n, 1.0 - p)},
                     dict.fromkeys(("cdf", "logcdf", "sf", "logsf"), (0,))),
    # trials up to the first success, k = 1, 2, ...: P(K > k) = (1 - p)^k
    "geom": Family(lambda p: (1.0, np.inf), 1.0, lambda p: (0 < p) & (p <= 1), (0.5,), {
        "logpmf": lambda k, p: sc.xlog1py(k - 1.0, -p) + np.log(p),
        "cdf": lambda k, p: -np.expm1(k * np.log1p(-p)),
        "sf": lambda k, p: np.exp(k * np.log1p(-p)),
        "logsf": lambda k, p: k * np.log1p(-p)}, {}),
}
