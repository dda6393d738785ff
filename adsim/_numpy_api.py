"""NumPy's calls on active arrays, dispatched: ``ufunc`` serves
``__array_ufunc__``, ``array_function`` serves ``__array_function__``, and
the names below are what the compiled front end (adsim/_active.pyx) and the
rest of adsim call. The rules themselves live by topic in adsim/_np/.

Lists and tuples holding active values, given where NumPy takes an
array_like, become one active array here, before a rule sees them: in
``array_function``, ``ufunc`` and the operators (``binary``, ``matmul``,
``floor_divide``, ``remainder``, ``recorded_compare``, the ``dot`` method),
by the parameter tables of adsim/_np/array_likes.py.
"""
import sys

import numpy as np

from . import ops
from ._array_kinds import refuse as _refuse_kind
from ._np.core import (  # noqa: F401  (used by the front end and other modules)
    active_leaves, as_active, broadcast_to, compare, constant, copy, normalize_axis, shape_of,
    size_of, tape_of, unsupported)
from ._np import (
    array_likes, composed, core, elementwise, fft, histograms, linalg_composed, mapped,
    nanfunctions, numeric, ordering, polynomials, unique)
from ._np.complex import ComplexActive
from ._np import recorded_data
from ._np.recorded_arrays import RecordedArray, holds_recorded
from ._np import complex as complex_
from ._np.einsum import einsum, inner, tensordot
from ._np import einsum as _products
from ._np.elementwise import absolute, clip, stop_gradient, value, where  # noqa: F401
from ._np import integers as _integers
from ._np.integers import (  # noqa: F401
    around, current, exact_index, fmod, formatted, frozen, percent_number, printed, rounded)
from ._np.joins import (append, block, from_pieces, full_like, holds_active, insert, ones_like,
                        sequence_function, zeros_like)
from ._np.conversions import as_integers, astype_float  # noqa: F401  (Active.astype)
from ._np.layout import elementwise as lay_out_elementwise  # noqa: F401  (the front end)
from ._np import complex_linalg, emath, spectral_norms, eigen, hermitian, linalg
from ._np import sparse_products
from ._np import decompositions
from ._np.products import kron, outer, trace, vdot
from ._np.special import special_ufunc
from ._scipy.ufuncs import scipy_ufunc
from ._record.callers import ufunc_name
from ._record import plain_targets
from ._np.reductions import amax, amin, argmax, argmin, cumsum, mean, prod, sum
from ._np.views import (  # noqa: F401
    FlatIndexer, assign_inplace, expand_dims, getitem, index_map, pad, ravel,
    refresh_view, reshape, rollaxis, set_shape, setitem as _write_item, split_function, squeeze,
    transpose,
    triangle,
    user_broadcast_to, view_of)
from ._np.views import (broadcast_arrays, compress, copyto, diag, diagflat, extract,
                        fill_diagonal, may_share_memory, place, put, put_along_axis, putmask,
                        shares_memory, ufunc_at, unstack)
from ._opcodes import CompareKind, Opcode as Op
from ._active import Active, record_unary
from .errors import UnsupportedOperation


_BINARY_UFUNCS = ops.BINARY_UFUNCS
_UFUNC_OF_BINARY = {code: uf for uf, code in reversed(list(_BINARY_UFUNCS.items()))}
_COMPARE_UFUNCS = {np.less: CompareKind.CMP_LT, np.less_equal: CompareKind.CMP_LE,
                   np.greater: CompareKind.CMP_GT, np.greater_equal: CompareKind.CMP_GE,
                   np.equal: CompareKind.CMP_EQ, np.not_equal: CompareKind.CMP_NE}
def setitem(a, key, value):
    """``a[key] = value``; a list or tuple holding active values (a row of a
    matrix assembled entry by entry, ``A[i, i-1:i+2] = [a, b, c]``) is the
    array NumPy would make of it."""
    if isinstance(value, (list, tuple)) and holds_active(value):
        value = from_pieces(value)
    _write_item(a, key, value)


_AT_UFUNCS = {np.add: lambda a, b: a + b, np.subtract: lambda a, b: a - b,
              np.multiply: lambda a, b: a * b, np.divide: lambda a, b: a / b,
              np.maximum: np.maximum, np.minimum: np.minimum}


def _ldexp(x, exponent):
    """``x * 2**exponent`` of integer exponents: NumPy's ldexp, whose factor
    2**exponent is exact (so is the product, rounded once as ldexp rounds
    it), and whose derivative in x is that factor; the exponent is an
    integer, which is not differentiated and cannot be active."""
    if isinstance(exponent, Active):
        raise UnsupportedOperation("adsim: numpy.ldexp takes integer exponents, which an "
                                   "active array (float64) is not; pass a plain integer array")
    return x * np.ldexp(1.0, exponent)


