"""``scipy.ndimage`` filters, resampling and sums and means over labelled
regions on active images, called
unchanged (see hooks.py): each is linear in its input for plain settings
(weights, sigma, size, mode, cval, order), differentiated as the linear map
it is (adsim/_scipy/linear_maps.py)."""
import scipy.ndimage

from .linear_maps import linear_in

_NAMES = ("gaussian_filter", "gaussian_filter1d", "uniform_filter", "uniform_filter1d",
          "convolve", "correlate", "convolve1d", "correlate1d", "laplace", "gaussian_laplace",
          "sobel", "prewitt", "zoom", "shift", "rotate", "affine_transform", "map_coordinates",
          "spline_filter", "spline_filter1d", "sum_labels", "mean")

HOOKS = {("scipy.ndimage", name): linear_in(getattr(scipy.ndimage, name), "input",
                                            f"scipy.ndimage.{name}")
         for name in _NAMES if hasattr(scipy.ndimage, name)}
