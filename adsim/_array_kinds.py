"""ndarray subclasses whose arithmetic is not NumPy's elementwise arithmetic
of plain arrays: ``np.matrix`` (``*`` and ``**`` are matrix products and
powers) and ``np.ma.MaskedArray`` (operations and reductions skip masked
entries). adsim records plain float64 arrays, so taking such an array as an
input or as a constant would silently compute another program: it is
refused instead."""
import numpy as np

from .errors import InvalidInput

_KINDS = (
    (np.matrix, "an np.matrix, whose * and ** are matrix products",
     "a plain array, np.asarray(m), and write matrix products with @"),
    (np.ma.MaskedArray, "a masked array, whose operations and reductions skip its masked "
                        "entries", "a plain array: m.filled(value), m.compressed(), or the "
                                   "data and np.where(mask, ...) to leave entries out"),
)


def refuse(x, what, error=InvalidInput):
    """Raise ``error`` naming ``what`` when ``x`` is one of those subclasses."""
    if type(x) is np.ndarray or not isinstance(x, np.ndarray):
        return
    for cls, kind, fix in _KINDS:
        if isinstance(x, cls):
            raise error(f"adsim: {what} is {kind}; adsim records plain arrays, so the result "
                        f"would not be NumPy's. Pass {fix}")
