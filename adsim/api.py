"""The functional API: grad, jvp, vjp, jacobian, hessian, hvp, ...

Each transformed function records its argument function on a tape and
replays the tape in C. A tape is reused for a later call only when that is
provably safe (see adsim/_cache.py and docs/tape.md, "What the functional
API records and reuses"):

- the tape inputs have the same shapes and every other argument is equal by
  type and value (``2`` and ``2.0`` differ) -- arguments the function never
  reads do not count;
- the function's environment (defaults, closure cells, the globals its code
  loads, the objects and containers reached from them, bound-method owners)
  is unchanged since the recording;
- the recording drew no random numbers and did not change that environment.

Otherwise the function is recorded afresh on that call, which is always
correct; ``f_transformed.tapes.reuse_blocked_by`` says why a tape could not
be kept. Array arguments that are not differentiated are tape inputs too, so
new values of them need no recording. A replay that takes another branch
records again. ``cache=False`` records on every call. Explicit tapes
(``adsim.record``) freeze everything that is not an input.
"""
import numpy as np

from . import _numpy_api
from ._cache import TapeCache, shared_cache
from ._nested import nested_derivative
from ._tape import Active
from ._validate import argnums as _argnums, name_of as _name, real_array, resolve_argnums


def _pick(grads, argnums, single):
    """Gradients of the differentiated inputs (listed first on the tape)."""
    if not isinstance(grads, tuple):
        grads = (grads,)
    picked = grads[:len(argnums)]
    return picked[0] if single else tuple(picked)


def _check_scalar(tape, what, f):
    if tape.slot_size_of(tape.output_slot) != 1:
        raise ValueError(f"adsim: {what} needs a function with a scalar output; "
                         f"{_name(f)} returned shape {tuple(tape.output_shape)}. Use "
                         f"adsim.jacobian or adsim.vjp for vector outputs")


def _any_active(args):
    return any(isinstance(a, Active) for a in args)


def value_and_grad(f, argnums=0, cache=True):
    """Return a function computing (f(*args), gradient of f w.r.t. args[argnums])."""
    nums, single = _argnums(argnums)
    tapes = TapeCache(cache)

    def value_and_grad_f(*args, **kwargs):
        pos = resolve_argnums(nums, len(args), _name(f))
        if _any_active(args):       # inside a recording: a nested derivative
            grads = tuple(nested_derivative(f, args, kwargs, i, tapes) for i in pos)
            return f(*args, **kwargs), grads[0] if single else grads

        def method(tape, values):
            _check_scalar(tape, "grad", f)
            y, g = tape.value_and_gradient(*values)
            return y, _pick(g, pos, single)
        return tapes.run(f, args, kwargs, pos, method)
    value_and_grad_f.tapes = tapes
    value_and_grad_f.__wrapped__ = f
    return value_and_grad_f


def grad(f, argnums=0, cache=True):
    """Return a function computing the gradient of scalar ``f`` w.r.t.
    ``args[argnums]`` (a tuple of gradients when argnums is a tuple)."""
    vg = value_and_grad(f, argnums, cache)

    def grad_f(*args, **kwargs):
        return vg(*args, **kwargs)[1]
    grad_f.tapes = vg.tapes
    grad_f.__wrapped__ = f
    return grad_f


def tapes_of(f):
    """The tape cache the one-shot functions (``jvp``, ``vjp``, ``hvp``,
    ``grad_and_hvp``, ``hessp``, ``laplacian``, ``hvp_operator``) keep for
    ``f``, with its ``recordings`` and ``reuse_blocked_by``."""
    return shared_cache(f)


