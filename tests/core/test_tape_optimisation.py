"""Tape optimisation before replay (adsim/_optimise.pxi): repeated ops
merged, ops the output does not need removed, effects kept.

Every sweep of an optimised tape is compared with the same recording left
unoptimised: values and tangents bit for bit (a merged op computed the same
bits, a removed one nothing read), adjoints and second-order sweeps to
rounding (adjoints of a merged result are added up before its rule runs
once, where the two copies ran it twice).
"""
import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import adsim as ad
from adsim import _program, _tape
from adsim.errors import BranchChanged, IndexOutOfBounds, UndefinedDerivative
from adsim.sparse.pattern import hessian_pattern, jacobian_pattern
from fdcheck import fd_jacobian
from test_properties import programs, run

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@contextlib.contextmanager
def unoptimised():
    previous = _program.set_optimise(False)
    try:
        yield
    finally:
        _program.set_optimise(previous)


def both(f, *xs):
    """The tape of f at xs, optimised and not."""
    with unoptimised():
        plain = ad.record(f, *xs)
    return ad.record(f, *xs), plain


def op_names(tape):
    return [ad.ops.BY_CODE[int(c)].name for c in tape.op_codes()]


def close(a, b, scale=1.0):
    """Equal to rounding where finite, not finite in the same places (an
    infinite partial meeting adjoints added up in another order may give an
    infinity where the unoptimised tape gives NaN, or the reverse)."""
    a, b = np.asarray(a), np.asarray(b)
    same(np.isfinite(a), np.isfinite(b))
    ok = np.isfinite(b)
    np.testing.assert_allclose(a[ok], b[ok], rtol=1e-13, atol=1e-13 * scale)


def same(a, b):
    np.testing.assert_array_equal(a, b)          # NaN in the same places counts as equal


def compare_every_sweep(opt, plain, x, seed=0, bitwise=False):
    """Every sweep of the two tapes at x: values and tangents equal bit for
    bit, adjoints and second order to rounding (``bitwise``: bit for bit,
    for tapes where nothing was merged)."""
    rng = np.random.default_rng(seed)
    out_shape = tuple(plain.output_shape)
    V = rng.standard_normal(x.shape + (3,))
    W = rng.standard_normal(out_shape + (2,))
    w = rng.standard_normal(out_shape)
    same(opt.forward(x), plain.forward(x))
    for a, b in zip(opt.jvp(x, V), plain.jvp(x, V)):              # vector forward mode
        same(a, b)
    for a, b in zip(opt.jvp(x, V[..., 0]), plain.jvp(x, V[..., 0])):
        same(a, b)
    same(opt.jacobian(x, mode="forward"), plain.jacobian(x, mode="forward"))
    check = same if bitwise else (lambda a, b: close(a, b, scale_of(b)))
    y, g = plain.vjp(x, W)                                         # vector reverse mode
    y2, g2 = opt.vjp(x, W)
    same(y2, y)
    check(g2, g)
    check(opt.jacobian(x, mode="reverse"), plain.jacobian(x, mode="reverse"))
    g, hv = plain.gradient_and_hvp(x, V, w)                        # second order
    g2, hv2 = opt.gradient_and_hvp(x, V, w)
    check(g2, g)
    check(hv2, hv)


def scale_of(a):
    a = np.asarray(a)
    return max(1.0, float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0)))


# ---- random programs ---------------------------------------------------------------

def twice(program):
    """The program's output plus a multiple of the same program run again:
    every op of the second run repeats one of the first."""
    return lambda z: run(program, z) + 0.5 * run(program, z)


@SETTINGS
@given(programs(smooth=False), st.integers(0, 2 ** 16), st.booleans())
def test_random_programs_in_every_sweep(program_x, seed, repeated):
    program, x = program_x
    f = twice(program) if repeated else (lambda z: run(program, z))
    opt, plain = both(f, x)
    assert len(opt) <= len(plain)
    x1 = x + np.random.default_rng(seed).uniform(-0.3, 0.3, x.shape)
    for point in (x, x1):
        try:
            plain.forward(point)
        except BranchChanged:
            with pytest.raises(BranchChanged):     # guards are never removed
                opt.forward(point)
            continue
        compare_every_sweep(opt, plain, point, seed)


@SETTINGS
@given(programs(smooth=False))
def test_random_programs_sparsity_patterns(program_x):
    program, x = program_x
    opt, plain = both(twice(program), x)
    assert (jacobian_pattern(opt) != jacobian_pattern(plain)).nnz == 0
    assert (hessian_pattern(opt) != hessian_pattern(plain)).nnz == 0


