# cython: language_level=3
"""The recording front end: ``Active`` wraps one slot of a tape that is
recording.

Operators and NumPy's override protocols append ops; the hot paths (scalar
arithmetic, unary ufuncs, same-shape binary operators and np.maximum and
np.minimum) stay in C, the rest goes to
adsim/_numpy_api.py. Owns ``Active`` and the recording helpers the Python
layer calls (``wrap``, ``make_view``, ``mark_written``, ``other_layout``,
``record_unary``, ``record_binary_refs``), and ``UNARY_UFUNCS``, the unary
ufuncs recorded here in C (read from the op table, adsim/ops.py). It
appends ops through the Tape's C methods (_tape.pxd).

_active.pxd exposes the ``Active`` class with its C fields (its slot, shape,
root and view state) and its C methods ``ref`` and ``_gather_one``, for
compiled code that records on active arrays.
"""
cimport numpy as cnp
from cpython.object cimport PyObject_GenericSetAttr
from cpython.number cimport PyNumber_Index
import numpy as np
from libc.stdint cimport int32_t, int64_t

from ._opcodes cimport *
from ._tape cimport Tape

from .errors import (ActiveValueLeak, InvalidArgument, NotPicklable, UnsupportedAttribute,
                     UnsupportedOperation)
from .ops import UNARY_UFUNCS

cnp.import_array()


# Only the recording makes Active arrays: a direct ``Active()`` would wrap no
# tape (and crash on first use). new_active passes this private token to the
# allocation. (A module flag raised around it is not enough: the allocation can
# run the garbage collector, whose finalizers let another thread in.)
cdef object _MAKE_ACTIVE = object()


cdef Active new_active(Tape t, int slot, tuple shape):
    cdef Active a = Active.__new__(Active, _MAKE_ACTIVE)
    a.tape = t
    a._slot = slot
    a.shape = shape
    a.size = t.slot_size[slot]
    return a


def wrap(Tape tape, int slot, shape):
    """The Active for ``slot`` of ``tape`` (recording) with the given shape."""
    shape = tuple(int(d) for d in shape)
    if tape is None or not tape.recording:
        raise ValueError("adsim: wrap needs a tape that is recording")
    if not 0 <= slot < tape.n_slots:
        raise ValueError(f"adsim: slot {slot} does not exist on this tape")
    cdef int64_t size = 1
    for d in shape:
        if d < 0:
            raise ValueError(f"adsim: negative dimension in shape {shape}")
        size *= d
    if size != tape.slot_size[slot]:
        raise ValueError(f"adsim: shape {shape} has {size} elements, slot {slot} holds "
                         f"{tape.slot_size[slot]}")
    return new_active(tape, slot, shape)


def make_view(Active view, Active root, index):
    """Turn ``view`` (just recorded with the values of ``root`` at the flat
    element positions ``index``) into a view of ``root``: it is gathered
    again from ``root`` whenever it is read after ``root`` was written."""
    if root._base is not None:
        raise ValueError("adsim: the base of a view must be a root array")
    if view.tape is not root.tape or view.shape != tuple(np.shape(index)):
        raise ValueError("adsim: a view must match its index on the same tape")
    view._base = root
    view._index = index
    view._version = root._version
    return view


def mark_written(Active root):
    """Record that ``root``'s storage changed: its views read it again.
    Writing a root that a layout-dependent reshape made or viewed makes the
    results depend on the layout (adsim/_np/views.py reshape)."""
    root._version += 1
    if root._layout_sensitive:
        root.tape.observe_layout()


cdef inline bint laid_out_otherwise(Active a):
    """Is ``a`` laid out in memory other than in C order (a transpose, a
    Fortran-order array)? Its elementwise results then follow its layout, as
    NumPy's do (adsim/_np/layout.py). Arrays with fewer than two axes, and
    roots whose positions were never asked for, are in C order."""
    return a._index is not None and len(a.shape) >= 2 and \
        not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a._index)


def other_layout(v):
    """``laid_out_otherwise`` for an active array or a plain operand."""
    if isinstance(v, Active):
        return laid_out_otherwise(<Active>v)
    return isinstance(v, np.ndarray) and (<cnp.ndarray>v).ndim >= 2 and \
        not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>v)


cdef inline int slot_of(Active a) except -1:
    """``a.ref()`` without a method call on the common path (a root)."""
    if a._base is None:
        return a._slot
    return a.ref()


