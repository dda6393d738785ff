"""adsim: reverse-mode automatic differentiation of plain NumPy code.

A function runs once on active arrays that record a flat tape; the tape is
replayed in C for values, tangents, adjoints and Hessian-vector products.
"""
from . import _numpy_api  # noqa: F401  (first: the compiled core imports it at its end, after _np)
from ._active import Active
from .api import (grad, grad_and_hvp, hessian, hessp, hvp, hvp_operator, jacobian, jvp,
                  laplacian, record, stop_gradient, value, value_and_grad, vjp)
from .checkpoint import Online, Revolve, TwoLevel, checkpoint_loop, checkpoint_while
from . import integrate
from ._record.interpose import interposition, set_interposition
from .errors import (ActiveValueLeak, AdsimError, BranchChanged, IndexOutOfBounds,
                     InvalidArgnums, InvalidArgument, InvalidArgumentValue, InvalidInput,
                     MemoryBudgetError, MixedRecordings, NotCallable, NotPicklable,
                     PrimitiveRuleError, SnapshotDirError, TapeCopyError, TapeFileError,
                     TapeOverflow, UndefinedDerivative, UnsupportedAttribute,
                     UnsupportedOperation)
from . import parallel
from .primitives import primitive
from .sparse.api import (hessian_sparsity, jacobian_sparsity, sparse_hessian, sparse_hessian_plan,
                         sparse_jacobian, sparse_jacobian_plan)
from .tape import Tape, set_fusion
from .tapefile import load as load_tape

from ._version import __version__

__all__ = [
    "Active", "ActiveValueLeak", "AdsimError", "BranchChanged", "IndexOutOfBounds",
    "InvalidArgnums", "InvalidArgument", "InvalidArgumentValue", "InvalidInput",
    "MemoryBudgetError", "MixedRecordings", "NotCallable", "NotPicklable", "PrimitiveRuleError",
    "SnapshotDirError",
    "TapeCopyError", "TapeFileError", "TapeOverflow", "UndefinedDerivative", "UnsupportedAttribute",
    "UnsupportedOperation", "Online", "Revolve", "TwoLevel", "Tape", "checkpoint_loop",
    "checkpoint_while", "grad", "grad_and_hvp", "hessian", "hessp", "hvp", "hvp_operator",
    "integrate", "interposition", "jacobian", "jvp", "laplacian", "load_tape", "parallel",
    "primitive", "record", "scipy", "set_fusion", "set_interposition",
    "stop_gradient", "value", "value_and_grad", "vjp", "jacobian_sparsity", "hessian_sparsity",
    "sparse_jacobian", "sparse_jacobian_plan", "sparse_hessian", "sparse_hessian_plan",
]


def __getattr__(name):
    if name == "scipy":         # adsim.scipy imports SciPy's modules: only when asked for
        import importlib
        return importlib.import_module("adsim.scipy")
    raise AttributeError(f"module 'adsim' has no attribute {name!r}")
