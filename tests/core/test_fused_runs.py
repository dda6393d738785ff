"""Fused runs (adsim/_fuse/, ``Tape.fuse``): a run of elementwise ops on
large arrays compiled into one loop. Every test compares a fused tape with
the same tape swept by the interpreter — values and gradients to rounding,
NaN and infinity in the same places, the zero-times-infinity rule kept —
and checks that the sweeps without fused kernels (several adjoint
directions) are unchanged, on random programs and on the shapes
runs take: slices of an input, 2-d slices of a grid, broadcast scalars,
constant arrays, reused slots."""
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adsim as ad
from fdcheck import assert_same_to_rounding
from adsim import ops
from adsim.errors import NoCompiler

N = 40_000                      # above the size from which runs are chunked (and fused)
RNG = np.random.default_rng(1)
C = RNG.uniform(0.5, 1.5, N)


pytestmark = pytest.mark.usefixtures("kernel_cache")   # tests/conftest.py


def fused_and_plain(f, x):
    fused, plain = ad.record(f, x), ad.record(f, x)
    report = fused.fuse()
    return fused, plain, report


def assert_same(a, b, rtol=1e-10):
    """Equal to rounding, with NaN and infinities in the same places. The
    tolerance is that of sums over the run's elements (the adjoint of a
    broadcast scalar, the output), which fused and interpreted sweeps add in
    different orders: 40 000 terms whose sum can be much smaller than its
    largest terms (seen: 1e-11 of the largest element in an hvp)."""
    assert_same_to_rounding(a, b, rtol)


def check_sweeps(fused, plain, x):
    """Every sweep of the fused tape agrees with the interpreter's: values,
    gradient, one tangent, the hvp, and tangents in several directions
    (fused kernels); adjoints in several directions (the interpreter)."""
    assert_same(fused.forward(x), plain.forward(x))
    assert_same(fused.gradient(x), plain.gradient(x))
    v = np.cos(np.arange(x.size))
    assert_same(fused.jvp(x, v)[1], plain.jvp(x, v)[1])
    assert_same(fused.hvp(x, v), plain.hvp(x, v))
    V = np.stack([v, np.sin(np.arange(x.size)), np.zeros(x.size)], axis=-1)
    assert_same(fused.jvp(x, V)[1], plain.jvp(x, V)[1])


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def test_rosenbrock_is_fused_and_right():
    x = RNG.uniform(-1.5, 1.5, N)
    v = RNG.standard_normal(N)
    fused, plain, report = fused_and_plain(rosenbrock, x)
    assert report.fused == report.runs == 1 and not report.reasons
    g = np.zeros_like(x)
    t = x[1:] - x[:-1] ** 2
    g[:-1] += -400.0 * x[:-1] * t - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * t
    np.testing.assert_allclose(fused.gradient(x), g, rtol=1e-12, atol=1e-9)
    hv = np.zeros_like(x)
    hv[:-1] += (1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0) * v[:-1] - 400.0 * x[:-1] * v[1:]
    hv[1:] += -400.0 * x[:-1] * v[:-1] + 200.0 * v[1:]
    np.testing.assert_allclose(fused.hvp(x, v), hv, rtol=1e-12, atol=1e-8)
    step = 1e-6                 # hvp against differences of the (fused) gradient
    fd = (fused.gradient(x + step * v) - fused.gradient(x - step * v)) / (2 * step)
    np.testing.assert_allclose(fused.hvp(x, v), fd, rtol=1e-5, atol=1e-4)
    check_sweeps(fused, plain, x)
    check_sweeps(fused, plain, x[::-1].copy())      # a new point


# every unary op with an expression row or a hand-written rule, mapped into its domain
UNARY = [s for s in ops.TABLE if s.family == "unary" and s.numpy and s.name != "ABS"]


def all_unary(x):
    total = 0.0
    for spec in UNARY:
        lo, hi = spec.domain
        total = total + spec.numpy[0](lo + (hi - lo) * x) * C
    return np.sum(total)


def test_every_unary_op_fuses_with_its_rows_calculus():
    x = RNG.uniform(0.05, 0.95, N)
    fused, plain, report = fused_and_plain(all_unary, x)
    assert report.fused == report.runs == 1, str(report)
    check_sweeps(fused, plain, x)


