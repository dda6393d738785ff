"""``scipy.ndimage.map_coordinates`` at active coordinates (image warping and
registration: the derivative in a displacement field), written with
adsim's recorded operations.

SciPy's value at a point x is a tensor-product B-spline sum over the
(order + 1)^d coefficients around it, c = spline_filter(input) (the input
itself for order 1 or without prefilter; ``nearest`` and ``grid-constant``
pad 12 samples first, as SciPy does), with weights beta(x_k - j) of the
centred B-spline of degree ``order`` (Unser, "Splines: a perfect fit for
signal and image processing", IEEE Signal Processing Magazine 16, 1999).
The first coefficient index, floor(x) - order // 2 (floor(x + 1/2) for
even orders), is a guarded integer: a replay whose points leave their cells
raises BranchChanged. Within a cell the value is a polynomial in x, so it is
recorded as one, its derivatives in every mode follow, and the input may be
active too.

Indices past the edge of the coefficients are mapped as the boundary mode
maps them where that is a fixed rule (``nearest``, ``reflect``,
``grid-mirror``, ``mirror``, ``grid-wrap``); with ``constant``,
``grid-constant`` and ``wrap`` a point whose support leaves the array is
refused. The recorded value is checked against SciPy's own call at the
recorded point, so a boundary rule of SciPy's that this reading misses is
refused, never returned."""
from math import comb, factorial

import numpy as np
import scipy.ndimage

from .._active import Active
from .._np.integers import current, rounded
from ..errors import UnsupportedOperation
from .arrays import array

NAME = "scipy.ndimage.map_coordinates"
_SCIPY_MAP_COORDINATES = scipy.ndimage.map_coordinates      # SciPy's own, for the check
_MAPPED_MODES = ("nearest", "reflect", "grid-mirror", "mirror", "grid-wrap")
_EDGE_MODES = ("constant", "grid-constant", "wrap")


def map_coordinates(input, coordinates, output=None, order=3, mode="constant", cval=0.0,
                    prefilter=True):
    """SciPy's map_coordinates where ``coordinates`` is active (see the module)."""
    image, points = array(input, NAME), array(coordinates, NAME)
    _check(image, points, output, order, mode)
    if prefilter and order > 1:
        padded, npad = _prepadded(image, mode, cval)
        coefficients = scipy.ndimage.spline_filter(padded, order, output=np.float64, mode=mode)
    else:
        coefficients, npad = image, 0
    shape = np.shape(coefficients)
    flat = np.reshape(coefficients, (-1,))
    out_shape = np.shape(points)[1:]
    indices, weights = [], []
    for axis in range(np.ndim(image)):
        x = np.reshape(points[axis], (-1,)) + float(npad)
        first = rounded(x + 0.5 if order % 2 == 0 else x, "floor").astype(np.intp) - order // 2
        indices.append([_mapped(first + j, shape[axis], mode) for j in range(order + 1)])
        weights.append([_bspline(x - (first + j), order) for j in range(order + 1)])
    stride = np.cumprod((1,) + shape[:0:-1])[::-1]
    value = 0.0
    for corner in np.ndindex(*(order + 1,) * np.ndim(image)):
        at = sum(indices[axis][j] * stride[axis] for axis, j in enumerate(corner))
        weight = weights[0][corner[0]]
        for axis in range(1, len(corner)):
            weight = weight * weights[axis][corner[axis]]
        value = value + weight * flat[at]
    value = np.reshape(value, out_shape)
    _check_against_scipy(value, image, points, order, mode, cval, prefilter)
    return value


