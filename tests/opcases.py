"""Ways to call each elementwise primitive of the op table, shared by the
table-driven tests and the random programs. Every callable also runs on
plain NumPy arrays, which gives the reference values."""
import operator

from adsim import ops

UNARY = [s for s in ops.TABLE if s.family == "unary"]
BINARY = [s for s in ops.TABLE if s.family == "binary"]

# distance to the nearest kink, where finite differences are not valid
KINKS = {
    "ABS": lambda x: abs(x),
    "SIGN": lambda x: abs(x),
    "MAXIMUM": lambda a, b: abs(a - b),
    "MINIMUM": lambda a, b: abs(a - b),
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
