"""``scipy.integrate.quad``, ``quad_vec`` and ``fixed_quad`` with active
integrand parameters or limits.

An adaptive rule (``quad``, ``quad_vec``) chooses its nodes from the values
it meets, so it is not recorded step by step: the integral is one op (a
primitive) whose value is SciPy's own call on plain values, run again at
every replay, and whose derivatives follow the Leibniz rule

    d/dp  int_a^b f(x, p) dx = int_a^b df/dp(x, p) dx + f(b, p) b' - f(a, p) a',

the integral of the integrand's derivative computed by the same SciPy
routine with the same options (tolerances, ``limit``, ``points``; the
vector of derivatives in all parameters that the reverse rule needs is
integrated by ``quad_vec``, the same adaptive Gauss-Kronrod scheme on all
elements at once, with ``quad``'s options). The integrand's derivative at
each node is a replay of its tape (:class:`_Taped`). The reverse rule is
itself such an integral (of the integrand's vjp, a function of the
parameters and the adjoint, :class:`_VjpIntegrand`), so second-order
sweeps record it and differentiate it the same way, by second-order
sweeps of the same tape.

The parameters are the active values in ``args`` and the active values
the integrand reads from outside its arguments (closure, object, global:
adsim/_nesting/outer_values.py), lifted to inputs of the op.

``fixed_quad`` is a fixed Gauss-Legendre sum: it is recorded as it is
(the integrand evaluated once on the active nodes), so its derivatives are
those of the sum SciPy computes.
"""
import functools

import numpy as np
import scipy.integrate as si
from scipy.special import roots_legendre

from .._containers.container_args import bind_objects
from .._containers.tree import placed
from .._active import Active
from .._nesting.nested import closure_cells, lift_closures
from .._filefields import expect_keys, shape_field
from .._nesting.nested import RecordingInner, SavedInner
from .._np.core import active_leaves
from .._record import guards
from .._record.creation import suspended
from ..errors import TapeCopyError, UnsupportedOperation
from ..primitives import Application, Primitive
from .arrays import array, now
from .jumps import moving_jump, moving_kink


def _refuse(name, why, what_to_do):
    raise UnsupportedOperation(f"adsim: scipy.integrate.{name} with active parameters: {why}; "
                               f"{what_to_do}")


def _parameters(name, func, args):
    """(integrand h(x, *params), params): the active entries of ``args`` and
    the active values ``func`` reads from outside its arguments become the
    trailing ``params``; everything else stays as it is in ``h``."""
    args = args if isinstance(args, tuple) else (args,)
    for a in args:
        if not isinstance(a, Active) and active_leaves(a):
            _refuse(name, f"an argument in args= is a {type(a).__name__} holding active values",
                    "pass each active array as its own entry of args")
    # (args=(p,), p an object holding active values: bound into the integrand's
    # closure, where the lifting below finds its attributes)
    (func,), args = bind_objects([func], args)
    positions = [i for i, a in enumerate(args) if isinstance(a, Active)]
    (lifted,), extended = lift_closures([func], args)
    outer = list(extended[len(args):])
    if closure_cells(func, _container_of_active):
        _refuse(name, "the integrand reads a dict, list or tuple holding active values from "
                      "outside its arguments",
                "pass the active arrays in args= (or as separate closure variables)")

    def h(x, *params):
        return lifted(x, *placed(args, positions, params), *params[len(positions):])
    h.__name__ = getattr(func, "__name__", "integrand")
    return h, [args[i] for i in positions] + outer


def _container_of_active(v):
    return isinstance(v, (dict, list, tuple)) and bool(active_leaves(v))


# ---------------------------------------------------------------- the integral op