cdef Active rec_unary(Active x, int code, double c):
    """y = f(x; c) for a unary primitive."""
    cdef Tape t = x.tape
    cdef int32_t ops[3]
    if not t.recording:
        _numpy_api.tape_of(x)         # raises the error for a finished recording
    ops[1] = slot_of(x)
    cdef int r = t.new_slot(x.size)
    ops[0] = r
    ops[2] = -1
    if ADD_C <= code <= RPOW_C:        # ops with a scalar parameter keep it in the constants
        if t.n_consts + 1 > t.cap_consts:
            t.consts = <double*>grow(t.consts, &t.cap_consts, t.n_consts + 1, sizeof(double))
        t.consts[t.n_consts] = c
        ops[2] = <int32_t>t.n_consts
        t.n_consts += 1
    t.append_op(code, ops, 3)
    t.execute_last()
    cdef Active y = new_active(t, r, x.shape)
    if laid_out_otherwise(x):
        _numpy_api.lay_out_elementwise(y, x)
    return y


def record_unary(Active x, int code, double c=0.0):
    return rec_unary(x, code, c)


cdef Active rec_binary_refs(Tape t, int code, int ra, int rb, tuple shape, int64_t size):
    cdef int32_t ops[3]
    cdef int r = t.new_slot(size)
    ops[0] = r
    ops[1] = ra
    ops[2] = rb
    t.append_op(code, ops, 3)
    t.execute_last()
    return new_active(t, r, shape)


def record_binary_refs(Tape t, int code, int ra, int rb, shape):
    shape = tuple(shape)
    cdef int64_t size = 1
    for d in shape:
        size *= d
    return rec_binary_refs(t, code, ra, rb, shape, size)


cdef inline bint is_number(object v):
    return (isinstance(v, float) or isinstance(v, int)) and not isinstance(v, bool)


cdef object same_shape_binary(int code, object a, object b):
    """a <op> b recorded, when both are active arrays of one shape on a tape
    that records (no broadcasting, no constant); else None."""
    cdef Active x, y
    if not (isinstance(a, Active) and isinstance(b, Active)):
        return None
    x = <Active>a
    if (<Active>b).tape is not x.tape or not x.tape.recording or (<Active>b).shape != x.shape:
        return None
    y = rec_binary_refs(x.tape, code, slot_of(x), slot_of(<Active>b), x.shape, x.size)
    if laid_out_otherwise(x) or laid_out_otherwise(<Active>b):
        _numpy_api.lay_out_elementwise(y, x, b)
    return y


# binary ufuncs recorded here when both operands are active arrays of one
# shape: maximum and minimum record no branch (their kernels choose the side
# at every replay), so they are one op like the arithmetic operators
BINARY_UFUNCS = {np.maximum: MAXIMUM, np.minimum: MINIMUM}


cdef object arith(int code, object a, object b):
    """a <op> b with at least one Active; scalar constants become unary ops."""
    cdef Active x, y
    cdef double c
    if isinstance(a, Active):
        x = <Active>a
        if is_number(b) and x.tape.recording:
            c = b
            if code == ADD:
                return rec_unary(x, ADD_C, c)
            if code == SUB:
                return rec_unary(x, ADD_C, -c)
            if code == MUL:
                return rec_unary(x, MUL_C, c)
            if code == POW:
                return rec_unary(x, POW_C, c)
        else:
            y = same_shape_binary(code, a, b)
            if y is not None:
                return y
    elif isinstance(b, Active) and is_number(a) and (<Active>b).tape.recording:
        x = <Active>b
        c = a
        if code == ADD:
            return rec_unary(x, ADD_C, c)
        if code == SUB:
            return rec_unary(x, RSUB_C, c)
        if code == MUL:
            return rec_unary(x, MUL_C, c)
        if code == DIV:
            return rec_unary(x, RDIV_C, c)
        if code == POW:
            return rec_unary(x, RPOW_C, c)
    return _numpy_api.binary(code, a, b)


# Arrays up to this size keep the scalars read from them (Active._gather_one);
# larger ones, read element by element in a loop, would keep every element's slot
cdef enum:
    SHARED_ELEMENTS_UP_TO = 256


# conversions to a Python number, whose refusal says where the value came
# from and how to keep it (or say that no derivative is wanted)
_SCALAR_CONVERSIONS = frozenset({"float()", "complex()", ".item()"})


