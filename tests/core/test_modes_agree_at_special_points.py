"""Every way of taking a derivative gives the same answer at special points
(issue 24): zeros, infinities, NaN, ties of max/min/sort/abs/maximum, the
branch points of sqrt/log/arctan2/hypot/power and norm at 0, overflowing
exp, branches np.where does not select, 0 * inf.

The modes compared: a recording's sweeps against the functional API
(``grad``, ``jvp``, ``hvp``, ``hessian``), gradients against forward and
reverse Jacobians and against ``jvp`` (``grad(f)(x) . v == jvp(f)(x, v)``),
one direction against several at once, the Hessian-vector product against
the forward derivative of the gradient (a derivative inside a derivative)
and against dense and sparse Hessians, third derivatives by two nestings
(transcriptions), Jacobians of vector functions by every sweep and sparse,
batched replays against separate ones, a tape recorded elsewhere and
replayed here against a recording here, chunked sweeps against op-by-op
sweeps, fused runs against the interpreter.
They agree to rounding, with NaN and infinities in the same places.

The rule they share (docs/tape.md, "Zero times infinity"; docs/numpy.md,
"Ties of max and min"): a zero factor of the chain rule contributes zero
whichever side it is on, so a norm at 0 has the zero subgradient, the side
np.where does not take passes nothing, and the derivative behind an
overflow (a partial 1/inf) is 0; hypot at the origin has the norm's zero
subgradient; a partial that is itself NaN (a / b at 0 / 0) makes the
derivative NaN in every mode; at a tie the whole
derivative goes to the element the value is taken from.

One thing the rule cannot make agree, and which the random programs avoid
by using every intermediate value once: where adjoints of a value cancel
exactly (``y - y``) and the value's own partial is infinite, reverse mode
adds first (0 * inf = 0) and forward mode multiplies first (inf - inf =
NaN). See ``test_cancelling_adjoints_behind_an_infinite_partial``.
"""
import warnings

import numpy as np
import pytest
import scipy.special
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import adsim as ad
from adsim.errors import BranchChanged

pytestmark = pytest.mark.slow
INF, NAN = np.inf, np.nan


# ---------------------------------------------------------------- comparing
def dot_rule(J, v):
    """J @ v with the zero-times-infinity rule (a zero entry of v adds
    nothing), or None where a weighted entry of J is infinite or NaN: a
    tangent sweep adds the tangents before it meets such a partial (x @ x at
    tiny x: 2 x . v, then times the infinite slope of sqrt at 0; a - b with
    equal tangents, then times a NaN slope), so what it computes there is
    not J @ v. The Jacobians by unit directions are compared instead."""
    with np.errstate(invalid="ignore"):
        terms = np.where(v == 0, 0.0, J * v)
    if not np.all(np.isfinite(terms)):
        return None
    return terms.sum(axis=-1)


def put(results, name, value):
    if value is not None:
        results[name] = value


def same(a, b, rtol=1e-9):
    """Why ``a`` and ``b`` differ beyond rounding, or None: NaN and
    infinities must be in the same places."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return f"shapes {a.shape} and {b.shape}"
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return "NaN in different places"
    if not np.array_equal(a[np.isinf(a)], b[np.isinf(b)]) or \
            not np.array_equal(np.isinf(a), np.isinf(b)):
        return "infinities in different places"
    finite = np.isfinite(a)
    scale = max(np.max(np.abs(b[finite]), initial=0.0), 1.0)
    if np.max(np.abs(a[finite] - b[finite]), initial=0.0) > rtol * scale:
        return "different values"
    return None


def assert_agree(results, where=""):
    """``results`` maps "quantity:mode" to an array; every mode of one
    quantity must agree with the first."""
    groups = {}
    for name, value in results.items():
        groups.setdefault(name.split(":")[0], []).append((name, value))
    wrong = []
    for items in groups.values():
        first, reference = items[0]
        for name, value in items[1:]:
            why = same(value, reference)
            if why:
                wrong.append(f"{name} vs {first}: {why}\n  {np.ravel(value)[:8]}\n  "
                             f"{np.ravel(reference)[:8]}")
    assert not wrong, where + "\n" + "\n".join(wrong)


# ---------------------------------------------------------------- the modes
def quiet():
    """NumPy's warnings about the special values are expected here."""
    context = warnings.catch_warnings()
    context.__enter__()
    warnings.simplefilter("ignore")
    return context


