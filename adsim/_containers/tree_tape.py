"""Tapes recorded with containers of arrays as arguments.

``adsim.record(f, params, x)`` with ``params`` a dict, list or tuple of
arrays (nested, as for the functional API) records one tape input per leaf.
A :class:`TreeTape` takes its arguments, directions and weights in those
structures and returns gradients, tangents and Jacobians in them.
"""
from .tree import check_same, flatten, unflatten
from .._validate import real_array
from ..tape import Tape


class TreeTape(Tape):
    """A tape whose arguments are containers (see the module docstring).
    Its output is one array."""

    _trees = ()             # per recorded argument, set by adsim.record

    def _set_trees(self, trees):
        self._trees = tuple(trees)

    # ---- structure ---------------------------------------------------------
    def _args(self, xs, what="argument"):
        """Leaves of the arguments ``xs`` (one per recorded argument)."""
        if len(xs) != len(self._trees):
            raise ValueError(f"adsim: this tape was recorded with {len(self._trees)} arguments; "
                             f"got {len(xs)}")
        leaves = []
        for i, (tree, x) in enumerate(zip(self._trees, xs)):
            got, t = flatten(x)
            check_same(t, tree, f"{what} {i}", f"recorded argument {i}")
            leaves += [real_array(leaf, f"{what} {i}{p}") for p, leaf in zip(tree.paths(), got)]
        return leaves

    def _pair(self, x, v, what):
        """Leaves of a point ``x`` and of ``v`` in its structure (one argument:
        the container itself; several: a tuple of them)."""
        several = len(self._trees) > 1
        xs, vs = (tuple(x), tuple(v)) if several else ((x,), (v,))
        return self._leaf_call(self._args(xs)), self._leaf_call(self._args(vs, what))

    def _leaf_call(self, leaves):
        return leaves[0] if len(leaves) == 1 else tuple(leaves)

    def _nest(self, per_leaf):
        """Per-leaf results (one or a tuple) in the arguments' structure."""
        per_leaf = list(per_leaf) if isinstance(per_leaf, tuple) else [per_leaf]
        out, lo = [], 0
        for tree in self._trees:
            out.append(unflatten(tree, per_leaf[lo:lo + tree.n_leaves]))
            lo += tree.n_leaves
        return out[0] if len(out) == 1 else tuple(out)

    # ---- replays -----------------------------------------------------------
    def forward(self, *xs):
        return super().forward(*self._args(xs))

    def value_and_gradient(self, *xs):
        y, g = super().value_and_gradient(*self._args(xs))
        return y, self._nest(g)

    def gradient(self, *xs):
        return self.value_and_gradient(*xs)[1]

    def jacobian(self, *xs, mode=None):
        return self._nest(super().jacobian(*self._args(xs), mode=mode))

    def jvp(self, x, v):
        return super().jvp(*self._pair(x, v, "tangent"))

    def vjp(self, x, w):
        several = len(self._trees) > 1
        y, adj = super().vjp(self._leaf_call(self._args(tuple(x) if several else (x,))), w)
        return y, self._nest(adj)

    def hvp(self, x, v, w=None):
        return self.gradient_and_hvp(x, v, w)[1]

    def gradient_and_hvp(self, x, v, w=None):
        g, hv = super().gradient_and_hvp(*self._pair(x, v, "direction"), w)
        return self._nest(g), self._nest(hv)