def _check(image, points, output, order, mode):
    if isinstance(image, Active) and np.iscomplexobj(image) or np.iscomplexobj(points):
        raise UnsupportedOperation(f"adsim: {NAME} of complex arrays at active coordinates is "
                                   f"not recorded; map the real and imaginary parts")
    if output is not None and not (isinstance(output, (type, np.dtype, str)) and
                                   np.dtype(output).kind == "f"):
        raise UnsupportedOperation(
            f"adsim: {NAME}(..., output={output!r}) at active coordinates: the result is an "
            f"active float array; leave output out and use the returned array")
    if not 1 <= int(order) <= 5:
        raise UnsupportedOperation(
            f"adsim: {NAME} at active coordinates with order={order}: orders 1 to 5 are "
            f"differentiated (order 0 is piecewise constant: its derivative in the "
            f"coordinates is zero; pass adsim.value(coordinates) if that is what you want)")
    if mode not in _MAPPED_MODES + _EDGE_MODES:
        raise UnsupportedOperation(f"adsim: {NAME} at active coordinates with mode={mode!r}; "
                                   f"the modes are {_MAPPED_MODES + _EDGE_MODES}")
    if np.ndim(image) < 1 or np.ndim(points) < 2 or np.shape(points)[0] != np.ndim(image):
        raise RuntimeError("invalid shape for coordinate array")


def _prepadded(image, mode, cval):
    """The input as SciPy pads it before its spline filter (12 samples for
    ``nearest`` and ``grid-constant``, whose filter has no exact boundary)."""
    if mode == "nearest":
        return np.pad(image, 12, mode="edge"), 12
    if mode == "grid-constant":
        return np.pad(image, 12, mode="constant", constant_values=cval), 12
    return image, 0


def _mapped(index, size, mode):
    """Coefficient indices (plain integers) past the edges mapped by the
    boundary mode; refused where the mode has no fixed mapping."""
    inside = (index >= 0) & (index < size)
    if np.all(inside):
        return index
    if mode == "nearest":
        return np.clip(index, 0, size - 1)
    if mode == "grid-wrap":
        return np.mod(index, size)
    if mode in ("reflect", "grid-mirror"):          # d c b a | a b c d | d c b a
        period = 2 * size
        folded = np.mod(index, period)
        return np.where(folded < size, folded, period - 1 - folded)
    if mode == "mirror" and size > 1:               # d c b | a b c d | c b a
        period = 2 * size - 2
        folded = np.mod(index, period)
        return np.where(folded < size, folded, period - folded)
    if mode == "mirror":
        return np.zeros_like(index)
    raise UnsupportedOperation(
        f"adsim: {NAME} at active coordinates with mode={mode!r}: a point whose spline "
        f"support leaves the array (a point within order / 2 samples of an edge, or past "
        f"it) is not differentiated in this mode; use mode='nearest', 'reflect', 'mirror' "
        f"or 'grid-wrap', or pad the image (np.pad) and shift the coordinates")


def _bspline(u, degree):
    """The centred B-spline of ``degree`` at u (|u| below (degree + 1) / 2),
    by its truncated powers: sum_i (-1)^i C(degree + 1, i)
    max(u + (degree + 1) / 2 - i, 0)^degree / degree!."""
    total = 0.0
    for i in range(degree + 2):
        shifted = np.maximum(u + ((degree + 1) / 2 - i), 0.0)
        total = total + ((-1) ** i * comb(degree + 1, i)) * shifted ** degree
    return total / factorial(degree)


def _check_against_scipy(value, image, points, order, mode, cval, prefilter):
    """SciPy's own value at the recorded point: this reading of its rule must
    give it, to rounding."""
    now = lambda a: current(a) if isinstance(a, Active) else np.asarray(a, dtype=float)
    want = _SCIPY_MAP_COORDINATES(now(image), now(points), order=order, mode=mode, cval=cval,
                                  prefilter=prefilter)
    got = now(value)
    scale = max(float(np.max(np.abs(now(image)), initial=0.0)), 1e-300)
    if not np.allclose(got, want, rtol=1e-9, atol=1e-9 * scale):
        raise UnsupportedOperation(
            f"adsim: {NAME} at active coordinates with order={order}, mode={mode!r}: points "
            f"near the edge follow a boundary rule of SciPy's that adsim does not record "
            f"(largest difference {np.max(np.abs(got - want)):.3g}); pad the image (np.pad) "
            f"and shift the coordinates so that the points stay inside")
