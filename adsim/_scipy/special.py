"""``scipy.special`` functions written in Python (not ufuncs): logsumexp,
softmax, log_softmax, polygamma, multigammaln; written with recorded operations, so every
mode, Hessian-vector products included, differentiates them."""
import numpy as np
import scipy.special as sc

from .._np.core import axes_of
from .._np.elementwise import stop_gradient
from .._np.integers import plain_if_constant
from .._np.special import elementwise
from .._active import Active
from ..errors import UndefinedDerivative, UnsupportedOperation
from ..primitives import primitive
from .arrays import array


def _shift(a, axes):
    """The maximum over ``axes`` (kept), without derivative and with 0 where
    it is infinite: exp(a - shift) neither overflows nor meets inf - inf."""
    m = stop_gradient(np.max(a, axis=axes, keepdims=True))
    return np.where(np.isfinite(m), m, 0.0)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b exp(a))) over ``axis``, as SciPy defines it: terms whose
    weight is 0 are left out (their ``a`` may be infinite), and with
    ``return_sign`` the logarithm of |sum| and its sign."""
    a = np.atleast_1d(array(a, "scipy.special.logsumexp"))
    counted = a
    if b is not None:
        b = array(b, "scipy.special.logsumexp")
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
        zero = b == 0
        counted = np.where(zero, -np.inf, a)
        # an active weight of 0 keeps its derivative exp(a - lse) unless its
        # a is infinite or NaN (then left out, as SciPy does for the value)
        left_out = zero & ~np.isfinite(a) if isinstance(b, Active) else zero
        if np.any(left_out):
            a = np.where(left_out, -np.inf, a)
    axes = axes_of(axis, np.ndim(a))
    if np.size(a) == 0:
        shape = tuple(1 if i in axes else d for i, d in enumerate(np.shape(a)))
        out, sign = np.full(shape, -np.inf), np.full(shape, -1.0)
    else:
        shift = _shift(counted, axes)
        terms = np.exp(a - shift) if b is None else b * np.exp(a - shift)
        total = np.sum(terms, axis=axes, keepdims=True)
        sign = np.sign(total)
        magnitude = np.abs(total) if return_sign else total
        empty = total == 0                    # every term zero: -inf, derivative 0, not NaN
        if np.any(empty):
            log_total = np.where(empty, -np.inf, np.log(np.where(empty, 1.0, magnitude)))
        else:
            log_total = np.log(magnitude)
        out = log_total + shift
    if not keepdims:
        out, sign = np.squeeze(out, axis=axes), np.squeeze(sign, axis=axes)
    return (out, sign) if return_sign else out


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over ``axis``."""
    x = array(x, "scipy.special.softmax")
    axes = axes_of(axis, np.ndim(x))
    e = np.exp(x - _shift(x, axes))
    return e / np.sum(e, axis=axes, keepdims=True)


def log_softmax(x, axis=None):
    """x - logsumexp(x) over ``axis``."""
    x = array(x, "scipy.special.log_softmax")
    axes = axes_of(axis, np.ndim(x))
    shifted = x - _shift(x, axes)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axes, keepdims=True))


# d/dx polygamma(n, x) = polygamma(n + 1, x) (A&S 6.4.1); n is a plain order
_polygamma = elementwise(sc.polygamma, lambda n, x: (None, sc.polygamma(n + 1, x)), static=(0,))


def polygamma(n, x):
    return _polygamma(n if isinstance(n, Active) else np.asarray(n),
                      array(x, "scipy.special.polygamma"))


def multigammaln(a, d):
    """log of the multivariate gamma function, d (d - 1) / 4 log(pi) +
    sum_j gammaln(a - (j - 1) / 2), j = 1..d, for a plain integer d."""
    a = array(a, "scipy.special.multigammaln")
    d = plain_if_constant(d)
    if isinstance(d, Active):
        raise UnsupportedOperation("adsim: scipy.special.multigammaln with an active dimension "
                                   "d; pass d as a plain integer")
    d = np.asarray(d)[()]
    if not np.isscalar(d) or (np.floor(d) != d):
        raise ValueError("d should be a positive integer (dimension)")
    if np.any(a <= 0.5 * (d - 1)):
        raise ValueError(f"condition a > 0.5 * (d-1) ({0.5 * (d - 1)}) not met")
    total = 0.0 * a
    for j in range(int(d)):
        total = total + sc.gammaln(a - 0.5 * j)
    return d * (d - 1) * 0.25 * np.log(np.pi) + total


