"""The functional API: grad, jvp, vjp, jacobian, hessian, hvp, ...

Each transformed function keeps one tape per input shapes (and per value of
its non-array arguments), replays it in C, and records again when a replay
raises BranchChanged. Array arguments not being differentiated are tape
inputs too, so new values of them never need a new recording. Functions must
be pure: arrays they read from enclosing scopes are recorded as constants
(pass ``cache=False`` for functions whose closure changes between calls).
"""
import weakref
from collections import OrderedDict

import numpy as np

from . import _numpy_api
from ._nested import nested_derivative
from ._recording import record
from ._tape import Active
from .errors import BranchChanged

_MAX_TAPES = 8     # tapes kept per function (distinct shapes / static arguments)


def _shape(v):
    return v.shape if type(v) is np.ndarray else np.shape(v)


class _ArrayKey:
    """A non-float array argument as part of a cache key (by value)."""

    def __init__(self, array):
        self.array = array
        self._key = (array.dtype.str, array.shape, array.tobytes())

    def __hash__(self):
        return hash(self._key)

    def __eq__(self, other):
        return isinstance(other, _ArrayKey) and self._key == other._key


class _TapeCache:
    """Tapes of one function keyed by input shapes and static arguments."""

    def __init__(self, f, cache=True):
        self.f = f
        self.cache = cache
        self.tapes = OrderedDict()
        self.recordings = 0          # how many times f was recorded (for tests and stats)

    @staticmethod
    def _split(args, argnums):
        """Positions of tape inputs (differentiated first) and the static key."""
        inputs, static = list(argnums), []
        for i, a in enumerate(args):
            if i in argnums:
                continue
            if isinstance(a, np.ndarray) and a.dtype.kind == "f":
                inputs.append(i)
            elif isinstance(a, np.ndarray):      # index arrays, masks: constants of the tape
                static.append((i, _ArrayKey(a)))
            else:
                static.append((i, a))
        return inputs, static

    def tape(self, args, kwargs, argnums):
        """(tape, input values) for these arguments, recording if needed."""
        positions, static = self._split(args, argnums)
        values = [args[i] for i in positions]
        key = None
        if self.cache:
            try:
                key = (tuple(positions), tuple(_shape(v) for v in values), tuple(static),
                       tuple(sorted(kwargs.items())) if kwargs else ())
                hash(key)
            except TypeError:
                key = None
        tape = self.tapes.get(key) if key is not None else None
        if tape is None:
            tape = self._record(args, kwargs, positions, values)
            if key is not None:
                self.tapes[key] = tape
                if len(self.tapes) > _MAX_TAPES:
                    self.tapes.popitem(last=False)
        elif key is not None:
            self.tapes.move_to_end(key)
        return tape, values, key, positions

    def _record(self, args, kwargs, positions, values):
        def call(*inputs):
            full = list(args)
            for pos, v in zip(positions, inputs):
                full[pos] = v
            return self.f(*full, **kwargs)
        call.__name__ = getattr(self.f, "__name__", "function")
        self.recordings += 1
        return record(call, *values)

    def run(self, args, kwargs, argnums, method):
        """``method(tape, values)``, recording again if the branch changed."""
        tape, values, key, positions = self.tape(args, kwargs, argnums)
        try:
            return method(tape, values)
        except BranchChanged:
            tape = self._record(args, kwargs, positions, values)
            if key is not None:
                self.tapes[key] = tape
            return method(tape, values)


_shared = weakref.WeakKeyDictionary()


def _cache_of(f):
    """The shared tape cache of ``f`` for the one-shot functions (jvp, vjp, hvp)."""
    try:
        c = _shared.get(f)
        if c is None:
            c = _shared[f] = _TapeCache(f)
        return c
    except TypeError:       # not weak-referenceable: no sharing
        return _TapeCache(f)