_COMPOSED_UFUNCS = {
    np.deg2rad: lambda x: x * (np.pi / 180.0), np.rad2deg: lambda x: x * (180.0 / np.pi),
    np.radians: lambda x: x * (np.pi / 180.0), np.degrees: lambda x: x * (180.0 / np.pi),
    np.conjugate: copy, np.heaviside: composed.heaviside, np.fmax: composed.fmax,
    np.fmin: composed.fmin, np.divmod: lambda a, b: (floor_divide(a, b), remainder(a, b)),
    np.copysign: elementwise.copysign, np.ldexp: _ldexp,
    **{uf: rule for uf, rule in ((getattr(np, "vecdot", None), linalg_composed.vecdot),
                                 (getattr(np, "matvec", None), linalg_composed.matvec),
                                 (getattr(np, "vecmat", None), linalg_composed.vecmat))
       if uf is not None},       # NumPy >= 2.0 (vecdot), 2.2 (matvec, vecmat)
}


def _running(uf):
    """``uf.accumulate`` along an axis: one binary op per position."""
    def accumulate(a, axis=0):
        if a.ndim == 0:
            raise TypeError("cannot accumulate on a scalar")
        axis = normalize_axis(axis, a.ndim)
        if a.shape[axis] == 0:
            return a * 1.0
        pieces = [np.take(a, [0], axis=axis)]
        for k in range(1, a.shape[axis]):
            pieces.append(uf(pieces[-1], np.take(a, [k], axis=axis)))
        return np.concatenate(pieces, axis=axis)
    return accumulate


_REDUCTIONS = {np.add: lambda a, axis, keepdims: sum(a, axis=axis, keepdims=keepdims),
               np.multiply: lambda a, axis, keepdims: prod(a, axis=axis, keepdims=keepdims),
               np.maximum: lambda a, axis, keepdims: amax(a, axis=axis, keepdims=keepdims),
               np.minimum: lambda a, axis, keepdims: amin(a, axis=axis, keepdims=keepdims),
               np.logaddexp: lambda a, axis, keepdims: numeric.logaddexp_reduce(a, axis, keepdims),
               np.logaddexp2: lambda a, axis, keepdims: numeric.logaddexp_reduce(
                   a, axis, keepdims, base_e=False)}
_ACCUMULATIONS = {np.add: lambda a, axis: cumsum(a, axis=axis),
                  np.multiply: lambda a, axis: numeric.cumprod(a, axis=axis),
                  np.maximum: _running(np.maximum), np.minimum: _running(np.minimum),
                  np.logaddexp: _running(np.logaddexp), np.logaddexp2: _running(np.logaddexp2)}


def _operator(rule):
    """``rule(a, b)`` of two array_likes (an operator of the front end, or
    the function behind it)."""
    def operator(a, b):
        return rule(*array_likes.operands(a, b))
    operator.__name__ = operator.__qualname__ = rule.__name__
    operator.__doc__ = rule.__doc__
    return operator


def _or_sparse(rule):
    """``rule(a, b, ...)``, or the recorded sparse product when one side is a
    scipy.sparse matrix (or a LinearOperator of one): ``u @ L``,
    ``np.dot(L, u)``."""
    def product(a, b, *args, **kwargs):
        if sparse_products.is_sparse_operand(a) or sparse_products.is_sparse_operand(b):
            return sparse_products.product(a, b)
        return rule(a, b, *args, **kwargs)
    product.__name__ = product.__qualname__ = rule.__name__
    product.__doc__ = rule.__doc__
    return product


dot = _or_sparse(_operator(_products.dot))
def _matmul(a, b):
    """a @ b; complex when an operand is (a complex constant beside an active one)."""
    if complex_.is_complex(a) or complex_.is_complex(b):
        return complex_.bilinear(np.matmul, a, b)
    return _products.matmul(a, b)


matmul = _or_sparse(_operator(_matmul))
floor_divide = _operator(_integers.floor_divide)
remainder = _operator(_integers.remainder)


