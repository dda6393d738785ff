"""SciPy functions that are linear (or affine) in one array argument while
their other arguments are plain: the smoothing, differencing and resampling
filters of ``scipy.signal`` (savgol_filter, filtfilt, sosfilt, ...) and
``scipy.ndimage`` (gaussian_filter, uniform_filter, convolve with plain
weights, zoom, ...), differentiated as the maps they are.

For y = L(x) = A x + b with L fixed by the plain arguments: the value is
SciPy's own L(x); the tangent is A dx, the adjoint A^T w. A is read off
SciPy's function by probing, columns whose responses cannot overlap
sharing one call (Curtis, Powell and Reid, "On the estimation of sparse
Jacobian matrices", 1974): b = L(0); the response to one impulse at the
middle gives the filter's reach r in each axis; impulses 4r + 1 apart in
every axis, whose responses (with a reflecting boundary's folds, at most 2r
from the impulse) stay apart, are probed in one call. The matrix is then
checked against SciPy's function on a random array. Where it disagrees (a
'wrap' boundary, a recursive filter whose response fills the array, a
change of shape) the columns are probed one call each, up to
:data:`DENSE_PROBES_UP_TO`; a map that still disagrees is not affine in
that argument and is refused, as is a larger one. Matrices are kept per
function, plain arguments and shape (:data:`KEPT`).

Tape files hold each map as one of adsim's built-in primitives, of a
family per SciPy function named as the function is published: its plain
settings (adsim/_scipy/plain_settings.py) and A. A loaded map calls SciPy's
function with those settings for its value and uses the saved A for its
derivatives, so it replays bitwise like the recording; before its first
value it checks A against SciPy's function as recording did."""
import collections
import functools
import inspect
import threading

import numpy as np
import scipy.sparse as sp

from .._active import Active
from .._filefields import shape_field, size_of
from .._np.core import active_leaves
from .._np.integers import plain_if_constant
from ..errors import TapeFileError, UnsupportedOperation
from ..primitives import BuiltinFamily, primitive
from .arrays import array
from .plain_settings import decoded, encoded, packed, unpacked

__all__ = ["linear_in"]

DENSE_PROBES_UP_TO = 4096
"""Columns probed one call each at most (a map whose responses overlap)."""

KEPT = 64
"""Matrices (and their primitives) kept, the most recently used."""

_kept = collections.OrderedDict()
_lock = threading.Lock()