def unary_group(group):
    """The values of a few unary ops, each over its domain: one small run,
    whose loop the compiler vectorises (calling the vector math library
    where it links)."""
    def f(x):
        return np.concatenate([s.numpy[0](s.domain[0] + (s.domain[1] - s.domain[0]) * x)
                               for s in group])
    return f


def ulps(a, b):
    """Units in the last place between float64 arrays (finite, same sign)."""
    return np.abs(a.view(np.int64) - b.view(np.int64))


@pytest.mark.parametrize("first", range(0, len(UNARY), 6))
def test_fused_values_are_within_a_few_ulp_of_the_interpreters(first):
    """Fused loops may call glibc's vector math functions, which its manual
    puts within 4 ulp of the exact result (libm within 1 to 3): 8 between them."""
    x = np.linspace(0.0, 1.0, N)
    group = UNARY[first:first + 6]
    fused, plain, report = fused_and_plain(unary_group(group), x)
    assert report.fused == report.runs >= 1, str(report)
    a = fused.forward(x).reshape(len(group), N)
    b = plain.forward(x).reshape(len(group), N)
    for spec, got, want in zip(group, a, b):
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        differ = ~same
        assert np.all(np.isfinite(want[differ])), spec.name
        assert np.all(np.sign(got[differ]) == np.sign(want[differ])), spec.name
        assert np.max(ulps(got[differ], want[differ]), initial=0) <= 8, spec.name


def powers(x):
    """x**c for the parameters POW_C treats exactly, c**x, and abs of a sign."""
    y = x ** 2 + x ** 3 + x ** 0.5 + x ** 1 + x ** 0 + 1.7 ** x + np.sign(x - 0.5) * x
    return np.sum(y * C)


def test_power_of_two_varying_operands_and_its_exact_cases():
    """a ** b with exponents exactly 0 and 1 (exact partials) and bases
    exactly 0 (ln a taken as 0 where the power is 0), and arctan2, hypot."""
    exponents = np.resize([0.0, 1.0, 2.0, 0.5, 3.0], N)

    def f(x):
        b = exponents + 0.0 * x
        return np.sum(x ** b * C + np.arctan2(x, b + 1.0) + np.hypot(x, C))

    x = RNG.uniform(0.0, 1.0, N)
    x[:10] = 0.0
    fused, plain, report = fused_and_plain(f, x)
    assert report.fused == report.runs == 1, str(report)
    check_sweeps(fused, plain, x)


def test_rolls_join_runs_and_other_index_lists_do_not():
    """np.roll of a vector (an indexed gather rotating it) is read inside
    a fused run, as in periodic stencils; a permutation ends the run."""
    n = 1000
    kappa = RNG.uniform(0.5, 1.5, n)
    perm = RNG.permutation(n)

    def rhs(u):
        up, um = np.roll(u, -1), np.roll(u, 1)
        kf = 0.5 * (kappa + np.roll(kappa, -1))
        return -(up * up - um * um) + kf * (up - u) - np.roll(kf, 1) * (u - um)

    def step(u):                    # a roll of a value the run made: a second run
        k1 = rhs(u)
        return u + 0.01 * rhs(u + 0.005 * k1)

    x = RNG.uniform(-1.0, 1.0, n)
    fused, plain, report = fused_and_plain(lambda u: np.sum(step(u) ** 2), x)
    assert report.fused == report.runs <= 3, str(report)     # a roll of its own value splits a run
    check_sweeps(fused, plain, x)
    fused, plain, report = fused_and_plain(step, x)
    assert report.fused == report.runs <= 3, str(report)     # a roll of its own value splits a run
    w = RNG.standard_normal(n)
    for a, b in zip(fused.vjp(x, w), plain.vjp(x, w)):
        assert_same(a, b)
    assert_same(fused.jvp(x, w)[1], plain.jvp(x, w)[1])
    permuted = lambda u: np.sum(np.sin(u[perm]) * u + np.cos(u))     # noqa: E731
    fused, plain, report = fused_and_plain(permuted, x)
    check_sweeps(fused, plain, x)


