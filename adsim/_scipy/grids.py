"""``scipy.interpolate.RegularGridInterpolator`` and ``interpn`` with active
data values or at active points: methods ``linear``, ``nearest``,
``slinear``, ``cubic``, ``quintic`` (with ``nu``).

Construction with active ``values`` runs SciPy's constructor on the
current values (checks, attributes), then keeps the active values (flipped
along descending grid axes, as SciPy flips them). Evaluation follows SciPy
with recorded operations:

- the cell of a point is SciPy's (``find_indices``: grid[i] <= x <
  grid[i+1], the last cell closed, clipped to the end cells), so at an
  inner grid line the derivative in x is that of the cell above;
- ``linear``: the multilinear weights of the cell's corners;
  ``nearest``: the corner with normalised distance <= 0.5 (derivative 0
  in x);
- the spline methods: SciPy's tensor-product B-splines (not-a-knot knots
  per axis), whose coefficients are the values mapped along each axis by
  the 1-d interpolation map (linear), evaluated as products of 1-d
  B-spline bases at the point;
- out of bounds: SciPy's ValueError (``bounds_error``), ``fill_value``,
  or extrapolation (``fill_value=None``).

``pchip`` and the ``*_legacy`` methods with active arguments are refused
by name, as is a ``solver`` for the spline coefficients.
"""
import itertools

import numpy as np
import scipy.interpolate as si

from .._np.core import active_leaves
from ..errors import UnsupportedOperation
from . import piecewise, splines
from .arrays import array, now

_NAME = "scipy.interpolate.RegularGridInterpolator"
_SPLINES = {"slinear": 1, "cubic": 3, "quintic": 5}


def rgi_init(self, points, values, method="linear", bounds_error=True, fill_value=np.nan, *,
             solver=None, solver_args=None):
    points, fill_value = splines.plain_arguments("RegularGridInterpolator", points=points,
                                                 fill_value=fill_value)
    if solver is not None and solver is not _spsolve():
        raise UnsupportedOperation(f"adsim: {_NAME} with active values and solver={solver!r} "
                                   f"is not supported: adsim solves for the spline coefficients "
                                   f"directly (as solver=scipy.sparse.linalg.spsolve does)")
    values = array(values, _NAME)
    si.RegularGridInterpolator.__init__(self, points, now(values), method=method,
                                        bounds_error=bounds_error, fill_value=fill_value,
                                        solver=solver, solver_args=solver_args)
    descending = tuple(self._descending_dimensions)
    self._values = np.flip(values, axis=descending) if descending else values


def _spsolve():
    from scipy.sparse.linalg import spsolve
    return spsolve


def _points(self, xi):
    """The query points as an (N, ndim) array (recorded when active), and the
    shape of the result's leading axes."""
    ndim = len(self._grid)
    if isinstance(xi, tuple) and len(xi) == ndim:      # coordinate arrays, broadcast
        parts = np.broadcast_arrays(*[array(p, _NAME) for p in xi])
        xi = np.stack(parts, axis=-1)
    else:
        xi = array(xi, _NAME)
    if np.shape(xi)[-1] != ndim:
        raise ValueError(f"The requested sample points xi have dimension {np.shape(xi)[-1]} but "
                         f"this RegularGridInterpolator has dimension {ndim}")
    shape = np.shape(xi)[:-1] if np.ndim(xi) > 1 else (1,)
    return np.reshape(xi, (-1, ndim)), shape


def _cells(self, flat):
    """Per axis: the cell index of each point and its normalised distance."""
    indices, distances = [], []
    for d, grid in enumerate(self._grid):
        grid = np.asarray(grid)
        x = flat[:, d]
        i = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, grid.size - 2)
        indices.append(i)
        distances.append((x - grid[i]) / (grid[i + 1] - grid[i]))
    return indices, distances


def _linear(values, indices, distances):
    trailing = (1,) * (np.ndim(values) - len(indices))
    total = 0.0
    for corner in itertools.product((0, 1), repeat=len(indices)):
        weight = 1.0
        for up, y in zip(corner, distances):
            weight = weight * (y if up else 1.0 - y)
        at = tuple(i + up for i, up in zip(indices, corner))
        total = total + values[at] * np.reshape(weight, (-1,) + trailing)
    return total


def _nearest(values, indices, distances):
    return values[tuple(np.where(y <= 0.5, i, i + 1) for i, y in zip(indices, distances))]


def _spline(self, values, flat, k, nu):
    """SciPy's tensor-product spline of degree k through the values, at the
    points (N, ndim), derivative orders ``nu`` per axis."""
    coefficients = values
    bases = []
    for d, grid in enumerate(self._grid):
        grid = np.asarray(grid)
        unit = si.make_interp_spline(grid, np.eye(grid.size), k=k)
        coefficients = np.moveaxis(np.tensordot(np.asarray(unit.c), coefficients,
                                                axes=([1], [d])), 0, d)
        t = np.asarray(unit.t)
        n = t.size - k - 1
        pp = piecewise.bspline_basis(t, k, n)[:, k:n]
        bases.append(piecewise.evaluate(pp, t[k:n + 1], flat[:, d], nu[d]))   # (N, n_d)
    out = np.tensordot(bases[0], coefficients, axes=([1], [0]))
    for basis in bases[1:]:
        out = np.sum(out * np.reshape(basis, np.shape(basis) + (1,) * (np.ndim(out) - 2)),
                     axis=1)
    return out


def rgi_call(self, xi, method=None, *, nu=None):
    method = self.method if method is None else method
    if method not in ("linear", "nearest") and method not in _SPLINES:
        raise UnsupportedOperation(f"adsim: {_NAME} method {method!r} with active values or "
                                   f"points is not supported; use linear, nearest, slinear, "
                                   f"cubic or quintic")
    if nu is not None and method not in _SPLINES:
        raise ValueError(f"Can only compute derivatives for methods {set(_SPLINES)}, got "
                         f"method = {method!r}.")
    ndim = len(self._grid)
    flat, shape = _points(self, xi)
    values = self._values
    inside = True                   # recorded comparisons: replays check them
    for d, grid in enumerate(self._grid):
        inside_d = (grid[0] <= flat[:, d]) & (flat[:, d] <= grid[-1])
        if self.bounds_error and not np.all(inside_d):
            raise ValueError(f"One of the requested xi is out of bounds in dimension {d}")
        inside = inside & inside_d
    if method in _SPLINES:
        nu = (0,) * ndim if nu is None else tuple(int(v) for v in nu)
        out = _spline(self, values, flat, _SPLINES[method], nu)
    else:
        indices, distances = _cells(self, flat)
        out = (_linear if method == "linear" else _nearest)(values, indices, distances)
    if not self.bounds_error and self.fill_value is not None and not np.all(inside):
        outside = np.reshape(~inside, (-1,) + (1,) * (np.ndim(out) - 1))
        out = np.where(outside, self.fill_value, out)
    return np.reshape(out, tuple(shape) + tuple(np.shape(values)[ndim:]))


def interpn(points, values, xi, method="linear", bounds_error=True, fill_value=np.nan):
    if method == "splinef2d":
        raise UnsupportedOperation("adsim: scipy.interpolate.interpn with method='splinef2d' "
                                   "and active arguments is not supported; use 'cubic'")
    made = object.__new__(si.RegularGridInterpolator)
    if active_leaves(values):
        rgi_init(made, points, values, method=method, bounds_error=bounds_error,
                 fill_value=fill_value)
    else:
        si.RegularGridInterpolator.__init__(made, points, values, method=method,
                                            bounds_error=bounds_error, fill_value=fill_value)
    return rgi_call(made, xi)