# ---- dead ops -----------------------------------------------------------------------

def test_eigh_eigenvalues_at_a_repeated_eigenvalue():
    """Energy levels of a symmetric Hamiltonian with a degenerate level: only
    the eigenvalues are read, so the eigenvectors' op (which has no
    derivative there) is dropped, and forward mode agrees with reverse mode
    and with finite differences."""
    def total_energy(p):
        onsite, coupling = p[0], p[1]
        H = np.array([[onsite, 0.0, 0.0],
                      [0.0, onsite, 0.0],
                      [0.0, 0.0, 2.0 * onsite + coupling]])
        levels, states = np.linalg.eigh(H)
        return np.sum(levels ** 2)

    p = np.array([1.0, 0.5])
    v = np.array([0.3, -0.7])
    g = ad.grad(total_energy)(p)
    y, jv = ad.jvp(total_energy, p, v)
    fd = fd_jacobian(total_energy, [p])
    np.testing.assert_allclose(g, fd.reshape(-1), rtol=1e-6)
    np.testing.assert_allclose(jv, g @ v, rtol=1e-12)
    assert y == total_energy(p)
    tape = ad.record(total_energy, p)
    assert op_names(tape).count("CALLBACK") == 1          # eigvalsh alone
    np.testing.assert_allclose(tape.jvp(p, v)[1], g @ v, rtol=1e-12)
    with unoptimised():
        with pytest.raises(UndefinedDerivative):
            ad.record(total_energy, p).jvp(p, v)


def test_singular_values_at_a_repeated_singular_value():
    """The Frobenius norm as the sum of squared singular values of a matrix
    whose two singular values are equal: the singular vectors are dropped."""
    def frobenius_squared(p):
        A = np.array([[p[0], 0.0, p[1]], [0.0, p[0], 0.0]])
        return np.sum(np.linalg.svd(A, full_matrices=False)[1] ** 2)

    p, v = np.array([1.0, 0.0]), np.array([0.3, 1.0])
    y, jv = ad.jvp(frobenius_squared, p, v)
    np.testing.assert_allclose(jv, ad.grad(frobenius_squared)(p) @ v, rtol=1e-12)
    np.testing.assert_allclose(jv, 2.0 * (2.0 * p[0] * v[0] + p[1] * v[1]), rtol=1e-12)
    assert op_names(ad.record(frobenius_squared, p)).count("CALLBACK") == 1


def test_eigenvectors_used_still_refused_at_a_repeated_eigenvalue():
    def first_state_weight(p):
        H = np.array([[p[0], 0.0], [0.0, p[0]]])
        return np.linalg.eigh(H)[1][0, 0] ** 2

    with pytest.raises(UndefinedDerivative):
        ad.jvp(first_state_weight, np.array([1.0]), np.array([1.0]))


def test_unused_intermediates_removed_from_every_sweep():
    """A diagnostic computed and thrown away (a residual norm, an energy)
    costs nothing in replays."""
    def damped_step(u):
        energy = 0.5 * np.sum(u ** 2)                     # not returned
        flux = np.exp(-u) * np.tanh(u)                    # not used
        return np.sum(np.sin(u) * u[::-1])

    x = np.linspace(0.1, 1.0, 20)
    opt, plain = both(damped_step, x)
    assert len(opt) < len(plain)
    assert "EXP" not in op_names(opt) and "TANH" not in op_names(opt)
    assert "EXP" in op_names(plain)
    compare_every_sweep(opt, plain, x, bitwise=True)     # nothing merged: bit for bit


def test_dead_op_outside_its_domain_changes_nothing():
    """A removed log of a negative number (NaN, "invalid" under
    np.errstate(all='raise')) does not reach the results."""
    def f(x):
        unused = np.log(x - 5.0)                          # NaN at every point used here
        return np.sum(np.sqrt(x) * x)

    x = np.array([1.0, 2.0, 3.0])
    opt, plain = both(f, x)
    with np.errstate(all="raise"):
        compare_every_sweep(opt, plain, x + 0.25, bitwise=True)
        assert np.all(np.isfinite(opt.gradient(x)))