def small_modes(f, x, v, x_recorded=None, nested=True, numpy_value=True):
    """Values, gradients, tangents and Hessian-vector products of the scalar
    ``f`` at ``x`` along ``v``, by every mode for small inputs."""
    out = {}
    V = np.stack([v, np.roll(v, 1), np.zeros_like(v)], axis=-1)
    context = quiet()
    try:
        with np.errstate(all="ignore"):
            tape = ad.record(f, x)
            if numpy_value:
                out["value:numpy"] = np.asarray(f(x), dtype=float)
            out["value:forward"] = tape.forward(x)
            out["gradient:api"] = ad.grad(f)(x)
            out["gradient:tape"] = tape.gradient(x)
            out["gradient:vjp"] = tape.vjp(x, np.ones(()))[1]
            out["gradient:reverse jacobian"] = tape.jacobian(x, mode="reverse")
            J = out["gradient:forward jacobian"] = tape.jacobian(x, mode="forward")
            out["jvp:tape"] = tape.jvp(x, v)[1]
            out["jvp:api"] = ad.jvp(f, (x,), (v,))[1]
            put(out, "jvp:gradient . v", dot_rule(J, v))
            out["jvp:several directions"] = tape.jvp(x, V)[1][..., 0]
            out["hvp:tape"] = tape.hvp(x, v)
            out["hvp:api"] = ad.hvp(f, x, v)
            out["hvp:with gradient"] = tape.gradient_and_hvp(x, v)[1]
            out["hvp:several directions"] = tape.hvp(x, V)[..., 0]
            X = np.stack([x, x])
            out["value:batched"] = tape.batched.forward(X)[1]
            out["gradient:batched"] = tape.batched.gradient(X)[1]
            out["jvp:batched"] = tape.batched.jvp(X, np.stack([v, v]))[1][1]
            out["hvp:batched"] = tape.batched.hvp(X, np.stack([v, v]))[1]
            if nested:
                out["hvp:jvp of grad"] = ad.jvp(ad.grad(f), (x,), (v,))[1]
                out["hvp:grad of grad . v"] = ad.grad(lambda y: ad.grad(f)(y) @ v)(x)
                # third derivatives along v, v: recorded transcriptions of
                # the inner derivatives (adsim/_nesting/transcribe.py)
                out["third:grad of grad of grad"] = ad.grad(
                    lambda y: ad.grad(lambda z: ad.grad(f)(z) @ v)(y) @ v)(x)
                out["third:jvp of hvp"] = ad.jvp(lambda y: ad.hvp(f, y, v), (x,), (v,))[1]
                H = ad.hessian(f)(x)
                if np.all(np.isfinite(H)):      # H v adds other products than hvp
                    put(out, "hvp:hessian v", dot_rule(H, v))
                    put(out, "hvp:sparse hessian v",
                        dot_rule(ad.sparse_hessian(f, x).toarray(), v))
            if x_recorded is not None:
                replay = ad.record(f, x_recorded)
                try:
                    out["value:replay"] = replay.forward(x)
                    out["gradient:replay"] = replay.gradient(x)
                    out["jvp:replay"] = replay.jvp(x, v)[1]
                    out["hvp:replay"] = replay.hvp(x, v)
                except BranchChanged:
                    pass
    finally:
        context.__exit__(None, None, None)
    return out