def recorded_compare(kind, a, b):
    """A comparison in the user's code: boolean data, which replays compute
    again (recorded_data); of complex operands, NumPy's refusal. Against a
    string or None (``bw_method == 'scott'`` given a number), NumPy's
    operator answers by type: all False for ``==``, all True for ``!=``,
    TypeError for an ordering."""
    for v, other in ((a, b), (b, a)):
        if isinstance(v, (str, bytes)) or v is None:
            if kind not in (CompareKind.CMP_EQ, CompareKind.CMP_NE):
                raise TypeError(f"adsim: an active array cannot be ordered against a "
                                f"{type(v).__name__} (NumPy has no such comparison)")
            out = np.full(shape_of(other), kind == CompareKind.CMP_NE)
            return out[()] if out.ndim == 0 else out
    a, b = array_likes.operands(a, b)
    if complex_.is_complex(a) or complex_.is_complex(b):
        return compare(kind, a, b)
    return recorded_data.compare(kind, a, b)


def _opts_out(v):
    """NumPy's rule for ndarray's operators: an operand whose type sets
    ``__array_ufunc__ = None`` (numpy.polynomial's series, say) handles the
    operation itself, so the operator returns NotImplemented (Python then
    calls the operand's reflected method: ``c * Polynomial`` is the series'
    ``__rmul__``)."""
    return getattr(type(v), "__array_ufunc__", False) is None


def _of_objects(v):
    """An array of Python objects (NumPy's ``np.asanyarray(Polynomial)`` in
    numpy.polynomial's ``mapdomain``)."""
    return type(v) is np.ndarray and v.dtype == object


def _objectwise(code, a, b):
    """a <op> b with an object array: NumPy's object loop, which applies the
    Python operator element by element (``active * polynomial`` goes to the
    polynomial's reflected method), an active operand taken element by
    element as 0-d active values."""
    def elements(v):
        if not isinstance(v, Active):
            return v
        out = np.empty(v.shape, dtype=object)
        for i in np.ndindex(v.shape):
            out[i] = v[i]
        return out
    return _UFUNC_OF_BINARY[code](elements(a), elements(b))


def binary(code, a, b):
    """a <op> b; a complex operand (active or constant) makes it complex. A
    scipy.sparse operand is the sparse class's to handle (``u * L`` of an
    spmatrix is its matrix product): NotImplemented sends Python to it."""
    if sparse_products.is_sparse_operand(a) or sparse_products.is_sparse_operand(b) or \
            _opts_out(a) or _opts_out(b):
        return NotImplemented
    if _of_objects(a) or _of_objects(b):
        return _objectwise(code, a, b)
    _refuse_kinds((a, b), lambda: "an operand of an operator on active arrays")
    a, b = array_likes.operands(a, b)
    if isinstance(a, RecordedArray) or isinstance(b, RecordedArray):
        return recorded_data.ufunc(_UFUNC_OF_BINARY[code], "__call__", (a, b), {})
    if complex_.is_complex(a) or complex_.is_complex(b):
        return complex_.binary(code, a, b)
    return core.binary(code, a, b)


_FLOAT64 = (None, np.float64, float, "float64", "d")     # dtype= of a float64 result


def _refuse_kinds(values, what):
    """np.matrix and masked-array operands compute otherwise than the plain
    arrays recorded (adsim/_array_kinds.py): refused, never recorded.
    ``what()`` names the operation (made only for the message)."""
    for v in values:
        if isinstance(v, np.ndarray) and type(v) is not np.ndarray:
            _refuse_kind(v, what(), UnsupportedOperation)