def _scalar_leak_message(x, what):
    from ._record.callers import user_line
    from ._record.origins import origin
    came = origin(x)
    unwanted = f"{what[:-1]}adsim.value(x))" if what.endswith("()") and what[0] != "." else \
        f"adsim.value(x){what}"
    return (f"adsim: {what} of an active value (shape {x.shape}" +
            (f", {came}" if came else "") + ")" + user_line() +
            " would turn a recorded value into a constant: a "
            f"Python number is not recorded, so replays and derivatives would silently ignore "
            f"it. Keep it as an array: arithmetic and NumPy functions take a 0-d array as they "
            f"take a number, and branches on it are recorded (`if x > 0:`, np.where, "
            f"np.maximum). If no derivative is wanted through it, say so: {unwanted} gives a "
            f"number checked on replay, adsim.stop_gradient(x) an array with derivative zero. "
            f"If it is being written into a plain NumPy array made outside the recorded "
            f"function (`a[i] = x`, where NumPy converts it), make that array active instead: "
            f"`P = np.zeros_like(u, shape=(n,)); P[1:-1] = u`, or build it with "
            f"np.concatenate/np.pad.")


def unhashable_message(x):
    """Why an active value is no dict key, set member or argument of a
    cached function (``functools.lru_cache``, ``functools.cache``)."""
    return (f"adsim: an active value (shape {tuple(x.shape)}) cannot be hashed: it is no dict key "
            f"or set member, and no argument of a function cached by functools.lru_cache or "
            f"functools.cache (a cached result would hold the values of the call that made it, "
            f"not derivatives of this one). Call the function uncached on active values, or "
            f"key what you look up by a plain value (an index, a name)")


