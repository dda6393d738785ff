"""``scipy.ndimage`` filters, resampling and sums and means over labelled
regions on active images, called
unchanged (see hooks.py): each is linear in its input for plain settings
(weights, sigma, size, mode, cval, order), differentiated as the linear map
it is (adsim/_scipy/linear_maps.py). ``center_of_mass`` is a ratio of such
sums, recorded as NumPy code; map_coordinates at active coordinates is a
recorded spline sum (warping.py)."""
import functools

import numpy as np
import scipy.ndimage

from .._active import Active
from .._np.core import active_leaves
from .._np.integers import plain_if_constant
from ..errors import UnsupportedOperation
from . import warping
from .arrays import array
from .linear_maps import linear_in

_NAMES = ("gaussian_filter", "gaussian_filter1d", "uniform_filter", "uniform_filter1d",
          "convolve", "correlate", "convolve1d", "correlate1d", "laplace", "gaussian_laplace",
          "sobel", "prewitt", "zoom", "shift", "rotate", "affine_transform", "map_coordinates",
          "spline_filter", "spline_filter1d", "sum_labels", "mean")

_CENTER_OF_MASS = scipy.ndimage.center_of_mass


def center_of_mass(input, labels=None, index=None):
    """SciPy's centre of mass, sum(input * coordinate) / sum(input) per axis
    over the region labelled ``index`` (all labels > 0 when ``index`` is
    None and ``labels`` given; the whole image without labels), for an
    active image with plain labels and indices: a tuple per region, in a
    list when ``index`` is a sequence, as SciPy returns them."""
    labels, index = plain_if_constant(labels), plain_if_constant(index)
    if active_leaves([labels, index]):
        raise UnsupportedOperation(
            "adsim: scipy.ndimage.center_of_mass is differentiated in its image `input` only; "
            "here labels or index depend on the inputs being differentiated. Keep them plain")
    x = array(input, "scipy.ndimage.center_of_mass")
    if not isinstance(x, Active):
        return _CENTER_OF_MASS(input, labels, index)
    coordinates = np.indices(x.shape, dtype=float)

    def centre(mask):
        weights = x if mask is None else x * mask
        total = np.sum(weights)
        return tuple(np.sum(weights * c) / total for c in coordinates)

    if labels is None:
        return centre(None)
    labels = np.broadcast_to(np.asarray(labels), x.shape)
    if index is None:
        return centre((labels > 0).astype(float))
    if np.ndim(index) == 0:
        return centre((labels == index).astype(float))
    return [centre((labels == i).astype(float)) for i in np.ravel(index)]


HOOKS = {("scipy.ndimage", name): linear_in(getattr(scipy.ndimage, name), "input",
                                            f"scipy.ndimage.{name}")
         for name in _NAMES if hasattr(scipy.ndimage, name)}
HOOKS[("scipy.ndimage", "center_of_mass")] = center_of_mass

_linear_map_coordinates = HOOKS["scipy.ndimage", "map_coordinates"]


@functools.wraps(scipy.ndimage.map_coordinates)
def map_coordinates(input, coordinates, *args, **kwargs):
    """Linear in ``input`` at plain coordinates; at active ones, a recorded
    spline sum (adsim/_scipy/warping.py)."""
    if active_leaves(coordinates):
        return warping.map_coordinates(input, coordinates, *args, **kwargs)
    return _linear_map_coordinates(input, coordinates, *args, **kwargs)


HOOKS["scipy.ndimage", "map_coordinates"] = map_coordinates
