"""Property tests on random programs built from the op table.

A program is a list of steps (elementwise unary and binary primitives,
reductions, cumsum, indexing, products, in-place assignment, joining), each
reading earlier variables; it runs on plain NumPy arrays (the reference) and
on active arrays (the recording). Elementwise inputs are squashed into the
op's table domain with tanh, so every program is defined everywhere.

Properties: derivatives of smooth programs against central differences
(every sweep, via ``check_tape``); forward against reverse mode by the
dot-product test; symmetry <u, H v> = <v, H u>; replays equal fresh
recordings bit for bit or raise BranchChanged, symmetrically; branch
changes of the piecewise functions are detected.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import adsim
from adsim import ops
from fdcheck import assert_close, check_tape, fd_jacobian
from opcases import BINARY_CASES, NONSMOOTH, UNARY_CASES

pytestmark = pytest.mark.slow

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate, Phase.shrink],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

UNARY_OPS = sorted(UNARY_CASES)
BINARY_OPS = sorted(BINARY_CASES)


def squash(v, name):
    """tanh-map ``v`` into the middle 90 % of op ``name``'s domain."""
    lo, hi = ops.BY_NAME[name].domain
    return 0.5 * (lo + hi) + 0.45 * (hi - lo) * np.tanh(v)


def constant(seed, shape, name):
    return squash(np.random.default_rng(seed).standard_normal(shape), name)


# ---------------------------------------------------------------- steps
# Each step is a tuple (kind, ...) naming earlier variables by position;
# ``apply`` runs it on plain or active arrays alike.

def apply(step, vs):
    kind = step[0]
    if kind == "unary":
        _, name, i = step
        return UNARY_CASES[name][0][1](squash(vs[i], name))
    if kind == "binary":
        _, name, i, j, form, seed = step
        f = BINARY_CASES[name][0][1]
        a = squash(vs[i], name)
        if form == "var":
            return f(a, squash(vs[j], name))
        if form == "var_sum":
            return f(a, squash(np.sum(vs[j]), name))
        if form == "const":
            return f(a, constant(seed, np.shape(vs[i]), name))
        if form == "const_left":
            return f(constant(seed, np.shape(vs[i])[-1:], name), a)
        c = float(constant(seed, (), name))
        return f(a, c) if form == "scalar" else f(c, a)
    if kind == "reduce":
        _, what, i, axis, keepdims = step
        if what == "prod":
            return np.prod(squash(vs[i], "TANH"), axis=axis, keepdims=keepdims)
        return getattr(np, what)(vs[i], axis=axis, keepdims=keepdims)
    if kind == "cumsum":
        _, i, axis = step
        return np.cumsum(vs[i], axis=axis)
    if kind == "index":
        _, what, i, param = step
        v = vs[i]
        if what == "reverse":
            return v[::-1]
        if what == "tail":
            return v[1:]
        if what == "take":
            return v[list(param)]
        if what == "mask":
            return v[np.array(param)]
        return v[param]                       # "row"
    if kind == "matmul":
        _, i, seed = step
        C = np.random.default_rng(seed).standard_normal((np.shape(vs[i])[-1], 2))
        return vs[i] @ C
    if kind == "outer":
        _, i, j = step
        return np.outer(vs[i], np.sin(vs[j]))
    if kind == "setitem":
        _, i, j, k = step
        y = vs[i] * 1.0
        y[k] = np.sum(np.tanh(vs[j]))
        y[:k + 1] += 0.5 * y[k]
        y[k] = y[k] * vs[i][k]               # overwrite an element written before
        return y
    if kind == "concat":
        _, i, j = step
        return np.concatenate([np.ravel(vs[i]), np.ravel(vs[j]) ** 2])
    if kind == "where":
        _, i = step
        return np.where(vs[i] > 0.1, vs[i] ** 2, np.sin(vs[i]))
    if kind == "clip":
        _, i = step
        return np.clip(vs[i], -0.5, 0.5) * vs[i]
    raise AssertionError(kind)


def run(program, x):
    steps, outputs = program
    vs = [x]
    for step in steps:
        vs.append(apply(step, vs))
    return np.concatenate([np.ravel(vs[k]) for k in outputs])


def is_nonsmooth(step):
    return (step[0] in ("where", "clip")
            or step[0] in ("unary", "binary") and step[1] in NONSMOOTH
            or step[0] == "reduce" and step[1] in ("max", "min"))


@st.composite
def programs(draw, smooth=True, max_steps=7):
    """(program, x): steps drawn from the table, run once on x for shapes."""
    ndim = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    x = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1))).uniform(-1.5, 1.5, shape)
    vs, steps = [x], []
    for _ in range(draw(st.integers(1, max_steps))):
        step = draw(_step(vs))
        if step is None or (smooth and is_nonsmooth(step)):
            continue
        with np.errstate(all="ignore"):
            out = apply(step, vs)
        if np.size(out) == 0 or np.size(out) > 64 or not np.all(np.isfinite(out)):
            continue
        vs.append(np.asarray(out))
        steps.append(step)
    n_out = draw(st.integers(1, 3))
    outputs = tuple(range(max(0, len(vs) - n_out), len(vs)))
    return (tuple(steps), outputs), x


