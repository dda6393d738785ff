"""The recorded loop body: one step as a sub-tape, with its branch variants.

A step is recorded once and replayed in C for every step. When a replay
leaves the recorded path (an adaptive step accepted instead of rejected, a
limiter switching side) the step is recorded again at that state; all
variants are kept, and each replay first tries the variant used last.
"""
import numpy as np

from .._recording import record
from ..errors import BranchChanged

_MAX_VARIANTS = 16


class StepTapes:
    """Sub-tapes of one loop body ``step_flat(z, *inputs) -> z_next``."""

    def __init__(self, step_flat, z, inputs):
        self.step_flat = step_flat
        self.variants = []
        self.recordings = 0
        self._record(z, inputs)

    def _record(self, z, inputs):
        tape = record(self.step_flat, z, *inputs)
        if tuple(tape.output_shape) != (z.size,):
            raise ValueError(f"adsim: the loop step returned a state of {tuple(tape.output_shape)} "
                             f"values; it must return a state shaped like its input")
        self.recordings += 1
        self.variants.insert(0, tape)
        del self.variants[_MAX_VARIANTS:]
        return tape

    @property
    def tape(self):
        """The variant used last."""
        return self.variants[0]

    def call(self, method, z, inputs):
        """``method(tape, [z] + inputs)`` on a variant whose branches hold at
        this state, recording a new one if none does."""
        for i, tape in enumerate(self.variants):
            try:
                out = method(tape, _shaped(tape, z, inputs))
            except BranchChanged:
                continue
            if i:
                self.variants.insert(0, self.variants.pop(i))
            return out
        tape = self._record(z, [x.reshape(s) for x, s in zip(inputs, self.tape.input_shapes[1:])])
        return method(tape, _shaped(tape, z, inputs))

    def iterate(self, z, inputs, n_steps):
        """State after ``n_steps`` plain steps, replayed in C."""
        done = 0
        while done < n_steps:
            tape = self.tape
            k, z = tape._iterate(_shaped(tape, z, inputs), n_steps - done)
            done += k
            if done < n_steps:         # the branch changed at this state
                z = self.call(lambda t, xs: t._forward(xs), z, inputs)
                done += 1
        return z

    def nbytes(self, adjoint_directions=1, tangent_directions=0):
        """Estimated bytes of the step tape while it is reversed: its buffers,
        the value arena, the adjoint work arrays and the value stack (with
        ``tangent_directions`` > 0, the second-order sweep's tangents and
        adjoint tangents as well)."""
        b = self.tape.stats()["bytes"]
        static = sum(v for k, v in b.items() if k not in ("values", "value_stack_peak"))
        values = b["values"]
        stack = max(b["value_stack_peak"], values)
        p = tangent_directions
        return static + values * (1 + adjoint_directions + 2 * p) + stack * (1 + p)


def _shaped(tape, z, inputs):
    """Flat loop state and inputs in the shapes the step tape was recorded with."""
    xs = [z] + list(inputs)
    return tape._inputs([np.reshape(x, s) for x, s in zip(xs, tape.input_shapes)])