def test_nan_and_infinity_propagate_as_before():
    def removed_only(x):
        unused = np.exp(x * 800.0)
        return np.concatenate([np.log(x) * 2.0, np.sqrt(x) / x])

    opt, plain = both(removed_only, np.array([1.0, 2.0]))
    for x in (np.array([-1.0, 0.0]), np.array([0.0, 1.0]), np.array([np.nan, np.inf])):
        with np.errstate(all="ignore"):
            compare_every_sweep(opt, plain, x, bitwise=True)

    def f(x):
        a = np.log(x)                 # NaN for x < 0, -inf at 0
        b = np.log(x)                 # merged with a
        return np.concatenate([a * 2.0, b / x, np.exp(x * 800.0)])

    opt, plain = both(f, np.array([1.0, 2.0]))
    assert op_names(opt).count("LOG") == 1
    for x in (np.array([-1.0, 0.0]), np.array([0.0, 1.0]), np.array([np.nan, np.inf])):
        with np.errstate(all="ignore"):
            compare_every_sweep(opt, plain, x)


def test_branch_records_kept_when_nothing_reads_them():
    """A comparison whose outcome decides nothing the output computes still
    detects the path change."""
    def f(x):
        if x[0] > 0:
            s = np.sum(x ** 2)
        else:
            s = np.sum(x ** 2)
        return s

    tape = ad.record(f, np.array([1.0, 2.0]))
    assert "COMPARE" in op_names(tape)
    with pytest.raises(BranchChanged):
        tape.gradient(np.array([-1.0, 2.0]))


def test_index_reads_kept_when_their_values_are_unused():
    """A lookup at integer data the output does not read still refuses an
    index outside the table, where NumPy raises IndexError."""
    def f(x):
        T = np.array([0.0, 1.0, 4.0, 9.0])
        i = np.floor(x).astype(int)
        unused = T[i]
        return np.sum(x ** 2)

    tape = ad.record(f, np.array([0.5, 2.5]))
    assert "GATHER_AT" in op_names(tape)
    with pytest.raises(IndexOutOfBounds):
        tape.forward(np.array([0.5, 7.5]))


def test_impure_callbacks_kept_pure_ones_dropped():
    calls = []

    def logged(a):
        calls.append(1)
        return 2.0 * a

    log_prim = ad.primitive(logged, jvp=lambda args, out, t: 2.0 * t[0],
                            vjp=lambda args, out, w: (2.0 * w,))
    pure_prim = ad.primitive(np.cos, jvp=lambda args, out, t: -np.sin(args[0]) * t[0],
                             vjp=lambda args, out, w: (-np.sin(args[0]) * w,))
    pure_prim.pure = True

    def f(x):
        log_prim(x)                   # unused, but it has an effect
        pure_prim(x)                  # unused, nothing else
        return np.sum(x ** 2)

    tape = ad.record(f, np.array([1.0, 2.0]))
    assert len(tape.callbacks) == 1 and op_names(tape).count("CALLBACK") == 1
    before = len(calls)
    tape.forward(np.array([3.0, 4.0]))
    assert len(calls) == before + 1


def test_output_written_twice_keeps_the_last_write():
    def f(x):
        y = np.sin(x)
        y = np.cos(x) * 1.0
        y[0] = x[1] ** 2
        return y

    opt, plain = both(f, np.array([0.3, 0.7]))
    assert "SIN" not in op_names(opt)
    compare_every_sweep(opt, plain, np.array([0.4, -0.2]))


# ---- merging ------------------------------------------------------------------------

def test_repeated_expressions_computed_once():
    """A Gaussian kernel written twice, as scientists do."""
    def log_likelihood(theta):
        mu, s = theta[0], theta[1]
        z = np.linspace(-1.0, 1.0, 50)
        density = np.exp(-0.5 * ((z - mu) / s) ** 2) / s
        weight = np.exp(-0.5 * ((z - mu) / s) ** 2)
        return np.sum(np.log(density)) + np.sum(weight * z)

    opt, plain = both(log_likelihood, np.array([0.1, 0.8]))
    assert op_names(opt).count("EXP") == 1 and op_names(plain).count("EXP") == 2
    compare_every_sweep(opt, plain, np.array([0.2, 0.6]))
    g = opt.gradient(np.array([0.2, 0.6]))
    np.testing.assert_allclose(g, fd_jacobian(log_likelihood, [np.array([0.2, 0.6])]).reshape(-1),
                               rtol=1e-6)


def test_fills_of_different_sizes_not_merged():
    def f(x):
        a = np.zeros(3)
        b = np.zeros(5)
        a[0] = x[0]
        b[1] = x[0] * 2.0
        return np.concatenate([a, b])

    opt, plain = both(f, np.array([1.5]))
    compare_every_sweep(opt, plain, np.array([-0.5]))


