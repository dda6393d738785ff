"""``scipy.stats.gaussian_kde`` with active data points, weights, evaluation
points or scalar bandwidth, called unchanged (see hooks.py).

The constructor and ``set_bandwidth`` are SciPy's, step by step, on the
active values (SciPy's first line, ``atleast_2d(asarray(dataset))``, would
make them plain): Scott's or Silverman's factor (of the effective sample
size, so of the weights), a scalar or a callable's, the data covariance
``np.cov(dataset, aweights=weights)``, its lower Cholesky factor L and
``cho_cov = factor * L``. The bandwidth is therefore differentiated with
the data, as SciPy computes it.

``evaluate`` (``__call__``), ``pdf`` and ``logpdf`` compute SciPy's kernel
sum with recorded operations: with the whitened differences
z_ij = cho_cov^-1 (x_j - data_i),

    pdf(x_j) = sum_i w_i exp(-|z_ij|^2 / 2) / ((2 pi)^(d/2) prod diag(cho_cov)),

and ``logpdf`` the log of the sum of exponentials (shifted by their
maximum) plus log w_i minus the log of the norm. SciPy whitens the points
and the data separately and subtracts: values agree to rounding. A KDE
whose attributes are all plain evaluated at plain points is SciPy's own
call. SciPy's other methods run as written on the active attributes:
``resample`` (a draw of rng.multivariate_normal with the active
covariance, pathwise, plus data points chosen at random), ``integrate_box_1d``,
``integrate_gaussian``, ... are recorded through the NumPy functions they
call.
Every step is written with NumPy calls on active arrays and adsim's rules
(not SciPy's functions), so ``adsim.scipy.stats.gaussian_kde`` works with
interposition off too.
"""
import numpy as np

from .._active import Active
from .linalg import solve_triangular

_MODULE = "scipy.stats._kde"


def _active(v):
    return isinstance(v, Active)


def init(self, dataset, bw_method=None, weights=None):
    """SciPy's constructor on active data or weights."""
    self.dataset = np.atleast_2d(dataset if _active(dataset) else np.asarray(dataset))
    if not np.size(self.dataset) > 1:
        raise ValueError("`dataset` input should have multiple elements.")
    self.d, self.n = np.shape(self.dataset)
    if weights is not None:
        w = np.atleast_1d(weights) * 1.0
        self._weights = w / np.sum(w)
        if np.ndim(self._weights) != 1:
            raise ValueError("`weights` input should be one-dimensional.")
        if np.shape(self._weights)[0] != self.n:
            raise ValueError("`weights` input should be of length n")
        self._neff = 1.0 / np.dot(self._weights, self._weights)
    if self.d > self.n:
        raise ValueError("Number of dimensions is greater than number of samples: "
                         "gaussian_kde interprets each *column* of `dataset` as a point; "
                         "consider transposing the input to `dataset`.")
    set_bandwidth(self, bw_method=bw_method)


def set_bandwidth(self, bw_method=None):
    """SciPy's choice of the covariance factor, then its covariance."""
    if bw_method is None:
        pass
    elif isinstance(bw_method, str) and bw_method == "scott":
        self.covariance_factor = self.scotts_factor
    elif isinstance(bw_method, str) and bw_method == "silverman":
        self.covariance_factor = self.silverman_factor
    elif _active(bw_method) and bw_method.shape == () or \
            np.isscalar(bw_method) and not isinstance(bw_method, str):
        self._bw_method = "use constant"
        self.covariance_factor = lambda: bw_method
    elif callable(bw_method):
        self._bw_method = bw_method
        self.covariance_factor = lambda: self._bw_method(self)
    else:
        raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar or a callable.")
    _compute_covariance(self)


def _compute_covariance(self):
    """SciPy's: the data covariance and its Cholesky factor (kept), scaled by
    the factor."""
    self.factor = self.covariance_factor()
    if not hasattr(self, "_data_cho_cov"):
        self._data_covariance = np.atleast_2d(np.cov(self.dataset, rowvar=1, bias=False,
                                                     aweights=self.weights))
        self._data_cho_cov = np.linalg.cholesky(self._data_covariance)
    self.covariance = self._data_covariance * self.factor ** 2
    self.cho_cov = self._data_cho_cov * self.factor
    self.log_det = 2.0 * np.sum(np.log(np.diagonal(self.cho_cov) * np.sqrt(2.0 * np.pi)))


def _points(self, x):
    """The evaluation points as SciPy reads them: (d, m), a row of d values
    being one point."""
    points = np.atleast_2d(x if _active(x) else np.asarray(x, dtype=float))
    d, m = np.shape(points)
    if d != self.d:
        if d == 1 and m == self.d:
            return np.reshape(points, (self.d, 1))
        raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
    return points


def _exponents(self, x):
    """(-|z_ij|^2 / 2 of shape (n, m), log of the norm)."""
    points = _points(self, x)
    L = self.cho_cov
    d, m = np.shape(points)
    diff = np.reshape(points[:, None, :] - self.dataset[:, :, None], (d, -1))
    z = solve_triangular(L, diff, lower=True)
    half = -0.5 * np.reshape(np.sum(z * z, axis=0), (self.n, m))
    log_norm = 0.5 * d * np.log(2.0 * np.pi) + np.sum(np.log(np.diagonal(L)))
    return half, log_norm


def evaluate(self, points):
    half, log_norm = _exponents(self, points)
    return np.sum(self.weights[:, None] * np.exp(half), axis=0) / np.exp(log_norm)


def logpdf(self, x):
    half, log_norm = _exponents(self, x)
    a = half + np.log(self.weights)[:, None]
    top = np.max(a, axis=0)
    return top + np.log(np.sum(np.exp(a - top), axis=0)) - log_norm


def _has_active_state(args, kwargs):
    """A KDE built from active values (its data, weights or bandwidth), or
    evaluated at active points."""
    self = args[0] if args else None
    return any(_active(getattr(self, name, None)) for name in
               ("dataset", "cho_cov", "_weights")) or \
        any(_active(v) or isinstance(v, (list, tuple)) and any(map(_active, v))
            for v in (*args[1:], *kwargs.values()))


def _active_kde_or_bandwidth(args, kwargs):
    return _has_active_state(args[:1], {}) or \
        any(_active(v) for v in (*args[1:], *kwargs.values()))


evaluate.routes_when = logpdf.routes_when = _has_active_state
set_bandwidth.routes_when = _active_kde_or_bandwidth

HOOKS = {(_MODULE, "gaussian_kde.__init__"): init,
         (_MODULE, "gaussian_kde.evaluate"): evaluate,
         (_MODULE, "gaussian_kde.__call__"): evaluate,     # SciPy's evaluate, by another name
         (_MODULE, "gaussian_kde.logpdf"): logpdf,
         (_MODULE, "gaussian_kde.set_bandwidth"): set_bandwidth}

CLASSES = ("gaussian_kde",)     # the class adsim.scipy.stats holds, its methods routed