def test_maximum_and_minimum_at_ties_and_nan():
    """Ties and NaN in the first operand take the first operand, fused or not."""
    ties = np.resize([0.25, -0.5, 0.0], N)

    def f(x):
        y = np.maximum(x, ties) + np.minimum(ties, x) * x + np.maximum(np.sin(x), 0.0)
        return np.sum(y * C)

    x = RNG.uniform(-1.0, 1.0, N)
    x[::7] = ties[::7]
    x[5] = np.nan
    fused, plain, report = fused_and_plain(f, x)
    assert report.fused == report.runs >= 1, str(report)     # (their branch records split runs)
    check_sweeps(fused, plain, x)


def test_powers_and_their_exact_cases():
    x = RNG.uniform(0.0, 1.0, N)
    x[:10] = 0.0
    fused, plain, report = fused_and_plain(powers, x)
    assert report.fused == 1, str(report)
    check_sweeps(fused, plain, x)


def norm_like(x):
    """sqrt at 0: an infinite partial times a zero one (the zero subgradient)."""
    return np.sum(np.sqrt(x * x) + np.sqrt(x * x * C))


def test_zero_times_infinity_as_the_interpreter():
    x = RNG.uniform(-1.0, 1.0, N)
    x[::7] = 0.0
    fused, plain, _ = fused_and_plain(norm_like, x)
    assert np.all(fused.gradient(x)[::7] == 0.0)
    check_sweeps(fused, plain, x)


def test_nan_and_infinity_propagate_as_the_interpreter():
    x = RNG.uniform(-1.0, 1.0, N)
    fused, plain, _ = fused_and_plain(lambda z: np.sum(np.log(z) * z + 1.0 / z), np.abs(x) + 0.1)
    x[:5] = [0.0, -1.0, np.inf, -np.inf, np.nan]
    assert_same(fused.forward(x), plain.forward(x))
    assert_same(fused.gradient(x), plain.gradient(x))


def test_constant_powers_at_minus_infinity_as_the_interpreter():
    # x ** 0.5 and x ** 1.5 (whose slope is 1.5 x ** 0.5): a compiler may make
    # pow(x, 0.5) a square root, NaN at -inf where pow gives +inf
    x = RNG.uniform(-1.0, 1.0, N)
    x[:6] = [-np.inf, np.inf, -0.0, 0.0, np.nan, -1.0]
    f = lambda z: np.sum(z ** 0.5 + z ** 1.5 + z ** 2.5 + z ** -0.5 + 1.0 / (z * z + 1.0))
    fused, plain, report = fused_and_plain(f, np.abs(x) + 0.1)
    assert report.fused == 1, str(report)
    with np.errstate(all="ignore"):
        check_sweeps(fused, plain, x)


def test_a_changed_rule_header_is_a_new_kernel(monkeypatch):
    """The cache key holds _elementwise.h's text, which the generated source
    only includes: a library built with other rules is never loaded."""
    from adsim._fuse import compiler
    source, command = "int adsim_probe(void) { return 1; }", compiler.compiler_command()
    before = compiler.library_name(source, command)
    text = compiler._header_text()
    assert "double chain(" in text
    monkeypatch.setattr(compiler, "_header_text", lambda: text + "/* another rule */")
    assert compiler.library_name(source, command) != before


def grid_residual(u):
    """A 5-point stencil on a grid: 2-d slices (rows of the run), exp, tanh."""
    U = u.reshape(200, 200)
    lap = U[:-2, 1:-1] + U[2:, 1:-1] + U[1:-1, :-2] + U[1:-1, 2:] - 4.0 * U[1:-1, 1:-1]
    r = 0.1 * lap + np.exp(-U[1:-1, 1:-1]) - np.tanh(U[1:-1, 1:-1])
    return np.sum(r * r)


def test_two_dimensional_slices():
    u = RNG.uniform(0.0, 1.0, 200 * 200)
    fused, plain, report = fused_and_plain(grid_residual, u)
    assert report.fused == 1, str(report)
    check_sweeps(fused, plain, u)