def jacobian_modes(F, x):
    """The Jacobian of the vector function ``F`` at ``x``: forward and
    reverse sweeps, several weights in one reverse sweep, the functional
    API, batched replays and the sparse Jacobian."""
    out = {}
    context = quiet()
    try:
        with np.errstate(all="ignore"):
            tape = ad.record(F, x)
            m = int(np.prod(tape.output_shape))
            out["jacobian:forward"] = tape.jacobian(x, mode="forward")
            out["jacobian:reverse"] = tape.jacobian(x, mode="reverse")
            out["jacobian:vjp, several weights"] = tape.vjp(x, np.eye(m))[1].T
            out["jacobian:api"] = ad.jacobian(F)(x)
            out["jacobian:batched"] = tape.batched.jacobian(np.stack([x, x]))[1]
            out["jacobian:sparse"] = ad.sparse_jacobian(F, x).toarray()
    finally:
        context.__exit__(None, None, None)
    return out


def large_modes(f, x, v, fuse=False):
    """The sweeps of long arrays: chunked against op by op, fused against
    interpreted (a fused run's sums add in another order: 1e-9)."""
    out = {}
    V = np.stack([v, np.roll(v, 1), np.zeros_like(v)], axis=-1)
    context = quiet()
    try:
        with np.errstate(all="ignore"):
            tape = ad.record(f, x)
            kinds = [("chunked", True), ("op by op", False)]
            if fuse:
                fused = ad.record(f, x)
                out["fused runs"] = fused.fuse().fused
                kinds.append(("fused", fused))
            for name, how in kinds:
                t = how if name == "fused" else tape
                if name != "fused":
                    tape.chunked = how
                out[f"value:{name}"] = t.forward(x)
                out[f"gradient:{name}"] = t.gradient(x)
                out[f"jvp:{name}"] = t.jvp(x, v)[1]
                out[f"jvps:{name}"] = t.jvp(x, V)[1]
                out[f"hvp:{name}"] = t.hvp(x, v)
                out[f"hvps:{name}"] = t.hvp(x, V)
    finally:
        context.__exit__(None, None, None)
    return out


# ---------------------------------------------------------------- hand-written cases
A = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
A_INF = np.array([[INF, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 2.0, 1.0]])
W0 = np.array([0.0, 1.0, 1.0])
V3 = np.array([1.0, -2.0, 3.0])