def _primals(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _directions(x, v, what):
    """Per-input directions (or weights) checked as real arrays."""
    vs = _primals(v) if isinstance(x, (tuple, list)) else (v,)
    return tuple(real_array(d, f"{what} {i}") for i, d in enumerate(vs))


def _trailing(direction, shape):
    """The direction axes of ``direction`` beyond ``shape`` (() or (k,))."""
    return np.shape(direction)[len(shape):]


def _direction_axes(directions, shapes, what, of="input"):
    """() for one direction per input, (k,) for k; checked against the
    input shapes (used where no sweep runs to check them)."""
    axes = {tuple(np.shape(d)[len(s):]) for d, s in zip(directions, shapes)}
    bad = [i for i, (d, s) in enumerate(zip(directions, shapes))
           if tuple(np.shape(d)[:len(s)]) != tuple(s) or np.ndim(d) > len(s) + 1]
    if len(directions) != len(shapes) or bad or len(axes) > 1:
        raise ValueError(f"adsim: the {what}s have shapes {[np.shape(d) for d in directions]}; "
                         f"expected the {of} shapes {[tuple(s) for s in shapes]}, each with the "
                         f"same trailing number of directions or none")
    return axes.pop() if axes else ()


def _empty_result_axes(tape, directions, shapes, what, of="input"):
    """The direction axes when no sweep is needed (or possible) because all
    arrays are empty or there are zero directions -- the results are then
    empty arrays -- else None (the sweep runs and checks the shapes)."""
    if tape.arena_elements and all(_trailing(d, s) != (0,) for d, s in zip(directions, shapes)):
        return None
    return _direction_axes(directions, shapes, what, of)


def jvp(f, x, v):
    """(f(x), J v) by one forward sweep. ``x`` and ``v`` are arrays, or tuples
    of arrays for functions of several arguments; ``v`` may carry k
    directions in a trailing axis."""
    xs = _primals(x)
    nums = tuple(range(len(xs)))
    vs = _directions(x, v, "tangent")

    def method(tape, values):
        axes = _empty_result_axes(tape, vs, [np.shape(a) for a in values], "tangent")
        if axes is not None:
            return tape.forward(*values), np.zeros(tuple(tape.output_shape) + axes)
        return tape.jvp(tuple(values), vs)
    return shared_cache(f).run(f, xs, {}, nums, method)


def vjp(f, x, w):
    """(f(x), J^T w) by one reverse sweep; ``w`` has f's output shape (or a
    trailing axis of k weights)."""
    xs = _primals(x)
    nums = tuple(range(len(xs)))
    w = real_array(w, "adjoint weight")
    single = not isinstance(x, (tuple, list))

    def method(tape, values):
        axes = _empty_result_axes(tape, [w], [tuple(tape.output_shape)], "adjoint weight",
                                  "output")
        if axes is not None:
            g = tuple(np.zeros(np.shape(a) + axes) for a in values)
            return tape.forward(*values), _pick(g, nums, single)
        y, g = tape.vjp(tuple(values), w)
        return y, _pick(g, nums, single)
    return shared_cache(f).run(f, xs, {}, nums, method)


def jacobian(f, argnums=0, mode=None, cache=True):
    """Return a function computing the dense Jacobian of f, shaped
    output.shape + input.shape; forward or reverse sweeps, whichever needs
    fewer directions, unless ``mode`` says."""
    nums, single = _argnums(argnums)
    tapes = TapeCache(cache)

    def jacobian_f(*args, **kwargs):
        pos = resolve_argnums(nums, len(args), _name(f))
        if _any_active(args):       # inside a recording: a nested derivative
            jacs = tuple(nested_derivative(f, args, kwargs, i, tapes) for i in pos)
            return jacs[0] if single else jacs

        def method(tape, values):
            J = tape.jacobian(*values, mode=mode)
            return _pick(J, pos, single)
        return tapes.run(f, args, kwargs, pos, method)
    jacobian_f.tapes = tapes
    jacobian_f.__wrapped__ = f
    return jacobian_f


def grad_and_hvp(f, x, v, *args):
    """(gradient, Hessian-vector product) of scalar f at x from one tangent
    and one second-order adjoint sweep; ``v`` may carry k directions."""
    x = real_array(x, f"argument 0 of {_name(f)}")
    v = real_array(v, "direction")
    dirs = _trailing(v, x.shape)         # () for one direction, (k,) for k

    def method(tape, values):
        _check_scalar(tape, "hvp", f)
        if dirs == (0,):                # zero directions: only the gradient to compute
            _direction_axes([v], [x.shape], "direction")
            return _pick(tape.value_and_gradient(*values)[1], (0,), True), np.zeros(x.shape + dirs)
        g, hv = tape.gradient_and_hvp(tuple(values), (v,) + tuple(
            np.zeros(np.shape(a) + dirs) for a in values[1:]))
        return _pick(g, (0,), True), _pick(hv, (0,), True)
    return shared_cache(f).run(f, (x,) + args, {}, (0,), method)


def hvp(f, x, v, *args):
    """Hessian-vector product H(x) v of scalar f (reverse on forward)."""
    if args:
        return grad_and_hvp(f, x, v, *args)[1]
    v = real_array(v, "direction")

    def method(tape, values):           # one input: the tape's direct path
        _check_scalar(tape, "hvp", f)
        if _trailing(v, values[0].shape) == (0,):       # zero directions: nothing to sweep
            _direction_axes([v], [values[0].shape], "direction")
            return np.zeros(values[0].shape + (0,))
        return tape.hvp(values[0], v)
    return shared_cache(f).run(f, (x,), {}, (0,), method)


def hessp(f):
    """``hessp(x, p, *args)`` for scipy.optimize.minimize."""
    def hessp_f(x, p, *args):
        return hvp(f, real_array(x, "x"), real_array(p, "p"), *args)
    hessp_f.__wrapped__ = f
    hessp_f.tapes = shared_cache(f)
    return hessp_f


def hessian(f, argnums=0):
    """Return a function computing the dense Hessian of scalar f w.r.t. one
    argument, from vector-mode Hessian-vector products (symmetrised)."""
    if not isinstance(argnums, (int, np.integer)) or isinstance(argnums, bool):
        raise ValueError("adsim: hessian takes one argnum (an int)")
    nums, _ = _argnums(argnums)

    def g(xx, p, *r):   # made once, so that its tapes stay cached between calls
        return f(*(r[:p] + (xx,) + r[p:]))

    def hessian_f(*args):
        p = resolve_argnums(nums, len(args), _name(f))[0]
        x = real_array(args[p], f"argument {p} of {_name(f)}")
        rest = args[:p] + args[p + 1:]
        eye = np.eye(x.size).reshape(x.shape + (x.size,))
        H = hvp(g, x, eye, p, *rest).reshape(x.size, x.size)
        H = 0.5 * (H + H.T)
        return H.reshape(x.shape + x.shape)
    hessian_f.__wrapped__ = f
    hessian_f.tapes = shared_cache(g)
    return hessian_f


def laplacian(f):
    """Return a function computing the trace of the Hessian of scalar f."""
    def laplacian_f(x, *args):
        x = real_array(x, "x")
        eye = np.eye(x.size).reshape(x.shape + (x.size,))
        H = hvp(f, x, eye, *args).reshape(x.size, x.size)
        return float(np.trace(H))
    laplacian_f.__wrapped__ = f
    laplacian_f.tapes = shared_cache(f)
    return laplacian_f


def hvp_operator(f, x, *args):
    """The Hessian of scalar f at x as a symmetric scipy LinearOperator."""
    from scipy.sparse.linalg import LinearOperator
    x = real_array(x, "x")

    def matvec(v):
        if np.iscomplexobj(v):      # a real operator: H (a + ib) = H a + i H b
            return matvec(np.real(v)) + 1j * matvec(np.imag(v))
        return hvp(f, x, real_array(v, "vector").reshape(x.shape), *args).reshape(-1)

    def matmat(V):
        if np.iscomplexobj(V):
            return matmat(np.real(V)) + 1j * matmat(np.imag(V))
        V = real_array(V, "matrix")
        return hvp(f, x, V.reshape(x.shape + (V.shape[1],)), *args).reshape(x.size, V.shape[1])
    return LinearOperator((x.size, x.size), matvec=matvec, rmatvec=matvec, matmat=matmat,
                          dtype=np.float64)


value = _numpy_api.value


stop_gradient = _numpy_api.stop_gradient