def ufunc(uf, method, inputs, kwargs):
    _refuse_kinds(inputs, lambda: f"an operand of {ufunc_name(uf)}")
    inputs = array_likes.ufunc_inputs(method, inputs)
    if mapped.is_python_ufunc(uf):             # made by np.frompyfunc
        return mapped.python_ufunc(uf, method, inputs, kwargs)
    if any(isinstance(v, RecordedArray) for v in inputs):
        return recorded_data.ufunc(uf, method, inputs, kwargs)
    if any(isinstance(v, ComplexActive) for v in inputs) or \
            method == "__call__" and _complex_data(inputs):
        return complex_.ufunc(uf, method, inputs, kwargs)
    if kwargs.get("out") is not None:
        rest = {k: v for k, v in kwargs.items() if k != "out"}
        operator_form = method == "__call__" and len(inputs) == 2 and not rest and \
            isinstance(kwargs["out"], tuple) and inputs[0] is kwargs["out"][0]  # a += b
        return _into_out(ufunc_name(uf), kwargs["out"], _computed_into(uf, method, inputs, rest,
                                                                       kwargs["out"]),
                         inputs, lambda values: getattr(uf, method)(
                             *_replace_actives(inputs, values), **kwargs), operator_form)
    if method == "__call__" and "where" in kwargs:
        raise UnsupportedOperation(
            f"adsim: `{ufunc_name(uf)}(..., where=...)` without `out=` leaves the entries where "
            f"the condition is False uninitialized (NumPy's own result there is whatever memory "
            f"held); pass out= (np.divide(a, b, out=np.zeros_like(a), where=b != 0)) or use "
            f"np.where")
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    if method == "__call__" and uf == getattr(np, "vecdot", None) and "axis" in kwargs and \
            set(kwargs) <= {"axis", "dtype"} and \
            kwargs.get("dtype") in _FLOAT64:
        return linalg_composed.vecdot(*inputs, axis=kwargs["axis"])    # the core axis chosen
    allowed = {"dtype", "axis", "keepdims"} if method == "reduce" else \
        {"dtype", "axis"} if method in ("accumulate", "reduceat") else {"dtype"}
    if kwargs.get("dtype") not in _FLOAT64 or \
            set(kwargs) - allowed:
        raise UnsupportedOperation(f"adsim: `{ufunc_name(uf)}` with arguments "
                                   f"{sorted(kwargs)} is not supported on active arrays")
    if method == "reduce" and uf in _REDUCTIONS:
        return _REDUCTIONS[uf](inputs[0], axis=kwargs.get("axis", 0),
                               keepdims=kwargs.get("keepdims", False))
    if method == "accumulate" and uf in _ACCUMULATIONS:
        return _as_ufunc_lays_out(_ACCUMULATIONS[uf](inputs[0], axis=kwargs.get("axis", 0)),
                                  inputs[:1])
    if method == "reduceat" and uf in _REDUCTIONS and len(inputs) == 2:
        return _reduceat(uf, inputs[0], inputs[1], kwargs.get("axis", 0))
    if method == "outer" and uf.nin == 2 and len(inputs) == 2:
        return ufunc(uf, "__call__", _outer_operands(*inputs), kwargs)
    if method == "at" and uf in _AT_UFUNCS:     # a plain target: refused there by name
        return ufunc_at(_AT_UFUNCS[uf], inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else 0.0)
    if method != "__call__":
        plain = on_plain_values(getattr(uf, method), inputs, kwargs)
        if plain is not None:
            return plain[0]
        raise unsupported(f"{ufunc_name(uf)}.{method}")
    if uf.signature is not None:            # matmul, vecdot, ...: not elementwise
        return _called(uf, inputs, kwargs)
    return _as_ufunc_lays_out(_called(uf, inputs, kwargs), inputs)


def _reduceat(uf, a, indices, axis):
    """``uf.reduceat(a, indices, axis)``, NumPy's definition: segment i is
    ``uf.reduce(a[indices[i]:indices[i + 1]])`` along ``axis`` (to the end
    for the last), or the single entry ``a[indices[i]]`` where the next
    index is not larger; the segments joined along ``axis``."""
    name = f"{ufunc_name(uf)}.reduceat"
    if isinstance(indices, Active) or active_leaves([indices]):
        raise UnsupportedOperation(f"adsim: `{name}` takes plain integer indices, not active "
                                   f"values; pass adsim.value(indices) cast to int")
    plain = uf.reduceat(np.zeros(shape_of(a)), indices, axis=axis)  # NumPy's errors, shape
    idx = np.asarray(indices).astype(np.intp)
    if idx.size == 0:
        return plain
    ndim = len(shape_of(a))
    axis = normalize_axis(axis, ndim)
    n = shape_of(a)[axis]
    pieces = []
    for i, start in enumerate(idx.tolist()):
        stop = idx[i + 1] if i + 1 < idx.size else n
        where = [slice(None)] * ndim
        where[axis] = slice(start, stop) if stop > start else slice(start, start + 1)
        part = a[tuple(where)]
        pieces.append(_REDUCTIONS[uf](part, axis=axis, keepdims=True) if stop > start else part)
    return np.concatenate(pieces, axis=axis)


def _outer_operands(a, b):
    """``uf.outer(a, b)`` is ``uf`` of a with b's dimensions appended as
    axes of length 1, against b: NumPy's definition, broadcast."""
    return np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), b


def _as_ufunc_lays_out(result, inputs):
    """An elementwise ufunc's new active results laid out as NumPy lays out
    a ufunc's (rules made of several ops, SciPy's ufuncs and accumulations
    among them)."""
    for out in (result if isinstance(result, tuple) else (result,)):
        if isinstance(out, Active) and not any(out is v for v in inputs):
            lay_out_elementwise(out, *inputs)
    return result