def linear_in(function, data, public):
    """The rule for SciPy's ``function`` (published as ``public``), linear
    in its argument named ``data``. Registers the family of its recorded
    maps for tape files, named ``public``."""
    signature = inspect.signature(function)
    family = BuiltinFamily(public, RULES_VERSION, functools.partial(
        _loaded, public, functools.partial(_applied, function, signature, data)),
        _loaded_bytes)

    @functools.wraps(function)
    def rule(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        # constants made in the recorded function (np.array([...]) of numbers) are plain
        settings = {k: _plain(v) for k, v in bound.arguments.items() if k != data}
        if active_leaves(settings):
            raise UnsupportedOperation(
                f"adsim: {public} is differentiated in its argument `{data}` only; here "
                f"{', '.join(sorted(k for k, v in settings.items() if active_leaves(v)))} "
                f"depends on the inputs being differentiated. Keep those plain, or write the "
                f"computation with NumPy functions adsim supports")
        out = settings.get("output")
        if out is not None and not isinstance(out, (type, np.dtype, str)):
            raise UnsupportedOperation(
                f"adsim: {public}(..., output=array) writes an active result into a plain "
                f"array; leave output out and use the returned array")
        x = array(bound.arguments[data], public)
        apply = _applied(function, signature, data, settings)
        if not isinstance(x, Active):
            return apply(x)
        return _recorded(public, family, apply, settings, x.shape)(x)
    return rule


def _applied(function, signature, data, settings):
    """SciPy's ``function`` of its argument ``data`` alone, the others ``settings``."""
    def apply(v):                  # a binding of its own: kept primitives run it anywhere
        again = inspect.BoundArguments(signature, {**settings, data: v})
        return np.asarray(function(*again.args, **again.kwargs))
    return apply


def _recorded(public, family, apply, settings, shape):
    """The primitive of ``apply`` (on arrays of ``shape``), kept per key."""
    settings_key = _key(settings)
    key = None if settings_key is None else (public, shape, settings_key)
    with _lock:
        if key is not None and key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    A, out_shape = _matrix(public, apply, shape)
    prim = _primitive(public, apply, A, shape, out_shape)
    try:
        coded = encoded(settings)
    except TypeError as err:
        prim.not_saved = (f"a linear map read off SciPy's function whose settings hold {err} "
                          f"(adsim/_scipy/plain_settings.py)")
    else:
        family.adopt_lazily(prim, lambda: dict(settings=coded,
                                               **_matrix_parameters(A, shape, out_shape)))
    if key is not None:
        with _lock:
            _kept[key] = prim
            while len(_kept) > KEPT:
                _kept.popitem(last=False)
    return prim


def _primitive(public, apply, A, shape, out_shape, check=None):
    """The primitive of the map ``apply`` with matrix ``A`` (``check``: run
    once before its first value, a loaded map's check against SciPy)."""
    def value(x):
        if check is not None:
            check()
        return apply(x).astype(float)

    def jvp(args, out, tangents):
        return np.reshape(A @ np.reshape(tangents[0], (-1,)), out_shape)

    def vjp(args, out, w):
        return (np.reshape(A.T @ np.reshape(w, (-1,)), shape),)
    prim = primitive(value, jvp=jvp, vjp=vjp, linear=True, name=None)
    prim.name = public
    return prim


# ---- tape files: a family of maps per SciPy function (docs/tape-format.md) -----

RULES_VERSION = 1
"""Version of the rules of every linear-map family: value SciPy's function
with the saved settings, tangent A dx, adjoint A^T w with the saved A."""


def _matrix_parameters(A, shape, out_shape):
    """A (CSR) and the shapes as a family's parameters: the arrays compressed,
    as base64 (a probed matrix has fewer than 2**31 columns and entries)."""
    A = sp.csr_matrix(A)
    return {"shape": list(shape), "out_shape": list(out_shape), "nnz": int(A.nnz),
            "indptr": packed(A.indptr.astype("<i4"), True),
            "indices": packed(A.indices.astype("<i4"), True),
            "data": packed(A.data.astype("<f8"), True)}


def _loaded_bytes(shape, out_shape, nnz, **others):
    """The bytes a loaded matrix takes (its arrays inflated), for the memory
    bound of a load: a compressed matrix of zeros is a few bytes of file."""
    rows = size_of(shape_field(out_shape, "the map's output shape"))
    if type(nnz) is not int or nnz < 0:
        raise ValueError(f"the map's matrix has {nnz!r} entries, not a count")
    return 12 * nnz + 4 * (rows + 1)


def _loaded(public, applied, settings, shape, out_shape, nnz, indptr, indices, data):
    """A family's primitive from a tape file's parameters: the matrix checked
    against its shapes here, and against SciPy's function with these settings
    (one call at zero, one on a random array, as when recording) before its
    first value, so that loading calls no SciPy code with the file's settings."""
    shape = shape_field(shape, "the map's input shape")
    out_shape = shape_field(out_shape, "the map's output shape")
    if type(nnz) is not int or nnz < 0:
        raise ValueError(f"the map's matrix has {nnz!r} entries, not a count")
    m, n = size_of(out_shape), size_of(shape)
    if not 0 <= nnz < 2 ** 31 or m >= 2 ** 31 or n >= 2 ** 31:
        raise ValueError(f"the matrix of {public} is {m} by {n} with {nnz} entries, more "
                         f"than a probed matrix holds")
    A = sp.csr_matrix((unpacked(data, "<f8", (nnz,), True),
                       unpacked(indices, "<i4", (nnz,), True),
                       unpacked(indptr, "<i4", (m + 1,), True)), shape=(m, n))
    A.check_format(full_check=True)
    if not np.all(np.isfinite(A.data)):
        raise ValueError(f"the matrix of {public} holds values that are not finite")
    apply = applied(decoded(settings))
    checked = []

    def check():
        if checked:
            return
        offset = apply(np.zeros(shape))
        if offset.shape != out_shape or not _agrees(A, apply, offset, shape):
            raise TapeFileError(
                f"adsim: the tape file's matrix of {public} is not the map SciPy computes with "
                f"the saved settings (an altered file, or another SciPy version): record the "
                f"tape again in this process")
        checked.append(True)
    return _primitive(public, apply, A, shape, out_shape, check)


def _matrix(public, apply, shape):
    """(A, the output's shape): the matrix of ``apply`` minus its offset."""
    n = int(np.prod(shape))
    offset = apply(np.zeros(shape))
    if offset.dtype.kind not in "biuf":
        raise UnsupportedOperation(f"adsim: {public} gives a {offset.dtype} result here; adsim "
                                   f"differentiates it where it is real")
    if offset.shape == shape and n > 1:
        centre = tuple(s // 2 for s in shape)
        impulse = np.zeros(shape)
        impulse[centre] = 1.0
        hit = np.argwhere(apply(impulse) - offset != 0)
        reach = np.max(np.abs(hit - centre), axis=0) if len(hit) else np.zeros(len(shape), int)
        step = np.minimum(4 * reach + 1, shape)
        if np.prod(step) < n:
            A = _colored(apply, offset, shape, reach, step)
            if _agrees(A, apply, offset, shape):
                return A, offset.shape
    if n > DENSE_PROBES_UP_TO:
        raise UnsupportedOperation(
            f"adsim: {public} on an active array of shape {shape} with these settings would "
            f"need {n} calls to find its derivative (its response to one sample reaches across "
            f"the array: a recursive filter, a 'wrap' boundary, a change of shape), more than "
            f"{DENSE_PROBES_UP_TO}. Call it on a smaller array or along a shorter axis, or "
            f"write it with NumPy functions adsim supports")
    columns = np.empty((offset.size, n))
    unit = np.zeros(n)
    for j in range(n):
        unit[j] = 1.0
        columns[:, j] = np.ravel(apply(unit.reshape(shape)) - offset)
        unit[j] = 0.0
    A = sp.csr_matrix(columns)
    if not _agrees(A, apply, offset, shape):
        raise UnsupportedOperation(
            f"adsim: {public} with these settings is not linear in its active argument "
            f"(its result is not A x + b for a fixed A and b), so adsim has no rule for it")
    return A, offset.shape


def _colored(apply, offset, shape, reach, step):
    """A from one call per class of impulses ``step`` apart in every axis."""
    shape = np.array(shape)
    rows, cols, vals = [], [], []
    for c in np.ndindex(*step):
        probe = np.zeros(tuple(shape))
        probe[tuple(slice(ci, None, si) for ci, si in zip(c, step))] = 1.0
        y = apply(probe) - offset
        pos = np.argwhere(y != 0)
        j = c + step * np.round((pos - c) / step).astype(int)
        ok = np.all((j >= 0) & (j < shape) & (np.abs(pos - j) <= 2 * reach), axis=1)
        rows.append(np.ravel_multi_index(tuple(pos[ok].T), tuple(shape)))
        cols.append(np.ravel_multi_index(tuple(j[ok].T), tuple(shape)))
        vals.append(y[tuple(pos[ok].T)])
    n = int(np.prod(shape))
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, n))