CASES = {
    # norm and its hand-written forms at 0: the zero subgradient
    "norm at 0": (lambda x: np.linalg.norm(x), [0, 0, 0]),
    "norm of a matrix at 0": (lambda x: np.linalg.norm(np.outer(x, x)), [0, 0, 0]),
    "3-norm at 0": (lambda x: np.linalg.norm(x, 3), [0, 0, 0]),
    "norms along an axis at 0": (lambda x: np.sum(np.linalg.norm(np.stack([x, 0 * x]), axis=1)),
                                 [0, 0, 0]),
    "sqrt of x @ x at 0": (lambda x: np.sqrt(x @ x), [0, 0, 0]),
    "sqrt of x A x at 0": (lambda x: np.sqrt(x @ A @ x), [0, 0, 0]),
    "1-norm at a kink": (lambda x: np.linalg.norm(x, 1), [0, 1, -1]),
    "max-norm at a tie": (lambda x: np.linalg.norm(x, np.inf), [1, -1, 0.5]),
    # overflow: the partial 1/inf is 0
    "log-sum-exp overflowing": (lambda x: np.log(np.sum(np.exp(x))), [1000, 1, 2]),
    "softmax overflowing": (lambda x: np.sum(np.exp(x) / np.sum(np.exp(x)) * np.arange(3.0)),
                            [1000, 1, 0]),
    "sigmoid at both ends": (lambda x: np.sum(1 / (1 + np.exp(-x))), [-1000, 0, 1000]),
    "exp overflowing times 0": (lambda x: np.sum(np.exp(x) * 0.0 + x), [1000, 1, 0]),
    "0 times sqrt at 0": (lambda x: np.sum(0.0 * np.sqrt(x)), [0, 1, 2]),
    "x over inf": (lambda x: np.sum(x / INF), [0, 1, 2]),
    # branch points
    "sqrt at 0": (lambda x: np.sum(np.sqrt(x)), [0, 1, 4]),
    "log at 0": (lambda x: np.sum(np.log(x)), [0, 1, 4]),
    "x log x at 0": (lambda x: np.sum(x * np.log(x)), [0, 1, 4]),
    "cbrt at 0": (lambda x: np.sum(np.cbrt(x)), [0, -1, 8]),
    "power 0.5 at 0": (lambda x: np.sum(x ** 0.5), [0, 1, 4]),
    "power 1.5 at 0": (lambda x: np.sum(x ** 1.5), [0, 1, 4]),
    "power -1 at 0": (lambda x: np.sum(x ** -1.0), [0, -1, 2]),
    "0 ** 0": (lambda x: x[0] ** x[1] + x[2], [0, 0, 1]),
    "0 ** 1": (lambda x: x[0] ** x[1] + x[2], [0, 1, 1]),
    "0 ** 2": (lambda x: x[0] ** x[1] + x[2], [0, 2, 1]),
    "negative ** 2": (lambda x: x[0] ** x[1] + x[2], [-2, 2, 1]),
    "c ** x at infinities": (lambda x: np.sum(2.0 ** x), [INF, -INF, 2]),
    "arctan2 at the origin": (lambda x: np.arctan2(x[0], x[1]) + x[2], [0, 0, 1]),
    "hypot at the origin": (lambda x: np.hypot(x[0], x[1]) + x[2], [0, 0, 1]),
    "hypot with 0": (lambda x: np.sum(np.hypot(x, 0.0)), [0, 1, -2]),
    "arcsin at 1": (lambda x: np.sum(np.arcsin(x)), [1, -1, 0]),
    "arctanh at 1": (lambda x: np.sum(np.arctanh(x)), [1, -1, 0]),
    "arccosh at 1": (lambda x: np.sum(np.arccosh(x)), [1, 2, 1]),
    "log1p at -1": (lambda x: np.sum(np.log1p(x)), [-1, 2, 1]),
    "reciprocal at 0": (lambda x: np.sum(np.reciprocal(x)), [0, 1, 2]),
    "division by 0": (lambda x: np.sum(x[:2] / x[1:]), [0, 0, 1]),
    # ties
    "max at a tie": (lambda x: np.max(x) * 2 + np.sum(x), [1, 1, 0]),
    "min at a tie": (lambda x: np.min(x) ** 2, [1, 1, 1]),
    "maximum at a tie": (lambda x: np.sum(np.maximum(x, x[::-1]) ** 2), [1, 2, 1]),
    "minimum at a tie": (lambda x: np.sum(np.minimum(x[:2], x[1:]) ** 2), [1, 1, 1]),
    "maximum with a constant at a tie": (lambda x: np.sum(np.maximum(x, 1.0) ** 2), [1, 2, 1]),
    "clip at its bounds": (lambda x: np.sum(np.clip(x, 0.0, 1.0) ** 2), [0, 1, 0.5]),
    "sort at a tie": (lambda x: np.sum(np.sort(x) * np.array([1.0, 2.0, 3.0])), [1, 1, 0]),
    "abs at 0": (lambda x: np.sum(np.abs(x) ** 3 + np.abs(x)), [0, -0.0, 1]),
    "abs of a difference at a tie": (lambda x: np.sum(np.abs(x - x[::-1])), [1, 2, 1]),
    "sign at 0": (lambda x: np.sum(np.sign(x) * x), [0, 1, -1]),
    "std at a tie": (lambda x: np.std(x), [1, 1, 1]),
    "argmax gather at a tie": (lambda x: x[np.argmax(x)] ** 2, [2, 2, 1]),
    "prod with zeros": (lambda x: np.prod(x), [0, 0, 2]),
    "median with an infinite element": (lambda x: np.median(x) + np.nanmedian(x[1:]), [0, 0, INF]),
    "cumprod with a zero": (lambda x: np.sum(np.cumprod(x)), [0, 3, 2]),
    # np.where: the side not taken passes nothing
    "where around sqrt": (lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0)), [0, 1, -1]),
    "where around log": (lambda x: np.sum(np.where(x > 0, np.log(x), x)), [0, 1, -1]),
    "where around 1/x": (lambda x: np.sum(np.where(x != 0, 1 / x, 0.0)), [0, 1, -1]),
    "where around log of a NaN": (lambda x: np.sum(np.where(x > 1, x, np.log(x - 1))), [0, 1, 2]),
    "where around arctan2": (lambda x: np.where(x[0] ** 2 + x[1] ** 2 > 0,
                                                np.arctan2(x[0], x[1]), 0.0) + x[2], [0, 0, 1]),
    "where selecting finite inputs": (lambda x: np.sum(np.where(np.isfinite(x), x, 0.0)),
                                      [INF, 1, NAN]),
    # infinities and NaN at the inputs and in matrix products
    "infinite input squared": (lambda x: np.sum(x ** 2), [INF, 1, 0]),
    "NaN input": (lambda x: np.sum(x * x), [NAN, 1, 0]),
    "max with a NaN": (lambda x: np.max(x), [NAN, 1, 0]),
    "fmax with a NaN": (lambda x: np.sum(np.fmax(x, 1.0)), [NAN, 2, 1]),
    "maximum with a NaN": (lambda x: np.sum(np.maximum(x, x[::-1])), [NAN, 1, 0]),
    "sort with a NaN": (lambda x: np.sum(np.sort(x) * np.arange(3.0)), [NAN, 1, 0]),
    "logaddexp of -inf": (lambda x: np.logaddexp(x[0], x[1]) + x[2], [-INF, -INF, 1]),
    "logaddexp reduce of -inf": (lambda x: np.logaddexp.reduce(x), [-INF, -INF, -INF]),
    "logaddexp at a tie, times inf": (
        lambda x: np.sum(np.logaddexp(x, 0.0) * np.array([0.0, INF, 1.0])), [0, 0, 1]),
    "logaddexp2 at a tie, times inf": (lambda x: np.logaddexp2(x[0], x[1]) * x[2], [1, 1, INF]),
    "power 0.5 at -inf": (lambda x: np.sum(x ** 0.5 + np.power(x, 0.5)), [-INF, -0.0, 4]),
    "division by inf behind a NaN": (lambda x: np.sum(2.0 ** (x[:2] / x[1:])), [INF, INF, 1]),
    "division by inf, a NaN quotient": (lambda x: np.sum(np.abs(x[:2] / x[1:])), [INF, INF, 0]),
    "prod with inf and 0": (lambda x: np.prod(x), [INF, 0, 2]),
    "dot with an infinite input": (lambda x: x @ np.array([0.0, 1.0, 2.0]), [INF, 1, 2]),
    "inner with an infinite input": (lambda x: np.inner(x, np.array([0.0, 1.0, 1.0])), [INF, 0, 0]),
    "tensordot with an infinite input": (
        lambda x: np.sum(np.tensordot(x, np.array([0.0, 1.0, 0.0]), 1)), [INF, 0, 0]),
    "einsum with an infinite input": (lambda x: np.einsum("i,i->", x, x), [INF, 0, 0]),
    "A x with an infinite x": (lambda x: np.sum((A @ x) ** 2), [INF, 1, 0]),
    "x A with an infinite x": (lambda x: np.sum(x @ A), [INF, 1, 0]),
    "diag(x) @ ones, x infinite": (lambda x: np.sum(np.diag(x) @ np.ones(3)), [INF, 1, 0]),
    "outer products with inf": (lambda x: np.sum(np.outer(x, x) @ np.eye(3)), [INF, 1, 0]),
    "product by an infinite column": (
        lambda x: np.sum((x.reshape(3, 1) * np.ones((1, 3))) @ np.array([0.0, INF, 1.0])),
        [0, 1, 2]),
    "trace of an infinite outer product": (lambda x: np.trace(np.outer(x, x)), [INF, 1, 0]),
    "sqrt of A x at 0": (lambda x: np.sum(np.sqrt(A @ x)), [0, 0, 0]),
    "xlogy(x, x) at 0": (lambda x: np.sum(scipy.special.xlogy(x, x)), [0, 1, 2]),
    "xlogy at 0, other arguments": (lambda x: np.sum(scipy.special.xlogy(x, x[::-1])), [0, 1, 2]),
    "det at an infinite entry": (lambda x: np.linalg.det(np.diag(x + 2.0)), [INF, 0, 1]),
    "det at a NaN entry": (lambda x: np.linalg.det(np.diag(x + 2.0)), [NAN, 0, 1]),
    "slogdet at a NaN entry": (lambda x: np.linalg.slogdet(np.diag(x + 2.0))[1], [NAN, 0, 1]),
    "solve with an infinite right-hand side": (
        lambda x: np.sum(np.linalg.solve(np.eye(3) * 2.0, x)), [INF, 0, 0]),
    # u @ u: one adjoint array for both operands, and a NaN tangent (arctan2 at 0)
    "u @ u with a NaN tangent": (
        lambda x: np.sqrt(np.fmin(2.0 ** x, np.arctan2(x - 1.0, 0.0)) @
                          np.fmin(2.0 ** x, np.arctan2(x - 1.0, 0.0))), [0, 1, 0.5]),
    # an infinite matrix entry meets a zero adjoint (the row weighted 0)
    "A x, A infinite, a row weighted 0": (lambda x: np.sum((A_INF @ x) * W0), [1, 2, 0]),
    "A x squared, A infinite, a row weighted 0": (lambda x: np.sum((A_INF @ x) ** 2 * W0),
                                                 [1, 2, 0]),
    "x A, A infinite, a column weighted 0": (lambda x: np.sum((x @ A_INF.T) ** 2 * W0), [1, 2, 0]),
    "A x, A made inside, infinite, a row weighted 0": (
        lambda x: np.sum((np.array([[INF, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 2.0, 1.0]]) @ x) ** 2
                         * W0), [1, 2, 0]),
    "A(x) B, B infinite, a row weighted 0": (
        lambda x: np.sum((np.outer(x, x) @ A_INF) ** 2 * W0[:, None]), [1, 2, 0]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_modes_agree_at(name):
    f, x = CASES[name]
    x = np.array(x, dtype=float)
    assert_agree(small_modes(f, x, V3, x_recorded=x + 0.25), name)


# A value used twice, (2 y - y - y) or (y - y), with an infinite partial
# behind it (the slope of sqrt at 0): reverse mode adds the adjoints of y
# first (exactly 0, and 0 * inf = 0), forward mode multiplies first (inf -
# inf = NaN). No rule applied per product makes these agree; the random
# programs avoid such values (each intermediate is used once).
def test_cancelling_adjoints_behind_an_infinite_partial():
    def f(x):
        y = np.sqrt(x)
        return np.sum(2.0 * y - y - y)
    x = np.array([0.0, 1.0])
    with np.errstate(all="ignore"):
        g = ad.grad(f)(x)
        t = ad.jvp(f, (x,), (np.array([1.0, 0.0]),))[1]
    assert g[0] == 0.0 and np.isnan(t)


# ---------------------------------------------------------------- long arrays
LARGE = 33_000                  # above the smallest run swept in chunks (_chunks.pxi)


def _special_vector(values, n, seed):
    rng = np.random.default_rng(seed)
    return rng.permutation(np.resize(np.array(values, dtype=float), n))


LARGE_CASES = {
    "norm and sqrt at 0": lambda x: np.sqrt(np.sum(x * x)) + np.sum(np.sqrt(np.abs(x))),
    "exp overflowing, times 0": lambda x: np.sum(0.0 * np.exp(x) + np.log(np.sum(np.exp(x)))),
    "where around log": lambda x: np.sum(np.where(x > 0, np.log(x), x) * 0.5),
    "divisions and powers at 0": lambda x: np.sum(x ** 1.5 + 1.0 / (x * x + 1.0) + np.cbrt(x)),
    "maximum and minimum at ties": lambda x: np.sum(np.maximum(x, 1.0) * np.minimum(x, 0.0)),
    "hypot and arctan2": lambda x: np.sum(np.hypot(x, 0.0) + np.arctan2(x, 1.0)),
}
LARGE_VALUES = [0.0, -0.0, 1.0, -1.0, 2.0, 1000.0, -1000.0, INF, -INF, NAN, 0.5]


@pytest.mark.parametrize("name", sorted(LARGE_CASES))
@pytest.mark.usefixtures("kernel_cache")
def test_chunked_and_fused_sweeps_agree_at(name):
    x = _special_vector(LARGE_VALUES, LARGE, 3)
    v = np.resize(V3, LARGE)
    try:
        results = large_modes(LARGE_CASES[name], x, v, fuse=True)
        # comparisons have no fused form: np.where's run stays interpreted
        assert results.pop("fused runs") == (0 if "where" in name else 1)
    except ad.errors.NoCompiler:
        results = large_modes(LARGE_CASES[name], x, v)
    assert_agree(results, name)


# ---------------------------------------------------------------- random programs
# A program is an expression tree whose leaves are distinct slices of the
# input, each used once, and whose ops use no value twice in ways that can
# cancel (no cumsum, outer or matrix products by constants, broadcast
# scalars or standard deviations of intermediates: the hand-written cases
# above have them). So each entry of
# the Jacobian is a product along one path, which forward and reverse mode
# form in opposite orders: with the zero-times-infinity rule, the same value
# (see the module docstring for what two paths that cancel do).
SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 1000.0, -1000.0, INF, -INF, NAN]
N = 3                           # elements of each leaf
C = np.array([0.0, 1.0, -2.0])