class _Integral:
    """int_a^b h(x, *params) dx by ``routine`` ("quad": a scalar integrand,
    and quad_vec with quad's options for the vector of derivatives in the
    parameters that the reverse rule integrates; "quad_vec") with
    ``options``. ``taped``: the integrand as its tapes (:class:`_Taped`), or
    the integrand of the reverse rule (:class:`_VjpIntegrand`)."""

    def __init__(self, taped, routine, options, shape):
        self.taped, self.routine, self.options, self.shape = taped, routine, options, shape
        self.error = None           # SciPy's error estimate of the last value

    def integrate(self, g, a, b):
        """(int_a^b g(x) dx, SciPy's error estimate) of a plain integrand by
        the routine and options."""
        a, b = float(a), float(b)
        if self.routine == "quad_vec":
            value, error = si.quad_vec(g, a, b, **self.options)[:2]
            return np.asarray(value, dtype=float).reshape(self.shape), error
        size = int(np.prod(self.shape))
        if size == 1:
            value, error = si.quad(lambda x: float(np.reshape(g(x), ())), a, b,
                                   **self.options)[:2]
            return np.reshape(float(value), self.shape), error
        # a vector (the parameters' derivatives): the same Gauss-Kronrod
        # scheme on all elements at once, to the same tolerances
        value, error = si.quad_vec(g, a, b, norm="max", **self.options)[:2]
        return np.asarray(value, dtype=float).reshape(self.shape), error

    def value(self, a, b, *params):
        value, self.error = self.integrate(lambda x: _plain(self.taped(x, *params), self.shape),
                                           a, b)
        return value

    def jvp(self, args, out, tangents):
        a, b, *params = args
        ta, tb, *tp = tangents
        total = np.zeros(self.shape)
        if any(t is not None for t in tp):
            directions = [np.zeros(()) if t is None else t for t in tp]
            total = total + self.integrate(
                lambda x: self.taped.jvp(x, params, directions), a, b)[0]
        return total + self._moved(b, tb, params) - self._moved(a, ta, params)

    def _moved(self, limit, tangent, params):
        """h(limit, params) times the limit's tangent (0 for a constant or
        infinite limit, where the integrand is not evaluated)."""
        if tangent is None or not np.any(tangent) or np.isinf(now(limit)):
            return np.zeros(self.shape)
        return _plain(self.taped(limit, *params), self.shape) * tangent

    def vjp(self, args, out, w):
        a, b, *params = args
        adjoints = [None, None]
        if params:
            shapes = [np.shape(p) for p in params]
            weighted, _ = _integral(_VjpIntegrand(self.taped), self.routine, self.options,
                                    (sum(int(np.prod(s)) for s in shapes),))
            flat = weighted(a, b, w, *params)
            start = 0
            for s in shapes:
                n = int(np.prod(s))
                adjoints.append(np.reshape(flat[start:start + n], s))
                start += n
        adjoints[1] = self._boundary(w, b, params)
        adjoints[0] = -self._boundary(w, a, params)
        return tuple(adjoints)

    def _boundary(self, w, limit, params):
        """w . h(limit, params): the adjoint of a limit (0 at an infinite one,
        which cannot move; the integrand is not evaluated there)."""
        if np.isinf(now(limit)):
            return np.zeros(())
        return np.sum(w * self.taped(limit, *params))