def _agrees(A, apply, offset, shape):
    """Does A r + b give SciPy's result on a random r (to rounding)?"""
    r = np.random.default_rng(20240611).standard_normal(shape)
    want = np.ravel(apply(r))
    got = A @ np.ravel(r) + np.ravel(offset)
    scale = np.max(np.abs(want), initial=0.0) + np.max(np.abs(offset), initial=0.0)
    return bool(np.all(np.abs(got - want) <= 1e-10 * scale + 1e-300))


def _plain(v):
    """``v`` with its active arrays that carry no derivative made plain."""
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(e) for e in v)
    if isinstance(v, dict):
        return {k: _plain(e) for k, e in v.items()}
    return plain_if_constant(v)


def _key(v):
    """A hashable stand-in for the plain arguments, or None (not kept)."""
    if v is None or isinstance(v, (bool, int, float, complex, str)):
        return (type(v).__name__, v)
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        return ("array", a.shape, a.dtype.str, a.tobytes()) if a.dtype.kind in "biufc" else None
    if isinstance(v, (type, np.dtype)):
        try:
            return ("dtype", np.dtype(v).str)
        except TypeError:
            return None
    if isinstance(v, (list, tuple)):
        items = tuple(_key(i) for i in v)
        return None if any(i is None for i in items) else (type(v).__name__,) + items
    if isinstance(v, dict):
        items = tuple((k, _key(i)) for k, i in sorted(v.items()))
        return None if any(i is None for _, i in items) else ("dict",) + items
    return None
