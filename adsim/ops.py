"""The op table: one row per opcode of the compiled tape, the one source of
its facts.

Each row names the NumPy callables the op stands for, its family (which
kernel file in ``adsim/_ops`` holds its rules), its Hessian class (used by the
second-order sparsity rules: ZERO, LINEAR, BILINEAR, NONLINEAR), the values
its derivative rules read (``reads``: "x" the operands, "y" the result; a
rule that reads a value not listed here would see it overwritten), whether
its slope is constant and, for elementwise ops, the domain on which tests
sample it. Opcode numbers follow from the row order inside each family's
range. The compiled declarations are generated from this table:
``python -m adsim.ops`` rewrites the opcode enum in ``adsim/_opcodes.pxd`` and
``adsim/_ops/facts.pxi``; ``tests/test_ops_table.py`` fails when they
differ from what the table generates.
"""
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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
    reads: str = ""              # values the derivative rules read: "x" operands, "y" result
    constant_slope: bool = False  # unary: the derivative does not depend on x
    code: int = 0                # set from the row's place in its family (below)


def _u(name, numpy=(), domain=(-2.0, 2.0), hessian=NONLINEAR, param=None, reads="x",
       constant_slope=False):
    return OpSpec(name, "unary", hessian, tuple(numpy), domain, param, ("@x", "c_index"),
                  "" if constant_slope else reads, constant_slope)


def _b(name, numpy=(), domain=(-2.0, 2.0), hessian=NONLINEAR, reads="xy"):
    return OpSpec(name, "binary", hessian, tuple(numpy), domain, operands=("@a", "@b"),
                  reads=reads)


def _s(name, hessian, numpy, operands, family="structural", reads=""):
    return OpSpec(name, family, hessian, tuple(numpy), operands=tuple(operands), reads=reads)


