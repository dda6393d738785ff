"""``scipy.ndimage`` filters, resampling and sums and means over labelled
regions on active images, called
unchanged (see hooks.py): each is linear in its input for plain settings
(weights, sigma, size, mode, cval, order), differentiated as the linear map
it is (adsim/_scipy/linear_maps.py); map_coordinates at active coordinates
is a recorded spline sum (warping.py)."""
import functools

import scipy.ndimage

from .._np.core import active_leaves
from . import warping
from .linear_maps import linear_in

_NAMES = ("gaussian_filter", "gaussian_filter1d", "uniform_filter", "uniform_filter1d",
          "convolve", "correlate", "convolve1d", "correlate1d", "laplace", "gaussian_laplace",
          "sobel", "prewitt", "zoom", "shift", "rotate", "affine_transform", "map_coordinates",
          "spline_filter", "spline_filter1d", "sum_labels", "mean")

HOOKS = {("scipy.ndimage", name): linear_in(getattr(scipy.ndimage, name), "input",
                                            f"scipy.ndimage.{name}")
         for name in _NAMES if hasattr(scipy.ndimage, name)}

_linear_map_coordinates = HOOKS["scipy.ndimage", "map_coordinates"]


@functools.wraps(scipy.ndimage.map_coordinates)
def map_coordinates(input, coordinates, *args, **kwargs):
    """Linear in ``input`` at plain coordinates; at active ones, a recorded
    spline sum (adsim/_scipy/warping.py)."""
    if active_leaves(coordinates):
        return warping.map_coordinates(input, coordinates, *args, **kwargs)
    return _linear_map_coordinates(input, coordinates, *args, **kwargs)


HOOKS["scipy.ndimage", "map_coordinates"] = map_coordinates
