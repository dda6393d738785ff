"""The plain settings of a SciPy call (filter coefficients, sigma, mode,
cval, output dtype, ...) as JSON data that come back as they were, type,
dtype and bits alike, so that a loaded tape calls SciPy exactly as the
recording did (adsim/_scipy/linear_maps.py). Arrays (and float and complex
numbers) are kept as their bytes, base64: no rounding through decimal
text, and NaN and infinities too. docs/tape-format.md lists the marks."""
import base64
from math import prod
import zlib

import numpy as np

__all__ = ["decoded", "encoded", "packed", "unpacked"]

# array dtypes kept: booleans, integers, floats and complex numbers, little-endian
_DTYPES = {np.dtype(t).str for t in (
    bool, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128)}


def packed(array, compressed=False):
    """``array``'s values, C order, as base64 text; ``compressed``: of their
    bytes compressed by zlib (RFC 1950; a probed matrix's repeated values
    and banded indices shrink some 20 times)."""
    raw = np.ascontiguousarray(array).tobytes()
    return base64.b64encode(zlib.compress(raw, 1) if compressed else raw).decode("ascii")


def unpacked(text, dtype, shape, compressed=False):
    """The array :func:`packed` wrote; ValueError unless ``text`` holds
    exactly the values of ``shape`` (compressed: never decompressing more)."""
    dtype = np.dtype(dtype)
    if not isinstance(text, str) or dtype.str not in _DTYPES:
        raise ValueError(f"an array is base64 text of one of {sorted(_DTYPES)}")
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    size = dtype.itemsize * prod(shape)
    if compressed:
        inflate = zlib.decompressobj()
        try:
            raw = inflate.decompress(raw, size + 1)
        except zlib.error as err:
            raise ValueError(f"an array's compressed bytes are damaged: {err}") from err
        if not inflate.eof or inflate.unused_data:
            raise ValueError(f"an array of shape {list(shape)} and dtype {dtype.str} holds "
                             f"{size} bytes, not more")
    if len(raw) != size:
        raise ValueError(f"an array of shape {list(shape)} and dtype {dtype.str} holds "
                         f"{prod(shape)} values, not {len(raw)} bytes")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def encoded(value):
    """``value`` as JSON data; TypeError naming what cannot be kept."""
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        return {"float": packed(np.array(value))}
    if type(value) is complex:
        return {"complex": packed(np.array(value))}
    if isinstance(value, (np.ndarray, np.generic)) and not isinstance(value, np.void):
        a = np.asarray(value)
        if a.dtype.newbyteorder("<").str not in _DTYPES:
            raise TypeError(f"an array of {a.dtype}, which a tape file does not keep")
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        return {"array" if isinstance(value, np.ndarray) else "scalar":
                {"dtype": a.dtype.str, "shape": list(a.shape), "values": packed(a)}}
    if isinstance(value, type) or isinstance(value, np.dtype):
        try:
            dtype = np.dtype(value)
        except TypeError:
            raise TypeError(f"the type {value.__name__}, which a tape file does not keep")
        if dtype.newbyteorder("<").str not in _DTYPES:
            raise TypeError(f"the dtype {dtype}, which a tape file does not keep")
        return {"dtype": {"str": dtype.str, "type": isinstance(value, type)}}
    if type(value) in (list, tuple):
        return {type(value).__name__: [encoded(v) for v in value]}
    if type(value) is dict and all(isinstance(k, str) for k in value):
        return {"dict": [[k, encoded(v)] for k, v in value.items()]}
    raise TypeError(f"a {type(value).__name__}, which a tape file does not keep")


def decoded(value):
    """The value :func:`encoded` wrote; ValueError for anything it does not write."""
    if value is None or type(value) in (bool, int, str):
        return value
    if not isinstance(value, dict) or len(value) != 1:
        raise ValueError(f"{value!r} is not an encoded setting")
    (mark, inner), = value.items()
    if mark == "float":
        return float(unpacked(inner, np.float64, ()))
    if mark == "complex":
        return complex(unpacked(inner, np.complex128, ()))
    if mark in ("array", "scalar"):
        if not isinstance(inner, dict) or set(inner) != {"dtype", "shape", "values"} or \
                not isinstance(inner["dtype"], str) or not isinstance(inner["shape"], list) or \
                len(inner["shape"]) > 32 or \
                not all(type(d) is int and d >= 0 for d in inner["shape"]) or \
                (mark == "scalar" and inner["shape"]):
            raise ValueError(f"{mark} is its dtype, shape and values")
        a = unpacked(inner["values"], inner["dtype"], tuple(inner["shape"]))
        return a if mark == "array" else a[()]
    if mark == "dtype":
        if not isinstance(inner, dict) or set(inner) != {"str", "type"} or \
                inner["str"] not in _DTYPES or type(inner["type"]) is not bool:
            raise ValueError("a dtype is one of the kept dtypes, marked as a type or not")
        dtype = np.dtype(inner["str"])
        return dtype.type if inner["type"] else dtype
    if mark in ("list", "tuple"):
        if not isinstance(inner, list):
            raise ValueError(f"a {mark} holds a list")
        return (list if mark == "list" else tuple)(decoded(v) for v in inner)
    if mark == "dict":
        if not isinstance(inner, list) or not all(
                isinstance(e, list) and len(e) == 2 and isinstance(e[0], str) for e in inner) \
                or len({e[0] for e in inner}) != len(inner):
            raise ValueError("a dict holds distinct [key, value] pairs")
        return {k: decoded(v) for k, v in inner}
    raise ValueError(f"{mark!r} is not a mark of an encoded setting")
