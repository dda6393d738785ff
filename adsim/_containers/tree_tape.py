"""Tapes recorded with containers of arrays as arguments.

``adsim.record(f, params, x)`` with ``params`` a dict, list or tuple of
arrays (nested, as for the functional API) records one tape input per leaf.
A :class:`TreeTape` takes its arguments, directions and weights in those
structures and returns gradients, tangents and Jacobians in them.
"""
from .saved_trees import structures_data
from .tree import check_same, flatten, unflatten
from .._validate import real_array
from ..errors import InvalidArgumentValue, ReadOnlyTapeAttribute
from ..tape import Tape, set_internal


class TreeTape(Tape):
    """A tape whose arguments are containers (see the module docstring).
    Its output is one array."""

    _trees = ()             # per recorded argument, set by adsim.record

    def _set_trees(self, trees):
        if "_trees" in self.__dict__:        # set once, by adsim.record or the reader
            raise ReadOnlyTapeAttribute(
                "adsim: a tape's argument structures are fixed when it is recorded or "
                "loaded; record a new tape (adsim.record(f, params)) for other containers")
        set_internal(self, "_trees", tuple(trees))

    def _n_arguments(self):
        return len(self._trees)

    # ---- structure ---------------------------------------------------------
    def _args(self, xs, what="argument"):
        """(leaves, structures) of the arguments ``xs`` (one per recorded
        argument). Results are nested in the structures given, which are
        the recorded ones (or, for a tape loaded from a file, conform to
        them: a namedtuple of the saved name and fields, of the caller's
        class)."""
        if len(xs) != len(self._trees):
            n = len(self._trees)
            raise InvalidArgumentValue(
                f"adsim: this tape was recorded with {n} argument{'s' if n != 1 else ''} "
                f"({', '.join(repr(t) for t in self._trees)}; * marks an array) but {len(xs)} "
                f"were given; pass one value per recorded argument, each in its recorded "
                f"structure: tape.gradient(params) for a tape recorded as "
                f"adsim.record(f, params)")
        leaves, trees = [], []
        for i, (tree, x) in enumerate(zip(self._trees, xs)):
            got, t = flatten(x)
            check_same(t, tree, f"{what} {i}", f"recorded argument {i}")
            leaves += [real_array(leaf, f"{what} {i}{p}") for p, leaf in zip(tree.paths(), got)]
            trees.append(t)
        return leaves, trees

    def _pair(self, x, v, what):
        """Leaves of a point ``x`` and of ``v`` in its structure (one argument:
        the container itself; several: a tuple of them), and the structures
        of ``x``."""
        several = len(self._trees) > 1
        xs, vs = (tuple(x), tuple(v)) if several else ((x,), (v,))
        leaves, trees = self._args(xs)
        return self._leaf_call(leaves), self._leaf_call(self._args(vs, what)[0]), trees

    def _leaf_call(self, leaves):
        return leaves[0] if len(leaves) == 1 else tuple(leaves)

    @staticmethod
    def _nest(per_leaf, trees):
        """Per-leaf results (one or a tuple) in the structures ``trees``."""
        per_leaf = list(per_leaf) if isinstance(per_leaf, tuple) else [per_leaf]
        out, lo = [], 0
        for tree in trees:
            out.append(unflatten(tree, per_leaf[lo:lo + tree.n_leaves]))
            lo += tree.n_leaves
        return out[0] if len(out) == 1 else tuple(out)

    def _argument_structures(self):
        """The recorded structures as a tape file holds them (docs/tape-format.md)."""
        return structures_data(self._trees)

    # ---- replays -----------------------------------------------------------
    def forward(self, *xs):
        return super().forward(*self._args(xs)[0])

    def value_and_gradient(self, *xs):
        leaves, trees = self._args(xs)
        y, g = super().value_and_gradient(*leaves)
        return y, self._nest(g, trees)

    def gradient(self, *xs):
        return self.value_and_gradient(*xs)[1]

    def jacobian(self, *xs, mode=None):
        leaves, trees = self._args(xs)
        return self._nest(super().jacobian(*leaves, mode=mode), trees)

    def jvp(self, x, v):
        xs, vs, _ = self._pair(x, v, "tangent")
        return super().jvp(xs, vs)

    def vjp(self, x, w):
        several = len(self._trees) > 1
        leaves, trees = self._args(tuple(x) if several else (x,))
        y, adj = super().vjp(self._leaf_call(leaves), w)
        return y, self._nest(adj, trees)

    def hvp(self, x, v, w=None):
        return self.gradient_and_hvp(x, v, w)[1]

    def gradient_and_hvp(self, x, v, w=None):
        xs, vs, trees = self._pair(x, v, "direction")
        g, hv = super().gradient_and_hvp(xs, vs, w)
        return self._nest(g, trees), self._nest(hv, trees)
