"""Stacks of matrices for np.linalg: a rule written for single matrices
applied to each matrix of operands of shape (..., m, n), the batch axes
broadcast as NumPy broadcasts them, and the results stacked."""
import numpy as np

from .core import shape_of


def square(name, a):
    """NumPy's checks of np.linalg's square-matrix functions."""
    shape = shape_of(a)
    if len(shape) < 2:
        raise np.linalg.LinAlgError(f"{len(shape)}-dimensional array given. Array must be at "
                                    f"least two-dimensional")
    if shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")


def at_least_2d(a):
    shape = shape_of(a)
    if len(shape) < 2:
        raise np.linalg.LinAlgError(f"{len(shape)}-dimensional array given. Array must be at "
                                    f"least two-dimensional")


def over_stack(rule, numpy_rule, operands, core=None):
    """``rule(*matrices)`` for each matrix of the stacks ``operands``.

    ``core`` gives each operand's number of matrix axes (default 2 each);
    the axes before them are batch axes, broadcast together. Without batch
    axes this is ``rule(*operands)``. Results (arrays, or tuples such as
    NumPy's named results) are stacked along the batch axes. An empty batch
    gives ``numpy_rule`` of zeros of the operands' shapes: an empty result,
    without derivative, as NumPy gives it.
    """
    core = core or (2,) * len(operands)
    shapes = [shape_of(x) for x in operands]
    batch = np.broadcast_shapes(*[s[:len(s) - k] for s, k in zip(shapes, core)])
    if not batch:
        return rule(*operands)
    full = [batch + s[len(s) - k:] for s, k in zip(shapes, core)]
    if 0 in batch:
        return numpy_rule(*[np.zeros(s) for s in full])
    operands = [x if shape_of(x) == s else np.broadcast_to(x, s) for x, s in zip(operands, full)]
    results = [rule(*[x[index] for x in operands]) for index in np.ndindex(batch)]
    return _stacked(results, batch)


def _stacked(results, batch):
    first = results[0]
    if isinstance(first, tuple):
        fields = [_stacked([r[i] for r in results], batch) for i in range(len(first))]
        return type(first)(*fields) if hasattr(first, "_fields") else tuple(fields)
    return np.reshape(np.stack(results), batch + shape_of(first))