def _argnums(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _pick(grads, argnums, single):
    """Gradients of the differentiated inputs (listed first on the tape)."""
    if not isinstance(grads, tuple):
        grads = (grads,)
    picked = grads[:len(argnums)]
    return picked[0] if single else tuple(picked)


def _check_scalar(tape, what, f):
    if tape.slot_size_of(tape.output_slot) != 1:
        raise ValueError(f"adsim: {what} needs a function with a scalar output; "
                         f"{getattr(f, '__name__', 'the function')} returned shape "
                         f"{tuple(tape.output_shape)}. Use adsim.jacobian or adsim.vjp for "
                         f"vector outputs")


def value_and_grad(f, argnums=0, cache=True):
    """Return a function computing (f(*args), gradient of f w.r.t. args[argnums])."""
    nums = _argnums(argnums)
    tapes = _TapeCache(f, cache)

    def value_and_grad_f(*args, **kwargs):
        _check_argnums(nums, args)
        if _any_active(args):       # inside a recording: a nested derivative
            grads = tuple(nested_derivative(f, args, kwargs, i, tapes) for i in nums)
            return f(*args, **kwargs), grads[0] if isinstance(argnums, int) else grads

        def method(tape, values):
            _check_scalar(tape, "grad", f)
            y, g = tape.value_and_gradient(*values)
            return y, _pick(g, nums, isinstance(argnums, int))
        return tapes.run(args, kwargs, nums, method)
    value_and_grad_f.tapes = tapes
    return value_and_grad_f


def grad(f, argnums=0, cache=True):
    """Return a function computing the gradient of scalar ``f`` w.r.t.
    ``args[argnums]`` (a tuple of gradients when argnums is a tuple)."""
    vg = value_and_grad(f, argnums, cache)

    def grad_f(*args, **kwargs):
        return vg(*args, **kwargs)[1]
    grad_f.tapes = vg.tapes
    return grad_f


def _any_active(args):
    return any(isinstance(a, Active) for a in args)


def _check_argnums(nums, args):
    for i in nums:
        if i >= len(args):
            raise ValueError(f"adsim: argnums={i} but the function got {len(args)} positional arguments")


def _primals(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def jvp(f, x, v):
    """(f(x), J v) by one forward sweep. ``x`` and ``v`` are arrays, or tuples
    of arrays for functions of several arguments; ``v`` may carry k
    directions in a trailing axis."""
    xs = _primals(x)
    nums = tuple(range(len(xs)))

    def method(tape, values):
        vs = _primals(v) if isinstance(x, (tuple, list)) else (v,)
        return tape.jvp(tuple(values), vs + tuple(np.zeros_like(a, dtype=float)
                                                  for a in values[len(nums):]))
    return _cache_of(f).run(xs, {}, nums, method)


def vjp(f, x, w):
    """(f(x), J^T w) by one reverse sweep; ``w`` has f's output shape (or a
    trailing axis of k weights)."""
    xs = _primals(x)
    nums = tuple(range(len(xs)))

    def method(tape, values):
        y, g = tape.vjp(tuple(values), w)
        return y, _pick(g, nums, not isinstance(x, (tuple, list)))
    return _cache_of(f).run(xs, {}, nums, method)


def jacobian(f, argnums=0, mode=None, cache=True):
    """Return a function computing the dense Jacobian of f, shaped
    output.shape + input.shape; forward or reverse sweeps, whichever needs
    fewer directions, unless ``mode`` says."""
    nums = _argnums(argnums)
    tapes = _TapeCache(f, cache)

    def jacobian_f(*args, **kwargs):
        _check_argnums(nums, args)
        if _any_active(args):       # inside a recording: a nested derivative
            jacs = tuple(nested_derivative(f, args, kwargs, i, tapes) for i in nums)
            return jacs[0] if isinstance(argnums, int) else jacs

        def method(tape, values):
            J = tape.jacobian(*values, mode=mode)
            return _pick(J, nums, isinstance(argnums, int))
        return tapes.run(args, kwargs, nums, method)
    jacobian_f.tapes = tapes
    return jacobian_f


def grad_and_hvp(f, x, v, *args):
    """(gradient, Hessian-vector product) of scalar f at x from one tangent
    and one second-order adjoint sweep; ``v`` may carry k directions."""
    dirs = np.shape(v)[np.ndim(x):]     # () for one direction, (k,) for k

    def method(tape, values):
        _check_scalar(tape, "hvp", f)
        g, hv = tape.gradient_and_hvp(tuple(values), (v,) + tuple(
            np.zeros(np.shape(a) + dirs) for a in values[1:]))
        return _pick(g, (0,), True), _pick(hv, (0,), True)
    return _cache_of(f).run((x,) + args, {}, (0,), method)


def hvp(f, x, v, *args):
    """Hessian-vector product H(x) v of scalar f (reverse on forward)."""
    if args:
        return grad_and_hvp(f, x, v, *args)[1]

    def method(tape, values):           # one input: the tape's direct path
        _check_scalar(tape, "hvp", f)
        return tape.hvp(values[0], v)
    return _cache_of(f).run((x,), {}, (0,), method)


def hessp(f):
    """``hessp(x, p, *args)`` for scipy.optimize.minimize."""
    def hessp_f(x, p, *args):
        return hvp(f, np.asarray(x, dtype=float), np.asarray(p, dtype=float), *args)
    return hessp_f


def hessian(f, argnums=0):
    """Return a function computing the dense Hessian of scalar f w.r.t. one
    argument, from vector-mode Hessian-vector products (symmetrised)."""
    if not isinstance(argnums, int):
        raise ValueError("adsim: hessian takes one argnum")

    def g(xx, *r):      # made once, so that its tapes stay cached between calls
        return f(*(r[:argnums] + (xx,) + r[argnums:]))

    def hessian_f(*args):
        x = np.asarray(args[argnums], dtype=float)
        rest = args[:argnums] + args[argnums + 1:]
        eye = np.eye(x.size).reshape(x.shape + (x.size,))
        H = hvp(g, x, eye, *rest).reshape(x.size, x.size)
        H = 0.5 * (H + H.T)
        return H.reshape(x.shape + x.shape)
    return hessian_f


def laplacian(f):
    """Return a function computing the trace of the Hessian of scalar f."""
    def laplacian_f(x, *args):
        x = np.asarray(x, dtype=float)
        eye = np.eye(x.size).reshape(x.shape + (x.size,))
        H = hvp(f, x, eye, *args).reshape(x.size, x.size)
        return float(np.trace(H))
    return laplacian_f


def hvp_operator(f, x, *args):
    """The Hessian of scalar f at x as a symmetric scipy LinearOperator."""
    from scipy.sparse.linalg import LinearOperator
    x = np.asarray(x, dtype=float)

    def matvec(v):
        if np.iscomplexobj(v):      # a real operator: H (a + ib) = H a + i H b
            return matvec(np.real(v)) + 1j * matvec(np.imag(v))
        return hvp(f, x, np.asarray(v, dtype=float).reshape(x.shape), *args).reshape(-1)

    def matmat(V):
        if np.iscomplexobj(V):
            return matmat(np.real(V)) + 1j * matmat(np.imag(V))
        V = np.asarray(V, dtype=float)
        return hvp(f, x, V.reshape(x.shape + (V.shape[1],)), *args).reshape(x.size, V.shape[1])
    return LinearOperator((x.size, x.size), matvec=matvec, rmatvec=matvec, matmat=matmat,
                          dtype=np.float64)


value = _numpy_api.value


stop_gradient = _numpy_api.stop_gradient
