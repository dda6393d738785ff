"""The loop state as one flat vector: an array, or a tuple/list of arrays."""
from math import prod

import numpy as np

from .. import _numpy_api as api
from .._active import Active
from ..errors import InvalidArgumentValue

__all__ = ["StateLayout"]


class StateLayout:
    """Flattens a state (one array, or a tuple/list of arrays) into one vector.

    A one-dimensional single array is its own flat form: no reshape or copy
    is recorded for it, in the enclosing tape or in the step tape.
    """

    def __init__(self, state):
        self.is_sequence = isinstance(state, (tuple, list))
        self.kind = type(state) if self.is_sequence else None
        leaves = list(state) if self.is_sequence else [state]
        self.shapes = [tuple(api.shape_of(leaf)) for leaf in leaves]
        self.sizes = [prod(s) for s in self.shapes]
        self.size = sum(self.sizes)

    def leaves(self, state):
        leaves = list(state) if self.is_sequence else [state]
        shapes = [tuple(api.shape_of(leaf)) for leaf in leaves]
        if shapes != self.shapes:
            raise InvalidArgumentValue(f"adsim: the loop step returned a state with shapes "
                                       f"{shapes}; it must keep the shapes of the initial state "
                                       f"{self.shapes}")
        return leaves

    def flatten(self, state):
        flat = [_flat(x) for x in self.leaves(state)]
        if len(flat) == 1:
            return flat[0]
        return np.concatenate(flat)

    def unflatten(self, z):
        if not self.is_sequence:
            return _shaped(z, self.shapes[0])
        pieces, offset = [], 0
        for shape, size in zip(self.shapes, self.sizes):
            pieces.append(_shaped(z[offset:offset + size], shape))
            offset += size
        return self.kind(pieces)


def _flat(x):
    if isinstance(x, Active):
        return x if len(x.shape) == 1 else api.reshape(x, (-1,))
    return np.asarray(x, dtype=float).reshape(-1)


def _shaped(piece, shape):
    return piece if tuple(piece.shape) == tuple(shape) else piece.reshape(shape)