def _spherical_bessel(kind, sign_n_even):
    """scipy.special.spherical_<kind>(n, z, derivative=False) of an active z:
    SciPy's private ufunc of (n, z), whose rules are in ufuncs.py, at z >= 0,
    and SciPy's reflection at z < 0, f(n, z) = s f(n, -z) with s = sign_n_even
    for even n (DLMF 10.47(v)), -s for odd n, negated for the derivative."""
    name = f"scipy.special.spherical_{kind}"

    def spherical(n, z, derivative=False):
        n = plain_if_constant(n)
        if isinstance(n, Active):
            raise UnsupportedOperation(f"adsim: {name} is not differentiated in its order n "
                                       f"(integers); pass it as plain values")
        n = np.asarray(n, dtype=np.dtype("long"))
        z = array(z, name)
        ufunc = getattr(sc._spherical_bessel, f"_spherical_{kind}" + ("_d" if derivative else ""))
        negative = z < 0.0                  # recorded data: replays compute it again
        if not np.any(negative):
            return ufunc(n, z)
        if sign_n_even is None:
            raise UnsupportedOperation(
                f"adsim: {name} at z < 0 (SciPy's value there is the real part of its complex "
                f"evaluation) is not differentiated; keep z >= 0")
        sign = np.where(n % 2 == 0, sign_n_even, -sign_n_even) * (-1.0 if derivative else 1.0)
        # both sides at |z| (SciPy's ufunc is NaN at z < 0, whose derivative a
        # where of the two would carry), the sign by the side
        return np.where(negative, sign, 1.0) * ufunc(n, np.where(negative, -z, z))
    spherical.__name__ = f"spherical_{kind}"
    return spherical


def _lambertw_value(x, k, tol):
    return sc.lambertw(x, int(k), tol).real


def _lambertw_slope(W):
    """dW/dx = 1 / (e^W (1 + W)), from W e^W = x (finite at x = 0)."""
    return 1.0 / (np.exp(W) * (1.0 + W))


_lambertw_real = primitive(
    _lambertw_value, name="scipy.special.lambertw", elementwise=True, nondiff_argnums=(1, 2),
    jvp=lambda args, W, tangents: _lambertw_slope(W) * tangents[0],
    vjp=lambda args, W, w: (w * _lambertw_slope(W), None, None))


def lambertw(z, k=0, tol=1e-8):
    """scipy.special.lambertw of a real active argument on the branches where
    it is real (k = 0 for z > -1/e, k = -1 for -1/e < z < 0), as SciPy's
    complex result with imaginary part 0; elsewhere (complex values, the
    branch point z = -1/e where the derivative is infinite) refused."""
    name = "scipy.special.lambertw"
    z = array(z, name)
    k, tol = plain_if_constant(k), plain_if_constant(tol)
    if isinstance(k, Active) or isinstance(tol, Active) or np.ndim(k) or k not in (0, -1):
        raise UnsupportedOperation(f"adsim: {name} is differentiated on its real branches "
                                   f"k = 0 and k = -1 (a plain integer), not k = {k!r}")
    above = z > -np.exp(-1.0)               # recorded tests: replays check them
    inside = above if k == 0 else above & (z < 0.0)
    if not np.all(inside):
        raise UndefinedDerivative(
            f"adsim: {name}(z, k={k}) is real and differentiable for "
            + ("z > -1/e" if k == 0 else "-1/e < z < 0")
            + "; outside, it is complex or (at z = -1/e) has an infinite derivative: keep z in "
            "that range, or call it on adsim.value(z)")
    return _lambertw_real(z, float(k), float(tol)) + 0j


HOOKS = {("scipy.special", "logsumexp"): logsumexp, ("scipy.special", "softmax"): softmax,
         ("scipy.special", "log_softmax"): log_softmax, ("scipy.special", "polygamma"): polygamma,
         ("scipy.special", "multigammaln"): multigammaln, ("scipy.special", "lambertw"): lambertw,
         **{("scipy.special", f"spherical_{kind}"): _spherical_bessel(kind, sign)
            for kind, sign in (("jn", 1.0), ("yn", -1.0), ("in", 1.0), ("kn", None))}}