class _Taped:
    """The integrand h(x, *params) as its tapes (inputs: the node as a 0-d
    array, then the parameters): its values and derivatives at every node
    are replays of them, the same in the process that recorded them and in
    one that loaded them from a tape file. ``inner``: a RecordingInner
    (records h again where a node leaves every recorded path; no tape cache
    would keep it, since h's environment holds the outer recording's active
    values) or, loaded, a SavedInner. ``h`` (None when loaded): the Python
    integrand, which gives the values itself when it could not be recorded
    (``through_tapes`` False; such an integral is not saved)."""

    def __init__(self, inner, h=None, through_tapes=True, unrecorded=None):
        self.inner, self.h, self.through_tapes = inner, h, through_tapes
        self.unrecorded = unrecorded    # why h could not be recorded
        self.__name__ = inner.name
        self._jumps = {}            # id(tape) -> (tape, its moving jump or None)
        self._kinks = {}            # id(tape) -> (tape, its moving kink or None)
        self._at_point = _AtPoint(self)

    @classmethod
    def of(cls, h, x, params):
        """The tapes of h, the first recorded at (x, params) to learn its
        output shape; h's own values where it cannot be recorded."""
        name = getattr(h, "__name__", "integrand")
        inner = RecordingInner(_unguarded(h), name, f"the integral of `{name}`")
        taped = cls(inner, h)
        try:
            with suspended():
                taped(x, *params)
        except Exception as err:    # not recordable (non-NumPy code): its plain values
            why = str(err).split(". ")[0][:200]
            return cls(inner, h, through_tapes=False, unrecorded=f"{type(err).__name__}: {why}")
        return taped

    @property
    def output_shape(self):
        return tuple(self.inner.variants.tapes()[0].output_shape)

    def __call__(self, x, *params):
        if not self.through_tapes:
            return self.h(x, *params)
        return self._at_point(_point(x), *params)

    def run(self, method, x, params):
        return self.inner.run([_point(x)] + [_point(p) for p in params], method)

    def _run(self, method, x, params):
        """``method`` on the tape at (x, params) for a derivative in the
        parameters, which the Leibniz rule gives only where no jump of the
        integrand moves with them."""
        def checked(tape, xs):
            jump = self._jump(tape)
            if jump is not None:
                raise UnsupportedOperation(
                    f"adsim: scipy.integrate.quad: the integrand {self.__name__} selects by a "
                    f"comparison or rounding ({jump}) of values depending on both the variable "
                    f"and the parameters, so it may jump at a point that moves with them, and "
                    f"the Leibniz rule (the integral of the integrand's derivative) would miss "
                    f"that jump's term. Split the integral at the switching point, which "
                    f"becomes a differentiated limit (quad(f, a, p) + quad(g, p, b)), change "
                    f"variables so that the parameter moves the limits (int g(x - p) dx over "
                    f"[a, b] = int g(u) du over [a - p, b - p]), or smooth the step")
            return method(tape, xs)
        return self.run(checked, x, params)

    def _jump(self, tape):
        return self._found(tape, moving_jump, self._jumps)

    def _kink(self, tape):
        return self._found(tape, moving_kink, self._kinks)

    @staticmethod
    def _found(tape, finder, known_by_tape):
        known = known_by_tape.get(id(tape))
        if known is None or known[0] is not tape:
            if len(known_by_tape) > 64:
                known_by_tape.clear()
            known = known_by_tape[id(tape)] = (tape, finder(tape))
        return known[1]

    def second_order(self, method, x, params):
        """``method`` on the tape at (x, params) for a second derivative in
        the parameters, which the Leibniz rule gives only where, besides,
        no kink of the integrand moves with them (its derivative jumps
        there: adsim/_scipy/jumps.py)."""
        def checked(tape, xs):
            kink = self._kink(tape)
            if kink is not None:
                raise UnsupportedOperation(
                    f"adsim: second derivatives (hvp, hessian, a derivative of a derivative) "
                    f"of scipy.integrate.quad: the integrand {self.__name__} has a kink "
                    f"(np.{kink}) of values depending on both the variable and the parameters, "
                    f"where its derivative jumps at a point that moves with them, and the "
                    f"Leibniz rule would miss that jump's term (first derivatives are exact). "
                    f"Split the integral at the kink, which becomes a differentiated limit "
                    f"(quad(f, a, p) + quad(g, p, b)), or change variables so that the "
                    f"parameter moves the limits (int g(x - p) dx over [a, b] = int g(u) du "
                    f"over [a - p, b - p])")
            return method(tape, xs)
        return self._run(checked, x, params)

    def jvp(self, x, params, directions):
        """d h(x, params) in the parameters' directions (x fixed)."""
        return self._run(lambda tape, xs: tape.jvp(xs, [np.zeros(())] + list(directions))[1],
                         x, params)

    def vjp(self, x, params, w):
        """w . dh/dparams at (x, params): one adjoint per parameter."""
        return self._run(lambda tape, xs: _adjoints(tape.vjp(xs, w)[1])[1:], x, params)

    def hvp(self, x, params, w, directions):
        """The derivative of vjp(x, params, w) in the parameters' directions
        (x fixed): a second-order sweep of the same tape."""
        return self.second_order(lambda tape, xs: _adjoints(
            tape.hvp(xs, [np.zeros(())] + list(directions), w))[1:], x, params)


