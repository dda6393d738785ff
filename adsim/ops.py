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


# Roles of an op's operands (after its result slot, operand 0).
VALUE = "value"          # a slot or a constant whose values the op reads
INDEX = "index"          # a slot of integer data read at replay as positions (no derivative)
MASK = "mask"            # a slot of boolean data read at replay (no derivative)
INTS = "ints"            # an offset into the index stream
BRANCHES = "branches"    # an offset into the branch stream
PARAM = "param"          # the constant id of a scalar parameter, or -1
INT = "int"              # an integer attribute (a size, a kind, a flag)
CALLBACK = "callback"    # the position of a Python object in the tape's callbacks
COUNT = "count"          # the number of the variadic operands that follow
SLOT_ROLES = (VALUE, INDEX, MASK)


@dataclass(frozen=True)
class Operand:
    """One operand of an op: its name and role; ``variadic``: it stands for
    the COUNT operands before it names, in order (only the last one)."""

    name: str
    role: str = INT
    variadic: bool = False

    @property
    def is_ref(self):
        """A slot or constant reference (a value slot, a data slot)."""
        return self.role in SLOT_ROLES


def value(name):
    return Operand(name, VALUE)


def index(name):
    return Operand(name, INDEX)


def mask(name):
    return Operand(name, MASK)


def ints(name="index_offset"):
    return Operand(name, INTS)


def branches(name="branch_offset"):
    return Operand(name, BRANCHES)


@dataclass(frozen=True)
class UnaryRule:
    """A unary op's value and first and second derivatives as expressions in
    ``x`` (the operand), ``y`` (the value), ``c`` (the parameter) and the
    constants LN2 and LN10, written with + - * / and the C math library's
    function names, so that the same text is C and, with those names bound
    to NumPy's functions, NumPy (see :func:`numpy_rule`)."""

    value: str
    slope: str
    curvature: str
    finite: bool = False         # the slope is finite wherever the value is

    def names(self):
        """The variables the derivative expressions read ("x", "y", "c")."""
        import re
        words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", self.slope + " " + self.curvature))
        return words & {"x", "y", "c"}


@dataclass(frozen=True)
class BinaryRule:
    """A binary op's value and partial derivatives as expressions in ``a``,
    ``b`` (the operands) and ``y`` (the value), as UnaryRule's: ``da``,
    ``db`` the first partials, ``daa``, ``dab``, ``dbb`` the second."""

    value: str
    da: str
    db: str
    daa: str = "0.0"
    dab: str = "0.0"
    dbb: str = "0.0"


_NUMPY_NAMES = {"sqrt": np.sqrt, "cbrt": np.cbrt, "exp": np.exp, "exp2": np.exp2,
                "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
                "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
                "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
                "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
                "atanh": np.arctanh, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
                "rint": np.rint, "LN2": float(np.log(2.0)), "LN10": float(np.log(10.0))}


def numpy_rule(expression):
    """``f(x, y, c)`` evaluating a row's expression with NumPy's functions
    (on plain or active arrays alike)."""
    code = compile(expression, f"<adsim rule {expression}>", "eval")
    return lambda x, y, c: eval(code, _NUMPY_NAMES, {"x": x, "y": y, "c": c})


@dataclass(frozen=True)
class OpSpec:
    """Metadata of one opcode."""

    name: str
    family: str                  # unary, binary, branch, structural, linalg, callback
    hessian: str                 # ZERO, LINEAR, BILINEAR or NONLINEAR
    numpy: tuple = ()            # NumPy callables recorded as this op
    domain: tuple = (-2.0, 2.0)  # test sampling interval of the (first) operand
    param: float = None          # scalar parameter used by tests (unary *_C ops)
    operands: tuple = ()         # Operand per operand after the result, in order
    reads: tuple = ()            # operand names whose values the derivative rules read,
    #                              "result" for the result (a rule that reads a value not
    #                              listed would see it overwritten)
    constant_slope: bool = False  # unary: the derivative does not depend on x
    index_map: str = "elementwise"  # how result elements map to operand elements
    chunkable: bool = False      # may run chunk by chunk inside an elementwise run
    in_place: bool = False       # writes part of its result slot, keeping the rest
    rule: object = None          # unary and binary: value and derivatives as expressions
    #                              (UnaryRule, BinaryRule; None: the kernel block in
    #                              adsim/_ops/unary.pxi or binary.pxi is written by hand)
    code: int = 0                # set from the row's place in its family (below)

    @property
    def variadic(self):
        return bool(self.operands) and self.operands[-1].variadic

    @property
    def n_operands(self):
        """Operands including the result; for a variadic op, those before its
        variadic operands."""
        return 1 + len(self.operands) - self.variadic

    def position(self, name):
        """The position of the named operand (the result is 0)."""
        for i, operand in enumerate(self.operands):
            if operand.name == name:
                return i + 1
        raise KeyError(f"op {self.name} has no operand {name!r}")

    @property
    def has_derivative(self):
        """Whether the result has a derivative (branch records have no result)."""
        return self.family != "branch" and self.hessian != ZERO


