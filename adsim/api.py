"""The functional API: grad, jvp, vjp, jacobian, hessian, hvp, ...

Each transformed function records its argument function on a tape and
replays the tape in C. A tape is reused for a later call only when that is
provably safe (see adsim/_tapecache/cache.py and docs/tape.md, "What the functional
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

Differentiated arguments, directions, weights and return values may be
containers (lists, tuples, dicts, namedtuples of arrays; see
adsim/_containers/tree.py): each leaf is one tape input, a returned container is one
flat output, and results come back in the containers' structure.
"""
import inspect

import numpy as np

from . import _numpy_api
from ._record.recording import check_record_call
from ._tapecache.cache import TapeCache, record_reaching, shared_cache
from ._tapecache.purity import reach_of
from ._nesting import leafwise
from ._nesting.nested import closure_actives, nested_derivative, nested_hvp
from ._active import Active
from ._transformed import Transformed, not_picklable
from ._containers.tree import check_same, flatten, is_container, split_flat, unflatten
from ._validate import (argnums as _argnums, entry_point, flag, function, given, name_of as _name,
                        real_array, resolve_argnums)
from .errors import (AdsimError, InvalidArgnums, InvalidArgument, InvalidArgumentValue,
                     UnsupportedOperation)

# how each transformation is called, for messages about its function argument
_USAGE = {
    "grad": "adsim.grad(f)(x), not adsim.grad(f(x))",
    "value_and_grad": "adsim.value_and_grad(f)(x), not adsim.value_and_grad(f(x))",
    "jacobian": "adsim.jacobian(f)(x), not adsim.jacobian(f(x))",
    "hessian": "adsim.hessian(f)(x), not adsim.hessian(f(x))",
    "hessp": "minimize(f, x0, hessp=adsim.hessp(f)), not adsim.hessp(f(x))",
    "laplacian": "adsim.laplacian(f)(x), not adsim.laplacian(f(x))",
    "jvp": "adsim.jvp(f, x, v), not adsim.jvp(f(x), x, v)",
    "vjp": "adsim.vjp(f, x, w), not adsim.vjp(f(x), x, w)",
    "hvp": "adsim.hvp(f, x, v), not adsim.hvp(f(x), x, v)",
    "grad_and_hvp": "adsim.grad_and_hvp(f, x, v), not adsim.grad_and_hvp(f(x), x, v)",
    "hvp_operator": "adsim.hvp_operator(f, x), not adsim.hvp_operator(f(x), x)",
}


def _function(f, entry):
    """``f`` checked to be a function, for the transformation ``entry``."""
    return function(f, entry, "f", _USAGE[entry])


def _pick(grads, argnums, single):
    """Gradients of the differentiated inputs (listed first on the tape)."""
    if not isinstance(grads, tuple):
        grads = (grads,)
    picked = grads[:len(argnums)]
    return picked[0] if single else tuple(picked)


def _per_argument(call, leaves, single):
    """Per-leaf results of the differentiated inputs (first on the tape)
    rebuilt into the containers of the differentiated arguments."""
    if not isinstance(leaves, tuple):
        leaves = (leaves,)
    out, lo = [], 0
    for tree in call.trees:
        n = tree.n_leaves
        out.append(leaves[lo] if tree.is_leaf else unflatten(tree, leaves[lo:lo + n]))
        lo += n
    return out[0] if single else tuple(out)


def _per_output(call, flat, axes=()):
    """A flat output (or its tangents, with direction ``axes``) rebuilt into
    the container the function returned."""
    if call.out_tree.is_leaf:
        return flat
    return unflatten(call.out_tree, split_flat(np.asarray(flat), call.out_shapes, axes))


def _one_output(call, what, f):
    if not call.out_tree.is_leaf:
        raise InvalidArgument(f"adsim: {what} needs a function with a scalar output; {_name(f)} "
                        f"returned the container {call.out_tree!r} (* marks an array). Return "
                        f"(loss, aux) with has_aux=True, or use adsim.jacobian or adsim.vjp")


