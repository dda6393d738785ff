"""Checks of the fields of saved states (tape files): one place for the
tape reader and the callback ops that describe themselves in a file."""
from math import isfinite, prod

import numpy as np
import scipy.sparse as sp

from .errors import BranchChanged


def count_field(state, key, minimum=0, optional=False):
    """``state[key]`` as an int >= ``minimum`` (None allowed when ``optional``)."""
    v = state.get(key)
    if v is None and optional and key in state:
        return None
    if type(v) is not int or v < minimum:
        raise ValueError(f"{key} is {v!r}, not an integer >= {minimum}")
    return v


def shape_field(value, what):
    """A shape given as a list of non-negative ints."""
    if not isinstance(value, list) or len(value) > 64 or \
            any(type(d) is not int or d < 0 for d in value):
        raise ValueError(f"{what} is {value!r}, not a shape")
    return tuple(value)


def expect_keys(state, keys):
    if set(state) != set(keys):
        raise ValueError(f"the state has fields {sorted(state)}, not {sorted(keys)}")


def size_of(shape):
    return prod(shape)


def json_data(value, what):
    """``value`` (numbers, strings, None, lists, tuples, dicts with string
    keys, NumPy scalars and arrays, nested) as JSON data: tuples and arrays
    become lists, NumPy scalars Python numbers. TypeError naming ``what``
    for anything else, and for floats that are not finite."""
    if value is None or type(value) in (bool, str, int):
        return value
    if isinstance(value, (np.bool_, np.integer)):
        return value.item()
    if isinstance(value, (float, np.floating)):
        if not isfinite(value):
            raise TypeError(f"{what} holds {value!r}, a float a tape file keeps only when finite")
        return float(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return json_data(value.tolist(), what)
    if isinstance(value, (list, tuple)):
        return [json_data(v, what) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: json_data(v, what) for k, v in value.items()}
    raise TypeError(f"{what} holds a {type(value).__name__}, which a tape file cannot keep")


def no_variant_holds(what, n_variants, piece, source):
    """The error of a callback loaded from a tape file (a checkpointed loop,
    a nested derivative) at a point where none of the recorded variants of
    its ``piece`` (the step, the function) holds: it has no code to record
    the piece again (``source`` names the code that could)."""
    return BranchChanged(
        f"adsim: {what} loaded from a tape file reached a point where none of its {n_variants} "
        f"recorded {piece} variants holds (a branch of the {piece} goes another way), and it "
        f"cannot record the {piece} again: tape files hold no code. Record the tape again at "
        f"this point, in the process that has {source}")


def pattern_field(n, indptr, indices):
    """An n-by-n boolean CSC pattern from a tape file's lists, checked
    (each column's rows distinct and in order)."""
    if type(n) is not int or not 1 <= n <= 1 << 31 or not isinstance(indptr, list) or \
            not isinstance(indices, list) or len(indptr) != n + 1 or \
            not all(type(v) is int for v in indptr) or not all(type(v) is int for v in indices):
        raise ValueError("a pattern is its size n and the integer lists indptr (n + 1 of them) "
                         "and indices")
    ptr, idx = np.array(indptr, dtype=np.int64), np.array(indices, dtype=np.int64)
    if ptr[0] != 0 or ptr[-1] != idx.size or np.any(np.diff(ptr) < 0) or \
            np.any(idx < 0) or np.any(idx >= n):
        raise ValueError(f"the pattern's indptr and indices do not describe an {n} x {n} matrix")
    P = sp.csc_matrix((np.ones(idx.size, dtype=bool), idx, ptr), shape=(n, n))
    if not P.has_canonical_format:
        raise ValueError("the pattern's rows are not distinct and in order in every column")
    return P
