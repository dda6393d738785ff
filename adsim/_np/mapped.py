"""Python callables mapped over the elements or slices of active arrays:
``np.vectorize``, the ufuncs of ``np.frompyfunc``, ``np.apply_along_axis``.

The callable runs once per element (per slice), on an active element, so
what it does is recorded as any code of the recorded function is: its
Python branches (``t**2 if t > 0 else -t``) are branch records that every
replay checks, and a replay where an element takes the other branch raises
``BranchChanged`` (the functional API then records again). The results are
stacked into one array of NumPy's shape; the cost is one call and a few ops
per element, as a Python loop over the elements would be.
"""
import re

import numpy as np

from .._active import Active
from ..errors import UnsupportedOperation
from .core import active_leaves, normalize_axis, shape_of, size_of
from .joins import piece


def _stacked(values, shape, dtype=None):
    """One array of ``shape`` from per-element results: NumPy's own array
    when none is active, else the stack of the active ones and the numbers
    (cast to ``dtype`` as NumPy casts its outputs)."""
    if not active_leaves(values):
        return np.array(values, dtype=dtype).reshape(shape)
    for v in values:
        if len(shape_of(v)):
            raise ValueError("setting an array element with a sequence.")
    y = np.reshape(np.stack([v if isinstance(v, Active) else float(v) for v in values]), shape)
    if dtype is not None and np.dtype(dtype) != np.float64:
        y = y.astype(dtype)
    return y


def _outputs(results, shape, otypes):
    """The result arrays of per-element ``results`` (tuples when the callable
    returns several values); dtypes from ``otypes`` or, as NumPy does, from
    the first element's results."""
    several = isinstance(results[0], tuple)
    columns = list(zip(*results)) if several else [results]
    if otypes:
        dtypes = [np.dtype(t) for t in otypes]
    else:
        dtypes = [np.float64 if active_leaves([c[0]]) else np.asarray(c[0]).dtype
                  for c in columns]
    outs = tuple(_stacked(list(c), shape, t) for c, t in zip(columns, dtypes))
    return outs if several else outs[0]


def vectorize_call(vec, *args, **kwargs):
    """``np.vectorize(pyfunc, ...)(*args, **kwargs)`` with active arguments:
    the arguments not ``excluded`` broadcast together, ``pyfunc`` called on
    each element."""
    positions = [i for i in range(len(args)) if i not in vec.excluded]
    names = [k for k in kwargs if k not in vec.excluded]
    mapped = [piece(args[i]) for i in positions] + [piece(kwargs[k]) for k in names]
    if vec.signature is not None:
        if names:
            raise UnsupportedOperation("adsim: np.vectorize with signature= maps positional "
                                       "arguments only; pass the keywords positionally")
        return _with_signature(vec, args, positions, mapped)
    shape = np.broadcast_shapes(*[shape_of(a) for a in mapped])
    if size_of(shape) == 0:
        if not vec.otypes:
            raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        outs = tuple(np.empty(shape, dtype=t) for t in vec.otypes)
        return outs if len(outs) > 1 else outs[0]
    mapped = [np.broadcast_to(a, shape) for a in mapped]
    results = []
    for idx in np.ndindex(*shape):
        call_args, call_kwargs = list(args), dict(kwargs)
        for i, a in zip(positions, mapped):
            call_args[i] = a[idx]
        for k, a in zip(names, mapped[len(positions):]):
            call_kwargs[k] = a[idx]
        results.append(vec.pyfunc(*call_args, **call_kwargs))
    return _outputs(results, shape, vec.otypes)


def _pyfunc_reads_active_values(args, kwargs):
    """Whether the vectorized function reads active values from outside its
    arguments (a parameter in its closure, on an object, in a global): its
    calls on plain elements then return active values, which NumPy's own
    vectorize would convert to plain numbers."""
    from .._nesting.outer_values import reads_recorded_values
    pyfunc = getattr(args[0], "pyfunc", None) if args else None
    return callable(pyfunc) and reads_recorded_values(pyfunc)


vectorize_call.routes_also = _pyfunc_reads_active_values


_DIMS = re.compile(r"\(([^()]*)\)")


def _core_dims(part):
    """[('n',), ()] from '(n),()': the core dimension names of each operand."""
    return [tuple(d.strip() for d in dims.split(",") if d.strip()) for dims in
            _DIMS.findall(part)]


