"""``solve_bvp``'s functions as tapes, so that a tape file can hold a solve
(kind ``adsim.bvp_solution``; the solve itself: adsim/_scipy/bvp.py; the
reader, which runs SciPy again: adsim/_scipy/bvp_file.py).

SciPy calls ``fun(x, y[, p])`` on every mesh it tries (``m`` nodes, and the
``m - 1`` midpoints of its intervals) and ``bc(ya, yb[, p])``: a tape has
fixed input shapes, so each function is kept as variants per shape of its
arguments (:class:`TapedFunction`). After the program's own first solve,
each function is recorded at the arguments of the first call of each
shape SciPy made, and the collocation equations at the solution; from then
on SciPy runs on those tapes, here as in a process that loaded them, so
both replay bitwise alike. Here a shape or branch no tape holds is
recorded again; a loaded solve raises BranchChanged there (it has no code).
"""
import threading

import numpy as np

from .._filefields import json_data
from .._nesting.nested import RecordingInner
from .._record.creation import suspended
from ..errors import BranchChanged
from ..primitives import Application
from .implicit_file import described
from .solver_calls import _as_array

__all__ = ["BvpApplication", "SavedBvp", "TapedFunction"]

WHAT = "scipy.integrate.solve_bvp"


def _plain(a):
    return np.ascontiguousarray(a, dtype=float)


class TapedFunction:
    """``fun``, ``bc`` or their Jacobians as their tapes: per shape of
    SciPy's arguments, an inner function (RecordingInner of
    ``function(*head, *params)`` here, or, loaded, a SavedInner). A
    Jacobian returns several arrays (``pieces(head shapes)``: their shapes,
    a tuple of them or, for ``fun_jac`` without unknown parameters, one):
    its tapes output them raveled one after the other."""

    def __init__(self, name, function, inners=None, pieces=None):
        self.name, self.function, self.pieces = name, function, pieces
        self._inners = dict(inners or {})
        self._lock = threading.Lock()

    def _inner(self, shapes):
        with self._lock:
            inner = self._inners.get(shapes)
            if inner is None:
                if self.function is None:
                    raise BranchChanged(
                        f"adsim: {WHAT} loaded from a tape file called `{self.name}` on arguments "
                        f"of shapes {list(shapes)}, for which the file holds no tape (SciPy "
                        f"tried a mesh of another size than at recording), and it cannot record "
                        f"`{self.name}` again: tape files hold no code. Record the tape again at "
                        f"this point, in the process that has the function")
                inner = RecordingInner(self.function, self.name, f"the {self.name} of {WHAT}")
                self._inners[shapes] = inner
            return inner

    def run(self, head, params):
        """The function's value at SciPy's arguments ``head`` and the plain
        parameters ``params``, from the first of its tapes whose path holds."""
        head = [_plain(a) for a in head]
        shapes = tuple(a.shape for a in head)
        out = self._inner(shapes).run(head + list(params), lambda tape, v: tape.forward(*v))
        return out if self.pieces is None else split(out, *self.pieces(shapes))

    def at(self, params):
        """The function as SciPy calls it, at the parameters ``params``."""
        def function(*head):
            return self.run(head, params)
        function.__name__ = self.name
        return function

    def tapes(self):
        """Every tape, shape by shape (in the order the shapes were met)."""
        with self._lock:
            inners = list(self._inners.values())
        return [t for inner in inners for t in inner.variants.tapes()]


def fun_jac_pieces(k):
    """The pieces of ``fun_jac(x, y[, p])`` (``df_dy`` (n, n, m), then
    ``df_dp`` (n, k, m) with ``k`` unknown parameters: a tuple of the two)."""
    def pieces(shapes):
        n, m = shapes[1]
        return [(n, n, m)] + ([(n, k, m)] if k else []), k > 0
    return pieces


def bc_jac_pieces(k):
    """The pieces of ``bc_jac(ya, yb[, p])``: ``dbc_dya``, ``dbc_dyb`` (n +
    k, n) and with ``k`` unknown parameters ``dbc_dp`` (n + k, k)."""
    def pieces(shapes):
        n = shapes[0][0]
        return [(n + k, n), (n + k, n)] + ([(n + k, k)] if k else []), True
    return pieces