def broadcast_and_reuse(x):
    """An active scalar over the run, a constant array, a slot read after a
    later op of the run overwrote it, the output's slot read by the run."""
    s = np.sum(x[:100]) / 100.0
    a = x * s + C
    b = a * a
    a = b - s / (1.0 + a * a)
    return np.sum(a * C + b * s)


def test_broadcast_scalars_constants_and_reused_slots():
    x = RNG.uniform(-1.0, 1.0, N)
    fused, plain, _ = fused_and_plain(broadcast_and_reuse, x)
    check_sweeps(fused, plain, x)


def test_several_adjoint_directions_use_the_interpreter():
    def f(x):
        return np.exp(-x * x) * C

    x = RNG.uniform(-1.0, 1.0, N)
    fused, plain, _ = fused_and_plain(f, x)
    W = RNG.standard_normal((3, N))
    a, b = fused.vjp(x, W.T), plain.vjp(x, W.T)
    assert np.array_equal(a[1], b[1])
    assert_same(fused.forward(x), plain.forward(x))


def test_an_op_without_fused_form_stays_interpreted():
    def f(x):
        return np.sum(np.fmod(x, C) * x)

    x = RNG.uniform(-1.0, 1.0, N)
    fused, plain, report = fused_and_plain(f, x)
    assert report.fused == 0 and "FMOD" in report.reasons[0][1]
    check_sweeps(fused, plain, x)