def _check_scalar(tape, what, f):
    if tape.slot_size_of(tape.output_slot) != 1:
        raise InvalidArgumentValue(f"adsim: {what} needs a function with a scalar output; "
                         f"{_name(f)} returned shape {tuple(tape.output_shape)}. Use "
                         f"adsim.jacobian or adsim.vjp for vector outputs")


def _any_active(args, f, containers=False):
    """Whether an argument, or a value ``f`` reads from its closure, is
    active (a derivative taken inside a recording); containers of active
    values are refused there unless ``containers`` (gradients take them)."""
    active = bool(closure_actives(f))
    for a in args:
        if type(a) is np.ndarray or type(a) is float:      # the common cases, at once
            continue
        if isinstance(a, Active):
            active = True
        elif a is not None and is_container(a) and any(isinstance(leaf, Active)
                                                        for leaf in flatten(a)[0]):
            if containers:
                active = True
                continue
            raise UnsupportedOperation(
                f"adsim: {_name(f)} got a container of active values: derivatives taken inside "
                f"a recording take array arguments; pass the arrays as separate arguments")
    return active


def _aux_value_and_grad(tape, call, f, single):
    """((loss, aux), gradient of the loss) for ``f`` returning (loss, aux):
    the aux leaves are outputs of the tape too (so a replay gives their new
    values), weighted zero in the reverse sweep."""
    tree = call.out_tree
    if (tree.kind not in ("tuple", "list") or len(tree.children) != 2
            or not tree.children[0].is_leaf):
        raise InvalidArgument(f"adsim: with has_aux=True, {_name(f)} must return a pair (loss, "
                              f"aux) with one scalar loss; it returned {tree!r} (* marks an array)")
    if int(np.prod(call.out_shapes[0])) != 1:
        raise InvalidArgumentValue(f"adsim: grad needs a scalar loss; {_name(f)} returned a loss "
                                   f"of shape {call.out_shapes[0]} (with has_aux=True, the first "
                                   "of the pair)")
    w = np.zeros(tuple(tape.output_shape))
    w[0] = 1.0
    y, g = tape.vjp(tuple(call.values), w)
    aux = unflatten(tree.children[1], split_flat(np.asarray(y)[1:], call.out_shapes[1:]))
    return (float(np.asarray(y)[0]), aux), _per_argument(call, g, single)


@entry_point
def value_and_grad(f, argnums=0, cache=True, has_aux=False):
    """Return a function computing (f(*args), gradient of f w.r.t. args[argnums]).

    A differentiated argument may be a container of arrays; its gradient has
    the same structure. With ``has_aux=True``, f returns ``(loss, aux)`` and
    the result is ``((loss, aux), gradient)``, aux holding plain values."""
    _function(f, "value_and_grad")
    cache = flag(cache, "cache", "value_and_grad")
    has_aux = flag(has_aux, "has_aux", "value_and_grad")
    tapes = _gradient_tapes(f, cache, has_aux)
    return Transformed(_value_and_grad_call(f, argnums, has_aux, tapes), "value_and_grad", f,
                       tapes)


def _gradient_tapes(f, cache, has_aux):
    """The tape cache of ``grad``/``value_and_grad`` of ``f``."""
    return shared_cache(f, has_aux) if cache else TapeCache(False, has_aux)


def _value_and_grad_call(f, argnums, has_aux, tapes, want_value=True):
    """The function ``value_and_grad(f, ...)`` calls; ``grad`` calls it
    without a Transformed of its own (``adsim.grad(f)(x)`` written inline
    makes one per call), and without ``want_value`` (the value of a replay
    may then be NaN: a fused kernel skips it)."""
    nums, single = _argnums(argnums)

    def value_and_grad_f(*args, **kwargs):
        pos = resolve_argnums(nums, len(args), _name(f))
        if _any_active(args, f, containers=True):    # inside a recording: a nested derivative
            loss = _loss_of(f) if has_aux else f
            grads = _nested_gradients(loss, args, kwargs, pos, tapes, f)
            return f(*args, **kwargs), grads[0] if single else grads

        def method(tape, call):
            if has_aux:
                return _aux_value_and_grad(tape, call, f, single)
            _one_output(call, "grad", f)
            _check_scalar(tape, "grad", f)
            y, g = tape._value_and_gradient(call.values, want_value)
            return y, _per_argument(call, g, single)
        return tapes.run_call(f, args, kwargs, pos, method)
    return value_and_grad_f