def _called(uf, inputs, kwargs):
    """``uf(*inputs)`` of active inputs."""
    if uf in (np.absolute, np.fabs):
        return absolute(inputs[0])
    if uf == np.positive:
        return copy(inputs[0])
    if uf in ops.UNARY_UFUNCS:
        return record_unary(inputs[0], ops.UNARY_UFUNCS[uf])
    if uf in _BINARY_UFUNCS:
        return binary(_BINARY_UFUNCS[uf], *inputs)
    if uf in _COMPARE_UFUNCS:
        return recorded_compare(_COMPARE_UFUNCS[uf], *inputs)
    if uf == np.matmul:
        return _products.matmul(*inputs)
    if uf in (np.isnan, np.isinf, np.isfinite):
        return recorded_data.ufunc(uf, "__call__", inputs, kwargs)      # boolean data
    if uf in _COMPOSED_UFUNCS:
        return _COMPOSED_UFUNCS[uf](*inputs)
    recorded = special_ufunc(uf)
    if recorded is None:
        recorded = scipy_ufunc(uf)
    if recorded is not None:
        return recorded(*inputs)
    plain = on_plain_values(uf, inputs, kwargs)
    if plain is not None:
        return plain[0]
    raise unsupported(ufunc_name(uf))


def has_rule_named(name):
    """Whether ``numpy.sum``-style ``name`` is a NumPy function or ufunc
    that adsim records when it gets an active array (the name may be bound
    to adsim's wrapper of it while a recording runs)."""
    module, _, attr = name.rpartition(".")
    obj = getattr(sys.modules.get(module), attr, None)
    try:
        return obj is not None and (obj in FUNCTIONS or isinstance(obj, np.ufunc) or
                                    getattr(obj, "__wrapped__", None) in FUNCTIONS)
    except TypeError:                       # unhashable
        return False


_ATTRIBUTE_ADVICE = {
    "resize": "it changes the array's size in place, which a recorded array cannot; make a "
              "new array: np.resize(x, shape) repeats the elements, np.pad or np.concatenate "
              "with zeros fill as ndarray.resize does",
    "put": "write through indexing instead: x.flat[indices] = values",
    "choose": "it uses the array as integer indices; call np.choose(indices, choices) with "
              "integer indices (np.floor(x).astype(int) of an active x is one)",
}
_RAW_MEMORY = ("it needs the memory of a plain array; take it of np.asarray(adsim.value(x)) (a "
               "value without derivative, checked on replay), or of the result after the "
               "recorded function returns")


def missing_attribute_message(name, shape):
    """What to say about ndarray's attribute ``name``, which Active lacks."""
    advice = _ATTRIBUTE_ADVICE.get(name)
    if advice is None and has_rule_named(f"numpy.{name}"):
        advice = f"call np.{name}(x, ...), which adsim records"
    return (f"adsim: active arrays (here of shape {shape}) have no ndarray attribute "
            f"`{name}`: {advice or _RAW_MEMORY}")


def _shape(a):
    return shape_of(a)


