"""The op table: one row per opcode of the compiled tape.

Each row names the NumPy callables the op stands for, its family (which
kernel file in ``adsim/_ops`` holds its rules), its Hessian class (used by the
second-order sparsity rules: ZERO, LINEAR, BILINEAR, NONLINEAR) and, for
elementwise ops, the domain on which tests sample it. Opcode numbers come
from the compiled enum (``adsim._tape.Opcode``); ``tests/test_ops_table.py``
fails when an opcode lacks a row or a row lacks an opcode.
"""
from dataclasses import dataclass

import numpy as np

from ._tape import Opcode

ZERO, LINEAR, BILINEAR, NONLINEAR = "zero", "linear", "bilinear", "nonlinear"


@dataclass(frozen=True)
class OpSpec:
    """Metadata of one opcode."""

    name: str
    family: str                  # unary, binary, branch, structural, linalg, callback
    hessian: str                 # ZERO, LINEAR, BILINEAR or NONLINEAR
    numpy: tuple = ()            # NumPy callables recorded as this op
    domain: tuple = (-2.0, 2.0)  # test sampling interval of the (first) operand
    param: float = None          # scalar parameter used by tests (unary *_C ops)
    operands: tuple = ()         # operand layout after the result; "@" marks slot refs

    @property
    def code(self):
        return int(Opcode[self.name])


def _u(name, numpy=(), domain=(-2.0, 2.0), hessian=NONLINEAR, param=None):
    return OpSpec(name, "unary", hessian, tuple(numpy), domain, param, ("@x", "c_index"))


def _b(name, numpy=(), domain=(-2.0, 2.0), hessian=NONLINEAR):
    return OpSpec(name, "binary", hessian, tuple(numpy), domain, operands=("@a", "@b"))


def _s(name, hessian, numpy, operands, family="structural"):
    return OpSpec(name, family, hessian, tuple(numpy), operands=tuple(operands))


TABLE = [
    _u("NEG", [np.negative], hessian=LINEAR),
    _u("ABS", [np.absolute, np.fabs], hessian=LINEAR),
    _u("SIGN", [np.sign], hessian=ZERO),
    _u("SQRT", [np.sqrt], (0.2, 3.0)),
    _u("CBRT", [np.cbrt], (0.2, 3.0)),
    _u("SQUARE", [np.square]),
    _u("RECIPROCAL", [np.reciprocal], (0.3, 3.0)),
    _u("EXP", [np.exp]),
    _u("EXP2", [np.exp2]),
    _u("EXPM1", [np.expm1]),
    _u("LOG", [np.log], (0.2, 3.0)),
    _u("LOG2", [np.log2], (0.2, 3.0)),
    _u("LOG10", [np.log10], (0.2, 3.0)),
    _u("LOG1P", [np.log1p], (-0.5, 2.0)),
    _u("SIN", [np.sin]),
    _u("COS", [np.cos]),
    _u("TAN", [np.tan], (-1.3, 1.3)),
    _u("ARCSIN", [np.arcsin], (-0.9, 0.9)),
    _u("ARCCOS", [np.arccos], (-0.9, 0.9)),
    _u("ARCTAN", [np.arctan]),
    _u("SINH", [np.sinh]),
    _u("COSH", [np.cosh]),
    _u("TANH", [np.tanh]),
    _u("ARCSINH", [np.arcsinh]),
    _u("ARCCOSH", [np.arccosh], (1.2, 3.0)),
    _u("ARCTANH", [np.arctanh], (-0.9, 0.9)),
    _u("ADD_C", hessian=LINEAR, param=1.5),
    _u("MUL_C", hessian=LINEAR, param=-2.5),
    _u("RSUB_C", hessian=LINEAR, param=0.75),
    _u("RDIV_C", domain=(0.3, 3.0), param=1.7),
    _u("POW_C", domain=(0.3, 3.0), param=2.7),
    _u("RPOW_C", param=1.9),
    _u("STOP_GRADIENT", hessian=ZERO),
    _b("ADD", [np.add], hessian=LINEAR),
    _b("SUB", [np.subtract], hessian=LINEAR),
    _b("MUL", [np.multiply], hessian=BILINEAR),
    _b("DIV", [np.true_divide], (0.3, 3.0)),
    _b("POW", [np.power, np.float_power], (0.3, 3.0)),
    _b("ARCTAN2", [np.arctan2]),
    _b("HYPOT", [np.hypot]),
    _b("MAXIMUM", [np.maximum], hessian=LINEAR),
    _b("MINIMUM", [np.minimum], hessian=LINEAR),
    _s("COMPARE", ZERO, (np.less, np.less_equal, np.greater, np.greater_equal, np.equal,
                         np.not_equal), ("@a", "@b", "kind", "branch_offset", "n"), "branch"),
    _s("ARGEXT", ZERO, (np.argmax, np.argmin),
       ("@a", "outer", "m", "inner", "index_offset", "want_min"), "branch"),
    _s("COPY", LINEAR, (np.copy, np.reshape, np.ravel), ("@a",)),
    _s("FILL", ZERO, (np.zeros_like, np.ones_like, np.full_like), ("@c",)),
    _s("BROADCAST", LINEAR, (np.broadcast_to,), ("@a", "outer", "m", "inner")),
    _s("SUM", LINEAR, (np.sum, np.mean), ("@a", "outer", "m", "inner")),
    _s("CUMSUM", LINEAR, (np.cumsum,), ("@a", "outer", "m", "inner")),
    _s("GATHER", LINEAR, (np.take, np.transpose, np.max, np.min),
       ("@a", "index_offset", "start", "step", "inner", "outer_step")),
    _s("SCATTER", LINEAR, (np.concatenate, np.pad),
       ("@v", "index_offset", "m", "start", "step", "inner", "outer_step")),
    _s("WHERE", LINEAR, (np.where,), ("@a", "@b", "branch_offset")),
    _s("MATMUL", BILINEAR, (np.matmul, np.dot, np.outer, np.einsum), ("@a", "@b", "m", "k", "n"),
       "linalg"),
    _s("CALLBACK", NONLINEAR, (np.linalg.solve,), ("callback", "n_args", "@args..."), "callback"),
]

BY_NAME = {spec.name: spec for spec in TABLE}
BY_CODE = {spec.code: spec for spec in TABLE}

# unary ufuncs recorded directly (no branch record needed)
UNARY_UFUNCS = {f: spec.code for spec in TABLE if spec.family == "unary" and spec.name != "ABS"
                for f in spec.numpy}
BINARY_UFUNCS = {f: spec.code for spec in TABLE if spec.family == "binary" for f in spec.numpy}