TABLE = [
    _u("NEG", [np.negative], hessian=LINEAR, constant_slope=True),
    _u("ABS", [np.absolute, np.fabs], hessian=LINEAR),
    _u("SIGN", [np.sign], hessian=ZERO, constant_slope=True),
    _u("SQRT", [np.sqrt], (0.2, 3.0), reads="xy"),
    _u("CBRT", [np.cbrt], (0.2, 3.0), reads="xy"),
    _u("SQUARE", [np.square]),
    _u("RECIPROCAL", [np.reciprocal], (0.3, 3.0), reads="xy"),
    _u("EXP", [np.exp], reads="xy"),
    _u("EXP2", [np.exp2], reads="xy"),
    _u("EXPM1", [np.expm1], reads="xy"),
    _u("LOG", [np.log], (0.2, 3.0)),
    _u("LOG2", [np.log2], (0.2, 3.0)),
    _u("LOG10", [np.log10], (0.2, 3.0)),
    _u("LOG1P", [np.log1p], (-0.5, 2.0)),
    _u("SIN", [np.sin], reads="xy"),
    _u("COS", [np.cos], reads="xy"),
    _u("TAN", [np.tan], (-1.3, 1.3), reads="xy"),
    _u("ARCSIN", [np.arcsin], (-0.9, 0.9)),
    _u("ARCCOS", [np.arccos], (-0.9, 0.9)),
    _u("ARCTAN", [np.arctan]),
    _u("SINH", [np.sinh], reads="xy"),
    _u("COSH", [np.cosh], reads="xy"),
    _u("TANH", [np.tanh], reads="xy"),
    _u("ARCSINH", [np.arcsinh]),
    _u("ARCCOSH", [np.arccosh], (1.2, 3.0)),
    _u("ARCTANH", [np.arctanh], (-0.9, 0.9)),
    _u("ADD_C", hessian=LINEAR, param=1.5, constant_slope=True),
    _u("MUL_C", hessian=LINEAR, param=-2.5, constant_slope=True),
    _u("RSUB_C", hessian=LINEAR, param=0.75, constant_slope=True),
    _u("RDIV_C", domain=(0.3, 3.0), param=1.7, reads="xy"),
    _u("POW_C", domain=(0.3, 3.0), param=2.7),
    _u("RPOW_C", param=1.9, reads="xy"),
    _u("STOP_GRADIENT", hessian=ZERO, constant_slope=True),
    # rounding: piecewise constant, derivative zero; recomputed by every replay
    _u("FLOOR", [np.floor], hessian=ZERO, constant_slope=True),
    _u("CEIL", [np.ceil], hessian=ZERO, constant_slope=True),
    _u("TRUNC", [np.trunc], hessian=ZERO, constant_slope=True),
    _u("RINT", [np.rint], hessian=ZERO, constant_slope=True),
    _b("ADD", [np.add], hessian=LINEAR, reads=""),
    _b("SUB", [np.subtract], hessian=LINEAR, reads=""),
    _b("MUL", [np.multiply], hessian=BILINEAR, reads="x"),
    _b("DIV", [np.true_divide], (0.3, 3.0)),
    _b("POW", [np.power, np.float_power], (0.3, 3.0)),
    _b("ARCTAN2", [np.arctan2]),
    _b("HYPOT", [np.hypot]),
    _b("MAXIMUM", [np.maximum], hessian=LINEAR, reads="x"),
    _b("MINIMUM", [np.minimum], hessian=LINEAR, reads="x"),
    # NumPy's integer division of floats (its divmod algorithm, exactly):
    # the quotient has derivative zero, the remainders 1 in a and -q in b
    _b("FLOOR_DIVIDE", [np.floor_divide], (0.3, 3.0), hessian=ZERO, reads=""),
    _b("REMAINDER", [np.remainder], (0.3, 3.0), hessian=LINEAR, reads="x"),
    _b("FMOD", [np.fmod], (0.3, 3.0), hessian=LINEAR, reads="x"),
    # comparisons as values (boolean data of the recording: 1.0 true, 0.0 false)
    _b("LESS", hessian=ZERO, reads=""),
    _b("LESS_EQUAL", hessian=ZERO, reads=""),
    _b("GREATER", hessian=ZERO, reads=""),
    _b("GREATER_EQUAL", hessian=ZERO, reads=""),
    _b("EQUAL", hessian=ZERO, reads=""),
    _b("NOT_EQUAL", hessian=ZERO, reads=""),
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
    # a gather whose indices are values of the tape (integer data, recorded):
    # read at every replay, bounds-checked there; derivative 0 in the indices
    _s("GATHER_AT", LINEAR, (), ("@a", "@i", "outer", "m", "inner"), reads="x"),
    # writes at integer data: r = base with v written (add: added, as np.add.at) at the
    # positions the replay reads from i; out of place
    _s("SCATTER_AT", LINEAR, (), ("@base", "@v", "@i", "outer", "m", "inner", "add"), reads="x"),
    # np.where on boolean data: r = a where m else b, the mask read at replay
    _s("SELECT", LINEAR, (), ("@m", "@a", "@b"), reads="x"),
    # argmax/argmin as values (integer data): position along the axis, no derivative
    _s("ARGEXT_AT", ZERO, (), ("@a", "outer", "m", "inner", "want_min")),
    # np.searchsorted in a sorted table, as values (integer data): no derivative
    _s("SEARCH", ZERO, (), ("@table", "@v", "right")),
    _s("MATMUL", BILINEAR, (np.matmul, np.dot, np.outer, np.einsum), ("@a", "@b", "m", "k", "n"),
       "linalg", reads="x"),
    _s("CALLBACK", NONLINEAR, (np.linalg.solve,), ("callback", "n_args", "@args..."), "callback",
       reads="xy"),
]

# family -> first opcode; each family's codes follow its rows, then its *_END
FAMILY_START = {"unary": 1, "binary": 64, "branch": 96, "structural": 128, "linalg": 160,
                "callback": 192}
FAMILY_NOTE = {
    "unary": "unary elementwise, one scalar parameter (_ops/unary.pxi)",
    "binary": "binary elementwise, operands of equal size or size 1 (_ops/binary.pxi)",
    "branch": "branch records: no result, checked on replay (_ops/branch.pxi)",
    "structural": "linear structural ops (_ops/structural.pxi)",
    "linalg": "linear algebra (_ops/linalg.pxi)",
    "callback": "user primitives and loops: one Python call per op (_ops/callback.pxi)",
}


