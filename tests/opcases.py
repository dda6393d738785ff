"""Ways to call each elementwise primitive of the op table, shared by the
table-driven tests and the random programs. Every callable also runs on
plain NumPy arrays, which gives the reference values."""
import operator

import numpy as np
import scipy.sparse as sp

import adsim
from adsim import ops

UNARY = [s for s in ops.TABLE if s.family == "unary"]
BINARY = [s for s in ops.TABLE if s.family == "binary" and s.numpy]   # comparisons: PROGRAMS

# distance to the nearest kink, where finite differences are not valid
KINKS = {
    "ABS": lambda x: abs(x),
    "SIGN": lambda x: abs(x),
    "MAXIMUM": lambda a, b: abs(a - b),
    "MINIMUM": lambda a, b: abs(a - b),
    "FLOOR": lambda x: np.abs(x - np.rint(x)),
    "CEIL": lambda x: np.abs(x - np.rint(x)),
    "TRUNC": lambda x: np.abs(x - np.rint(x)),
    "RINT": lambda x: np.abs(x - np.floor(x) - 0.5),
    # a multiple of b: where the quotient jumps
    "FLOOR_DIVIDE": lambda a, b: np.abs(a - b * np.rint(a / b)),
    "REMAINDER": lambda a, b: np.abs(a - b * np.rint(a / b)),
    "FMOD": lambda a, b: np.abs(a - b * np.rint(a / b)),
}
NONSMOOTH = set(KINKS)


def _unary_cases(spec):
    """(label, f) pairs that record ``spec``'s opcode."""
    c = spec.param
    cases = [(f.__name__, f) for f in spec.numpy]
    extra = {
        "NEG": [("-x", operator.neg)],
        "ABS": [("abs()", abs)],
        "ADD_C": [("x+c", lambda x: x + c), ("c+x", lambda x: c + x), ("x-c", lambda x: x - (-c))],
        "MUL_C": [("x*c", lambda x: x * c), ("c*x", lambda x: c * x)],
        "RSUB_C": [("c-x", lambda x: c - x)],
        "RDIV_C": [("c/x", lambda x: c / x)],
        "POW_C": [("x**c", lambda x: x ** c), ("x**2.0", lambda x: x ** 2.0),
                  ("x**1", lambda x: x ** 1), ("x**0", lambda x: x ** 0),
                  ("x**-1.5", lambda x: x ** -1.5)],
        "RPOW_C": [("c**x", lambda x: c ** x)],
    }
    return cases + extra.get(spec.name, [])


# STOP_GRADIENT has no NumPy counterpart with the same derivative; its own test covers it
UNARY_CASES = {s.name: _unary_cases(s) for s in UNARY if s.name != "STOP_GRADIENT"}

BINARY_OPERATORS = {"ADD": operator.add, "SUB": operator.sub, "MUL": operator.mul,
                    "DIV": operator.truediv, "POW": operator.pow}
BINARY_CASES = {s.name: [(f.__name__, f) for f in s.numpy] for s in BINARY}
for _name, _op in BINARY_OPERATORS.items():
    BINARY_CASES[_name].append((_op.__name__, _op))

# distance to the nearest kink or branch cut, where finite differences are not valid
FD_KINKS = dict(KINKS,
                ARCTAN2=lambda a, b: np.where(b < 0, np.abs(a), np.hypot(a, b)),
                HYPOT=lambda a, b: np.hypot(a, b))
NOT_HOLOMORPHIC = {"ABS", "SIGN"}   # accept complex input, but the complex step does not apply


def sample(rng, spec, shapes):
    """Random points of the op's domain, away from kinks."""
    lo, hi = spec.domain
    kink = FD_KINKS.get(spec.name)
    for _ in range(1000):
        xs = [rng.uniform(lo, hi, size=s) for s in shapes]
        if kink is None or np.min(kink(*xs), initial=np.inf) > 0.05:
            return xs
    raise AssertionError("no sample away from the kinks")


# ---- one program per opcode outside the elementwise families

A43 = np.random.default_rng(11).standard_normal((4, 3))
M4 = np.random.default_rng(12).standard_normal((4, 4)) + 4.0 * np.eye(4)
# a sparse 3 x 4 matrix (CSR) with an empty column
S34 = sp.csr_matrix(np.array([[1.5, 0.0, -2.0, 0.0], [0.0, 0.5, 0.0, 0.0], [0.25, 0.0, 3.0, 0.0]]))


def written_copy(x):
    y = np.copy(x)
    y[0] = x[1] * x[0]
    return y


def _scatter_program(x):
    y = np.zeros_like(x, shape=(6,))
    y[1:5] = x
    y[2] = x[0] ** 2          # overwrite an element written before
    y[0] += x[3]
    return y * y


def _compare_program(x):
    if np.sum(x) > 0:
        return np.sin(x) * 2.0
    return np.cos(x)