FUNCTIONS = {
    np.sum: sum, np.mean: mean, np.prod: prod, np.max: amax, np.amax: amax,
    np.min: amin, np.amin: amin, np.argmax: argmax, np.argmin: argmin, np.cumsum: cumsum,
    np.dot: _or_sparse(_products.dot), np.matmul: _or_sparse(_products.matmul), np.vdot: vdot,
    np.inner: inner,
    np.outer: outer, np.einsum: einsum, np.trace: trace,
    np.reshape: reshape, np.ravel: ravel, np.squeeze: squeeze, np.expand_dims: expand_dims,
    np.transpose: transpose, np.copy: copy, np.broadcast_to: user_broadcast_to,
    np.broadcast_arrays: broadcast_arrays,
    np.where: where, np.clip: clip, np.pad: pad, np.diff: numeric.diff,
    np.round: around, np.around: around, np.fix: lambda a, out=None: record_unary(a, int(Op.TRUNC)),
    np.var: numeric.var, np.std: numeric.std, np.cumprod: numeric.cumprod,
    np.convolve: numeric.convolve, np.correlate: numeric.correlate,
    np.trapezoid: numeric.trapezoid, np.polyval: numeric.polyval, np.gradient: numeric.gradient,
    np.polyder: numeric.polyder, np.polyint: numeric.polyint, np.polyadd: numeric.polyadd,
    np.polysub: numeric.polysub, np.polymul: numeric.polymul,
    np.polydiv: numeric.polydiv, np.logspace: composed.logspace,
    np.geomspace: composed.geomspace,
    np.sort: ordering.sort, np.argsort: ordering.argsort, np.searchsorted: ordering.searchsorted,
    np.digitize: ordering.digitize, np.interp: ordering.interp, np.median: ordering.median,
    np.quantile: ordering.quantile, np.percentile: ordering.percentile,
    np.sinc: elementwise.sinc, np.real: elementwise.real, np.imag: elementwise.imag,
    np.select: elementwise.select, np.choose: elementwise.choose, np.tensordot: tensordot, np.kron: kron, np.append: append,
    np.triu: lambda m, k=0: triangle(m, k, True), np.tril: lambda m, k=0: triangle(m, k, False),
    np.diag: diag, np.rollaxis: rollaxis, np.copyto: copyto, np.fill_diagonal: fill_diagonal,
    np.put: put, np.putmask: putmask, np.place: place, np.put_along_axis: put_along_axis,
    np.split: split_function(np.split), np.array_split: split_function(np.array_split),
    np.hsplit: split_function(np.hsplit), np.vsplit: split_function(np.vsplit),
    np.dsplit: split_function(np.dsplit),
    np.zeros_like: zeros_like, np.ones_like: ones_like, np.full_like: full_like,
    np.empty_like: zeros_like,
    np.concatenate: sequence_function(np.concatenate), np.stack: sequence_function(np.stack),
    np.hstack: sequence_function(np.hstack), np.vstack: sequence_function(np.vstack),
    np.column_stack: sequence_function(np.column_stack),
    np.shape: _shape, np.ndim: lambda a: len(shape_of(a)), np.size: lambda a, axis=None:
        size_of(shape_of(a)) if axis is None else shape_of(a)[axis],
    **spectral_norms.FUNCTIONS, **complex_linalg.FUNCTIONS,
    np.linalg.cholesky: linalg.cholesky, **hermitian.FUNCTIONS,
    np.linalg.qr: decompositions.qr, np.linalg.svd: decompositions.svd,
    np.linalg.pinv: decompositions.pinv, np.linalg.lstsq: decompositions.lstsq,
    np.average: composed.average, np.cross: composed.cross, np.ediff1d: composed.ediff1d,
    np.take_along_axis: composed.take_along_axis, np.meshgrid: composed.meshgrid,
    np.linspace: composed.linspace, np.isclose: composed.isclose, np.allclose: composed.allclose,
    np.array_equal: composed.array_equal, np.array_equiv: composed.array_equiv,
    np.shares_memory: shares_memory, np.may_share_memory: may_share_memory,
    np.array2string: printed(np.array2string), np.array_str: printed(np.array_str),
    np.array_repr: printed(np.array_repr),
    np.result_type: lambda *arrays_and_dtypes: np.result_type(
        *[a.dtype if isinstance(a, (Active, ComplexActive)) else a for a in arrays_and_dtypes]),
    **fft.FUNCTIONS, **eigen.FUNCTIONS, **emath.FUNCTIONS,
}


FUNCTIONS.update({
    # sorting, searching, counting
    np.partition: ordering.partition, np.argpartition: ordering.argpartition,
    np.nonzero: ordering.nonzero, np.count_nonzero: ordering.count_nonzero,
    np.all: ordering.all_, np.any: ordering.any_,
    np.argwhere: ordering.argwhere, np.flatnonzero: ordering.flatnonzero,
    np.trim_zeros: ordering.trim_zeros, np.lexsort: ordering.lexsort, **unique.functions(),
    np.histogram: histograms.histogram, np.bincount: histograms.bincount,
    np.histogram_bin_edges: histograms.histogram_bin_edges,
    np.histogramdd: histograms.histogramdd, np.histogram2d: histograms.histogram2d,
    np.polyfit: polynomials.polyfit,
    np.roots: polynomials.roots,
    np.unwrap: numeric.unwrap,
    np.diag_indices_from: lambda arr: np.diag_indices_from(np.broadcast_to(0.0, shape_of(arr))),
    # statistics, NaN-skipping ones included
    np.ptp: numeric.ptp, np.cov: numeric.cov, np.corrcoef: numeric.corrcoef,
    np.nanmedian: ordering.nanmedian, np.nanquantile: ordering.nanquantile,
    np.nanpercentile: ordering.nanpercentile, np.nansum: nanfunctions.nansum,
    np.nanmean: nanfunctions.nanmean, np.nanprod: nanfunctions.nanprod,
    np.nanmax: nanfunctions.nanmax, np.nanmin: nanfunctions.nanmin,
    np.nanargmax: nanfunctions.nanargmax, np.nanargmin: nanfunctions.nanargmin,
    np.nanvar: nanfunctions.nanvar, np.nanstd: nanfunctions.nanstd,
    np.nancumsum: nanfunctions.nancumsum, np.nancumprod: nanfunctions.nancumprod,
    # elementwise
    np.angle: elementwise.angle, np.nan_to_num: elementwise.nan_to_num,
    np.real_if_close: elementwise.real_if_close, np.isposinf: elementwise.isposinf,
    np.isneginf: elementwise.isneginf, np.i0: lambda x: _scipy_special_rule("i0")(x),
    # a real active array's type, read as NumPy reads a float64 array's (plain results)
    np.iscomplex: lambda x: np.zeros(shape_of(x), bool)[()],
    np.isreal: lambda x: np.ones(shape_of(x), bool)[()],
    np.iscomplexobj: lambda x: False, np.isrealobj: lambda x: True,
    np.common_type: lambda *arrays: np.common_type(*[
        np.empty(0, a.dtype) if isinstance(a, (Active, ComplexActive)) else a for a in arrays]),
    np.piecewise: composed.piecewise, np.vander: numeric.vander,
    np.apply_along_axis: mapped.apply_along_axis,
    # arrays from pieces, selections
    np.dstack: sequence_function(np.dstack), np.block: block, np.diagflat: diagflat,
    np.compress: compress, np.extract: extract,
    np.insert: insert,
    # np.linalg
    np.linalg.multi_dot: linalg_composed.multi_dot, np.linalg.cond: spectral_norms.cond,
    np.linalg.tensorsolve: linalg_composed.tensorsolve,
    np.linalg.tensorinv: linalg_composed.tensorinv,
    np.linalg.matrix_rank: linalg_composed.matrix_rank,
})