class _AtPoint(Primitive):
    """h(x, *params) at one point as an op with its tapes' rules: the
    values of the integrand outside the integral (at a moving limit) in a
    recorded reverse rule, the same with or without h's code."""

    not_saved = "the integrand at a point inside a recorded derivative rule"

    def __init__(self, taped):
        self.taped = taped
        super().__init__(self._value, jvp=self._jvp, vjp=self._vjp)
        self.name = f"the integrand {taped.__name__}"

    def _value(self, x, *params):
        return self.taped.run(_forward, x, params)

    def _jvp(self, args, out, tangents):
        directions = [np.zeros(np.shape(a)) if t is None else t for a, t in zip(args, tangents)]
        return self.taped.run(lambda tape, xs: tape.jvp(xs, directions)[1], args[0], args[1:])

    def _vjp(self, args, out, w):
        return tuple(self.taped.run(lambda tape, xs: _adjoints(tape.vjp(xs, w)[1]),
                                    args[0], args[1:]))


def _forward(tape, xs):
    return tape.forward(*xs)


def _adjoints(g):
    return list(g) if isinstance(g, (tuple, list)) else [g]


class _VjpIntegrand:
    """x, w, *params -> the vjp of h at (x, params) with weight w, the
    parameters' parts flattened into one vector: the integrand of the
    reverse rule (linear in w). Called on active values it is being
    recorded (a second-order sweep): then the vjp is a nested derivative."""

    def __init__(self, taped):
        self.taped = taped
        self.__name__ = f"vjp of {taped.__name__}"
        self._recorded = None       # itself on a tape: for third derivatives

    def __call__(self, x, w, *params):
        if any(isinstance(v, Active) for v in (x, w) + tuple(params)):
            import adsim
            self.taped.second_order(lambda tape, xs: None, now(x), [now(p) for p in params])
            adjoints = adsim.vjp(self.taped, (x,) + tuple(params), w)[1][1:]
        else:
            adjoints = self.taped.vjp(x, params, w)
        return _flat(adjoints)

    def jvp(self, x, weight_and_params, directions):
        """Its derivative in (w, params) along (w', params'): the hvp of h's
        tape along params' with weight w, plus the vjp with weight w' (it is
        linear in w): second derivatives without recording it."""
        (w, *params), (w_dot, *p_dot) = weight_and_params, directions
        out = 0.0
        if np.any(w_dot):
            out = out + _flat(self.taped.vjp(x, params, w_dot))
        if any(np.any(d) for d in p_dot):
            out = out + _flat(self.taped.hvp(x, params, w, p_dot))
        return out + np.zeros(sum(int(np.size(p)) for p in params))

    def vjp(self, x, weight_and_params, u):
        if self._recorded is None:
            self._recorded = _Taped(RecordingInner(self, self.__name__, self.__name__), self,
                                    through_tapes=False)
        return self._recorded.vjp(x, weight_and_params, u)


def _unguarded(h):
    """``h`` recorded without adsim's recorded checks of values (a complex
    power's base not 0), which would read as moving jumps (adsim/_record/guards.py)."""
    @functools.wraps(h)
    def integrand(*args):
        with guards.unrecorded():
            return h(*args)
    return integrand


def _flat(arrays):
    return np.concatenate([np.reshape(a, -1) for a in arrays])


def _point(x):
    """A node (or a parameter) as a float array: an input of the integrand's
    tape (a Python float would be a constant of it, recorded again at every
    node)."""
    return x if isinstance(x, Active) else np.asarray(x, dtype=float)


def _plain(v, shape):
    return np.reshape(np.asarray(v, dtype=float), shape)


def _integral(taped, routine, options, shape):
    """The op (a, b, *params) -> int_a^b h(x, *params) dx, and its rules."""
    rules = _Integral(taped, routine, options, shape)
    op = IntegralOp(rules)
    if not getattr(taped, "through_tapes", False):     # h's own values, or a vjp's
        why = getattr(taped, "unrecorded", None)
        op.not_saved = ("an integral of a Python integrand that could not be recorded"
                        + (f" ({why})" if why else ""))
    return op, rules


