"""The protocol of CALLBACK ops: an op whose derivative rules are Python.

A CALLBACK op ``[result, cb, nargs, a_1 .. a_nargs]`` stands for one call of
a function whose rules a Python object gives: a user primitive
(adsim/primitives.py) or a checkpointed loop (adsim/checkpoint/op.py). The
compiled sweeps (adsim/_ops/callback.pxi) call the object's rules once per
op and sweep, never per element. This module is the one definition of those
rules; both kinds of op subclass :class:`CallbackRules`.

Arrays in: every argument and the result are flat float64 copies (an
argument's shape is the op's own business); ``tangents[i]`` is a (p, size)
copy, or None for a constant argument. Arrays out: checked and copied into
the tape, so a rule may return arrays it keeps or updates later.

The ``context`` (a ``SweepContext``) describes the replay that calls the
rule: ``context.sweep`` is "record" (the value computed while recording),
"values", "tangent", "adjoint" or "second_order", and
``context.directions`` its number of tangent or adjoint directions. One
replay calls the value rule first, then (in the sweeps that have them) the
tangent rule, then the adjoint or second-order rule, so a rule may
``context.keep(self, x)`` what a later rule of the same call can
``context.take(self)`` (a loop's forward pass keeping the snapshots its
reverse sweep starts from). What is kept is dropped when the call ends;
each replay has its own context, so threads never share it.
"""
from .errors import UnsupportedOperation

__all__ = ["CallbackRules"]


class CallbackRules:
    """Base class of the rules of a CALLBACK op (see the module docstring).

    Subclasses implement ``value`` and the rules their op supports; a rule
    left out raises ``UnsupportedOperation`` naming the sweep that needs it.
    """

    name = "callback"
    compiled = None       # or a CompiledRules (adsim/_callback.pxd): value and adjoint in C
    # True: the op computes its result from its arguments and does nothing
    # else (no state kept between calls, no other output), so a tape whose
    # output does not need the result drops the op (adsim/_optimise.pxi)
    pure = False

    def value(self, args, context):
        """The result (flat) at the arguments ``args``."""
        raise NotImplementedError

    def tangent(self, args, result, tangents, context):
        """The result's tangents (p, size) for argument tangents ``tangents``."""
        raise self._missing("tangent", "forward mode (jvp, Jacobian columns)")

    def adjoint(self, args, result, adjoint, context):
        """The arguments' adjoints for the result's adjoints ``adjoint``
        (q, size): one (q, size of argument) array or None per argument."""
        raise self._missing("adjoint", "reverse mode (grad, vjp)")

    def soadjoint(self, args, result, tangents, adjoint, adjoint_tangents, context):
        """Second-order adjoint: for the result's adjoint ``adjoint`` (size)
        and its tangents ``adjoint_tangents`` (p, size), the arguments'
        adjoints (size or None each) and adjoint tangents ((p, size) or None
        each), as a pair of per-argument lists."""
        raise self._missing("second-order", "Hessian-vector products")

    def pattern(self, arg_patterns):
        """Sparsity (adsim/sparse/pattern.py): given the index domains of the
        arguments (scipy sparse, one row per element), those of the result,
        or None for "every result element depends on every argument
        element"."""
        return None

    def _missing(self, rule, needed_by):
        return UnsupportedOperation(f"adsim: `{self.name}` has no {rule} rule, which "
                                    f"{needed_by} needs")