@st.composite
def _step(draw, vs):
    pick = st.integers(0, len(vs) - 1)
    i = draw(pick)
    v = vs[i]
    kind = draw(st.sampled_from(["unary", "unary", "binary", "binary", "reduce", "cumsum",
                                 "index", "matmul", "outer", "setitem", "concat", "where",
                                 "clip"]))
    seed = draw(st.integers(0, 1000))
    if kind == "unary":
        return ("unary", draw(st.sampled_from(UNARY_OPS)), i)
    if kind == "binary":
        j = draw(pick)
        form = draw(st.sampled_from(["var", "const", "const_left", "scalar", "scalar_left"]))
        if form == "var":
            try:
                np.broadcast_shapes(v.shape, vs[j].shape)
            except ValueError:
                form = "var_sum"
        if form == "const_left" and v.ndim == 0:
            form = "const"
        return ("binary", draw(st.sampled_from(BINARY_OPS)), i, j, form, seed)
    if kind == "reduce":
        what = draw(st.sampled_from(["sum", "mean", "prod", "max", "min"]))
        axis = draw(st.sampled_from([None] + list(range(-v.ndim, v.ndim))))
        return ("reduce", what, i, axis, draw(st.booleans()))
    if v.ndim == 0:
        return None
    if kind == "cumsum":
        return ("cumsum", i, draw(st.sampled_from([None] + list(range(v.ndim)))))
    if kind == "index":
        what = draw(st.sampled_from(["reverse", "tail", "take", "mask", "row"]))
        n = v.shape[0]
        if what == "take":
            idx = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=5))
            return ("index", what, i, tuple(idx))
        if what == "mask":
            mask = draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any))
            return ("index", what, i, tuple(mask))
        if what == "tail" and n == 1:
            return None
        return ("index", what, i, draw(st.integers(-n, n - 1)) if what == "row" else None)
    if kind == "matmul":
        return ("matmul", i, seed) if v.ndim <= 2 else None
    if kind == "outer":
        return ("outer", i, draw(pick))
    if kind == "setitem":
        return ("setitem", i, draw(pick), draw(st.integers(0, v.shape[0] - 1)))
    if kind == "concat":
        return ("concat", i, draw(pick))
    return (kind, i)


def _scale(*arrays):
    return max([1.0] + [float(np.max(np.abs(a), initial=0.0)) for a in arrays])


# ---------------------------------------------------------- properties

@SETTINGS
@given(programs(smooth=True), st.integers(0, 2 ** 16))
def test_smooth_programs_against_finite_differences(program_x, seed):
    program, x = program_x
    f = lambda z: run(program, z)  # noqa: E731
    scale = _scale(f(x))
    check_tape(f, [x], seed=seed, k=2, rtol=1e-6, atol=1e-7, value_rtol=1e-11,
               value_atol=1e-12 * scale)


@SETTINGS
@given(programs(smooth=False), st.integers(0, 2 ** 16))
def test_dot_product_forward_against_reverse(program_x, seed):
    program, x = program_x
    tape = adsim.record(lambda z: run(program, z), x)
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(x.shape)
    w = rng.standard_normal(tuple(tape.output_shape))
    _, jv = tape.jvp(x, v)
    _, g = tape.vjp(x, w)
    lhs, rhs = float(np.dot(w, jv)), float(np.sum(g * v))
    bound = 1e-12 * (np.linalg.norm(w) * np.linalg.norm(jv) + np.linalg.norm(g) * np.linalg.norm(v))
    assert abs(lhs - rhs) <= bound + 1e-300, (lhs, rhs)


@SETTINGS
@given(programs(smooth=False), st.integers(0, 2 ** 16))
def test_hvp_symmetry(program_x, seed):
    program, x = program_x
    tape = adsim.record(lambda z: run(program, z), x)
    rng = np.random.default_rng(seed)
    u, v = rng.standard_normal((2,) + x.shape)
    w = rng.standard_normal(tuple(tape.output_shape))
    HUV = tape.hvp(x, np.stack([u, v], axis=-1), w)
    Hu, Hv = HUV[..., 0], HUV[..., 1]
    lhs, rhs = float(np.sum(u * Hv)), float(np.sum(v * Hu))
    bound = 1e-11 * np.linalg.norm(u) * np.linalg.norm(v) * _scale(Hu, Hv)
    assert abs(lhs - rhs) <= bound, (lhs, rhs)
    assert_close(tape.hvp(x, v, w), Hv, 1e-14, 1e-14 * _scale(Hv))


