"""A solver call's arguments as JSON data that come back as they were:
the keyword arguments of a constrained minimiser
(adsim/_scipy/constrained_file.py) and those of other solvers that plain
JSON cannot hold (adsim/_scipy/implicit_file.py): non-finite limits,
tuples, arrays, ``Bounds`` and constraint objects, sparse constraint
matrices in CSR, CSC or COO form (others converted where their values stay
the same: :func:`kept_sparse`), and the parameters of the solve that
bounds hold (adsim/_scipy/bound_parameters.py). The tape format
(docs/tape-format.md) describes the marks."""
from math import isfinite

import numpy as np
import scipy.sparse as sp
from scipy.optimize import BFGS, SR1, Bounds, LinearConstraint, NonlinearConstraint

from .._active import Active
from .._filefields import json_data
from .arrays import now
from .bound_parameters import Parameter, _BoundsOf, markers

__all__ = ["decoded", "encoded", "kept_sparse"]

# the objects a call's arguments hold, with the fields that rebuild them
_OBJECTS = {"NonlinearConstraint": (NonlinearConstraint, (
    "fun", "lb", "ub", "jac", "hess", "keep_feasible", "finite_diff_rel_step",
    "finite_diff_jac_sparsity")),
    "LinearConstraint": (LinearConstraint, ("A", "lb", "ub", "keep_feasible")),
    "Bounds": (Bounds, ("lb", "ub", "keep_feasible")),
    # quasi-Newton constraint Hessians (a NonlinearConstraint's default): SciPy
    # initialises them at each solve, so their options are all they hold
    "BFGS": (BFGS, ("exception_strategy", "min_curvature", "init_scale")),
    "SR1": (SR1, ("min_denominator", "init_scale"))}
_MARKERS = {"function", "float", "array", "tuple", "dict", "sparse", "parameter", *_OBJECTS}

# sparse constraint matrices, kept in their own form (a loaded solve's SciPy
# then multiplies with the same arrays, bitwise alike): class -> its arrays
_SPARSE = {cls.__name__: (cls, ("data", "row", "col") if "coo" in cls.__name__
                          else ("data", "indices", "indptr"))
           for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array,
                       sp.csc_array, sp.coo_array)}



def encoded(value, what, plain=False):
    """``value`` as JSON data, every dict, tuple, array and constraint
    object marked (``{"tuple": [...]}``), a float that is not finite as
    ``{"float": "inf"}`` and a function as ``{"function": its name}`` (its
    tapes are saved apart). An active array is TypeError, or with ``plain``
    the array of its value now (where the reader takes the parameters of
    the solve from the tape, or the solve does not depend on it: a start).
    TypeError for anything else."""
    if isinstance(value, Active):
        if not plain:
            raise TypeError(f"{what} holds an active array")
        value = np.array(now(value), dtype=float)

    def inner(v):
        return encoded(v, what, plain)
    if isinstance(value, Parameter):
        return {"parameter": value.index}
    if isinstance(value, _BoundsOf):
        return {"Bounds": {f: inner(getattr(value, f)) for f in _OBJECTS["Bounds"][1]}}
    for name, (cls, fields) in _OBJECTS.items():
        if type(value) is cls:
            return {name: {f: inner(getattr(value, f)) for f in fields}}
    if callable(value) and not isinstance(value, type):
        return {"function": str(getattr(value, "__name__", "function"))}
    if sp.issparse(value):
        return {"sparse": _sparse_fields(value, what)}
    if isinstance(value, (float, np.floating)) and not isfinite(value):
        return {"float": repr(float(value))}
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return {"array": inner(value.tolist())}
    if isinstance(value, tuple):
        return {"tuple": [inner(v) for v in value]}
    if isinstance(value, list):
        return [inner(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: inner(v) for k, v in value.items()}}
    return json_data(value, what)


def kept_sparse(matrix):
    """``matrix`` (sparse) in a form tape files keep, with the same values:
    a float64 CSR, CSC or COO matrix or array as it is; another format
    (BSR, DIA, LIL, DOK) as CSR, the form SciPy's minimisers make of it
    (trust-constr multiplies by ``csr_matrix(A)``, SLSQP and COBYLA by
    ``A.toarray()``); data of booleans, integers or narrower floats as
    float64 where every value converts exactly. TypeError otherwise (complex
    values, integers beyond 2**53). A constrained call gives SciPy this form
    in the recording process too (adsim/_scipy/constrained.py), so both
    processes multiply with the same arrays."""
    name = type(matrix).__name__
    if name not in _SPARSE:
        matrix = (sp.csr_array if isinstance(matrix, sp.sparray) else sp.csr_matrix)(matrix)
    if matrix.dtype == np.float64:
        return matrix
    if matrix.dtype.kind not in "biuf":
        raise TypeError(f"a sparse {name} of {matrix.dtype}, which a tape file keeps only as "
                        f"real numbers")
    values = matrix.data
    exact = np.all(np.abs(values) <= 2 ** 53) if values.dtype.kind in "iu" else \
        np.all(values.astype(np.float64).astype(values.dtype) == values) \
        if values.dtype.kind == "f" and values.dtype.itemsize > 8 else True
    if not exact:
        raise TypeError(f"a sparse {name} of {matrix.dtype} whose values are not all exact "
                        f"as float64, which a tape file keeps only as float64")
    return matrix.astype(np.float64)