class IntegralOp(Primitive):
    """An integral as one op (:class:`_Integral`'s rules)."""

    explains_recorded_rule = True

    def __init__(self, rules):
        self.rules = rules
        super().__init__(rules.value, jvp=rules.jvp, vjp=rules.vjp)
        self.name = f"scipy.integrate.{rules.routine} of {rules.taped.__name__}"

    def applied(self, in_shapes, out_shape, first_value):
        return IntegralApplication(self, in_shapes, out_shape, first_value=first_value)


class IntegralApplication(Application):
    """One recorded integral. A tape file saves the routine, its options and
    the recorded tapes of the integrand; a loaded one runs SciPy's routine on
    those tapes and raises BranchChanged at a node where none holds (it has
    no code to record the integrand again)."""

    file_kind = "adsim.integral"

    def file_state(self):
        if self.prim.not_saved is not None:
            return super().file_state()             # its TapeCopyError
        rules = self.prim.rules
        options = _options_state(rules.options)
        try:
            _options_field(rules.routine, options)      # what a reader accepts
        except ValueError as err:
            raise TapeCopyError(f"adsim: the tape holds `{self.prim.name}`, which tape files "
                                f"cannot hold: {err}") from err
        return {"routine": rules.routine, "options": options,
                "integrand": rules.taped.__name__,
                "in_shapes": [list(s) for s in self.in_shapes],
                "out_shape": list(self.out_shape)}, rules.taped.inner.variants.tapes()

    @classmethod
    def from_file_state(cls, state, tapes):
        expect_keys(state, ("routine", "options", "integrand", "in_shapes", "out_shape"))
        routine, name = state["routine"], state["integrand"]
        if routine not in _OPTIONS or not isinstance(name, str) or \
                not isinstance(state["in_shapes"], list) or not tapes:
            raise ValueError("an integral is described by its routine (quad or quad_vec), "
                             "options, integrand's name and shapes, and owns the tapes of its "
                             "integrand")
        options = _options_field(routine, state["options"])
        in_shapes = [shape_field(s, "an argument shape") for s in state["in_shapes"]]
        out_shape = shape_field(state["out_shape"], "the output shape")
        if len(in_shapes) < 2 or in_shapes[:2] != [(), ()] or \
                (routine == "quad" and out_shape != ()):
            raise ValueError(f"an integral by {routine} maps two limits (numbers) and the "
                             f"parameters to {'a number' if routine == 'quad' else 'an array'}"
                             f", not {in_shapes} to {out_shape}")
        inputs = [()] + in_shapes[2:]
        for tape in tapes:
            if [tuple(s) for s in tape.input_shapes] != inputs or \
                    tuple(tape.output_shape) != out_shape:
                raise ValueError(f"a tape of the integrand maps {tape.input_shapes} to "
                                 f"{tape.output_shape}; the integral has (variable, parameters) "
                                 f"{inputs} and output {out_shape}")
        taped = _Taped(SavedInner(name, 0, tapes, f"the integral of `{name}`"))
        return cls(IntegralOp(_Integral(taped, routine, options, out_shape)), in_shapes,
                   out_shape)