UNARY = {
    "abs": np.abs, "sqrt": np.sqrt, "log": np.log, "exp": np.exp, "sin": np.sin,
    "tanh": np.tanh, "arctan": np.arctan, "square": np.square, "cbrt": np.cbrt,
    "reciprocal": lambda a: 1.0 / a, "log1p": np.log1p, "expm1": np.expm1,
    "arcsin": np.arcsin, "negative": np.negative, "sign times": lambda a: np.sign(a) * 2.0,
    "pow 0.5": lambda a: a ** 0.5, "pow 1.5": lambda a: a ** 1.5, "pow 3": lambda a: a ** 3,
    "pow -1": lambda a: a ** -1.0, "times 0": lambda a: a * 0.0, "over inf": lambda a: a / INF,
    "clip": lambda a: np.clip(a, -1.0, 1.0), "maximum 0": lambda a: np.maximum(a, 0.0),
    "minimum 1": lambda a: np.minimum(a, 1.0), "sort": np.sort, "reverse": lambda a: a[::-1],
    "where log": lambda a: np.where(a > 0, np.log(a), 0.0),
    "where sqrt": lambda a: np.where(a >= 0, np.sqrt(a), a),
    "where recip": lambda a: np.where(a != 0, 1.0 / a, 1.0),
    "2 ** a": lambda a: 2.0 ** a, "hypot 0": lambda a: np.hypot(a, 0.0),
    "arctan2 1": lambda a: np.arctan2(a, 1.0), "times C": lambda a: a * C,
    "logaddexp 0": lambda a: np.logaddexp(a, 0.0), "fmax 0": lambda a: np.fmax(a, 0.0),
    "exp2": np.exp2, "log2": np.log2, "log10": np.log10, "sinh": np.sinh, "cosh": np.cosh,
    "tan": np.tan, "arccos": np.arccos, "arctanh": np.arctanh, "arcsinh": np.arcsinh,
    "arccosh": np.arccosh, "floor times": lambda a: np.floor(a) * a,
    "fmod": lambda a: np.fmod(a, 1.5),
    "remainder": lambda a: a % 1.5, "heaviside": lambda a: np.heaviside(a, 0.5) + a,
    "nan_to_num": np.nan_to_num, "copysign": lambda a: np.copysign(a, -1.0),
    "sinc": np.sinc, "logaddexp2 1": lambda a: np.logaddexp2(1.0, a),
}
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "arctan2": np.arctan2, "hypot": np.hypot,
    "power": lambda a, b: np.abs(a) ** b, "logaddexp": np.logaddexp,
    "where greater": lambda a, b: np.where(a > b, a, b), "fmax": np.fmax, "fmin": np.fmin,
}
REDUCE = {
    "sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod, "norm": np.linalg.norm,
    "1-norm": lambda a: np.linalg.norm(a, 1), "inf-norm": lambda a: np.linalg.norm(a, INF),
    "3-norm": lambda a: np.linalg.norm(a, 3), "mean": np.mean, "dot C": lambda a: a @ C,
    "logsumexp": lambda a: np.log(np.sum(np.exp(a))), "weighted sort":
    lambda a: np.sort(a) @ np.arange(float(N)), "sqrt of a @ a": lambda a: np.sqrt(a @ a),
    "nanmax": np.nanmax, "nanmin": np.nanmin, "nansum": np.nansum, "median": np.median,
    "logaddexp reduce": np.logaddexp.reduce,
}