def _reads(spec_reads, operands):
    """Row shorthand: "x" all value operands, "y" the result, or names."""
    out = []
    for word in spec_reads.split():
        if word == "x":
            out += [o.name for o in operands if o.role == VALUE]
        elif word == "y":
            out.append("result")
        else:
            out.append(word)
    return tuple(out)


def _u(name, numpy=(), domain=(-2.0, 2.0), hessian=NONLINEAR, param=None, reads="x",
       constant_slope=False, value=None, slope=None, curvature=None, finite=False):
    operands = (Operand("x", VALUE), Operand("c", PARAM))
    rule = None if slope is None else UnaryRule(value, slope, curvature, finite)
    return OpSpec(name, "unary", hessian, tuple(numpy), domain, param, operands,
                  () if constant_slope else _reads(reads, operands), constant_slope,
                  chunkable=True, rule=rule)


def _rounding(name, ufunc, value):
    """A piecewise-constant unary op: derivative zero, values recomputed by
    every replay."""
    return _u(name, [ufunc], hessian=ZERO, constant_slope=True, value=value, slope="0.0",
              curvature="0.0", finite=True)


def _b(name, numpy=(), domain=(-2.0, 2.0), hessian=NONLINEAR, reads="x y", rule=None):
    operands = (value("a"), value("b"))
    return OpSpec(name, "binary", hessian, tuple(numpy), domain, operands=operands,
                  reads=_reads(reads, operands), chunkable=True, rule=rule)


def _s(name, hessian, numpy, operands, family="structural", reads="", index_map=None,
       chunkable=False, in_place=False):
    operands = tuple(o if isinstance(o, Operand) else Operand(o) for o in operands)
    return OpSpec(name, family, hessian, tuple(numpy), operands=operands,
                  reads=_reads(reads, operands), index_map=index_map or name.lower(),
                  chunkable=chunkable, in_place=in_place)


