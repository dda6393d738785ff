"""The functions SciPy's LSODA calls in adsim's ``solve_ivp(method="LSODA")``
and ``odeint``: recorded tapes of the user's ``fun`` (and event functions),
not the Python functions.

A :class:`RecordedFunction` holds the variants of ``G(t, y, *params)`` (one
tape per branch path met, as event times keep theirs, ``_events.py``); a
call replays the first variant whose path holds with ``tape.forward`` on
plain arrays, and, in the process that has the code, records ``G`` again
where none does. A tape file saves the variants: a loaded op runs LSODA on
the same tapes, so it replays bitwise what the in-memory op replays, and
raises BranchChanged where none holds. The values are SciPy's LSODA on
adsim's recording of ``fun``: SciPy's own numbers to rounding, amplified by
LSODA's step control (docs/integrate.md).
"""
import threading

import numpy as np

from .._filefields import no_variant_holds, shape_field
from .._nesting.nested import FirstPoint, SavedInner
from .._record.creation import suspended
from ..errors import BranchChanged

# SciPy's LSODA runs one at a time in a process (ODEPACK is not reentrant):
# replays of copies of a tape on several threads take turns here
LSODA_TURNS = threading.RLock()

__all__ = ["LSODA_TURNS", "RecordedDerivative", "RecordedFunction", "decoded", "encoded",
           "loaded_functions", "saved_functions", "shapes_field"]


class RecordedFunction(SavedInner):
    """Variants of ``G(t, y, *params)`` (``G`` None: loaded from a file)."""

    def __init__(self, G, name, what, tapes=()):
        super().__init__(name, 0, tapes, what)
        self.G = G
        self._recorder = None if G is None else FirstPoint(G, name, what)

    def __call__(self, t, y, params):
        """``G`` at plain values, on the first variant whose path holds."""
        values = (np.array(t, dtype=float), np.asarray(y, dtype=float)) + tuple(params)
        tapes, changed = self.variants.tapes(), None
        for k, tape in enumerate(tapes):
            try:
                out = tape.forward(*values)
            except BranchChanged as err:
                changed = err
                continue
            if k:
                self.variants.use(tape)
            return out
        if self.G is None:
            raise no_variant_holds(self.what, len(tapes), "function",
                                   f"`{self.name}`") from changed
        tape = self._recorder.record(values)        # (checked where not the first)
        self.variants.use(tape)
        return tape.forward(*values)

    def recorded_once(self, t, y, params):
        """Record ``G`` at ``(t, y)`` if no variant is held (SciPy's solve
        did not call it: nothing to integrate), so that a tape file holds
        one and a loaded op can solve where the times differ."""
        if self.G is not None and not self.variants.tapes():
            with suspended():
                self(t, y, params)

    def plain(self, params):
        """The function ``f(t, y)`` SciPy calls, for these parameter values."""
        params = tuple(params)
        return lambda t, y: self(t, y, params)


class RecordedDerivative:
    """A Jacobian given as Python code (``solve_ivp``'s ``jac=`` with LSODA,
    ``odeint``'s ``Dfun``), ``D(t, y, *params)``: SciPy's LSODA calls its
    tapes (``function``, a RecordedFunction) once it has been recorded at
    the first point it is asked for, so that a tape file can hold it; one
    that cannot be recorded stays the program's code (``python(params)``,
    the function SciPy calls), and ``why_not`` says why a file cannot hold
    it. Loaded from a file (``tapes`` given), only its tapes run."""

    def __init__(self, D, name, what, python, tapes=None):
        self.function = RecordedFunction(D, name, what, tapes or ())
        self.python = python
        self.taped = tapes is not None
        self.why_not = None

    def plain(self, t, y, params):
        """The ``f(t, y)`` SciPy calls for these parameter values, recording
        the derivative at ``(t, y)`` first if it is not yet."""
        if not self.taped and self.why_not is None:
            try:
                with suspended():
                    self.function(t, y, params)
                self.taped = True
            except Exception as err:          # not recordable (non-NumPy code)
                why = str(err).split(". ")[0][:200]
                self.why_not = f"it could not be recorded: {type(err).__name__}: {why}"
        return self.function.plain(params) if self.taped else self.python(params)


def saved_functions(functions):
    """(state, tapes) of RecordedFunctions for a tape file: their names and
    how many of the tapes each owns."""
    state, tapes = [], []
    for f in functions:
        held = f.variants.tapes()
        state.append({"name": f.name, "tapes": len(held)})
        tapes += held
    return state, tapes


def loaded_functions(state, tapes, inputs, outputs, what):
    """The RecordedFunctions of a tape file (``saved_functions``'s
    ``state`` and ``tapes``), the tapes of function ``i`` checked to map
    ``inputs`` (shapes) to ``outputs[i]``; ``what(i, name)`` names the op."""
    if not isinstance(state, list) or len(state) != len(outputs):
        raise ValueError(f"the recorded functions are a list of {len(outputs)} names and tape "
                         f"counts")
    functions, at = [], 0
    for i, (entry, output) in enumerate(zip(state, outputs)):
        if not (isinstance(entry, dict) and isinstance(entry.get("name"), str)
                and type(entry.get("tapes")) is int and entry["tapes"] >= 1):
            raise ValueError(f"a recorded function is a name and a positive tape count, not "
                             f"{entry!r}")
        own = tapes[at:at + entry["tapes"]]
        at += entry["tapes"]
        for tape in own:
            if [tuple(s) for s in tape.input_shapes] != [tuple(s) for s in inputs] or \
                    tuple(tape.output_shape) != tuple(output):
                raise ValueError(f"a tape of `{entry['name']}` maps {tape.input_shapes} to "
                                 f"{tape.output_shape}; the solve calls it on {inputs}")
        functions.append(RecordedFunction(None, entry["name"], what(i, entry["name"]), own))
    if at != len(tapes):
        raise ValueError(f"the recorded functions own {at} tapes, the file gives {len(tapes)}")
    return functions


def shapes_field(shapes):
    """A list of shapes from a tape file."""
    if not isinstance(shapes, list):
        raise ValueError("the parameters' shapes are a list")
    return [shape_field(s, "a parameter shape") for s in shapes]


def encoded(value):
    """A solver option (None, a flag, an integer, a number or an array of numbers)
    for a tape file, floats bitwise (as hexadecimal text: JSON has no inf)."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return None if value is None else bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    arr = np.asarray(value, dtype=float)
    return {"shape": list(arr.shape), "hex": [float(x).hex() for x in arr.ravel()]}


def decoded(value):
    """An option ``encoded`` wrote."""
    if value is None or type(value) in (bool, int):
        return value
    if not (isinstance(value, dict) and set(value) == {"shape", "hex"}
            and isinstance(value["hex"], list) and all(isinstance(h, str) for h in value["hex"])):
        raise ValueError(f"a solver option is None, an integer or numbers, not {value!r}")
    shape = shape_field(value["shape"], "an option's shape")
    arr = np.array([float.fromhex(h) for h in value["hex"]], dtype=float)
    if arr.size != int(np.prod(shape)):
        raise ValueError(f"an option of shape {shape} holds {arr.size} numbers")
    arr = arr.reshape(shape)
    return float(arr) if arr.ndim == 0 else arr