@st.composite
def programs(draw, depth=3):
    """(tree, number of leaves): leaf k reads x[k N:(k + 1) N]."""
    leaves = []

    def node(d):
        kind = draw(st.sampled_from(["leaf", "unary", "binary"] if d else ["leaf"]))
        if kind == "leaf":
            leaves.append(len(leaves))
            return ("leaf", leaves[-1])
        if kind == "unary":
            return ("unary", draw(st.sampled_from(sorted(UNARY))), node(d - 1))
        return ("binary", draw(st.sampled_from(sorted(BINARY))), node(d - 1), node(d - 1))
    tree = ("reduce", draw(st.sampled_from(sorted(REDUCE))), node(depth))
    return tree, len(leaves)


def run(program, x, seen=None):
    """The program at ``x``; ``seen`` (a list) collects every value."""
    kind = program[0]
    if kind == "leaf":
        out = x[program[1] * N:(program[1] + 1) * N]
    elif kind == "unary":
        out = UNARY[program[1]](run(program[2], x, seen))
    elif kind == "binary":
        out = BINARY[program[1]](run(program[2], x, seen), run(program[3], x, seen))
    else:
        out = REDUCE[program[1]](run(program[2], x, seen))
    if seen is not None:
        seen.append(np.ravel(out))
    return out