def test_merged_result_overwritten_before_a_late_read():
    """The first copy's slot is reused before the second copy is read: the
    read keeps the second copy."""
    def f(x):
        acc = np.sin(x)
        late = np.sin(x)
        for k in range(4):
            acc = acc * np.cos(acc + k)
        return acc + late

    opt, plain = both(f, np.linspace(0.1, 0.9, 7))
    compare_every_sweep(opt, plain, np.linspace(0.2, 0.5, 7))


# ---- copies (reshape, ravel) ----------------------------------------------------------

def test_reshapes_read_their_source():
    """The 5-point stencil as it is written: reshape in, pad, reshape out.
    Neither reshape's copy is left, and every sweep is the unoptimised one's."""
    def residual(u):
        k = 6
        U = np.reshape(u, (k, k))
        P = np.pad(U, 1)
        lap = P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4.0 * U
        return np.reshape(lap + 0.1 * np.exp(U), (k * k,))

    x = np.linspace(-0.5, 0.8, 36)
    opt, plain = both(residual, x)
    assert op_names(plain).count("COPY") == 2 and "COPY" not in op_names(opt)
    compare_every_sweep(opt, plain, np.cos(x), bitwise=True)


def test_a_copy_written_into_stays_a_copy():
    """y = a.copy(); a written in place afterwards: y keeps a's old values,
    so its readers after the write must read the copy."""
    def f(x):
        a = x * 2.0
        y = np.copy(a)
        a[0] = x[1] ** 3
        z = np.ravel(y)
        z[1] = np.sin(x[0])
        return y * a + np.sum(z)

    opt, plain = both(f, np.array([0.3, -0.7, 1.1]))
    assert "COPY" in op_names(opt)
    compare_every_sweep(opt, plain, np.array([0.5, 0.2, -0.4]))
    np.testing.assert_allclose(opt.forward(np.array([0.5, 0.2, -0.4])),
                               f(np.array([0.5, 0.2, -0.4])), rtol=1e-15)


def test_an_output_that_is_a_reshaped_input_is_its_own_array():
    """f(x) = x reshaped: the output stays a copy (a values replay must
    not hand back the caller's array)."""
    def f(x):
        return np.reshape(x, (2, 2))

    opt, plain = both(f, np.arange(4.0))
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = opt.forward(x)
    y[0, 0] = 99.0
    assert x[0] == 1.0
    compare_every_sweep(opt, plain, x, bitwise=True)


def test_an_output_that_is_a_copy_of_an_intermediate():
    def f(x):
        y = np.sin(x) * x
        return np.reshape(y, (2, 3)).T.ravel()

    opt, plain = both(f, np.linspace(0.1, 0.6, 6))
    assert len(opt.op_codes()) < len(plain.op_codes())
    x = np.linspace(-0.3, 0.9, 6)
    compare_every_sweep(opt, plain, x, bitwise=True)
    np.testing.assert_array_equal(opt.forward(x), f(x))


# ---- tape services on optimised tapes -----------------------------------------------

def test_tape_file_of_an_optimised_tape(tmp_path):
    def f(x):
        unused = np.exp(x)
        return np.sum(np.sin(x) ** 2 + np.sin(x))

    x = np.array([0.1, 0.4, 0.9])
    tape = ad.record(f, x)
    path = tmp_path / "tape.adsim"
    tape.save(str(path))
    loaded = ad.load_tape(str(path))
    assert len(loaded) == len(tape)
    compare_every_sweep(loaded, tape, x + 0.1)
    same(loaded.gradient(x), tape.gradient(x))


def test_tape_file_written_unoptimised_is_optimised_on_load(tmp_path):
    def f(x):
        unused = np.tanh(x)
        return np.sum(np.cos(x) * np.cos(x))

    x = np.array([0.3, 0.6])
    with unoptimised():
        plain = ad.record(f, x)
    plain.save(str(tmp_path / "t.adsim"))
    loaded = ad.load_tape(str(tmp_path / "t.adsim"))
    assert len(loaded) < len(plain)
    compare_every_sweep(loaded, plain, x)


def test_batched_replay_of_an_optimised_tape():
    def f(x):
        unused = np.exp(x)
        return np.sum(np.sin(x) * np.sin(x) + x ** 3)

    x = np.linspace(0.0, 1.0, 40)
    tape = ad.record(f, x)
    X = x[None, :] + np.linspace(-0.2, 0.2, 5)[:, None]
    G = tape.batched.gradient(X)
    for b in range(5):
        np.testing.assert_allclose(G[b], tape.gradient(X[b]), rtol=1e-14, atol=1e-14)