def _nested_gradients(loss, args, kwargs, pos, tapes, f):
    """The gradients of ``loss`` w.r.t. ``args[i]`` for i in ``pos``, taken
    inside a recording, each shaped as its argument (as at the top level). A
    container argument is differentiated leaf by leaf: ``loss`` is called
    with the containers rebuilt from their leaves, each leaf an argument."""
    trees = [flatten(a) if is_container(a) else None for a in args]
    if not any(trees):
        return tuple(_scalar_gradient(nested_derivative(loss, args, kwargs, i, tapes), args[i], f)
                     for i in pos)
    flat, start = [], []                  # the leaves of every argument, in order
    for a, t in zip(args, trees):
        start.append(len(flat))
        flat.extend(t[0] if t else [a])

    def on_leaves(*leaves):
        rebuilt = [unflatten(t[1], leaves[s:s + len(t[0])]) if t else leaves[s]
                   for t, s in zip(trees, start)]
        return loss(*rebuilt, **kwargs)
    on_leaves.__name__ = _name(loss)
    leaf_tapes = TapeCache(False)         # on_leaves is made per call: nothing to keep

    def gradient(j):
        return _scalar_gradient(nested_derivative(on_leaves, flat, {}, j, leaf_tapes), flat[j], f)
    return tuple(unflatten(trees[i][1], [gradient(start[i] + k) for k in range(len(trees[i][0]))])
                 if trees[i] else gradient(start[i]) for i in pos)


def _scalar_gradient(jacobian, x, f):
    """A nested Jacobian (output shape + x's shape) as the gradient of a
    scalar output: shaped as ``x``; a larger output is refused as at the top."""
    x_shape, j_shape = np.shape(x), np.shape(jacobian)
    out_shape = j_shape[:len(j_shape) - len(x_shape)]
    if int(np.prod(out_shape)) != 1:
        raise InvalidArgumentValue(f"adsim: grad needs a function with a scalar output; {_name(f)} "
                         f"returned shape {tuple(out_shape)}. Use adsim.jacobian or adsim.vjp "
                         f"for vector outputs")
    return np.reshape(jacobian, x_shape) if out_shape else jacobian


def _loss_of(f):
    """The first of the (loss, aux) pair ``f`` returns."""
    def loss(*args, **kwargs):
        out = f(*args, **kwargs)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise InvalidArgument(f"adsim: with has_aux=True, {_name(f)} must return a pair "
                            f"(loss, aux); it returned {type(out).__name__}")
        return out[0]
    loss.__name__ = _name(f)
    return loss


@entry_point
def record(f, *args, **kwargs):
    """Run ``f(*args, **kwargs)`` once, recording every operation on the
    positional arguments (all of them are inputs); keyword arguments are
    constants. Returns the tape; its output is f's (single) return value.

    The tape freezes everything that is not an input: keyword arguments,
    closures, globals, object attributes and random draws keep the values
    they had while recording, whatever they are at replay."""
    check_record_call(f, args)
    # NumPy's functions are changed only where f's code can call them, when
    # a short walk of f's environment (and of the keyword arguments) sees it
    # all: changing every one costs more than recording a small function
    reach = reach_of(f, tuple(kwargs.values()))
    return record_reaching(f, args, kwargs, len(args), reach, getattr(f, "__code__", None))