def _sparse_fields(matrix, what):
    try:
        matrix = kept_sparse(matrix)
    except TypeError as err:
        raise TypeError(f"{what} holds {err}: convert it (A.tocsr().astype(float)) before "
                        f"the call") from err
    fields = {"type": type(matrix).__name__, "shape": list(matrix.shape)}
    for field in _SPARSE[fields["type"]][1]:
        values = getattr(matrix, field)
        fields[field] = encoded(values.tolist(), what) if field == "data" else values.tolist()
    return fields


def _sparse(fields):
    """The sparse matrix :func:`_sparse_fields` wrote, its arrays checked
    against its shape; ValueError for anything else."""
    name = fields.get("type")
    if name not in _SPARSE:
        raise ValueError(f"a sparse matrix is one of {sorted(_SPARSE)}, not {name!r}")
    cls, arrays = _SPARSE[name]
    shape = fields.get("shape")
    if set(fields) != {"type", "shape", *arrays} or not isinstance(shape, list) or \
            len(shape) != 2 or not all(type(k) is int and 0 <= k < 1 << 31 for k in shape) or \
            not all(isinstance(fields[a], list) for a in arrays) or \
            not all(type(i) is int for a in arrays[1:] for i in fields[a]):
        raise ValueError(f"a sparse {name} has its shape (two sizes) and the integer arrays "
                         f"{list(arrays[1:])} beside its data")
    data = np.array(decoded(fields["data"]), dtype=float)
    index = [np.array(fields[a], dtype=np.int64) for a in arrays[1:]]
    try:
        if "coo" in name:
            matrix = cls((data, tuple(index)), shape=tuple(shape))
        else:
            matrix = cls((data, index[0], index[1]), shape=tuple(shape))
            matrix.check_format(full_check=True)
    except (ValueError, TypeError, IndexError) as err:
        raise ValueError(f"a sparse {name} whose arrays do not fit its shape {shape}: "
                         f"{err}") from err
    return matrix


def _no_code(*args, **kwargs):
    raise AssertionError("a loaded constrained solve runs on its tapes")


def decoded(value):
    """The arguments :func:`encoded` wrote, functions as placeholders;
    ValueError for anything it does not write."""
    if isinstance(value, list):
        return [decoded(v) for v in value]
    if not isinstance(value, dict):
        if value is None or type(value) in (bool, int, float, str):
            return value
        raise ValueError(f"{value!r} is not an encoded argument")
    if len(value) != 1 or not set(value) <= _MARKERS:
        raise ValueError(f"{sorted(value)} is not an encoded argument")
    (marker, inner), = value.items()
    if marker == "function":
        return _no_code
    if marker == "float":
        if inner not in ("inf", "-inf", "nan"):
            raise ValueError(f"{inner!r} is not a float a tape file writes as a string")
        return float(inner)
    if marker == "array":
        return np.array(decoded(inner), dtype=float)
    if marker == "parameter":
        if type(inner) is not int or inner < 0:
            raise ValueError(f"a parameter is the index of one, not {inner!r}")
        return Parameter(inner)
    if marker == "sparse":
        if not isinstance(inner, dict):
            raise ValueError("a sparse matrix holds named fields")
        return _sparse(inner)
    if marker == "tuple":
        if not isinstance(inner, list):
            raise ValueError("a tuple is a list of arguments")
        return tuple(decoded(v) for v in inner)
    if not isinstance(inner, dict):
        raise ValueError(f"{marker} holds named fields")
    fields = {k: decoded(v) for k, v in inner.items()}
    if marker == "dict":
        return fields
    cls, names = _OBJECTS[marker]
    if set(fields) != set(names):
        raise ValueError(f"a {marker} has the fields {list(names)}, not {sorted(fields)}")
    if marker == "Bounds" and markers(fields):       # filled in at each solve
        return _BoundsOf(**fields)
    return cls(**fields)
