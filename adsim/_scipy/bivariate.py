"""``scipy.interpolate.RectBivariateSpline`` (interpolating, ``s=0``) with
active data values ``z`` or at active points, through ``__call__`` (both
``grid`` modes, ``dx``, ``dy``) and ``ev``.

With ``s=0`` FITPACK's knots depend on the grid alone and the spline
interpolates z, so its coefficients are C = Mx z My^T, Mx and My the 1-d
interpolation maps on FITPACK's knots (a least-squares spline with as many
coefficients as points is the interpolant): recorded as two products. A
smoothing spline (``s > 0``) chooses its knots from z and is refused with
active z. Evaluation is the tensor product of 1-d B-spline bases at the
points; FITPACK clamps points outside the spline's box to its edge, and so
does this (derivative 0 in a clamped coordinate).
"""
import numpy as np
import scipy.interpolate as si

from .._active import Active
from ..errors import UnsupportedOperation
from . import piecewise, splines
from .arrays import array, now

_NAME = "scipy.interpolate.RectBivariateSpline"


def rbs_init(self, x, y, z, bbox=[None] * 4, kx=3, ky=3, s=0, maxit=20):   # noqa: B006 (SciPy's)
    x, y, bbox = splines.plain_arguments("RectBivariateSpline", x=x, y=y, bbox=bbox)
    if s != 0:
        raise UnsupportedOperation(f"adsim: {_NAME} with s={s} and active z: a smoothing "
                                   f"spline places its knots by z, which is not differentiated; "
                                   f"use s=0 (interpolation) or RegularGridInterpolator")
    z = array(z, _NAME)
    si.RectBivariateSpline.__init__(self, x, y, now(z), bbox=bbox, kx=kx, ky=ky, s=s,
                                    maxit=maxit)
    tx, ty, _ = self.tck
    mx = si.make_lsq_spline(np.asarray(x, float), np.eye(len(x)), tx, k=kx).c
    my = si.make_lsq_spline(np.asarray(y, float), np.eye(len(y)), ty, k=ky).c
    coefficients = np.reshape(mx @ z @ my.T, (-1,))
    self.tck = (tx, ty, coefficients)


def _basis(t, k, points, nu):
    """The B-spline basis of knots t at the points clamped into the box
    (len(points), number of coefficients)."""
    t = np.asarray(t)
    n = t.size - k - 1
    clamped = np.clip(points, t[k], t[n])
    pp = piecewise.bspline_basis(t, k, n)[:, k:n]
    return piecewise.evaluate(pp, t[k:n + 1], clamped, nu)


def rbs_call(self, x, y, dx=0, dy=0, grid=True):
    if not isinstance(self, si.RectBivariateSpline):
        raise UnsupportedOperation(f"adsim: scipy.interpolate.{type(self).__name__} with active "
                                   f"arguments is not supported; use RectBivariateSpline (s=0)")
    tx, ty, c = self.tck[:3]
    kx, ky = self.degrees
    if (dx or dy) and not (0 <= dx < kx and 0 <= dy < ky):
        raise ValueError(f"Error code returned by {'parder' if grid else 'pardeu'}: 10")
    x, y = array(x, _NAME), array(y, _NAME)
    coefficients = np.reshape(c, (len(tx) - kx - 1, len(ty) - ky - 1))
    if grid:
        for what, v in (("x", x), ("y", y)):
            if np.size(v) >= 2 and not np.all(np.diff(now(v)) >= 0.0):
                raise ValueError(f"{what} must be strictly increasing when `grid` is True")
        bx = _basis(tx, kx, np.reshape(x, (-1,)), dx)
        by = _basis(ty, ky, np.reshape(y, (-1,)), dy)
        return bx @ coefficients @ by.T
    x, y = np.broadcast_arrays(x, y) if np.shape(x) != np.shape(y) else (x, y)
    shape = np.shape(x)
    bx = _basis(tx, kx, np.reshape(x, (-1,)), dx)
    by = _basis(ty, ky, np.reshape(y, (-1,)), dy)
    return np.reshape(np.sum((bx @ coefficients) * by, axis=1), shape)


def holds_active_coefficients(obj):
    tck = getattr(obj, "tck", None)
    return isinstance(tck, tuple) and len(tck) >= 3 and isinstance(tck[2], Active)