# NumPy's own code, written with NumPy on its arguments (recorded through them):
# NumPy 2.4 dispatches these two on their arguments; before, they dispatch nothing
# themselves and the NumPy functions they call are recorded as they are
for _f in (np.polynomial.polynomial.polyval2d, np.polynomial.polynomial.polygrid2d):
    if hasattr(_f, "_implementation"):
        FUNCTIONS[_f] = _f._implementation

# NumPy 2's names (the array API): registered where this NumPy has them
for _module, _name, _rule in (
        (np, "cumulative_sum", numeric.cumulative(cumsum, 0.0)),
        (np, "cumulative_prod", numeric.cumulative(numeric.cumprod, 1.0)),
        (np, "unstack", unstack),
        (np, "astype", lambda x, dtype, /, *, copy=True, device=None: x.astype(dtype, copy=copy)),
        (np.linalg, "matmul", linalg_composed.matmul), (np.linalg, "outer", linalg_composed.outer),
        (np.linalg, "vecdot", linalg_composed.vecdot), (np.linalg, "trace", linalg_composed.trace),
        (np.linalg, "diagonal", linalg_composed.diagonal),
        (np.linalg, "cross", linalg_composed.cross),
        (np.linalg, "matrix_transpose", linalg_composed.matrix_transpose),
        (np, "matrix_transpose", linalg_composed.matrix_transpose),
        (np.linalg, "vector_norm", linalg_composed.vector_norm),
        (np.linalg, "matrix_norm", linalg_composed.matrix_norm),
        (np.linalg, "svdvals", linalg_composed.svdvals)):
    if hasattr(_module, _name):
        FUNCTIONS[getattr(_module, _name)] = _rule


def _scipy_special_rule(name):
    import scipy.special
    return special_ufunc(getattr(scipy.special, name))


# functions that only move elements: recorded through index_map (views where
# NumPy gives views)
for _f in (np.flip, np.fliplr, np.flipud, np.roll, np.rot90, np.swapaxes, np.moveaxis,
           np.diagonal, np.repeat, np.tile, np.take, np.fft.fftshift, np.fft.ifftshift, np.resize,
           np.delete, np.lib.stride_tricks.sliding_window_view):
    FUNCTIONS[_f] = (lambda f: lambda a, *args, **kw: index_map(f, [a], *args, **kw))(_f)


def _atleast(f):
    """np.atleast_1d/2d/3d of one array, or of several (a tuple), each on its own."""
    def rule(*arys):
        out = tuple(index_map(f, [a]) if isinstance(a, Active) else f(a) for a in arys)
        return out[0] if len(out) == 1 else out
    return rule


for _f in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    FUNCTIONS[_f] = _atleast(_f)


def _computed_into(uf, method, inputs, kwargs, out):
    """What a ufunc call with ``out=`` computes: with ``where=``, the result
    where the condition holds and ``out``'s current values elsewhere."""
    if method != "__call__" or "where" not in kwargs:
        return lambda: ufunc(uf, method, inputs, kwargs)
    condition = kwargs["where"]
    rest = {k: v for k, v in kwargs.items() if k != "where"}
    target = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    return lambda: where(condition, ufunc(uf, method, inputs, rest), target)


