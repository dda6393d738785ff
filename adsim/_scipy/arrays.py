"""Arguments of SciPy functions as adsim sees them."""
import numpy as np

from .._np import joins
from .._np.integers import current
from .._active import Active
from ..errors import UnsupportedOperation


def array(x, name):
    """An argument as an active array or a float64 array (lists holding
    active values are stacked, as np.asarray would)."""
    if isinstance(x, Active):
        return x
    if joins.holds_active(x):
        return joins.from_pieces(x)
    x = np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise UnsupportedOperation(f"adsim: `{name}` of a {x.dtype} array is not supported with "
                                   f"active arguments; adsim differentiates real float64 code")
    return x.astype(float)


def now(x):
    """The value ``x`` holds now: a plain array (an active one's current value)."""
    return current(x) if isinstance(x, Active) else np.asarray(x)
