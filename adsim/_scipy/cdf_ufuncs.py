"""``scipy.special``'s raw distribution functions, differentiated in the
argument whose derivative has a closed form: chi-square (chdtr chdtrc
chdtri), gamma (gdtr gdtrc gdtrix), Poisson (pdtr pdtrc pdtri), binomial
(bdtr bdtrc bdtri), negative binomial (nbdtr nbdtrc), F (fdtr fdtrc fdtri)
and the complemented inverse incomplete beta function (betainccinv).

Each is an incomplete gamma or beta function of its arguments (A&S 26.4.19,
26.1.22, 26.5.24, 26.5.26, 26.6.2; SciPy's definitions), so its derivative
in the variable is a density (adsim/_np/special.py), and an inverse's is
one over the density at the result. The shape arguments (degrees of
freedom, counts, ``b`` of gdtr) have no closed-form derivative and must be
plain; counts ``k`` are floored as SciPy floors them.
"""
import numpy as np
import scipy.special as sc

from .._np.special import beta_density, gamma_density

__all__ = ["table", "PLAIN_NAMES"]


def _chi2_density(v, x):
    """d/dx chdtr(v, x) = d/dx gammainc(v / 2, x / 2)."""
    return 0.5 * gamma_density(0.5 * v, 0.5 * x)


def _binomial_density(k, n, p):
    """d/dp bdtrc(k, n, p) = d/dp betainc(k + 1, n - k, p) for 0 <= k < n;
    0 at k = n (bdtr is 1 there); NaN elsewhere, as SciPy's value is."""
    k = np.floor(k)
    inside = (k >= 0) & (k < n)
    density = beta_density(np.where(inside, k + 1.0, 1.0), np.where(inside, n - k, 1.0), p)
    return np.where(inside, density, np.where(k == n, 0.0, np.nan))


def _f_density(dfn, dfd, x):
    """d/dx fdtr(dfn, dfd, x) = d/dx betainc(dfn / 2, dfd / 2, u),
    u = dfn x / (dfd + dfn x)."""
    denominator = dfd + dfn * x
    return beta_density(0.5 * dfn, 0.5 * dfd, dfn * x / denominator) * dfn * dfd / \
        denominator ** 2


def _integers(counts):
    """Counts as the integers bdtri takes (the tape holds them as floats)."""
    return np.asarray(counts).astype(np.int64)


def _gdtrix(a, b, p):
    """x = gammaincinv(b, p) / a: dx/da = -x / a, dx/dp = 1 / (a g(b, a x))."""
    x = sc.gdtrix(a, b, p)
    return (-x / a, None, 1.0 / (a * gamma_density(b, a * x)))


def table():
    """ufunc -> (partials, plain argument positions)."""
    counts = (0,)
    return {
        sc.chdtr: (lambda v, x: (None, _chi2_density(v, x)), counts),
        sc.chdtrc: (lambda v, x: (None, -_chi2_density(v, x)), counts),
        sc.chdtri: (lambda v, p: (None, -1.0 / _chi2_density(v, sc.chdtri(v, p))), counts),
        # gdtr(a, b, x) = gammainc(b, a x): in the rate a and in x
        sc.gdtr: (lambda a, b, x: (x * gamma_density(b, a * x), None,
                                   a * gamma_density(b, a * x)), (1,)),
        sc.gdtrc: (lambda a, b, x: (-x * gamma_density(b, a * x), None,
                                    -a * gamma_density(b, a * x)), (1,)),
        sc.gdtrix: (_gdtrix, (1,)),
        # pdtr(k, m) = gammaincc(floor(k) + 1, m)
        sc.pdtr: (lambda k, m: (None, -gamma_density(np.floor(k) + 1.0, m)), counts),
        sc.pdtrc: (lambda k, m: (None, gamma_density(np.floor(k) + 1.0, m)), counts),
        sc.pdtri: (lambda k, y: (None, -1.0 / gamma_density(np.floor(k) + 1.0,
                                                             sc.pdtri(k, y))), counts),
        # bdtr(k, n, p) = betainc(n - k, k + 1, 1 - p) = 1 - bdtrc(k, n, p)
        sc.bdtr: (lambda k, n, p: (None, None, -_binomial_density(k, n, p)), (0, 1)),
        sc.bdtrc: (lambda k, n, p: (None, None, _binomial_density(k, n, p)), (0, 1)),
        sc.bdtri: (lambda k, n, y: (None, None, -1.0 / _binomial_density(k, n, sc.bdtri(
            _integers(k), _integers(n), y))), (0, 1)),
        # nbdtr(k, n, p) = betainc(n, k + 1, p)
        sc.nbdtr: (lambda k, n, p: (None, None, beta_density(n, np.floor(k) + 1.0, p)), (0, 1)),
        sc.nbdtrc: (lambda k, n, p: (None, None, -beta_density(n, np.floor(k) + 1.0, p)),
                    (0, 1)),
        sc.fdtr: (lambda dfn, dfd, x: (None, None, _f_density(dfn, dfd, x)), (0, 1)),
        sc.fdtrc: (lambda dfn, dfd, x: (None, None, -_f_density(dfn, dfd, x)), (0, 1)),
        sc.fdtri: (lambda dfn, dfd, p: (None, None, 1.0 / _f_density(dfn, dfd,
                                                                     sc.fdtri(dfn, dfd, p))),
                   (0, 1)),
        sc.betainccinv: (lambda a, b, y: (None, None, -1.0 / beta_density(
            a, b, sc.betainccinv(a, b, y))), (0, 1)),
    }


# the arguments without a closed-form derivative, by name, for the message
# refusing an active one
PLAIN_NAMES = {
    "chdtr": "degrees of freedom v", "chdtrc": "degrees of freedom v",
    "chdtri": "degrees of freedom v", "gdtr": "shape b", "gdtrc": "shape b",
    "gdtrix": "shape b", "pdtr": "count k", "pdtrc": "count k", "pdtri": "count k",
    "bdtr": "counts k, n", "bdtrc": "counts k, n", "bdtri": "counts k, n",
    "nbdtr": "counts k, n", "nbdtrc": "counts k, n", "fdtr": "degrees of freedom dfn, dfd",
    "fdtrc": "degrees of freedom dfn, dfd", "fdtri": "degrees of freedom dfn, dfd",
    "betainccinv": "parameters a, b",
}