cdef class Active:
    """An array being recorded: a slot of a tape plus its shape.

    Active arrays appear inside functions given to adsim (``grad``,
    ``record``, ...). They support NumPy's operators, ufuncs and the array
    functions listed in docs/tape.md, with NumPy's view semantics: basic
    indexing, reshapes and transposes give views that share storage with
    their base, and a write through any of them is seen by all.

    A root array owns its storage (its slot). A view keeps its own slot with
    a copy of its elements, the root, and the flat positions of its elements
    in the root (``_index``, an integer array that is itself a NumPy view of
    the root's position array, so NumPy decides what is a view). Writes go to
    the root and bump its version; a view whose copy is older than the root's
    version is gathered again before it is read.
    """
    # (its C fields are declared in _active.pxd)

    __array_priority__ = 1000.0

    def __cinit__(self, token=None):
        if token is not _MAKE_ACTIVE:
            raise InvalidArgument("adsim: Active arrays are made by a recording (adsim.grad, "
                                  "adsim.record, ...), not constructed directly: call "
                                  "adsim.grad(f)(x) and the function f receives them")

    def __dealloc__(self):
        if self.tape is not None:
            self.tape.release(self._slot)

    cdef int ref(self) except -1:
        """The slot holding this array's current values (a stale view is
        gathered again from its root first)."""
        if self._base is not None and self._base._version != self._version:
            _numpy_api.refresh_view(self, self._base)
            self._version = self._base._version
        return self._slot

    @property
    def slot(self):
        """The tape slot holding this array's current values."""
        return self.ref()

    @property
    def base(self):
        """The root array whose storage this view shares, or None (NumPy's ``base``)."""
        return self._base

    def _positions(self):
        """Flat positions of this array's elements in its root's storage."""
        if self._index is None:        # a copy: the root's positions own their data, as it does
            self._index = np.arange(self.size, dtype=np.intp).reshape(self.shape).copy()
        return self._index

    def _reshaped_in_place(self, tuple shape, index):
        """``a.shape = shape`` (adsim/_np/views.py set_shape): the same
        elements in C order, ``index`` their positions."""
        if len(index.shape) != len(shape) or index.size != self.size:
            raise ValueError("adsim: internal: an in-place reshape keeps the elements")
        self.shape = shape
        self._index = index

    def _root(self):
        return self if self._base is None else self._base

    def _mark_layout_sensitive(self):
        """See ``mark_written``: this array's root is now layout-sensitive."""
        (self if self._base is None else self._base)._layout_sensitive = True

    def _lay_out(self, index):
        """Lay this root out in memory as ``index`` is laid out (NumPy's
        strides of the array, e.g. Fortran order; adsim/_np/layout.py).
        ``index`` holds each element's C-order position, so which value is
        where does not change: only what NumPy makes a view and a copy."""
        if self._base is not None or not isinstance(index, np.ndarray) or \
                index.shape != self.shape or index.dtype != np.intp:
            raise ValueError("adsim: internal: _lay_out needs a root and positions of its shape")
        self._index = index

    def _adopt(self, Active fresh):
        """Take over the storage of ``fresh`` (a just-recorded root of this
        shape, about to be dropped) and give it this array's old slot, which
        is released with it. In-place operators on roots cost no copy."""
        if fresh.tape is not self.tape or fresh.size != self.size or fresh._base is not None \
                or self._base is not None:
            raise ValueError("adsim: internal: _adopt needs two roots of one size")
        self._slot, fresh._slot = fresh._slot, self._slot

    def _view_slot(self):
        """This view's own slot, without refreshing it (for the refresh itself)."""
        return self._slot

    # ---- introspection -------------------------------------------------
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def dtype(self):
        return np.dtype(np.float64)

    @property
    def flat(self):
        return _numpy_api.FlatIndexer(self)

    @property
    def T(self):
        return _numpy_api.transpose(self)

    @property
    def mT(self):
        """The matrix transpose of a stack (the last two axes swapped), a view."""
        if len(self.shape) < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return _numpy_api.array_function(np.swapaxes, (), (self, -1, -2), {})

    @property
    def flags(self):
        """NumPy's flags of this array: its layout and writeability are those
        of its element positions (adsim/_np/views.py), which NumPy keeps as
        it would keep the array's own."""
        self.tape.observe_layout()
        return self._positions().flags

    def setflags(self, write=None, align=None, uic=None):
        if align is not None or uic is not None:
            raise UnsupportedOperation("adsim: setflags(align=..., uic=...) of an active array; "
                                       "only write= is recorded")
        self._positions().setflags(write=write)

    @property
    def strides(self):
        """NumPy's strides of a float64 array laid out as this one is."""
        self.tape.observe_layout()
        p = self._positions()
        return tuple(s // p.itemsize * 8 for s in p.strides)

    @property
    def device(self):
        return "cpu"

    def to_device(self, device, /, *, stream=None):
        if device != "cpu":
            raise ValueError(f"Unsupported device {device!r}. Only 'cpu' is accepted.")
        return self

    def __setattr__(self, name, value):
        if name == "shape":             # NumPy's in-place reshape
            _numpy_api.set_shape(self, value)
        else:
            PyObject_GenericSetAttr(self, name, value)

    def __getattr__(self, name):
        """Only for names Active lacks: NumPy's ndarray attributes get an
        error that says what to use instead."""
        if name.startswith("__") or not hasattr(np.ndarray, name):
            raise AttributeError(f"'adsim._tape.Active' object has no attribute '{name}'")
        raise UnsupportedAttribute(_numpy_api.missing_attribute_message(name, self.shape))

    @property
    def real(self):
        return _numpy_api.view_of(self)

    @property
    def imag(self):
        """Zero, read-only (a real array's imaginary part, as NumPy gives it)."""
        out = np.zeros(self.shape)
        out.flags.writeable = False
        return out

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d active array")
        return self.shape[0]

    # iter() of a 0-d array raises at once, as NumPy's does: np.iterable(x) is
    # then False (numpy.polynomial's chebint(c, k=x) asks it), so these return
    # generators rather than being ones
    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d active array")
        return (self[i] for i in range(self.shape[0]))

    def __reversed__(self):     # reversed() asks for this: the sequence slot is empty (below)
        if not self.shape:
            raise TypeError("iteration over a 0-d active array")
        return (self[i] for i in range(self.shape[0] - 1, -1, -1))

    def __repr__(self):
        value = self.tape.slot_value(self.ref()).reshape(self.shape)
        return f"Active(shape={self.shape}, recorded value={np.array2string(value, threshold=8)})"

    # ---- copies: independent arrays, as np.copy gives ------------------
    def __copy__(self):
        return _numpy_api.copy(self)

    def __deepcopy__(self, memo):
        return _numpy_api.copy(self)

    def __reduce__(self):
        raise NotPicklable("adsim: an active array exists only inside its recording and cannot "
                           "be pickled; return it from the function, or pickle adsim.value(x) "
                           "after the call")

    # ---- leaks: a concrete value would escape the tape ------------------
    def _leak(self, what):
        from ._record.callers import (compiled_call_message, library_entry, listed_message,
                                      listed_operation, method_call_name, source_hint, user_line)
        from ._record.library_leaks import library_leak_message
        from ._record.creation import bypassed_creation, interposition_hint
        bypassed = bypassed_creation(self.shape)
        if bypassed is not None:
            raise UnsupportedOperation(bypassed)
        entry = library_entry()
        method = method_call_name() if entry is None else None
        if method is not None and hasattr(np.ndarray, method) and \
                _numpy_api.has_rule_named(f"numpy.{method}"):
            raise ActiveValueLeak(
                f"adsim: `.{method}(...)`, a method of a plain NumPy array, turned its active "
                f"argument (shape {self.shape}) into a plain array, which would drop its "
                f"derivative. Call NumPy's function instead, which adsim records: "
                f"np.{method}(a, x)" + (", or a @ x" if method == "dot" else ""))
        listed = f"`{entry}`" if entry is not None and _numpy_api.has_rule_named(entry) else \
            listed_operation() if entry is None else None
        if listed is not None:
            raise UnsupportedOperation(listed_message(listed) + source_hint(interposition_hint()))
        if entry is not None:
            raise UnsupportedOperation(library_leak_message(entry, self.shape))
        compiled = compiled_call_message(self.shape) if entry is None else None
        if compiled is not None:    # math.exp(x), rng.normal(mu, s): no protocol sees the call
            raise ActiveValueLeak(compiled)
        if what in _SCALAR_CONVERSIONS:
            raise ActiveValueLeak(_scalar_leak_message(self, what) +
                                  source_hint(interposition_hint()))
        raise ActiveValueLeak(
            f"adsim: {what} of an active array (shape {self.shape}){user_line()} would turn a "
            f"recorded value "
            f"into a constant, so replays and derivatives would silently ignore it. Use "
            f"recorded comparisons (`if x > 0:` is recorded and checked on replay), np.where, "
            f"np.maximum/np.minimum/np.clip; or call adsim.value(x) for a value that should not "
            f"be differentiated. Arrays made inside the recorded function (np.zeros(n), "
            f"np.array([...])) accept active values; a plain array made outside it does not: "
            f"make an active one, `P = np.zeros_like(u, shape=(n,)); P[1:-1] = u`, or use "
            f"np.concatenate/np.pad." + source_hint(interposition_hint()))

    # Values without derivatives (adsim.value results) convert to plain
    # numbers and arrays under a guard (_numpy_api.frozen); integer
    # conversions are piecewise constant, so any array converts under a guard
    # on its interval; truth values are recorded comparisons.
    def __float__(self):
        if self.ndim == 0:       # `T[i] = x` into a plain local T: NumPy converts by float()
            from ._record.plain_stores import stored_into_plain
            stored = stored_into_plain(self)
            if stored is not None:
                return float(stored)
        cdef object text = _numpy_api.percent_number(self, float)   # "%.4f" % loss
        if text is not None:
            return text
        return float(self._scalar(_numpy_api.frozen(self, "float()")))

    def __complex__(self):
        return complex(self._scalar(_numpy_api.frozen(self, "complex()")))

    def __int__(self):
        cdef object text = _numpy_api.percent_number(self, int)     # "%d" % x
        if text is not None:
            return text
        return int(self._scalar(_numpy_api.rounded(self, "trunc")))

    def __index__(self):
        _numpy_api.percent_number(self, None)       # "%x" % x: refused as NumPy's float64 is
        return _numpy_api.exact_index(self)

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(_numpy_api.compare(CMP_NE, self, 0.0))

    def __format__(self, spec):
        if not spec:
            return str(self)
        return _numpy_api.formatted(self, spec)

    def __array__(self, dtype=None, copy=None):
        if dtype is not None and np.dtype(dtype).kind in "iu":
            # np.int64(x), np.asarray(x, dtype=int): NumPy's truncation, a guarded plain
            # array like int(x) (derivative zero; a replay that changes it is refused)
            return _numpy_api.rounded(self, "trunc").astype(dtype)
        from ._record.plain_stores import stored_into_plain
        cdef object v = stored_into_plain(self)     # `T[1:-1] = x` into a plain local T
        if v is None:
            v = _numpy_api.frozen(self, "conversion to a plain NumPy array (np.asarray, or "
                                  "assignment into a plain array)")
        return v if dtype is None else v.astype(dtype)

    def as_integer_ratio(self):
        # the statistics module (mean, stdev, ...) and fractions.Fraction ask
        # for exact ratios: without this they fail with a TypeError of their own
        from ._record.callers import user_line
        raise ActiveValueLeak(
            f"adsim: an active value (shape {self.shape}){user_line()} was asked for an exact "
            f"fraction (as_integer_ratio), as Python's statistics module (statistics.mean, "
            f"stdev, variance, ...) and fractions.Fraction compute: a fraction is not recorded, "
            f"so derivatives would be lost. Use NumPy's functions on an array of the values "
            f"instead: np.mean([a, b]), np.std(x, ddof=1), np.var(x, ddof=1), np.median(x)")

    def item(self, *args):
        return np.asarray(_numpy_api.frozen(self, ".item()")).item(*args)

    def tolist(self):
        return _numpy_api.frozen(self, ".tolist()").tolist()

    def _scalar(self, v):
        if self.size != 1:
            raise TypeError(f"only length-1 arrays can be converted to Python scalars (an "
                            f"active array of shape {self.shape})")
        return np.asarray(v).reshape(()).item()

    # ---- arithmetic ----------------------------------------------------
    def __add__(self, other):
        return arith(ADD, self, other)

    def __radd__(self, other):
        return arith(ADD, other, self)

    def __sub__(self, other):
        return arith(SUB, self, other)

    def __rsub__(self, other):
        return arith(SUB, other, self)

    def __mul__(self, other):
        return arith(MUL, self, other)

    def __rmul__(self, other):
        return arith(MUL, other, self)

    def __truediv__(self, other):
        return arith(DIV, self, other)

    def __rtruediv__(self, other):
        return arith(DIV, other, self)

    def __pow__(self, other, mod):
        return arith(POW, self, other)

    def __rpow__(self, other, mod):
        return arith(POW, other, self)

    def __matmul__(self, other):
        return _numpy_api.matmul(self, other)

    def __rmatmul__(self, other):
        return _numpy_api.matmul(other, self)

    def __neg__(self):
        return rec_unary(self, NEG, 0.0)

    def __pos__(self):
        return _numpy_api.copy(self)

    # in-place operators write into this array's storage (and so into its
    # base and every other view of it), as NumPy's do
    def __iadd__(self, other):
        return _numpy_api.assign_inplace(self, arith(ADD, self, other), "+=")

    def __isub__(self, other):
        return _numpy_api.assign_inplace(self, arith(SUB, self, other), "-=")

    def __imul__(self, other):
        return _numpy_api.assign_inplace(self, arith(MUL, self, other), "*=")

    def __itruediv__(self, other):
        return _numpy_api.assign_inplace(self, arith(DIV, self, other), "/=")

    def __ipow__(self, other):
        return _numpy_api.assign_inplace(self, arith(POW, self, other), "**=")

    def __imod__(self, other):
        return _numpy_api.assign_inplace(self, _numpy_api.remainder(self, other), "%=")

    def __ifloordiv__(self, other):
        quotient = _numpy_api.floor_divide(self, other)
        return _numpy_api.assign_inplace(self, _numpy_api.as_active(self.tape, quotient), "//=")

    def __imatmul__(self, other):
        return _numpy_api.assign_inplace(self, _numpy_api.matmul(self, other), "@=")

    def __abs__(self):
        return _numpy_api.absolute(self)

    def __floordiv__(self, other):
        return _numpy_api.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _numpy_api.floor_divide(other, self)

    def __mod__(self, other):
        return _numpy_api.remainder(self, other)

    def __rmod__(self, other):
        return _numpy_api.remainder(other, self)

    def __divmod__(self, other):
        return _numpy_api.floor_divide(self, other), _numpy_api.remainder(self, other)

    def __rdivmod__(self, other):
        return _numpy_api.floor_divide(other, self), _numpy_api.remainder(other, self)

    # ---- comparisons: recorded branch outcomes, returned as plain bools --
    def __lt__(self, other):
        return _numpy_api.recorded_compare(CMP_LT, self, other)

    def __le__(self, other):
        return _numpy_api.recorded_compare(CMP_LE, self, other)

    def __gt__(self, other):
        return _numpy_api.recorded_compare(CMP_GT, self, other)

    def __ge__(self, other):
        return _numpy_api.recorded_compare(CMP_GE, self, other)

    def __eq__(self, other):
        return _numpy_api.recorded_compare(CMP_EQ, self, other)

    def __ne__(self, other):
        return _numpy_api.recorded_compare(CMP_NE, self, other)

    def __hash__(self):
        raise UnsupportedOperation(unhashable_message(self))

    # ---- indexing --------------------------------------------------------
    def __getitem__(self, key):
        cdef int64_t k
        if type(key) is int and len(self.shape) == 1 and self.tape.recording:
            k = key
            if k < 0:
                k += self.size
            if not 0 <= k < self.size:
                raise IndexError(f"index {key} is out of bounds for axis 0 with size {self.size}")
            return self._gather_one(<int32_t>k)
        return _numpy_api.getitem(self, key)

    cdef Active _gather_one(self, int32_t k):
        """self[k] of a 1-d array: one GATHER with one stored index. The
        result is a NumPy scalar (immutable), so a small array hands out the
        same one again until its slot is written: a right-hand side that
        reads ``p[0]`` in every stage records one gather, not one per read."""
        cdef int32_t ops[7]
        cdef Tape t = self.tape
        cdef Active e
        cdef int src = slot_of(self)
        if self._elements is not None:
            if self._elements_slot == src and self._elements_writes == t.slot_writes[src]:
                e = self._elements.get(k)
                if e is not None:
                    return e
            else:
                self._elements = None
        ops[1] = src
        cdef int r = t.new_slot(1)
        ops[0] = r
        ops[2] = <int32_t>t.add_ints(&k, 1)
        ops[3] = k          # a slice of one element: start k, step 1, one row
        ops[4] = 1
        ops[5] = 1
        ops[6] = 0
        t.append_op(GATHER, ops, 7)
        t.execute_last()
        e = new_active(t, r, ())
        e._shared_scalar = True
        if self.size <= SHARED_ELEMENTS_UP_TO:
            if self._elements is None:
                self._elements = {}
                self._elements_slot = src
                self._elements_writes = t.slot_writes[src]
            self._elements[k] = e
        return e

    def __setitem__(self, key, value):
        _numpy_api.setitem(self, key, value)

    def __delitem__(self, key):
        raise ValueError("cannot delete array elements")

    # ---- NumPy protocols -------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        cdef int code
        if not isinstance(ufunc, np.ufunc) or not isinstance(method, str):
            return NotImplemented
        if method == "__call__" and not kwargs and len(inputs) == 1 and isinstance(inputs[0], Active):
            code = UNARY_UFUNCS.get(ufunc, 0)
            if code:
                return rec_unary(<Active>inputs[0], code, 0.0)
        elif method == "__call__" and not kwargs and len(inputs) == 2:
            code = BINARY_UFUNCS.get(ufunc, 0)
            if code:
                y = same_shape_binary(code, inputs[0], inputs[1])
                if y is not None:
                    return y
        return _numpy_api.ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if not callable(func) or not isinstance(args, tuple) or not isinstance(kwargs, dict):
            return NotImplemented
        return _numpy_api.array_function(func, types, args, kwargs)

    # ---- methods (NumPy's ndarray names) ---------------------------------
    def sum(self, axis=None, keepdims=False, **kw):
        return _numpy_api.sum(self, axis=axis, keepdims=keepdims, **kw)

    def mean(self, axis=None, keepdims=False, **kw):
        return _numpy_api.mean(self, axis=axis, keepdims=keepdims, **kw)

    def prod(self, axis=None, keepdims=False, **kw):
        return _numpy_api.prod(self, axis=axis, keepdims=keepdims, **kw)

    def max(self, axis=None, keepdims=False, **kw):
        return _numpy_api.amax(self, axis=axis, keepdims=keepdims, **kw)

    def min(self, axis=None, keepdims=False, **kw):
        return _numpy_api.amin(self, axis=axis, keepdims=keepdims, **kw)

    def argmax(self, axis=None):
        return _numpy_api.argmax(self, axis=axis)

    def argmin(self, axis=None):
        return _numpy_api.argmin(self, axis=axis)

    def cumsum(self, axis=None):
        return _numpy_api.cumsum(self, axis=axis)

    def dot(self, other):
        return _numpy_api.dot(self, other)

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and (isinstance(shape[0], (tuple, list)) or np.ndim(shape[0]) == 1):
            shape = tuple(shape[0])
        return _numpy_api.reshape(self, shape, order=order, copy=copy)

    def ravel(self, order="C"):
        return _numpy_api.ravel(self, order=order)

    def flatten(self, order="C"):
        return _numpy_api.copy(_numpy_api.ravel(self, order=order))

    def view(self, dtype=None):
        if dtype is not None and np.dtype(dtype) != np.float64:
            raise UnsupportedOperation(f"adsim: an active array cannot be viewed as {dtype}")
        return _numpy_api.view_of(self)

    def swapaxes(self, axis1, axis2):
        return _numpy_api.array_function(np.swapaxes, (), (self, axis1, axis2), {})

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return _numpy_api.array_function(np.diagonal, (), (self, offset, axis1, axis2), {})

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _numpy_api.transpose(self, axes or None)

    def squeeze(self, axis=None):
        return _numpy_api.squeeze(self, axis=axis)

    def copy(self, order="C"):
        return _numpy_api.copy(self, order=order)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if dtype.kind in "iu":
            return _numpy_api.as_integers(self, dtype)
        if dtype.kind == "b":
            return _numpy_api.compare(CMP_NE, self, 0.0)
        if dtype != np.float64:
            raise UnsupportedOperation(
                f"adsim: an active array can only be float64, not {dtype} (integer and boolean "
                f"conversions give guarded plain arrays); keep float64, or convert the plain "
                f"value adsim.value(x) outside the differentiated computation")
        return _numpy_api.astype_float(self, order=order, copy=copy)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return np.var(self, axis=axis, out=out, ddof=ddof, keepdims=keepdims, **kw)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return np.std(self, axis=axis, out=out, ddof=ddof, keepdims=keepdims, **kw)

    def cumprod(self, axis=None):
        return np.cumprod(self, axis=axis)

    def trace(self, offset=0, axis1=0, axis2=1):
        return np.trace(self, offset, axis1, axis2)

    def argsort(self, axis=-1, kind=None, order=None):
        return np.argsort(self, axis=axis, kind=kind, order=order)

    def sort(self, axis=-1, kind=None, order=None):
        """In place, as ndarray.sort."""
        _numpy_api.assign_inplace(self, np.sort(self, axis=axis, kind=kind, order=order), "sort")

    def fill(self, value):
        """In place, as ndarray.fill."""
        self[...] = value

    def any(self, axis=None, out=None, keepdims=False, *, where=True):
        return np.any(self, axis=axis, out=out, keepdims=keepdims, where=where)

    def all(self, axis=None, out=None, keepdims=False, *, where=True):
        return np.all(self, axis=axis, out=out, keepdims=keepdims, where=where)

    def nonzero(self):
        return np.nonzero(self)

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """In place, as ndarray.partition."""
        _numpy_api.assign_inplace(
            self, np.partition(self, kth, axis=axis, kind=kind, order=order), "partition")

    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        return np.argpartition(self, kth, axis=axis, kind=kind, order=order)

    def compress(self, condition, axis=None, out=None):
        return np.compress(condition, self, axis=axis, out=out)

    def searchsorted(self, v, side="left", sorter=None):
        return np.searchsorted(self, v, side=side, sorter=sorter)

    def repeat(self, repeats, axis=None):
        return np.repeat(self, repeats, axis=axis)

    def take(self, indices, axis=None):
        return np.take(self, indices, axis=axis)

    # Python's rounding builtins: guarded integers, as int() gives
    def __round__(self, ndigits=None):
        if ndigits is None:
            return int(self._scalar(_numpy_api.rounded(self, "rint")))
        return _numpy_api.around(self, ndigits)

    def __trunc__(self):
        return int(self._scalar(_numpy_api.rounded(self, "trunc")))

    def __floor__(self):
        return int(self._scalar(_numpy_api.rounded(self, "floor")))

    def __ceil__(self):
        return int(self._scalar(_numpy_api.rounded(self, "ceil")))

    def conj(self):
        return _numpy_api.copy(self)

    def conjugate(self):
        return _numpy_api.copy(self)

    @property
    def itemsize(self):
        return 8

    @property
    def nbytes(self):
        return 8 * self.size

    def round(self, decimals=0):
        return _numpy_api.around(self, decimals)

    def clip(self, min=None, max=None, out=None, **kwargs):
        return _numpy_api.clip(self, min, max, out=out, **kwargs)



# NumPy stores an object into one element of a float array (`T[0] = x`) by
# float(), unless the object passes PySequence_Check, which Active's
# __getitem__ would make it: then NumPy raises "setting an array element
# with a sequence" without asking Active. Indexing goes through the mapping
# slot, so the sequence slot is left empty and such stores reach __float__.
cdef extern from "Python.h":
    ctypedef struct _SequenceSlots "PySequenceMethods":
        void *sq_item
    ctypedef struct _TypeWithSequenceSlots "PyTypeObject":
        _SequenceSlots *tp_as_sequence

if (<_TypeWithSequenceSlots *>Active).tp_as_sequence != NULL:
    (<_TypeWithSequenceSlots *>Active).tp_as_sequence.sq_item = NULL


# The front end is one layer in two languages: the compiled Active here, and
# the Python rules of adsim/_numpy_api.py and adsim/_np, which record what
# Active does not and import Active, so they are imported last, once the
# types and functions above exist.
from . import _numpy_api