def _into_out(name, out, compute, arguments, plain_call, operator_form=False):
    """NumPy's ``out=``: the result written into the active array ``out``,
    which is returned. A plain ``out`` (``plain += active``) is
    adsim/_record/plain_targets.py's: ``plain_call`` makes NumPy's call on
    the plain values of the active ``arguments`` (a nest of them)."""
    out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if isinstance(out, np.ndarray) and type(out) is np.ndarray:
        return plain_targets.written_into_plain(out, active_leaves(arguments), compute,
                                                plain_call, operator_form)
    if not isinstance(out, Active):
        raise UnsupportedOperation(f"adsim: `{name}(..., out=...)` writes an active result into "
                                   f"a {type(out).__name__}; assign the result instead")
    result = compute()
    if not isinstance(result, Active):
        result = as_active(tape_of(out), result)
    if result.shape != out.shape:
        result = broadcast_to(result, out.shape)
    _write_item(out, Ellipsis, result)
    return out


def _complex_data(values):
    """Whether an argument is complex: a complex active array (a list holding
    complex values becomes one) or complex data (a complex array or number)."""
    return any(isinstance(v, ComplexActive) or isinstance(v, np.ndarray) and v.dtype.kind == "c"
               or isinstance(v, (complex, np.complexfloating)) for v in values)


# functions whose rules take complex active arrays themselves
_TAKE_COMPLEX = {**fft.FUNCTIONS, **eigen.FUNCTIONS, **complex_linalg.FUNCTIONS,
                 **hermitian.FUNCTIONS, **spectral_norms.FUNCTIONS, **emath.FUNCTIONS}


def array_function(func, types, args, kwargs):
    impl = FUNCTIONS.get(func)
    if impl is not None and not kwargs and func not in _TAKE_COMPLEX:
        for a in args:      # active arrays alone: none of the cases below, at once
            if type(a) is not Active:
                break
        else:
            return impl(*args)
    if impl is None and getattr(func, "__wrapped__", None) in FUNCTIONS:
        func = func.__wrapped__         # adsim's wrapper (adsim/_record/listed.py), looked
        impl = FUNCTIONS[func]          # up in numpy while a recording runs
    _refuse_kinds((*args, *kwargs.values()), lambda: f"an argument of np.{func.__name__}")
    if impl is not None:
        args, kwargs = array_likes.arguments(func, args, kwargs)
    if holds_recorded(args, kwargs):
        return recorded_data.array_function(func, args, kwargs)
    if impl is not None and kwargs.get("out") is not None:
        rest = {k: v for k, v in kwargs.items() if k != "out"}
        return _into_out(f"numpy.{getattr(func, '__name__', func)}", kwargs["out"],
                         lambda: array_function(func, types, args, rest), (args, rest),
                         lambda values: func(*_replace_actives(args, values),
                                             **_replace_actives(kwargs, values)))
    if func not in _TAKE_COMPLEX and (ComplexActive in types or _complex_data(args) or
                                      _complex_data(kwargs.values())):
        return complex_.array_function(func, args, kwargs)
    if impl is None:
        plain = on_plain_values(func, args, kwargs)
        if plain is not None:
            return plain[0]
        raise unsupported(f"{getattr(func, '__module__', None) or 'numpy'}."
                          f"{getattr(func, '__name__', func)}")
    return impl(*args, **kwargs)



def on_plain_values(func, args, kwargs):
    """(func(*args, **kwargs),) computed on plain values when no active
    argument has a derivative (constants, adsim.value results): a function
    without a rule may then run as it is. The values are frozen under guards
    (a constant's guard always holds). None when some argument has a
    derivative."""
    if func in _WRITES_ITS_ARGUMENTS or kwargs.get("out") is not None:
        return None                 # a copy would take the write: never silently
    actives = active_leaves((args, kwargs))
    if not actives or any(a.tape.slot_is_varied(a.slot) for a in actives):
        return None
    values = {id(a): frozen(a, "") for a in actives}
    plain_args, plain_kwargs = _replace_actives((args, kwargs), values)
    return (func(*plain_args, **plain_kwargs),)


_WRITES_ITS_ARGUMENTS = {np.put, np.place, np.putmask, np.put_along_axis, np.add.at,
                         np.subtract.at, np.multiply.at, np.divide.at, np.maximum.at,
                         np.minimum.at}


def _replace_actives(obj, values, depth=0):
    if isinstance(obj, Active):
        return values[id(obj)]
    if isinstance(obj, (list, tuple)) and depth < 8:
        return type(obj)(_replace_actives(o, values, depth + 1) for o in obj)
    if isinstance(obj, dict) and depth < 8:
        return {k: _replace_actives(o, values, depth + 1) for k, o in obj.items()}
    return obj