def _with_signature(vec, args, positions, mapped):
    """np.vectorize(pyfunc, signature='(n),(n)->()'): ``pyfunc`` of the core
    blocks, looped over the broadcast loop dimensions."""
    ins, _, outs = vec.signature.replace(" ", "").partition("->")
    in_dims, out_dims = _core_dims(ins), _core_dims(outs)
    if len(in_dims) != len(mapped):
        raise TypeError(f"wrong number of positional arguments: expected {len(in_dims)}, got "
                        f"{len(mapped)}")
    sizes, loops = {}, []
    for a, dims in zip(mapped, in_dims):
        shape = shape_of(a)
        if len(shape) < len(dims):
            raise ValueError(f"{len(shape)}-dimensional argument does not have enough "
                             f"dimensions for all core dimensions {dims}")
        core = shape[len(shape) - len(dims):]
        for d, n in zip(dims, core):
            if sizes.setdefault(d, n) != n:
                raise ValueError(f"inconsistent size for core dimension {d!r}: {n} vs "
                                 f"{sizes[d]}")
        loops.append(shape[:len(shape) - len(dims)])
    loop = np.broadcast_shapes(*loops)
    mapped = [np.broadcast_to(a, loop + shape_of(a)[len(s):]) for a, s in zip(mapped, loops)]
    results = []
    for idx in np.ndindex(*loop):
        call_args = list(args)
        for i, a in zip(positions, mapped):
            call_args[i] = a[idx]
        result = vec.pyfunc(*call_args)
        results.append(result if len(out_dims) > 1 else (result,))
    outputs = []
    for k, dims in enumerate(out_dims):
        pieces = [r[k] for r in results]
        if not loop:
            outputs.append(pieces[0])
        elif active_leaves(pieces):
            outputs.append(np.reshape(np.stack([p if isinstance(p, Active) else
                                                np.asarray(p, dtype=float) for p in pieces]),
                                      loop + shape_of(pieces[0])))
        else:
            outputs.append(np.reshape(np.array(pieces), loop + np.shape(pieces[0])))
    return tuple(outputs) if len(out_dims) > 1 else outputs[0]


def is_python_ufunc(uf):
    """Whether ``uf`` was made by ``np.frompyfunc`` (its loops take and give
    Python objects only)."""
    return uf.ntypes == 1 and set(uf.types[0].replace("->", "")) == {"O"}   # cheap first


def python_ufunc(uf, method, inputs, kwargs):
    """A ufunc of ``np.frompyfunc`` called on active arrays: NumPy's object
    loop runs its Python function on object arrays of active elements. A
    result holding active values is a float64 active array (NumPy's is of
    dtype object, which cannot carry derivatives)."""
    if method != "__call__" or any(v is not None for v in kwargs.values()):
        raise UnsupportedOperation(
            f"adsim: `{uf.__name__}`.{method} with arguments {sorted(kwargs)} is not supported on "
            f"active arrays; call the ufunc of np.frompyfunc on the arrays themselves")
    shape = np.broadcast_shapes(*[shape_of(a) for a in inputs])
    elements = []
    for a in inputs:
        a = np.broadcast_to(a, shape)
        if isinstance(a, Active):
            cells = np.empty(shape, dtype=object)
            for idx in np.ndindex(*shape):
                cells[idx] = a[idx]
            a = cells
        elements.append(a)
    outs = uf(*elements)
    outs = outs if isinstance(outs, tuple) else (outs,)
    made = tuple(_stacked([o] if shape == () else list(o.flat), shape, None) for o in outs)
    return made if len(made) > 1 else made[0]


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """NumPy's apply_along_axis: ``func1d`` of each 1-d slice along ``axis``,
    its results (all of one shape) placed where the axis was."""
    arr = piece(arr)
    ndim = len(shape_of(arr))
    axis = normalize_axis(axis, ndim)
    moved = np.moveaxis(arr, axis, -1)
    outer = shape_of(moved)[:-1]
    if size_of(outer) == 0:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [func1d(moved[idx], *args, **kwargs) for idx in np.ndindex(*outer)]
    res_shape = shape_of(results[0])
    if any(shape_of(r) != res_shape for r in results):
        raise ValueError(f"apply_along_axis: func1d gave results of shapes "
                         f"{sorted({shape_of(r) for r in results})}; NumPy needs one shape")
    if not active_leaves(results):
        buff = np.array(results, dtype=np.asarray(results[0]).dtype)
    else:
        buff = np.stack([r if isinstance(r, Active) else np.asarray(r, dtype=float)
                         for r in results])
    buff = np.reshape(buff, tuple(outer) + tuple(res_shape))
    nres = len(res_shape)
    n = len(shape_of(buff))
    order = list(range(axis)) + list(range(n - nres, n)) + list(range(axis, n - nres))
    return np.transpose(buff, order)