# the options a tape file holds, per routine: name -> check of its value
def _tolerance(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < np.inf


def _count(v):                  # quad allocates 4 * limit numbers at once
    return type(v) is int and 1 <= v <= 1 << 20


def _points(v):
    return v is None or isinstance(v, list) and len(v) <= 1 << 16 and all(
        isinstance(p, (int, float)) and not isinstance(p, bool) and np.isfinite(p) for p in v)


_OPTIONS = {
    "quad": {"epsabs": _tolerance, "epsrel": _tolerance, "limit": _count, "points": _points},
    "quad_vec": {"epsabs": _tolerance, "epsrel": _tolerance, "limit": _count,
                 "points": _points, "norm": lambda v: v in ("2", "max"),
                 "cache_size": _tolerance,
                 "quadrature": lambda v: v in (None, "gk21", "gk15", "trapezoid")}}


def _options_state(options):
    """The options as JSON data (break points as a list of numbers)."""
    state = dict(options)
    if state.get("points") is not None:
        state["points"] = [float(p) for p in np.ravel(np.asarray(state["points"], dtype=float))]
    if "limit" in state:
        state["limit"] = int(state["limit"])
    return state


def _options_field(routine, options):
    """A file's options of ``routine``, checked."""
    known = _OPTIONS[routine]
    if not isinstance(options, dict) or not set(options) <= set(known) or \
            not set(known) - {"points"} <= set(options):
        raise ValueError(f"the options of {routine} are {sorted(known)}, not {options!r}")
    for key, value in options.items():
        if not known[key](value):
            raise ValueError(f"option {key}={value!r} of {routine} is not one SciPy takes")
    return dict(options)


def _limit(x, name, which):
    x = array(x, f"scipy.integrate.{name}")
    if np.shape(x) != ():
        _refuse(name, f"the {which} limit has shape {np.shape(x)}", "pass a number")
    return x


def _integrand(h, a, b, params):
    """(The integrand as its tapes, its output shape), from a recording at
    the midpoint of the plain limits."""
    lo, hi = (float(now(v)) for v in (a, b))
    mid = 0.5 * (lo + hi) if np.isfinite(lo + hi) else (lo if np.isfinite(lo) else
                                                       hi if np.isfinite(hi) else 0.0)
    plain = [now(p) for p in params]
    taped = _Taped.of(h, mid, plain)
    if taped.through_tapes:
        return taped, taped.output_shape
    with suspended():
        return taped, np.shape(h(mid, *plain))


# ---------------------------------------------------------------- the rules

def quad(func, a, b, args=(), full_output=0, epsabs=1.49e-8, epsrel=1.49e-8, limit=50,
         points=None, weight=None, wvar=None, wopts=None, maxp1=50, limlst=50,
         complex_func=False):
    if full_output or complex_func or weight is not None:
        _refuse("quad", "full_output, complex_func and weight= are not differentiated",
                "integrate the weighted real integrand with the defaults, or call quad on "
                "plain values (adsim.value) if no derivative is wanted")
    h, params = _parameters("quad", func, args)
    a, b = _limit(a, "quad", "lower"), _limit(b, "quad", "upper")
    if points is not None and (isinstance(points, Active) or active_leaves(points)):
        _refuse("quad", "points= is active", "pass the break points as plain numbers")
    options = {"epsabs": epsabs, "epsrel": epsrel, "limit": limit}
    if points is not None:
        options["points"] = points
    taped, shape = _integrand(h, a, b, params)
    if shape != ():
        _refuse("quad", f"the integrand returns shape {shape}", "use quad_vec for vector "
                "integrands")
    op, rules = _integral(taped, "quad", options, ())
    value = op(a, b, *params)
    return value, rules.error


def quad_vec(f, a, b, epsabs=1e-200, epsrel=1e-8, norm="2", cache_size=100e6, limit=10000,
             workers=1, points=None, quadrature=None, full_output=False, *, args=()):
    if full_output:
        _refuse("quad_vec", "full_output is not differentiated", "call it without full_output")
    h, params = _parameters("quad_vec", f, args)
    a, b = _limit(a, "quad_vec", "lower"), _limit(b, "quad_vec", "upper")
    options = {"epsabs": epsabs, "epsrel": epsrel, "norm": norm, "cache_size": cache_size,
               "limit": limit, "points": points, "quadrature": quadrature}
    taped, shape = _integrand(h, a, b, params)
    op, rules = _integral(taped, "quad_vec", options, shape)
    value = op(a, b, *params)
    return value, rules.error


def fixed_quad(func, a, b, args=(), n=5):
    """SciPy's Gauss-Legendre sum recorded as it is: the integrand is called
    once on the n active nodes."""
    nodes, weights = roots_legendre(n)
    a, b = array(a, "scipy.integrate.fixed_quad"), array(b, "scipy.integrate.fixed_quad")
    if np.isinf(now(a)).any() or np.isinf(now(b)).any():
        raise ValueError("Gaussian quadrature is only available for finite limits.")
    args = args if isinstance(args, tuple) else (args,)
    y = (b - a) * (nodes + 1) / 2.0 + a
    return (b - a) / 2.0 * np.sum(weights * func(y, *args), axis=-1), None
