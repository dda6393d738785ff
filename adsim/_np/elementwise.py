"""Elementwise functions that need more than one op or a branch record:
abs, clip, where, sinc, tests (isinf, isfinite, isposinf,
isneginf), copysign, angle, nan_to_num, real_if_close; and derivative-free
values (stop_gradient, value)."""
import numpy as np

from .._opcodes import CompareKind, Opcode as Op
from .._active import Active, record_unary
from .._containers.tree import flatten, is_container, unflatten
from ..errors import UnsupportedOperation
from .core import binary, compare, constant, copy, new, operand, record_compare, \
    reject_kwargs, shape_of, size_of, tape_of
from .integers import current, plain_if_constant
from . import layout, recorded_data
from .recorded_arrays import RecordedArray


def absolute(x):
    tape = tape_of(x)
    record_compare(tape, CompareKind.CMP_GE, x.slot, tape.const_ref(0.0), x.shape)
    return record_unary(x, int(Op.ABS))


def clip(x, a_min=None, a_max=None, out=None, **kwargs):
    reject_kwargs("clip", out=out)
    if (a_min is not None or a_max is not None) and ("min" in kwargs or "max" in kwargs):
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` are "
                         "provided is forbidden.")
    a_min = kwargs.pop("min", a_min)
    a_max = kwargs.pop("max", a_max)
    reject_kwargs("clip", **kwargs)
    y = x
    if a_min is not None:
        y = binary(Op.MAXIMUM, y, a_min)
    if a_max is not None:
        y = binary(Op.MINIMUM, y, a_max)
    if y is x:
        y = copy(x)
    return y


def where(condition, x=None, y=None):
    if isinstance(condition, RecordedArray) and x is not None and y is not None:
        return recorded_data.where(condition, x, y)
    if x is None or y is None:
        raise UnsupportedOperation("adsim: np.where(condition) with one argument returns indices; "
                                   "call it on a comparison result, which is a plain array")
    condition = plain_if_constant(condition)
    if isinstance(condition, Active):
        raise TypeError("adsim: np.where needs a boolean condition, got an active float array; "
                        "write a comparison such as np.where(x > 0, a, b)")
    tape = tape_of(x, y)
    mask = np.asarray(condition, dtype=bool)
    shape = np.broadcast_shapes(mask.shape, shape_of(x), shape_of(y))
    ra, keep_a = operand(tape, x, shape)
    rb, keep_b = operand(tape, y, shape)
    n = size_of(shape)
    boff = tape.add_branch_space(n)
    tape.set_branches(boff, np.broadcast_to(mask, shape))
    return layout.elementwise(new(tape, Op.WHERE, shape, [ra, rb, boff]), mask, x, y)


def stop_gradient(x):
    """``x`` with derivative zero: replays follow its value, derivatives
    ignore it. A container (list, tuple, dict of arrays) is kept, each of
    its arrays stopped."""
    if isinstance(x, Active):
        return record_unary(x, int(Op.STOP_GRADIENT))
    return _each_leaf(stop_gradient, x) if is_container(x) else x


def value(x):
    """``x`` without derivatives (see adsim.value): inside a recording a
    recorded stop-gradient, so replays follow it; else a plain array. A
    container (list, tuple, dict of arrays) is kept, with the value of each
    of its arrays."""
    if isinstance(x, Active):
        return stop_gradient(x)
    return _each_leaf(value, x) if is_container(x) else np.asarray(x)


def _each_leaf(fn, tree):
    leaves, structure = flatten(tree)
    return unflatten(structure, [fn(leaf) for leaf in leaves])


def sinc(x):
    """sin(pi x) / (pi x), and near 0 its Taylor series (so derivatives of
    every order are right at and near 0; the branches are recorded)."""
    t = np.pi * x
    small = absolute(x) < 1e-2
    safe = where(small, 1.0, t)
    series = 1.0 + t * t * (-1.0 / 6 + t * t * (1.0 / 120 + t * t * (-1.0 / 5040 + t * t / 362880)))
    return where(small, series, np.sin(safe) / safe)


def real(x):
    return copy(x)


def imag(x):
    return np.zeros(shape_of(x))


def select(condlist, choicelist, default=0):
    """The first choice whose condition holds (conditions are plain booleans,
    e.g. recorded comparisons)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    out = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = where(cond, choice, out)
    return layout.in_order(out, "C") if isinstance(out, Active) else np.asarray(out, dtype=float)


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` with a, the choices and the result broadcast
    together (NumPy's choose), as np.select of ``a == k``: the integer data
    ``a`` picks, the chosen values carry the derivative."""
    if out is not None:
        raise UnsupportedOperation("adsim: np.choose with out= would write into a plain "
                                   "array; use its result")
    index = np.asarray(current(a) if isinstance(a, Active) else a)
    if index.dtype.kind not in "iub":
        raise TypeError(f"np.choose: the index array must be of integer type, not {index.dtype}")
    count = len(choices)
    if mode == "wrap":
        index = index % count
    elif mode == "clip":
        index = np.clip(index, 0, count - 1)
    elif np.any((index < 0) | (index >= count)):
        raise ValueError("invalid entry in choice array")
    return select([index == k for k in range(count)], list(choices))


def copysign(x1, x2):
    """|x1| with the sign of x2. The sign is piecewise constant in x2: for an
    active x2 it is a recorded comparison (a NaN x2 keeps its sign; comparisons
    cannot tell -0.0 from 0.0, so an x2 that is zero keeps the sign its zero
    had at recording)."""
    if isinstance(x2, Active):
        compare(CompareKind.CMP_LT, x2, 0.0)
        compare(CompareKind.CMP_EQ, x2, x2)
        negative = np.signbit(current(x2))
    else:
        negative = np.signbit(constant(x2))
    sign = np.where(negative, -1.0, 1.0)
    return absolute(x1) * sign if isinstance(x1, Active) else np.abs(constant(x1)) * sign


def angle(z, deg=False):
    """The angle of a real array: arctan2(0, x), 0 or pi (NumPy's values at
    -0.0 and NaN too); derivative 0 away from 0."""
    a = np.arctan2(0.0, z)
    return a * (180.0 / np.pi) if deg else a


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN and infinities replaced (recorded tests); in place with copy=False."""
    big = np.finfo(np.float64).max
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    y = where(compare(CompareKind.CMP_NE, x, x), nan,
              where(compare(CompareKind.CMP_EQ, x, np.inf), posinf,
                    where(compare(CompareKind.CMP_EQ, x, -np.inf), neginf, x)))
    if copy:
        return y
    x[...] = y
    return x


def real_if_close(a, tol=100):
    """A real array is returned as it is (NumPy's rule for real input)."""
    return a


def isposinf(x, out=None):
    reject_kwargs("isposinf", out=out)
    return compare(CompareKind.CMP_EQ, x, np.inf)


def isneginf(x, out=None):
    reject_kwargs("isneginf", out=out)
    return compare(CompareKind.CMP_EQ, x, -np.inf)