@entry_point
def grad(f, argnums=0, cache=True, has_aux=False):
    """Return a function computing the gradient of scalar ``f`` w.r.t.
    ``args[argnums]`` (a tuple of gradients when argnums is a tuple), in the
    structure of the argument; ``(gradient, aux)`` with ``has_aux=True``."""
    _function(f, "grad")
    cache = flag(cache, "cache", "grad")
    has_aux = flag(has_aux, "has_aux", "grad")
    tapes = _gradient_tapes(f, cache, has_aux)
    value_and_grad_f = _value_and_grad_call(f, argnums, has_aux, tapes, want_value=has_aux)

    def grad_f(*args, **kwargs):
        value, g = value_and_grad_f(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return Transformed(grad_f, "grad", f, tapes)


def tapes_of(f):
    """The tape cache the one-shot functions (``jvp``, ``vjp``, ``hvp``,
    ``grad_and_hvp``, ``hessp``, ``laplacian``, ``hvp_operator``) keep for
    ``f``, with its ``recordings`` and ``reuse_blocked_by``."""
    return shared_cache(f)


def _several(x):
    """Whether ``x`` lists several arguments: a plain tuple or list (a
    namedtuple or a dict is one container argument)."""
    return type(x) is tuple or type(x) is list


def _primals(x):
    return tuple(x) if _several(x) else (x,)


def _leaves_like(tree, d, what, of):
    """The leaves of ``d`` (a direction or weight) checked to have the
    structure ``tree`` of ``of``, as real arrays."""
    if tree.is_leaf:
        return [real_array(d, what)]
    leaves, dtree = flatten(d)
    check_same(dtree, tree, what, of)
    return [real_array(leaf, f"{what}{p}") for p, leaf in zip(tree.paths(), leaves)]


def _directions(call, x, v, what):
    """Per-input-leaf directions (or weights) checked as real arrays, in the
    structure of the arguments."""
    vs = _primals(v) if _several(x) else (v,)
    _check_count(len(vs), len(call.trees), what)
    return tuple(leaf for i, (tree, d) in enumerate(zip(call.trees, vs))
                 for leaf in _leaves_like(tree, d, f"{what} {i}", f"argument {i}"))


def _check_count(n_directions, n_primals, what):
    """One tangent (or weight) per primal, as the primals are given."""
    if n_directions != n_primals:
        entry = "jvp" if what == "tangent" else "vjp"
        raise InvalidArgumentValue(
            f"adsim.{entry}: {n_directions} {what}{'s' if n_directions != 1 else ''} for "
            f"{n_primals} primal{'s' if n_primals != 1 else ''}; pass one {what} per argument, "
            f"in the form of the primals (a tuple or list of {n_primals}), each in its "
            f"argument's structure and shape (with a trailing axis of k directions, if any)")


def _primals_call(f, x, entry, run):
    """``run()`` (which calls ``f`` with the primals ``x``); a call that
    cannot fit ``f``'s parameters because ``x`` is a tuple or list of
    several arguments raises :class:`adsim.errors.InvalidArgument` naming
    the accepted forms."""
    try:
        return run()
    except TypeError as err:
        if not _several(x) or _fits(f, len(x)) or (
                isinstance(err, AdsimError) and not getattr(err, "off_signature", False)):
            raise
        direction = "(v1, ..., vn)" if entry == "jvp" else "w"
        one = "v" if entry == "jvp" else "w"
        raise InvalidArgument(
            f"adsim.{entry}: the primals are a {type(x).__name__} of {len(x)} items, which "
            f"{entry} reads as JAX does, one item per positional argument of {_name(f)}; but "
            f"{_name(f)}{_signature(f)} cannot take {len(x)} positional arguments. Accepted "
            f"forms: {entry}(f, x, {one}) with one array x (np.asarray(...) of a list of "
            f"numbers), or {entry}(f, (x1, ..., xn), {direction}) with a tuple or list of one "
            f"item per argument; an argument that is itself a list or tuple goes in a tuple "
            f"of its own: {entry}(f, (x,), {'(v,)' if entry == 'jvp' else 'w'})") from err


def _fits(f, n):
    """Whether ``f`` can take ``n`` positional arguments (True when its
    signature cannot be read)."""
    try:
        inspect.signature(f).bind(*range(n))
    except TypeError:
        return False
    except ValueError:                  # no signature to read (a builtin)
        return True
    return True


def _signature(f):
    try:
        return str(inspect.signature(f))
    except (TypeError, ValueError):
        return ""


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
        given_shapes = [np.shape(d) for d in directions]
        raise InvalidArgumentValue(f"adsim: the {what}s have shapes {given_shapes}; expected the "
                                   f"{of} shapes {[tuple(s) for s in shapes]}, each with the "
                                   f"same trailing number of directions or none")
    return axes.pop() if axes else ()


def _empty_result_axes(tape, directions, shapes, what, of="input"):
    """The direction axes when no sweep is needed (or possible) because all
    arrays are empty or there are zero directions -- the results are then
    empty arrays -- else None (the sweep runs and checks the shapes)."""
    if tape.arena_elements and all(_trailing(d, s) != (0,) for d, s in zip(directions, shapes)):
        return None
    return _direction_axes(directions, shapes, what, of)


@entry_point
def jvp(f, x, v):
    """(f(x), J v) by one forward sweep. ``x`` and ``v`` are arrays, or tuples
    of arrays for functions of several arguments; ``v`` may carry k
    directions in a trailing axis. A list of primals is read as a tuple (as
    JAX reads them); an argument that is itself a list goes in a tuple:
    ``jvp(f, (x,), (v,))``."""
    _function(f, "jvp")
    xs = _primals(x)
    vs = _primals(v) if _several(x) and isinstance(v, (tuple, list)) else (v,)
    _check_count(len(vs), len(xs), "tangent")
    if _any_active(xs + vs, f, containers=True):     # inside a recording: nested derivatives
        return _primals_call(f, x, "jvp", lambda: leafwise.jvp(f, xs, vs))
    nums = tuple(range(len(xs)))

    def method(tape, call):
        values = call.values
        vs = _directions(call, x, v, "tangent")
        axes = _empty_result_axes(tape, vs, [np.shape(a) for a in values], "tangent")
        if axes is not None:
            y, t = tape.forward(*values), np.zeros(tuple(tape.output_shape) + axes)
        else:
            y, t = tape.jvp(tuple(values), vs)
            axes = _trailing(t, tuple(tape.output_shape))
        return _per_output(call, y), _per_output(call, t, axes)
    return _primals_call(f, x, "jvp", lambda: shared_cache(f).run_call(f, xs, {}, nums, method))


@entry_point
def vjp(f, x, w):
    """(f(x), J^T w) by one reverse sweep; ``w`` has f's output shape (or a
    trailing axis of k weights). ``x`` is an array, or a tuple (or list) of
    the arguments, as for :func:`jvp`."""
    _function(f, "vjp")
    xs = _primals(x)
    single = not _several(x)
    if _any_active(xs + (w,), f, containers=True):   # inside a recording: nested derivatives
        def nested():
            y, g = leafwise.vjp(f, xs, w)
            return y, (g[0] if single else g)      # the structure of the primals, as below
        return _primals_call(f, x, "vjp", nested)
    nums = tuple(range(len(xs)))
    if not is_container(w):
        w = real_array(w, "adjoint weight")

    def method(tape, call):
        values = call.values
        W = _output_weight(call, w)
        axes = _empty_result_axes(tape, [W], [tuple(tape.output_shape)], "adjoint weight",
                                  "output")
        if axes is not None:
            g = tuple(np.zeros(np.shape(a) + axes) for a in values)
            return _per_output(call, tape.forward(*values)), _per_argument(call, g, single)
        y, g = tape.vjp(tuple(values), W)
        return _per_output(call, y), _per_argument(call, g, single)
    return _primals_call(f, x, "vjp", lambda: shared_cache(f).run_call(f, xs, {}, nums, method))


def _output_weight(call, w):
    """The adjoint weight(s) ``w``, in the structure of the output, as one
    flat array (with the trailing axis of k weights, if any)."""
    if call.out_tree.is_leaf:
        return real_array(w, "adjoint weight")
    ws = _leaves_like(call.out_tree, w, "adjoint weight", "output")
    axes = _direction_axes(ws, call.out_shapes, "adjoint weight", "output")
    return np.concatenate([d.reshape((-1,) + axes) for d in ws]) if ws else np.zeros((0,) + axes)


_MODE_NAMES = {"fwd": "forward", "rev": "reverse"}     # check_grads' names of the modes
_MODES = (None, "forward", "reverse", "fwd", "rev")


@entry_point
def jacobian(f, argnums=0, mode=None, cache=True):
    """Return a function computing the dense Jacobian of f, shaped
    output.shape + input.shape; forward or reverse sweeps, whichever needs
    fewer directions, unless ``mode`` says."""
    _function(f, "jacobian")
    nums, single = _argnums(argnums)
    if not (mode is None or isinstance(mode, str) and mode in _MODES):
        raise InvalidArgumentValue(
            f"adsim.jacobian: mode must be None (forward or reverse sweeps, whichever needs "
            f"fewer), 'forward' (or 'fwd') or 'reverse' (or 'rev'), got {given(mode)}")
    tapes = shared_cache(f) if flag(cache, "cache", "jacobian") else TapeCache(False)
    mode = _MODE_NAMES.get(mode, mode) if isinstance(mode, str) else mode

    def jacobian_f(*args, **kwargs):
        pos = resolve_argnums(nums, len(args), _name(f))
        if _any_active(args, f):    # inside a recording: a nested derivative
            jacs = tuple(nested_derivative(f, args, kwargs, i, tapes) for i in pos)
            return jacs[0] if single else jacs

        def method(tape, call):
            J = tape.jacobian(*call.values, mode=mode)
            J = J if isinstance(J, tuple) else (J,)
            if call.out_tree.is_leaf:
                return _per_argument(call, J, single)
            rows = [split_flat(j, call.out_shapes, j.shape[1:]) for j in J]
            return unflatten(call.out_tree, [_per_argument(call, tuple(r[k] for r in rows), single)
                                             for k in range(len(call.out_shapes))])
        return tapes.run_call(f, args, kwargs, pos, method)
    return Transformed(jacobian_f, "jacobian", f, tapes)


@entry_point
def grad_and_hvp(f, x, v, *args):
    """(gradient, Hessian-vector product) of scalar f at x from one tangent
    and one second-order adjoint sweep; ``v`` may carry k directions. ``x``
    may be a container of arrays, ``v`` then has its structure."""
    _function(f, "grad_and_hvp")
    if _any_active((x, v) + args, f):     # inside a recording: nested derivatives
        return nested_hvp(f, grad(f), x, v, args)
    if x is not None and is_container(x):
        return _container_grad_and_hvp(f, x, v, args)
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


def _container_grad_and_hvp(f, x, v, args):
    """grad_and_hvp for ``x`` a container: each leaf is a tape input."""
    def method(tape, call):
        _one_output(call, "hvp", f)
        _check_scalar(tape, "hvp", f)
        n = call.trees[0].n_leaves
        values = call.values
        vs = _leaves_like(call.trees[0], v, "direction", "argument 0")
        dirs = _direction_axes(vs, [np.shape(a) for a in values[:n]], "direction")
        if dirs == (0,) or n == 0:      # nothing to sweep for H v
            g = tape.value_and_gradient(*values)[1] if n else ()
            return (_per_argument(call, g, True),
                    _per_argument(call, tuple(np.zeros(np.shape(a) + dirs) for a in values), True))
        g, hv = tape.gradient_and_hvp(tuple(values), tuple(vs) + tuple(
            np.zeros(np.shape(a) + dirs) for a in values[n:]))
        return _per_argument(call, g, True), _per_argument(call, hv, True)
    return shared_cache(f).run_call(f, (x,) + args, {}, (0,), method)


@entry_point
def hvp(f, x, v, *args):
    """Hessian-vector product H(x) v of scalar f (reverse on forward); ``x``
    may be a container of arrays, ``v`` then has its structure."""
    _function(f, "hvp")
    if args or (x is not None and is_container(x)):
        return grad_and_hvp(f, x, v, *args)[1]
    if _any_active((x, v), f):           # inside a recording: nested derivatives
        return nested_hvp(f, grad(f), x, v, ())[1]
    v = real_array(v, "direction")

    def method(tape, values):           # one input: the tape's direct path
        _check_scalar(tape, "hvp", f)
        if _trailing(v, values[0].shape) == (0,):       # zero directions: nothing to sweep
            _direction_axes([v], [values[0].shape], "direction")
            return np.zeros(values[0].shape + (0,))
        return tape.hvp(values[0], v)
    return shared_cache(f).run(f, (x,), {}, (0,), method)


@entry_point
def hessp(f):
    """``hessp(x, p, *args)`` for scipy.optimize.minimize."""
    _function(f, "hessp")

    def hessp_f(x, p, *args):
        if _any_active((x, p) + args, f):
            return hvp(f, x, p, *args)
        return hvp(f, real_array(x, "x"), real_array(p, "p"), *args)
    return Transformed(hessp_f, "hessp", f, shared_cache(f))


@entry_point
def hessian(f, argnums=0):
    """Return a function computing the dense Hessian of scalar f w.r.t. one
    argument, from vector-mode Hessian-vector products (symmetrised)."""
    _function(f, "hessian")
    if not isinstance(argnums, (int, np.integer)) or isinstance(argnums, bool):
        raise InvalidArgnums(f"adsim: hessian takes one argnum (an int: the Hessian is taken "
                             f"with respect to one argument), got argnums={given(argnums)}. For "
                             f"the Hessian in several arrays, pass them in one container "
                             f"argument (a tuple or dict): its blocks come back nested")
    nums, _ = _argnums(argnums)

    def g(xx, p, *r):   # made once, so that its tapes stay cached between calls
        return f(*(r[:p] + (xx,) + r[p:]))

    def differentiated(p):
        """The function whose first argument is ``args[p]``, and the arguments
        it takes after it: ``f`` itself for the first argument (so that
        ``adsim.hessian(f)(x)`` written inline replays f's tapes), else ``g``."""
        return (f, ()) if p == 0 else (g, (p,))

    def hessian_f(*args):
        p = resolve_argnums(nums, len(args), _name(f))[0]
        if _any_active(args, f):         # inside a recording: a Jacobian of the gradient
            return jacobian(grad(f, argnums=p), argnums=p)(*args)
        rest = args[:p] + args[p + 1:]
        h, leading = differentiated(p)
        if args[p] is not None and is_container(args[p]):
            return _container_hessian(h, args[p], leading + rest, f, p)
        x = real_array(args[p], f"argument {p} of {_name(f)}")
        eye = np.eye(x.size).reshape(x.shape + (x.size,))
        H = hvp(h, x, eye, *leading, *rest).reshape(x.size, x.size)
        H = 0.5 * (H + H.T)
        return H.reshape(x.shape + x.shape)
    return Transformed(hessian_f, "hessian", f, shared_cache(f if nums == (0,) else g))


def _container_hessian(h, x, after, f, p):
    """The Hessian w.r.t. a container argument: blocks shaped
    ``leaf_i.shape + leaf_j.shape`` in the container of containers (as JAX
    nests them), from one vector-mode sweep over all leaves."""
    leaves, tree = flatten(x)
    xs = [real_array(leaf, f"argument {p}{path} of {_name(f)}")
          for path, leaf in zip(tree.paths(), leaves)]
    n = sum(a.size for a in xs)
    eye = np.eye(n)
    directions = split_flat(eye, [a.shape for a in xs], (n,))
    hv = hvp(h, unflatten(tree, xs), unflatten(tree, directions), *after)
    H = np.concatenate([np.reshape(b, (-1, n)) for b in flatten(hv)[0]]) if n else eye
    H = 0.5 * (H + H.T)
    start = np.cumsum([0] + [a.size for a in xs])
    return unflatten(tree, [unflatten(tree, [
        H[start[i]:start[i + 1], start[j]:start[j + 1]].reshape(a.shape + b.shape)
        for j, b in enumerate(xs)]) for i, a in enumerate(xs)])


@entry_point
def laplacian(f):
    """Return a function computing the trace of the Hessian of scalar f."""
    _function(f, "laplacian")

    def laplacian_f(x, *args):
        if _any_active((x,) + args, f):  # inside a recording: the trace of a nested Hessian
            H = hessian(f)(x, *args)
            return np.trace(H.reshape(x.size, x.size))
        x = real_array(x, "x")
        eye = np.eye(x.size).reshape(x.shape + (x.size,))
        H = hvp(f, x, eye, *args).reshape(x.size, x.size)
        return float(np.trace(H))
    return Transformed(laplacian_f, "laplacian", f, shared_cache(f))


@entry_point
def hvp_operator(f, x, *args):
    """The Hessian of scalar f at x as a symmetric scipy LinearOperator:
    of f as it reads when the operator is made (its tape is recorded then)."""
    _function(f, "hvp_operator")
    return _hessian_operator()(f, real_array(x, "x"), args)


_OPERATOR = []


def _hessian_operator():
    """The LinearOperator class of :func:`hvp_operator` (made on first use:
    SciPy's sparse.linalg is imported only then)."""
    if _OPERATOR:
        return _OPERATOR[0]
    from scipy.sparse.linalg import LinearOperator

    def _fitted(name):
        """LinearOperator's ``name`` (dot, matvec, ...), its operand's
        shape checked first (HessianOperator._fits)."""
        def method(self, v):
            self._fits(v)
            return getattr(LinearOperator, name)(self, v)
        method.__name__ = name
        return method

    class HessianOperator(LinearOperator):
        """H(x) of scalar f: products with vectors and matrices by
        Hessian-vector products; symmetric, real (H (a + ib) = H a + i H b)."""

        def __init__(self, f, x, args):
            super().__init__(np.float64, (x.size, x.size))
            self.f, self.x, self.args = f, x, args
            # f's tape at x, recorded now: products taken later (a list of
            # operators made in a loop that updates a dict f reads) are of the
            # Hessian of f as it read when the operator was made
            self._pinned = shared_cache(f).run(f, (x,) + tuple(args), {}, (0,),
                                               lambda tape, values: (tape, values))
            _check_scalar(self._pinned[0], "hvp_operator", f)

        def _products(self, V):
            """H V for V shaped x.shape (+ (k,) for k directions)."""
            tape, values = self._pinned
            dirs = V.shape[self.x.ndim:]
            hv = tape.gradient_and_hvp(tuple(values), (V,) + tuple(
                np.zeros(np.shape(a) + dirs) for a in values[1:]))[1]
            return _pick(hv, (0,), True)

        dot, matvec, rmatvec, matmat = (_fitted(name) for name in
                                        ("dot", "matvec", "rmatvec", "matmat"))

        def _fits(self, v):
            """Refuse an array whose rows are not x's size by name (SciPy's
            own error says "dimension mismatch"): the operator takes x
            raveled, as every LinearOperator takes vectors."""
            if isinstance(v, (LinearOperator, int, float, complex, np.number)):
                return
            shape, n = np.shape(v), self.x.size
            if shape and shape[0] == n and len(shape) <= 2:
                return
            shaped = " (x's own shape)" if shape == self.x.shape else ""
            raise InvalidArgumentValue(
                f"adsim.hvp_operator: the operator is the Hessian on vectors of x raveled "
                f"(x.size = {n}), as a scipy LinearOperator takes vectors (n,) or matrices "
                f"(n, k); got an array of shape {shape}{shaped}. Use "
                f"(H @ v.ravel()).reshape(x.shape), or adsim.hvp(f, x, v) for v shaped as x")

        def _matvec(self, v):
            if np.iscomplexobj(v):
                return self._matvec(np.real(v)) + 1j * self._matvec(np.imag(v))
            x = self.x
            return self._products(real_array(v, "vector").reshape(x.shape)).reshape(-1)

        def _rmatvec(self, v):
            return self._matvec(v)

        def _matmat(self, V):
            if np.iscomplexobj(V):
                return self._matmat(np.real(V)) + 1j * self._matmat(np.imag(V))
            x = self.x
            V = real_array(V, "matrix")
            return self._products(V.reshape(x.shape + (V.shape[1],))).reshape(x.size, V.shape[1])

        def _adjoint(self):
            return self

        def __copy__(self):
            return self

        def __deepcopy__(self, memo):
            return self

        def __reduce__(self):
            raise not_picklable("hvp_operator", self.f)
    _OPERATOR.append(HessianOperator)
    return HessianOperator


value = _numpy_api.value


stop_gradient = _numpy_api.stop_gradient