def test_without_a_compiler_the_tape_is_unchanged(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/adsim-test-cc")
    x = RNG.uniform(-1.0, 1.0, N)
    tape = ad.record(rosenbrock, x)
    with pytest.raises(NoCompiler, match="no C compiler"):
        tape.fuse()
    plain = ad.record(rosenbrock, x)
    assert np.array_equal(tape.gradient(x), plain.gradient(x))


def test_fusing_twice_compiles_once():
    tape = ad.record(rosenbrock, RNG.uniform(-1.0, 1.0, N))
    first = tape.fuse()
    assert tape.fuse() == first
    assert len(tape._fusion.libraries) == 1


def test_threads_share_a_fused_tape():
    x = RNG.uniform(-1.0, 1.0, N)
    fused, plain, _ = fused_and_plain(broadcast_and_reuse, x)
    points = [x + 0.01 * i for i in range(8)]
    expected = [plain.gradient(p) for p in points]
    results = [None] * 8

    def work(i):
        for _ in range(3):
            results[i] = fused.gradient(points[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, expected):
        assert_same(got, want)


# ---- random programs -----------------------------------------------------

UNARY_SAFE = [np.exp, np.tanh, np.sin, np.cos, np.arctan, np.sqrt, np.log1p, np.square,
              np.negative, np.expm1, np.cbrt]
BINARY = [np.add, np.subtract, np.multiply, np.true_divide, np.power, np.arctan2, np.hypot]


def combine(op, a, b):
    """op(a, b) on a domain where it is smooth and finite."""
    if op is np.true_divide:
        return op(a, b * b + 1.0)
    if op is np.power:
        return op(a * a + 0.5, b)
    if op in (np.arctan2, np.hypot):     # second derivatives ~ 1/r near the origin, where
        return op(a, b * b + 0.5)        # fused and interpreted hvps differ by conditioning
    return op(a, b)


@st.composite
def programs(draw):
    steps = []
    for _ in range(draw(st.integers(2, 10))):
        kind = draw(st.sampled_from(["unary", "binary", "scalar", "const", "barrier"]))
        if kind == "unary":
            steps.append(("unary", draw(st.integers(0, len(UNARY_SAFE) - 1)),
                          draw(st.integers(0, 20))))
        else:
            steps.append((kind, draw(st.integers(0, len(BINARY) - 1)),
                          draw(st.integers(0, 20)), draw(st.integers(0, 20))))
    return steps


def run_program(steps, x):
    """Values from slices of x, combined by the steps; the sum of the last."""
    s = x[0] * 0.5 + 1.0                             # an active scalar
    values = [x[1:], x[:-1], x[1:] * 0.5 + 0.25]
    for step in steps:
        pick = lambda i: values[i % len(values)]     # noqa: E731
        if step[0] == "unary":
            u = UNARY_SAFE[step[1]]
            a = pick(step[2])
            values.append(u(a * a + 0.5) if u in (np.sqrt, np.log1p, np.cbrt) else u(a))
        elif step[0] == "binary":
            values.append(combine(BINARY[step[1]], pick(step[2]), pick(step[3])))
        elif step[0] == "scalar":
            values.append(combine(BINARY[step[1]], pick(step[2]), s))
        elif step[0] == "const":
            values.append(BINARY[step[1] % 3](pick(step[2]), C[1:]))
        else:                                        # not elementwise: runs end here
            values.append(np.cumsum(pick(step[2])) * 1e-3)
    return values[-1] * C[1:]


@settings(max_examples=8, deadline=None)
@given(programs(), st.integers(0, 2 ** 32 - 1))
def test_random_programs(steps, seed):
    """Scalar losses (runs summed into the output, and runs before it) and
    vector outputs (reversed from a seed on each element)."""
    x = np.random.default_rng(seed).uniform(-1.0, 1.0, N)
    loss = lambda z: np.sum(run_program(steps, z))   # noqa: E731
    fused, plain, report = fused_and_plain(loss, x)
    assert report.fused == report.runs, str(report)
    check_sweeps(fused, plain, x)
    check_sweeps(fused, plain, np.random.default_rng(seed + 1).uniform(-1.0, 1.0, N))
    vector = lambda z: run_program(steps, z)         # noqa: E731
    fused, plain, _ = fused_and_plain(vector, x)
    w = np.random.default_rng(seed + 2).standard_normal(N - 1)
    for a, b in zip(fused.vjp(x, w), plain.vjp(x, w)):
        assert_same(a, b)
    W = np.stack([w, w[::-1]], axis=-1)               # two directions: the interpreter
    assert np.array_equal(fused.vjp(x, W)[1], plain.vjp(x, W)[1], equal_nan=True)


def test_runs_between_other_ops_reverse_fused():
    """A run before a cumsum and one after it; a vector output; the values
    the ops before a run need back after it (reused slots)."""
    def f(x):
        t = np.sin(x)
        a = np.exp(-t * t) * C + x[::-1]
        b = np.cumsum(a) * 1e-3
        a = np.tanh(b) * t + a * a
        return a * np.cos(x)

    x = RNG.uniform(-1.0, 1.0, N)
    fused, plain, report = fused_and_plain(f, x)
    assert report.fused == report.runs <= 3, str(report)     # a roll of its own value splits a run
    w = RNG.standard_normal(N)
    for a, b in zip(fused.vjp(x, w), plain.vjp(x, w)):
        assert_same(a, b)
    loss = lambda z: np.sum(f(z) ** 2)                # noqa: E731
    fused, plain, _ = fused_and_plain(loss, x)
    check_sweeps(fused, plain, x)


def test_a_loss_of_several_sums_reverses_every_run_fused():
    """The output adds two sums: no run is summed straight into it, so the
    gradient and the hvp reverse each run with the general kernels."""
    def f(x):
        a = np.exp(-x * x) * C
        b = np.sin(x) * x + a
        return np.sum(a * a) + np.sum(b * b * b)

    x = RNG.uniform(-1.0, 1.0, N)
    fused, plain, report = fused_and_plain(f, x)
    assert report.fused == report.runs >= 1, str(report)
    check_sweeps(fused, plain, x)
    v = RNG.standard_normal(N)
    step = 1e-6
    fd = (fused.gradient(x + step * v) - fused.gradient(x - step * v)) / (2 * step)
    np.testing.assert_allclose(fused.hvp(x, v), fd, rtol=1e-5, atol=1e-6)


def test_runs_from_256_elements_are_fused_before_or_after_replays():
    """Fusing finds runs the interpreter would not chunk, whether the tape
    was replayed before or not (replays started before keep their runs)."""
    x = RNG.uniform(-1.0, 1.0, 5000)
    fused, plain = ad.record(rosenbrock, x), ad.record(rosenbrock, x)
    assert fused.fuse().fused == 1
    check_sweeps(fused, plain, x)
    late = ad.record(rosenbrock, x)
    late.gradient(x)
    assert late.fuse().fused == 1
    check_sweeps(late, plain, x)
    small = ad.record(rosenbrock, x[:200])
    assert small.fuse().runs == 0