def _scatter_at_program(x):
    u = x ** 2
    i = np.floor(np.abs(x) * 2.0).astype(int) % 5
    u[i] = np.sin(x)
    np.add.at(u, i[::-1], x ** 3)
    return u * x


def branch_max_rows(x):
    """np.max(x, axis=1) as tapes recorded it before max and min chose their
    element at replay: an ARGEXT branch record and a GATHER at its positions
    (tape files may hold them; recorded here by hand)."""
    if not isinstance(x, adsim.Active):
        return np.max(x, axis=1)
    from adsim._np.core import new, tape_of
    from adsim._opcodes import Opcode
    tape = tape_of(x)
    outer, m = x.shape
    ioff = tape.add_indices(np.zeros(outer, dtype=np.int32))
    tape.record_op(int(Opcode.ARGEXT), -1, [x.slot, outer, m, 1, ioff, 0])
    return new(tape, Opcode.GATHER, (outer,), [x.slot, ioff, 0, 0, 0, 0])


MASK6 = np.array([True, False, False, True, True, False])      # a plain mask: WHERE
# quadratic forms (QUADFORM, made at finish): a matrix that is not symmetric and one that is
N4 = np.random.default_rng(13).standard_normal((4, 4))
S4 = N4 + N4.T

PROGRAMS = {
    # name: (function, input shape, sampling interval)
    "COMPARE": (_compare_program, (4,), (0.1, 2.0)),
    "ARGEXT": (lambda x: branch_max_rows(x) * np.min(x, axis=0)[:2], (2, 3), (-2.0, 2.0)),
    # (a copy only read is optimised away: its readers read the source; one
    # written into stays)
    "COPY": (lambda x: written_copy(x) ** 2, (2, 3), (-2.0, 2.0)),
    "FILL": (lambda x: np.concatenate([np.ones(2), x]) * np.sum(x), (3,), (-2.0, 2.0)),
    "BROADCAST": (lambda x: np.broadcast_to(x, (3, 4)) * x[None, :] ** 2, (4,), (-2.0, 2.0)),
    "SUM": (lambda x: np.sum(x ** 3, axis=0), (3, 2), (-2.0, 2.0)),
    "CUMSUM": (lambda x: np.cumsum(x * x), (5,), (-2.0, 2.0)),
    "GATHER": (lambda x: x[[2, 0, 0, 1]] ** 2 * x[::-1][:4], (5,), (-2.0, 2.0)),
    "SCATTER": (_scatter_program, (4,), (-2.0, 2.0)),
    "ARGEXT_AT": (lambda x: x[np.argmax(np.reshape(x, (2, 3)), axis=1)] * x[np.argmin(x)] * x[:2],
                  (6,), (-2.0, 2.0)),
    "SEARCH": (lambda x: np.interp(x, np.linspace(-2.0, 2.0, 7), np.cos(np.arange(7.0))) * x
               + np.searchsorted(np.linspace(-2.0, 2.0, 5), x) * x, (5,), (-1.9, 1.9)),
    "SCATTER_AT": (_scatter_at_program, (5,), (-2.0, 2.0)),
    "GATHER_AT": (lambda x: x[np.floor(np.abs(x) * 2.0).astype(int) % 5] ** 2 * x, (5,),
                  (-2.0, 2.0)),
    "WHERE": (lambda x: np.where(MASK6, x ** 2, np.sin(x)), (6,), (-2.0, 2.0)),
    "SELECT": (lambda x: np.where(x > 0, x ** 2, np.sin(x)), (6,), (-2.0, 2.0)),
    **{name: ((lambda op: lambda x: np.where(op(x[:3], x[3:]), x[:3] ** 2, np.sin(x[3:])))(op),
              (6,), (-2.0, 2.0))
       for name, op in (("LESS", np.less), ("LESS_EQUAL", np.less_equal),
                        ("GREATER", np.greater), ("GREATER_EQUAL", np.greater_equal),
                        ("EQUAL", lambda a, b: np.equal(np.floor(a), np.floor(b))),
                        ("NOT_EQUAL", lambda a, b: np.not_equal(np.floor(a), np.floor(b))))},
    "MATMUL": (lambda x: (x @ A43) ** 2, (4,), (-2.0, 2.0)),
    "SPMV": (lambda x: np.concatenate([(S34 @ x) ** 2, x @ S34.T.tocsc(), S34.T @ np.sin(x[:3])]),
             (4,), (-2.0, 2.0)),
    "QUADFORM": (lambda x: (x @ (N4 @ x)) * x + np.dot(x @ S4, x) * np.sin(x), (4,), (-2.0, 2.0)),
    "CALLBACK": (lambda x: np.linalg.solve(M4 + 0.1 * x[:, None] * x[None, :], x), (4,), (-1.0, 1.0)),
}

# opcodes with a test spec: every opcode needs one (tests/test_ops_table.py)
TESTED = set(UNARY_CASES) | {"STOP_GRADIENT"} | set(BINARY_CASES) | set(PROGRAMS)