def values(program, x):
    seen = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        run(program, x, seen)
    return np.concatenate(seen)


def extreme(program, x):
    """Whether a value of the program is finite but tiny or huge (2 ** -999):
    forward and reverse mode multiply the partials along a path in opposite
    orders, so their products may overflow or underflow in one mode only."""
    a = np.abs(values(program, x))
    return bool(np.any(np.isfinite(a) & (a != 0) & ((a < 1e-100) | (a > 1e100))))


def negative_zero(program, x):
    """Whether the program meets -0.0: at a tie of -0.0 and 0.0 NumPy's
    maximum, fmax, ... return either zero depending on the array's length
    (its SIMD loops), which 1 / x then tells apart; adsim takes the first,
    as at every tie. NumPy's value is then not compared."""
    a = values(program, x)
    return bool(np.any((a == 0) & np.signbit(a)))


@st.composite
def cases(draw):
    (tree, leaves) = draw(programs())
    x = np.array(draw(st.lists(st.sampled_from(SPECIAL), min_size=N * leaves,
                               max_size=N * leaves)))
    return tree, x


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases(), seed=st.integers(0, 3))
def test_random_programs_agree_in_every_mode(case, seed):
    program, x = case
    assume(not extreme(program, x))
    rng = np.random.default_rng(seed)
    v = rng.choice([1.0, -2.0, 0.0, 3.0], x.size)
    f = lambda y: run(program, y)                               # noqa: E731
    generic = rng.uniform(0.2, 0.9, x.size)                     # recorded there, replayed at x
    assert_agree(small_modes(f, x, v, x_recorded=generic, nested=seed == 0,
                             numpy_value=not negative_zero(program, x)), repr(program))
    if program[2][0] != "leaf":                                 # the vector before the reduction
        assert_agree(jacobian_modes(lambda y: run(program[2], y), x), repr(program[2]))
