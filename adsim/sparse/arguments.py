"""The argument a sparse derivative is taken with respect to, as tape inputs.

``adsim.record(F, *args)`` records one tape input per array: an argument
that is a container (a dict, list or tuple of arrays, nested, as the
functional API takes them) becomes one input per leaf, in
``adsim._containers.tree`` order. A sparse Jacobian or Hessian w.r.t. such an
argument has one column per element of its leaves, leaf after leaf; the
results are handed back in the argument's structure, as
:func:`adsim.jacobian` and :func:`adsim.hessian` hand back theirs: one
``csr_array`` per leaf (output size x leaf size) for a Jacobian, one per
pair of leaves (nested as ``H[i][j]``) for a Hessian.
"""
import numpy as np

from .._containers.tree import unflatten
from ..errors import InvalidArgumentValue
from .results import Blocks


class Argument:
    """Tape inputs of argument ``argnum`` of a finished recording ``tape``.

    Attributes
    ----------
    inputs : list of int
        Positions of the tape inputs holding its arrays (one per leaf).
    bounds : numpy.ndarray
        Column offsets of the leaves in the flattened argument (length
        ``len(inputs) + 1``).
    tree : TreeDef or None
        The argument's structure; None for a single array.
    """

    def __init__(self, tape, argnum):
        trees = getattr(tape, "_trees", ())         # a TreeTape's per-argument structures
        if trees:
            first = sum(t.n_leaves for t in trees[:argnum])
            tree = trees[argnum]
            self.inputs = list(range(first, first + tree.n_leaves))
            self.tree = None if tree.is_leaf else tree
        else:
            self.inputs, self.tree = [argnum], None
        if not self.inputs:
            raise InvalidArgumentValue(
                f"adsim: argument {argnum} (argnum={argnum}) holds no arrays, so there is "
                f"nothing to differentiate with respect to; pass argnum= the position of an "
                f"array or of a container of arrays")
        self._trees = trees
        sizes = [tape.slot_size_of(tape.input_slots[i]) for i in self.inputs]
        self.bounds = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])

    @property
    def single(self):
        """Whether the argument is one tape input (a single array, or a
        container of one leaf)."""
        return len(self.inputs) == 1

    def leaves(self, tape, args):
        """``args`` (as ``F`` takes them) as one array per tape input."""
        if self._trees:
            return tape._inputs(tape._args(args)[0])
        if len(args) != tape.n_inputs:
            raise InvalidArgumentValue(
                f"adsim: this sparse derivative was recorded with {tape.n_inputs} "
                f"argument{'s' if tape.n_inputs != 1 else ''} of shapes "
                f"{[tuple(s) for s in tape.input_shapes]} but {len(args)} were given; pass "
                f"the arguments as the function takes them, in the same shapes")
        return tape._inputs(args)

    def parts(self, rows):
        """``rows`` (k, n) split into one contiguous (k, leaf size) block per leaf."""
        return [np.ascontiguousarray(rows[:, lo:hi])
                for lo, hi in zip(self.bounds[:-1], self.bounds[1:])]

    def seeded(self, n_inputs, rows_parts):
        """Per tape input directions: ``rows_parts`` at the argument's inputs, None elsewhere."""
        V = [None] * n_inputs
        for i, part in zip(self.inputs, rows_parts):
            V[i] = part
        return V

    def gathered(self, per_input):
        """Per tape input (k, size) arrays of the argument's inputs, side by side: (k, n)."""
        blocks = [per_input[i] for i in self.inputs]
        return blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=1)

    # ---- results in the argument's structure --------------------------------
    def cutter(self, pattern, square=False):
        """The function taking a result on ``pattern`` (canonical CSR: one
        column per element of the argument, and for a Hessian (``square``)
        one row per element too) to the argument's structure holding its
        blocks: one per array (``M[i][j]`` per pair for a Hessian); the
        identity for a single array."""
        if self.tree is None:
            return lambda M: M
        rows = self.bounds if square else np.array([0, pattern.shape[0]])
        blocks = Blocks(pattern, rows, self.bounds)
        tree = self.tree

        def cut(M):
            per_row = [unflatten(tree, row) for row in blocks(M.data)]
            return unflatten(tree, per_row) if square else per_row[0]
        return cut

    def vector(self, g):
        """A flat vector over the argument's elements as one flat piece per leaf."""
        if self.tree is None:
            return g
        return unflatten(self.tree, [g[lo:hi] for lo, hi in zip(self.bounds[:-1], self.bounds[1:])])