TABLE = [
    _u("NEG", [np.negative], hessian=LINEAR, constant_slope=True,
       value="-x", slope="-1.0",
       curvature="0.0", finite=True),
    _u("ABS", [np.absolute, np.fabs], hessian=LINEAR),
    _u("SIGN", [np.sign], hessian=ZERO, constant_slope=True),
    _u("SQRT", [np.sqrt], (0.2, 3.0), reads="x y",
       value="sqrt(x)", slope="0.5 / y",
       curvature="-0.25 / (x * y)"),
    _u("CBRT", [np.cbrt], (0.2, 3.0), reads="x y",
       value="cbrt(x)", slope="1.0 / (3.0 * y * y)",
       curvature="-2.0 / (9.0 * y * y * y * y * y)"),
    _u("SQUARE", [np.square], value="x * x", slope="2.0 * x", curvature="2.0", finite=True),
    _u("RECIPROCAL", [np.reciprocal], (0.3, 3.0), reads="x y",
       value="1.0 / x", slope="-y * y",
       curvature="2.0 * y * y * y"),
    _u("EXP", [np.exp], reads="x y", value="exp(x)", slope="y", curvature="y"),
    _u("EXP2", [np.exp2], reads="x y",
       value="exp2(x)", slope="y * LN2",
       curvature="y * LN2 * LN2"),
    _u("EXPM1", [np.expm1], reads="x y", value="expm1(x)", slope="y + 1.0", curvature="y + 1.0"),
    _u("LOG", [np.log], (0.2, 3.0), value="log(x)", slope="1.0 / x", curvature="-1.0 / (x * x)"),
    _u("LOG2", [np.log2], (0.2, 3.0),
       value="log2(x)", slope="1.0 / (x * LN2)",
       curvature="-1.0 / (x * x * LN2)"),
    _u("LOG10", [np.log10], (0.2, 3.0),
       value="log10(x)", slope="1.0 / (x * LN10)",
       curvature="-1.0 / (x * x * LN10)"),
    _u("LOG1P", [np.log1p], (-0.5, 2.0),
       value="log1p(x)", slope="1.0 / (1.0 + x)",
       curvature="-1.0 / ((1.0 + x) * (1.0 + x))"),
    _u("SIN", [np.sin], reads="x y", value="sin(x)", slope="cos(x)", curvature="-y", finite=True),
    _u("COS", [np.cos], reads="x y", value="cos(x)", slope="-sin(x)", curvature="-y", finite=True),
    _u("TAN", [np.tan], (-1.3, 1.3), reads="x y",
       value="tan(x)", slope="1.0 + y * y",
       curvature="2.0 * y * (1.0 + y * y)"),
    _u("ARCSIN", [np.arcsin], (-0.9, 0.9),
       value="asin(x)", slope="1.0 / sqrt(1.0 - x * x)",
       curvature="x / ((1.0 - x * x) * sqrt(1.0 - x * x))"),
    _u("ARCCOS", [np.arccos], (-0.9, 0.9),
       value="acos(x)", slope="-1.0 / sqrt(1.0 - x * x)",
       curvature="-x / ((1.0 - x * x) * sqrt(1.0 - x * x))"),
    _u("ARCTAN", [np.arctan],
       value="atan(x)", slope="1.0 / (1.0 + x * x)",
       curvature="-2.0 * x / ((1.0 + x * x) * (1.0 + x * x))", finite=True),
    _u("SINH", [np.sinh], reads="x y", value="sinh(x)", slope="cosh(x)", curvature="y"),
    _u("COSH", [np.cosh], reads="x y", value="cosh(x)", slope="sinh(x)", curvature="y"),
    _u("TANH", [np.tanh], reads="x y",
       value="tanh(x)", slope="1.0 - y * y",
       curvature="-2.0 * y * (1.0 - y * y)", finite=True),
    _u("ARCSINH", [np.arcsinh],
       value="asinh(x)", slope="1.0 / sqrt(1.0 + x * x)",
       curvature="-x / ((1.0 + x * x) * sqrt(1.0 + x * x))", finite=True),
    _u("ARCCOSH", [np.arccosh], (1.2, 3.0),
       value="acosh(x)", slope="1.0 / sqrt(x * x - 1.0)",
       curvature="-x / ((x * x - 1.0) * sqrt(x * x - 1.0))"),
    _u("ARCTANH", [np.arctanh], (-0.9, 0.9),
       value="atanh(x)", slope="1.0 / (1.0 - x * x)",
       curvature="2.0 * x / ((1.0 - x * x) * (1.0 - x * x))"),
    _u("ADD_C", hessian=LINEAR, param=1.5, constant_slope=True,
       value="x + c", slope="1.0",
       curvature="0.0", finite=True),
    _u("MUL_C", hessian=LINEAR, param=-2.5, constant_slope=True,
       value="x * c", slope="c",
       curvature="0.0"),
    _u("RSUB_C", hessian=LINEAR, param=0.75, constant_slope=True,
       value="c - x", slope="-1.0",
       curvature="0.0", finite=True),
    _u("RDIV_C", domain=(0.3, 3.0), param=1.7, reads="x y",
       value="c / x", slope="-y / x",
       curvature="2.0 * y / (x * x)"),
    _u("POW_C", domain=(0.3, 3.0), param=2.7),
    _u("RPOW_C", param=1.9, reads="x y"),
    _u("STOP_GRADIENT", hessian=ZERO, constant_slope=True,
       value="x", slope="0.0",
       curvature="0.0", finite=True),
    # rounding: piecewise constant, derivative zero; recomputed by every replay
    _rounding("FLOOR", np.floor, "floor(x)"),
    _rounding("CEIL", np.ceil, "ceil(x)"),
    _rounding("TRUNC", np.trunc, "trunc(x)"),
    _rounding("RINT", np.rint, "rint(x)"),
    _b("ADD", [np.add], hessian=LINEAR, reads="", rule=BinaryRule("a + b", "1.0", "1.0")),
    _b("SUB", [np.subtract], hessian=LINEAR, reads="", rule=BinaryRule("a - b", "1.0", "-1.0")),
    _b("MUL", [np.multiply], hessian=BILINEAR, reads="x",
       rule=BinaryRule("a * b", "b", "a", dab="1.0")),
    # y_a = 1/b, y_b = -y/b, y_ab = -1/b^2, y_bb = 2y/b^2
    _b("DIV", [np.true_divide], (0.3, 3.0),
       rule=BinaryRule("a / b", "1.0 / b", "-y / b", dab="-1.0 / (b * b)",
                       dbb="2.0 * y / (b * b)")),
    # a ** b: y_a = b a^(b-1), y_b = y ln a (0 where y = 0: the limit a -> 0+),
    # y_aa = b (b-1) a^(b-2), y_ab = a^(b-1) (1 + b ln a), y_bb = y ln^2 a, exact
    # where b is 0 or 1 (the helpers in _elementwise.h)
    _b("POW", [np.power, np.float_power], (0.3, 3.0),
       rule=BinaryRule("pow(a, b)", "adsim_pow_da(a, b)", "y * adsim_pow_log(a, y)",
                       daa="adsim_pow_daa(a, b)",
                       dab="adsim_pow_am1(a, b) * (1.0 + b * adsim_pow_log(a, y))",
                       dbb="y * adsim_pow_log(a, y) * adsim_pow_log(a, y)")),
    # with r = a^2 + b^2: y_a = b/r, y_b = -a/r, y_aa = -2ab/r^2,
    # y_ab = (a^2 - b^2)/r^2, y_bb = 2ab/r^2
    _b("ARCTAN2", [np.arctan2],
       rule=BinaryRule("atan2(a, b)", "b / (a * a + b * b)", "-a / (a * a + b * b)",
                       daa="-2.0 * a * b / ((a * a + b * b) * (a * a + b * b))",
                       dab="(a * a - b * b) / ((a * a + b * b) * (a * a + b * b))",
                       dbb="2.0 * a * b / ((a * a + b * b) * (a * a + b * b))")),
    # y_a = a/y, y_b = b/y, y_aa = b^2/y^3, y_ab = -ab/y^3, y_bb = a^2/y^3; at the
    # origin (0/0) the norm's: partials 0, second partials inf, 0, inf (_elementwise.h)
    _b("HYPOT", [np.hypot],
       rule=BinaryRule("hypot(a, b)", "adsim_hypot_d(a, y)", "adsim_hypot_d(b, y)",
                       daa="adsim_hypot_dd(b, y)", dab="adsim_hypot_dab(a, b, y)",
                       dbb="adsim_hypot_dd(a, y)")),
    # the side is chosen from the values in every sweep; ties (and NaN in a) go to a
    _b("MAXIMUM", [np.maximum], hessian=LINEAR, reads="x",
       rule=BinaryRule("adsim_maximum(a, b)", "adsim_maximum_takes_a(a, b)",
                       "1.0 - adsim_maximum_takes_a(a, b)")),
    _b("MINIMUM", [np.minimum], hessian=LINEAR, reads="x",
       rule=BinaryRule("adsim_minimum(a, b)", "adsim_minimum_takes_a(a, b)",
                       "1.0 - adsim_minimum_takes_a(a, b)")),
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
    # log(e^a + e^b), NumPy's formula (no overflow; equal infinities give that
    # infinity): y_a = 1 / (1 + e^(b - a)) = s (1/2 where a = b), y_b = 1 - s
    # written as its own quotient, y_aa = y_bb = s (1 - s) = -y_ab. One op, so
    # an infinite adjoint meets each operand's partial once (max(a, b) +
    # log1p(exp(-|a - b|)) meets 1 and -1/2 at a tie: inf - inf/2 = NaN)
    _b("LOGADDEXP", [np.logaddexp], reads="x",
       rule=BinaryRule("adsim_logaddexp(a, b)", "adsim_logaddexp_da(a, b)",
                       "adsim_logaddexp_da(b, a)",
                       daa="adsim_logaddexp_da(a, b) * adsim_logaddexp_da(b, a)",
                       dab="-adsim_logaddexp_da(a, b) * adsim_logaddexp_da(b, a)",
                       dbb="adsim_logaddexp_da(a, b) * adsim_logaddexp_da(b, a)")),
    # log2(2^a + 2^b): y_a = 1 / (1 + 2^(b - a)), the second partials LN2 times
    # those of LOGADDEXP's form
    _b("LOGADDEXP2", [np.logaddexp2], reads="x",
       rule=BinaryRule("adsim_logaddexp2(a, b)", "adsim_logaddexp2_da(a, b)",
                       "adsim_logaddexp2_da(b, a)",
                       daa="LN2 * adsim_logaddexp2_da(a, b) * adsim_logaddexp2_da(b, a)",
                       dab="-LN2 * adsim_logaddexp2_da(a, b) * adsim_logaddexp2_da(b, a)",
                       dbb="LN2 * adsim_logaddexp2_da(a, b) * adsim_logaddexp2_da(b, a)")),
    _s("COMPARE", ZERO, (np.less, np.less_equal, np.greater, np.greater_equal, np.equal,
                         np.not_equal),
       (value("a"), value("b"), "kind", branches(), "n"), "branch", index_map="none"),
    # the branch record of max/min in tapes recorded before their position became
    # integer data (ARGEXT_AT): tape files and transcriptions of them still hold it
    _s("ARGEXT", ZERO, (np.argmax, np.argmin),
       (value("a"), "outer", "m", "inner", ints(), "want_min"), "branch", index_map="none"),
    _s("COPY", LINEAR, (np.copy, np.reshape, np.ravel), (value("a"),), index_map="elementwise",
       chunkable=True),
    _s("FILL", ZERO, (np.zeros_like, np.ones_like, np.full_like), (value("c"),)),
    _s("BROADCAST", LINEAR, (np.broadcast_to,), (value("a"), "outer", "m", "inner")),
    _s("SUM", LINEAR, (np.sum, np.mean), (value("a"), "outer", "m", "inner")),
    _s("CUMSUM", LINEAR, (np.cumsum,), (value("a"), "outer", "m", "inner")),
    # strided (step != 0) or 2-d slice gathers run chunk by chunk in elementwise runs
    _s("GATHER", LINEAR, (np.take, np.transpose, np.max, np.min),
       (value("a"), ints(), "start", "step", "inner", "outer_step"), chunkable=True),
    # in place: the result slot is also the array written into
    _s("SCATTER", LINEAR, (np.concatenate, np.pad),
       (value("v"), ints(), "m", "start", "step", "inner", "outer_step"), in_place=True),
    _s("WHERE", LINEAR, (np.where,), (value("a"), value("b"), branches())),
    # a gather whose indices are values of the tape (integer data, recorded):
    # read at every replay, bounds-checked there; derivative 0 in the indices
    _s("GATHER_AT", LINEAR, (), (value("a"), index("i"), "outer", "m", "inner"), reads="i"),
    # writes at integer data: r = base with v written (add: added, as np.add.at) at the
    # positions the replay reads from i; out of place
    _s("SCATTER_AT", LINEAR, (),
       (value("base"), value("v"), index("i"), "outer", "m", "inner", "add"), reads="i"),
    # np.where on boolean data: r = a where m else b, the mask read at replay
    _s("SELECT", LINEAR, (), (mask("m"), value("a"), value("b")), reads="m"),
    # argmax/argmin as values (integer data): position along the axis, no derivative
    _s("ARGEXT_AT", ZERO, (), (value("a"), "outer", "m", "inner", "want_min")),
    # np.searchsorted in a sorted table, as values (integer data): no derivative
    _s("SEARCH", ZERO, (), (value("table"), value("v"), "right")),
    _s("MATMUL", BILINEAR, (np.matmul, np.dot, np.outer, np.einsum),
       (value("a"), value("b"), "m", "k", "n"), "linalg", reads="x"),
    # a sparse matrix S (m x k, CSR: m + 1 row pointers then nnz column indices in the
    # index stream at ``ints``; its nnz values in a) times x (k x n, row-major), or S^T
    # times x (m x n) when ``trans``: scipy.sparse products, bilinear in (a, x)
    _s("SPMV", BILINEAR, (), (value("a"), value("x"), ints(), "m", "k", "n", "trans"),
       "linalg", reads="x"),
    # q = x^T C x for a constant square C (k x k), made by the optimisation at finish from
    # y = C @ x (or x @ C) read only by a dot with the same x (adsim/_optimise.pxi): the
    # value's one pass over C also writes the gradient (C + C^T) x into the op's own slot
    # g, which the tangent and adjoint rules read instead of C. form: bit 1 the value is
    # x . (x @ C) (else x . (C @ x)), bit 2 C is exactly symmetric (checked once)
    _s("QUADFORM", BILINEAR, (), (value("c"), value("x"), value("g"), "k", "form"), "linalg",
       reads="g"),
    _s("CALLBACK", NONLINEAR, (np.linalg.solve,),
       (Operand("callback", CALLBACK), Operand("n_args", COUNT),
        Operand("args", VALUE, variadic=True)), "callback", reads="args result",
       index_map="dense"),
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


def _bits(positions):
    out = 0
    for i in positions:
        out |= 1 << i
    return out


def _operand_bits(spec, keep):
    """Bit i: operand i (the result is 0) is kept; bit 0: the variadic ones."""
    bits = []
    for i, operand in enumerate(spec.operands):
        if keep(operand):
            bits.append(0 if operand.variadic else i + 1)
    return _bits(bits)


# the compiled per-op facts: (name, what it says, value of a row; 0 is the default)
FACTS = [
    ("VALUE_USES", "the reverse rules read the arguments (USES_ARGS), the result (USES_RESULT)",
     lambda spec: (1 if set(spec.reads) - {"result"} else 0) | (2 if "result" in spec.reads
                                                                   else 0)),
    ("CONSTANT_SLOPE", "unary: the derivative does not depend on x",
     lambda spec: int(spec.constant_slope)),
    ("NO_DERIVATIVE", "the result has derivative zero (no reverse rule runs)",
     lambda spec: int(spec.family != "branch" and spec.hessian == ZERO)),
    ("OPERAND_COUNT", "operands with the result (a variadic op: before the variadic ones)",
     lambda spec: spec.n_operands),
    ("VALUE_OPERANDS", "bit i: operand i is a value slot (bit 0: the variadic operands)",
     lambda spec: _operand_bits(spec, lambda o: o.role == VALUE)),
    ("SLOT_OPERANDS", "bit i: operand i refers to a slot or constant (value, index or mask; "
                      "bit 0: the variadic operands)",
     lambda spec: _operand_bits(spec, lambda o: o.is_ref)),
    ("READ_OPERANDS", "bit i: the reverse rules read operand i's values (bit 0: the variadic ones)",
     lambda spec: _operand_bits(spec, lambda o: o.name in spec.reads)),
    ("PARAM_OPERAND", "the position of the scalar parameter (a position in the constants), or 0",
     lambda spec: next((i + 1 for i, o in enumerate(spec.operands) if o.role == PARAM), 0)),
    ("INDEX_OPERAND", "the position of the operand of index data read at replay, or 0",
     lambda spec: next((i + 1 for i, o in enumerate(spec.operands) if o.role == INDEX), 0)),
    ("CHUNKABLE", "may run chunk by chunk inside a run of elementwise ops",
     lambda spec: int(spec.chunkable)),
    ("ELEMENTWISE_OPERANDS", "operands after the result a chunked run reads element by element",
     lambda spec: sum(o.role == VALUE for o in spec.operands)
     if spec.index_map == "elementwise" else 0),
]

_FACTS_BEGIN = "# BEGIN per-op facts generated from adsim/ops.py (python -m adsim.ops)\n"
_FACTS_END = "# END per-op facts\n"


def fact_declarations():
    """The declarations of the fact arrays (in adsim/_opcodes.pxd and facts.pxi)."""
    return "".join(f"cdef uint8_t {name}[<int>CALLBACK_END]    # {doc}\n"
                   for name, doc, _ in FACTS)


def facts_pxi():
    """adsim/_ops/facts.pxi: per-opcode facts the kernels look up."""
    out = ["# Generated from adsim/ops.py by `python -m adsim.ops`: do not edit.\n",
           "# Per-opcode facts of the rows (declared in adsim/_opcodes.pxd as well).\n\n",
           "cdef enum:\n    USES_ARGS = 1\n    USES_RESULT = 2\n\n",
           fact_declarations(), "\n\n",
           "cdef void init_op_facts() noexcept:\n"]
    out += [f"    memset({name}, 0, sizeof({name}))\n" for name, _, _ in FACTS]
    for spec in TABLE:
        for name, _, fact in FACTS:
            value = fact(spec)
            if value:
                out.append(f"    {name}[<int>{spec.name}] = {value}\n")
    return "".join(out + ["\n\ninit_op_facts()\n"])


def _rules_header(family):
    return ("# Generated from adsim/ops.py by `python -m adsim.ops`: do not edit.\n"
            f"# The value function and derivative rule of each {family} op whose row gives\n"
            f"# them as expressions (the shared kernels are in {family}.pxi).\n")


def _expression_rows(family):
    """The rows of ``family`` whose calculus is given as expressions."""
    return [spec for spec in TABLE if spec.family == family and spec.rule is not None]


def unary_rules_pxi():
    """adsim/_ops/unary_rules.pxi: the value and rule block of every unary op
    whose row gives its calculus as expressions (see UnaryRule)."""
    out = [_rules_header("unary")]
    for spec in _expression_rows("unary"):
        low, rule = spec.name.lower(), spec.rule
        out += ["\n",
                f"# {rule.value}: slope {rule.slope}, curvature {rule.curvature}\n",
                f"cdef double {low}_value(double x, double c) noexcept nogil:\n",
                f"    return {rule.value}\n",
                f"cdef void {low}_rule(double x, double y, double c, int order, "
                f"double* d) noexcept nogil:\n",
                f"    d[0] = {rule.slope}\n"]
        if any(ch.isalpha() for ch in rule.curvature.replace("LN", "")):
            out += ["    if order > 1:\n", f"        d[1] = {rule.curvature}\n"]
        else:
            out.append(f"    d[1] = {rule.curvature}\n")
        out.append(f"register_unary({spec.name}, {low}_value, {low}_rule)\n")
    return "".join(out)


def _is_number(expression):
    try:
        float(expression)
    except ValueError:
        return False
    return True


def binary_rules_pxi():
    """adsim/_ops/binary_rules.pxi: the value and rule block of every binary
    op whose row gives its calculus as expressions (see BinaryRule)."""
    out = [_rules_header("binary")]
    for spec in _expression_rows("binary"):
        low, rule = spec.name.lower(), spec.rule
        second = [rule.daa, rule.dab, rule.dbb]
        out += ["\n",
                f"# {rule.value}: partials {rule.da}, {rule.db}; second {', '.join(second)}\n",
                f"cdef double {low}_value(double a, double b) noexcept nogil:\n",
                f"    return {rule.value}\n",
                f"cdef void {low}_rule(double a, double b, double y, int order, "
                f"double* d) noexcept nogil:\n",
                f"    d[0] = {rule.da}\n",
                f"    d[1] = {rule.db}\n"]
        if all(_is_number(e) for e in second):
            out += [f"    d[{2 + i}] = {e}\n" for i, e in enumerate(second)]
        else:
            out += ["    if order > 1:\n"] + [f"        d[{2 + i}] = {e}\n"
                                               for i, e in enumerate(second)]
        out.append(f"register_binary({spec.name}, {low}_value, {low}_rule)\n")
    return "".join(out)


def generated_files():
    """{path: the text the table generates for it}."""
    pxd = _HERE / "_opcodes.pxd"
    text = pxd.read_text()
    head, rest = text.split(_ENUM_BEGIN, 1)
    tail = rest.split(_ENUM_END, 1)[1]
    text = head + opcode_enum() + tail
    head, rest = text.split(_FACTS_BEGIN, 1)
    tail = rest.split(_FACTS_END, 1)[1]
    return {pxd: head + _FACTS_BEGIN + fact_declarations() + _FACTS_END + tail, _HERE / "_ops" / "facts.pxi": facts_pxi(),
            _HERE / "_ops" / "unary_rules.pxi": unary_rules_pxi(),
            _HERE / "_ops" / "binary_rules.pxi": binary_rules_pxi()}


def main(argv):
    for path, text in generated_files().items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