def test_fused_runs_of_an_optimised_tape():
    def residual(u):
        unused = np.log1p(u ** 2)
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        return np.sum((lap + np.exp(u[1:-1]) * np.exp(u[1:-1])) ** 2)

    u = np.linspace(0.0, 1.0, 600)
    opt, plain = both(residual, u)
    try:
        opt.fuse()
    except ad.errors.NoCompiler:
        pytest.skip("no C compiler")
    g = plain.gradient(u)
    np.testing.assert_allclose(opt.gradient(u), g, rtol=1e-12, atol=1e-12 * np.max(np.abs(g)))
    np.testing.assert_allclose(opt.forward(u), plain.forward(u), rtol=1e-13)


def test_parameters_compared_by_their_bits():
    """x * 0.0 and x * -0.0 are different ops (1 / result: +inf and -inf);
    0.5 * x twice is one."""
    def f(x):
        return np.concatenate([1.0 / (x * 0.0), 1.0 / (x * -0.0), 0.5 * x + 0.5 * x])

    x = np.array([1.0, 2.0])
    opt, plain = both(f, x)
    with np.errstate(divide="ignore"):
        same(opt.forward(x), plain.forward(x))
        same(opt.forward(x), f(x))
    assert op_names(opt).count("MUL_C") == 3 and op_names(plain).count("MUL_C") == 4


def test_first_result_written_in_place_not_moved():
    """The first copy is changed in place (y[0] = ...) before its repeat:
    the repeat is computed again."""
    def f(x):
        y = np.sin(x)
        y[0] = x[1] ** 2
        s = np.sum(y * x)
        z = np.sin(x)
        return s + np.sum(z ** 3)

    opt, plain = both(f, np.array([0.3, 0.8, 1.1]))
    assert op_names(opt).count("SIN") == 2
    compare_every_sweep(opt, plain, np.array([0.5, -0.1, 0.9]))


def test_environment_variable_turns_the_pass_off():
    import os
    import subprocess
    import sys
    code = ("import numpy as np, adsim as ad\n"
            "def f(x):\n"
            "    np.tanh(x)\n"
            "    return np.sum(x ** 2)\n"
            "t = ad.record(f, np.ones(3))\n"
            "print('TANH' in [ad.ops.BY_CODE[int(c)].name for c in t.op_codes()])\n")
    for value, kept in (("0", "True"), ("1", "False")):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**os.environ, "ADSIM_TAPE_OPTIMISE": value})
        assert out.stdout.strip() == kept, out.stderr


# ---- realistic programs ----------------------------------------------------------

def test_rk4_step_of_the_demo():
    """The face conductivities 0.5 (kappa + roll(kappa)) of each RK4 stage
    are one computation: the stages' rolls share their index lists."""
    from adsim import demo
    n = 32
    s = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    u, kappa = np.sin(s), 1.0 + 0.5 * np.cos(s)
    dx = 2.0 * np.pi / n
    step = lambda u, k: demo.rk4_step(u, k, 0.2 * dx * dx / 1.5, dx)  # noqa: E731
    opt, plain = both(step, u, kappa)
    assert len(opt) == len(plain) - 12
    x = (u + 0.1 * np.cos(3 * s), kappa * 1.1)
    same(opt.forward(*x), plain.forward(*x))
    V = (np.cos(s), np.sin(2 * s))
    for a, b in zip(opt.jvp(x, V), plain.jvp(x, V)):
        same(a, b)
    w = np.random.default_rng(3).standard_normal(n)
    for a, b in zip(opt.vjp(x, w)[1], plain.vjp(x, w)[1]):
        close(a, b, scale_of(b))


def test_reaction_diffusion_residual():
    def residual_norm(u):
        """Steady reaction-diffusion on a grid: 5-point Laplacian, Arrhenius
        source, saturating sink; zero Dirichlet boundary."""
        p = np.pad(u, 1)
        lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4.0 * u
        r = lap + 0.1 * np.exp(u / (1.0 + 0.05 * u)) - 0.3 * np.tanh(u)
        return np.sum(r ** 2)

    u = np.random.default_rng(0).uniform(0.0, 1.0, (12, 12))
    opt, plain = both(residual_norm, u)
    assert len(opt) <= len(plain)
    compare_every_sweep(opt, plain, u * 0.9)
    v = np.random.default_rng(1).standard_normal(u.shape)
    g, g2 = opt.gradient(u), opt.gradient(u + 1e-6 * v)
    np.testing.assert_allclose(opt.hvp(u, v), (g2 - g) / 1e-6, rtol=1e-4, atol=1e-4)