PIECES = {"fun_jac": fun_jac_pieces, "bc_jac": bc_jac_pieces}
"""name -> k -> pieces(head shapes): the Jacobians, whose values are several arrays."""


def joined(out, shapes, several):
    """A Jacobian's value ``out`` (``several`` arrays of ``shapes``, or one)
    as the one flat array its tapes output."""
    parts = [_as_array(o) for o in out] if several else [_as_array(out)]
    return np.concatenate([np.reshape(o, (-1,)) for o in parts])


def split(flat, shapes, several):
    """The arrays of ``shapes`` that :func:`joined` put in ``flat``."""
    out, at = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        out.append(np.reshape(flat[at:at + size], shape))
        at += size
    return tuple(out) if several else out[0]


class SavedBvp:
    """A solve as a tape file keeps it: its functions' tapes (``taped``:
    name -> TapedFunction, for ``fun``, ``bc`` and the Jacobians the call
    gives), ``fields`` (the call's plain data, as :class:`BvpApplication`
    writes it) and ``why_not`` (None, or why a file cannot hold it).
    ``recorded``: the tapes hold at the first solution, and SciPy runs on
    them from then on."""

    application = None          # BvpApplication, set below

    def __init__(self, taped, fields, why_not=None):
        self.taped, self.fields, self.why_not = dict(taped), fields, why_not
        self.recorded = False
        self._samples = {name: {} for name in self.taped}

    def watched(self, functions):
        """``functions`` (SciPy's ``fun`` and ``bc`` for the first solve),
        noting the arguments of the first call of each shape."""
        def watch(name, f):
            samples = self._samples[name]

            def noted(*head):
                key = tuple(np.shape(a) for a in head)
                if key not in samples:
                    samples[key] = [np.array(a) for a in head]      # copies, as given
                return f(*head)
            noted.__name__ = getattr(f, "__name__", name)
            return noted
        return {name: watch(name, f) if name in self._samples else f
                for name, f in functions.items()}

    def record(self, params, system, z0, all_params):
        """Record ``fun`` and ``bc`` at the noted calls of the first solve
        (at the plain parameters ``params``) and the collocation equations
        ``system`` at its solution; one that cannot be recorded leaves the
        solve running on the program's functions, not saved."""
        if self.why_not is not None:
            return
        which = "fun"
        try:
            with suspended():
                for which, taped in self.taped.items():
                    for head in self._samples[which].values():
                        taped.run(head, params)
                which = "the collocation equations"
                system.tape.forward([z0] + list(all_params))
        except Exception as err:              # not recordable (non-NumPy code)
            why = str(err).split(". ")[0][:200]
            self.why_not = f"{which} could not be recorded: {type(err).__name__}: {why}"
            return
        finally:
            self._samples = None
        self.recorded = True

    def functions_at(self, params):
        return {name: taped.at(params) for name, taped in self.taped.items()}


class BvpApplication(Application):
    """One recorded solution of ``solve_bvp``: the call's data (the
    program's mesh and guess, options, the recorded mesh), the tapes of the
    collocation equations, of ``fun`` and of ``bc``, and the solution's
    starts. A loaded one runs SciPy on those tapes."""

    file_kind = "adsim.bvp_solution"
    # read above the solve it runs again (adsim/_scipy/bvp_file.py)
    from_file_state = None

    def file_state(self):
        solution = self.prim.solution
        if solution.not_saved is not None:
            return super().file_state()             # its TapeCopyError
        saved = solution.saved
        tapes = [("collocation", solution.system.tape.inner.variants.tapes())] + \
            [(name, taped.tapes()) for name, taped in saved.taped.items()]
        state = described(self, lambda: {
            **{k: json_data(v, f"the {k} of {WHAT}") for k, v in saved.fields.items()},
            "variants": [[name, len(t)] for name, t in tapes]}, solution)
        return state, [t for _, group in tapes for t in group]


SavedBvp.application = BvpApplication
