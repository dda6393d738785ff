"""SuperLU factorisations made by adsim itself (``splu``, ``spilu``): while
recording, the hooked ``splu``/``spilu`` (adsim/_scipy/sparse_solve.py)
return wrapped factorisations to the user's code, but adsim's own calls must
get SciPy's object; :func:`factorise` marks them."""
import contextlib
import threading

import scipy.sparse.linalg as spla

from ..errors import UndefinedDerivative

FACTORISATIONS = {"splu": spla.splu, "spilu": spla.spilu}
_own = threading.local()        # .calls: adsim's own factorisations running in this thread


@contextlib.contextmanager
def _scipy_itself():
    _own.calls = getattr(_own, "calls", 0) + 1
    try:
        yield
    finally:
        _own.calls -= 1


def factorise(method, matrix, options):
    """SciPy's ``splu``/``spilu`` of ``matrix`` with ``options``, hooked or not;
    a singular matrix raises UndefinedDerivative (SciPy's spsolve would
    return NaN with a warning)."""
    with _scipy_itself():
        try:
            return FACTORISATIONS[method](matrix, **options)
        except RuntimeError as err:
            if "singular" not in str(err):
                raise
            raise UndefinedDerivative(
                f"adsim: scipy.sparse.linalg.{method}: the {matrix.shape[0]} x "
                f"{matrix.shape[1]} matrix is singular ({err}); a solve with it has no "
                f"derivative. Check the matrix (boundary conditions, a zero row)") from err


def adsim_factorising():
    """Whether this thread is inside :func:`factorise`."""
    return bool(getattr(_own, "calls", 0))