def _number(table):
    counts = dict.fromkeys(FAMILY_START, 0)
    rows = []
    for spec in table:
        rows.append(OpSpec(**{**spec.__dict__, "code": FAMILY_START[spec.family]
                              + counts[spec.family]}))
        counts[spec.family] += 1
    return rows, {f: FAMILY_START[f] + counts[f] for f in FAMILY_START}


TABLE, FAMILY_END = _number(TABLE)
BY_NAME = {spec.name: spec for spec in TABLE}
BY_CODE = {spec.code: spec for spec in TABLE}

# unary ufuncs recorded directly (no branch record needed)
UNARY_UFUNCS = {f: spec.code for spec in TABLE if spec.family == "unary" and spec.name != "ABS"
                for f in spec.numpy}
BINARY_UFUNCS = {f: spec.code for spec in TABLE if spec.family == "binary" for f in spec.numpy}


# ---- generated compiled declarations -------------------------------------------

_ENUM_BEGIN = "    # BEGIN opcodes generated from adsim/ops.py (python -m adsim.ops)\n"
_ENUM_END = "    # END opcodes\n"
_HERE = Path(__file__).parent


def opcode_enum():
    """The body of ``cpdef enum Opcode`` in adsim/_opcodes.pxd."""
    lines = [_ENUM_BEGIN]
    for family in FAMILY_START:
        lines.append(f"    # {FAMILY_NOTE[family]}\n")
        lines += [f"    {spec.name} = {spec.code}\n" for spec in TABLE if spec.family == family]
        lines.append(f"    {family.upper()}_END = {FAMILY_END[family]}\n")
    return "".join(lines + [_ENUM_END])


def facts_pxi():
    """adsim/_ops/facts.pxi: per-opcode facts the kernels look up."""
    uses = {"": "0", "x": "USES_ARGS", "y": "USES_RESULT", "xy": "USES_ARGS | USES_RESULT"}
    out = ["# Generated from adsim/ops.py by `python -m adsim.ops`: do not edit.\n",
           "# Per-opcode facts: the values each op's derivative rules read, the\n",
           "# unary ops whose slope does not depend on x, the ops whose result\n",
           "# has derivative zero.\n\n",
           "cdef enum:\n    USES_ARGS = 1\n    USES_RESULT = 2\n\n",
           "cdef uint8_t VALUE_USES[<int>CALLBACK_END]\n",
           "cdef uint8_t CONSTANT_SLOPE[<int>CALLBACK_END]\n",
           "cdef uint8_t NO_DERIVATIVE[<int>CALLBACK_END]\n\n\n",
           "cdef void init_op_facts() noexcept:\n",
           "    memset(VALUE_USES, 0, sizeof(VALUE_USES))\n",
           "    memset(CONSTANT_SLOPE, 0, sizeof(CONSTANT_SLOPE))\n",
           "    memset(NO_DERIVATIVE, 0, sizeof(NO_DERIVATIVE))\n"]
    for spec in TABLE:
        if spec.reads:
            out.append(f"    VALUE_USES[<int>{spec.name}] = {uses[spec.reads]}\n")
        if spec.constant_slope:
            out.append(f"    CONSTANT_SLOPE[<int>{spec.name}] = 1\n")
        if spec.family != "branch" and spec.hessian == ZERO:
            out.append(f"    NO_DERIVATIVE[<int>{spec.name}] = 1\n")
    return "".join(out + ["\n\ninit_op_facts()\n"])


def generated_files():
    """{path: the text the table generates for it}."""
    pxd = _HERE / "_opcodes.pxd"
    text = pxd.read_text()
    head, rest = text.split(_ENUM_BEGIN, 1)
    tail = rest.split(_ENUM_END, 1)[1]
    return {pxd: head + opcode_enum() + tail, _HERE / "_ops" / "facts.pxi": facts_pxi()}


def main(argv):
    for path, text in generated_files().items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