@SETTINGS
@given(programs(smooth=False), st.integers(0, 2 ** 16))
def test_replay_equals_rerecording(program_x, seed):
    """A replay at a new point either equals a fresh recording there exactly,
    or raises BranchChanged; a fresh recording at the new point then also
    refuses the old point."""
    program, x0 = program_x
    f = lambda z: run(program, z)  # noqa: E731
    rng = np.random.default_rng(seed)
    x1 = x0 + rng.uniform(-0.5, 0.5, x0.shape)
    tape = adsim.record(f, x0)
    fresh = adsim.record(f, x1)
    w = rng.standard_normal(tuple(tape.output_shape))
    v = rng.standard_normal(x0.shape)
    try:
        y, g = tape.vjp(x1, w)
    except adsim.BranchChanged:
        assert any(is_nonsmooth(step) for step in program[0])
        with pytest.raises(adsim.BranchChanged):
            fresh.forward(x0)
        return
    y1, g1 = fresh.vjp(x1, w)
    assert np.array_equal(y, y1) and np.array_equal(g, g1)
    assert np.array_equal(tape.jvp(x1, v)[1], fresh.jvp(x1, v)[1])
    assert np.array_equal(tape.hvp(x1, v, w), fresh.hvp(x1, v, w))
    assert np.array_equal(tape.forward(x0), f(x0)) or np.allclose(tape.forward(x0), f(x0), rtol=1e-11,
                                                                 atol=1e-12 * _scale(f(x0)))


BRANCHY = {
    "abs": lambda z, t: np.abs(z - t) * z,
    "compare": lambda z, t: np.sin(z) if np.all(z > t) else np.cos(z),
}

# piecewise functions whose side is chosen from the values at every replay
RECOMPUTED = {
    "where": lambda z, t: np.where(z > t, np.sin(z), z ** 2) * z,
    "maximum": lambda z, t: np.maximum(z, t) ** 2,
    "minimum": lambda z, t: np.minimum(t, z) * z,
    "clip": lambda z, t: np.clip(z, t, t + 10.0) * z,
    "max": lambda z, t: np.max(z - t) * z,
}


@SETTINGS
@given(st.sampled_from(sorted(BRANCHY)), st.integers(1, 6), st.integers(0, 2 ** 16))
def test_branch_changes_detected(kind, n, seed):
    """Move one element across the threshold: the replay raises, and the
    functional API returns the gradient of the new branch."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(-1, 1)
    x0 = t + rng.uniform(0.1, 1.0, n)             # all above the threshold
    x1 = x0.copy()
    x1[rng.integers(n)] = t - rng.uniform(0.1, 1.0)
    f = lambda z: np.sum(BRANCHY[kind](z, t))  # noqa: E731
    tape = adsim.record(f, x0)
    with pytest.raises(adsim.BranchChanged) as info:
        tape.gradient(x1)
    assert info.value.op_name == "COMPARE"
    g = adsim.grad(f)
    for x in (x0, x1):
        assert_close(g(x), fd_jacobian(f, [x])[0], 1e-8, 1e-8 * _scale(g(x)))
    assert g.tapes.recordings == 2


@SETTINGS
@given(st.sampled_from(sorted(RECOMPUTED)), st.integers(1, 6), st.integers(0, 2 ** 16))
def test_sides_are_recomputed(kind, n, seed):
    """np.where on a comparison reads its mask at replay, and maximum,
    minimum, clip and max choose their side from the values: moving elements
    across the threshold needs no new recording, and the gradient is the
    new side's."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(-1, 1)
    x0 = t + rng.uniform(0.1, 1.0, n)
    x1 = x0.copy()
    x1[rng.integers(n)] = t - rng.uniform(0.1, 1.0)
    f = lambda z: np.sum(RECOMPUTED[kind](z, t))  # noqa: E731
    tape = adsim.record(f, x0)
    g = adsim.grad(f)
    for x in (x0, x1):
        assert_close(tape.gradient(x), fd_jacobian(f, [x])[0], 1e-8, 1e-8 * _scale(g(x)))
    assert g.tapes.recordings == 1


@SETTINGS
@given(st.integers(2, 6), st.integers(0, 2 ** 16))
def test_a_new_maximum_is_followed_at_replay(n, seed):
    rng = np.random.default_rng(seed)
    x0 = rng.permutation(n) * 0.5 + rng.uniform(-0.1, 0.1, n)
    top = int(np.argmax(x0))
    x1 = x0.copy()
    x1[(top + 1) % n] = x0[top] + 0.3                # a new maximum elsewhere
    f = lambda z: np.max(z) * np.sum(z)  # noqa: E731
    tape = adsim.record(f, x0)
    assert_close(tape.forward(x1), f(x1), 1e-14, 0)
    for x in (x0, x1):
        assert_close(tape.gradient(x), fd_jacobian(f, [x])[0], 1e-8, 1e-8 * _scale(x))
        assert_close(adsim.grad(f)(x), fd_jacobian(f, [x])[0], 1e-8, 1e-8 * _scale(x))
