"""The dense Newton solves' compiled rules (adsim/_ops/dense_newton.pxi):
replays compute each solve's value and adjoint in C, while tangents and
second-order sweeps run the Python rules of adsim/integrate/_newton_solve.py.
So the compiled adjoint is checked against the Python tangent rule
(forward- and reverse-mode Jacobians of the same tape), against central
differences, at points other than the recorded one, through tape files,
and on matrices that turn singular at the replayed point."""
import io

import numpy as np
import pytest

import adsim
from adsim.integrate._dense_solve import DenseLinear
from adsim.integrate._newton_solve import FORM_NAMES

RNG = np.random.default_rng(23)
N = 5
# a Jacobian of chemical kinetics' kind: strongly negative diagonal, coupled rows
J = -np.diag(RNG.uniform(1.0, 50.0, N)) + 0.3 * RNG.standard_normal((N, N))
SCALARS = {"shifted": [4.0], "identity_minus": [0.05], "shifted_complex": [3.0, -1.5]}
KINDS = [(form, transposed) for form in sorted(SCALARS) for transposed in (False, True)]


def solve_of(linear, form, transposed):
    """``z -> x``: the Newton solve of ``form`` on the flat input z = [J's
    values, coefficients, right-hand side]."""
    solve = linear._solves[FORM_NAMES[form], transposed]
    k = len(SCALARS[form])

    def f(z):
        data, coefficients, b = z[:N * N].reshape(N, N), z[N * N:N * N + k], z[N * N + k:]
        return solve(data, *(coefficients[i] for i in range(k)), b)
    return f


def point(form):
    m = 2 * N if form == "shifted_complex" else N
    return np.concatenate([J.ravel(), SCALARS[form], RNG.standard_normal(m)])


@pytest.mark.parametrize("form, transposed", KINDS)
def test_compiled_adjoint_is_the_tangent_rule_transposed_and_the_differences(form, transposed):
    f = solve_of(DenseLinear(N), form, transposed)
    z = point(form)
    tape = adsim.record(f, z)
    reverse = tape.jacobian(z, mode="reverse")       # compiled adjoint, one row per output
    forward = tape.jacobian(z, mode="forward")       # the Python tangent rule
    np.testing.assert_allclose(reverse, forward, rtol=1e-12, atol=1e-12 * np.abs(forward).max())
    eps = 1e-6
    columns = RNG.choice(z.size, 8, replace=False)
    for j in columns:
        e = np.zeros(z.size)
        e[j] = eps * max(1.0, abs(z[j]))
        fd = (f(z + e) - f(z - e)) / (2 * e[j])
        np.testing.assert_allclose(reverse[:, j], fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


@pytest.mark.parametrize("form, transposed", KINDS)
def test_replays_elsewhere_are_recordings_there(form, transposed):
    """Values and adjoints of a replay at a new matrix and coefficients (new
    factors) equal those of a recording at that point, bit for bit."""
    linear = DenseLinear(N)
    f = solve_of(linear, form, transposed)
    z = point(form)
    tape = adsim.record(f, z)
    w = RNG.standard_normal(tape.output_shape)
    for step in (1e-3, 0.2):
        z2 = z * (1 + step * RNG.standard_normal(z.size))
        fresh = adsim.record(f, z2)
        assert np.array_equal(tape.forward(z2), fresh.forward(z2))
        assert np.array_equal(tape.vjp(z2, w)[1], fresh.vjp(z2, w)[1])


def test_solves_in_a_tape_file_replay_compiled_and_equal():
    """A loaded tape makes its solves again from the file's parameters,
    with the compiled rules: the same numbers."""
    linear = DenseLinear(N)
    solves = {form: solve_of(linear, form, False) for form in SCALARS}

    def program(z):
        x = solves["shifted"](z)
        y = solves["identity_minus"](np.concatenate([z[:N * N], [0.05], x]))
        r = solves["shifted_complex"](np.concatenate([z[:N * N], [3.0, -1.5], x, y]))
        return np.sum(r ** 2) + np.sum(x * y)
    z = point("shifted")
    tape = adsim.record(program, z)
    buf = io.BytesIO()
    tape.save(buf)
    buf.seek(0)
    loaded = adsim.load_tape(buf)
    z2 = z * (1 + 1e-2 * RNG.standard_normal(z.size))
    assert np.array_equal(loaded.value_and_gradient(z2)[1], tape.value_and_gradient(z2)[1])
    v = RNG.standard_normal(z.size)
    np.testing.assert_allclose(loaded.hvp(z2, v), tape.hvp(z2, v), rtol=1e-13)


@pytest.mark.parametrize("form", sorted(SCALARS))
def test_a_replay_at_a_singular_matrix_gives_nan(form):
    """As the Python rules and SciPy's dense LU: NaN values and adjoints, no
    error (the methods count it as a failed Newton iteration)."""
    f = solve_of(DenseLinear(N), form, False)
    z = point(form)
    tape = adsim.record(lambda z: np.sum(f(z)), z)
    singular = z.copy()
    singular[:N * N] = np.eye(N).ravel()
    singular[N * N] = 1.0                    # c I - I, I - 1 I, (1 + i beta) I - I: singular
    if form == "shifted_complex":
        singular[N * N + 1] = 0.0
    value, gradient = tape.value_and_gradient(singular)
    assert np.isnan(value) and np.all(np.isnan(gradient))
    not_finite = z.copy()
    not_finite[0] = np.inf
    value, gradient = tape.value_and_gradient(not_finite)
    assert np.isnan(value) and np.all(np.isnan(gradient))
    value, gradient = tape.value_and_gradient(z)          # and back: the regular solve
    assert np.isfinite(value) and np.all(np.isfinite(gradient))


def robertson(t, y, k):
    """Robertson's kinetics, as in examples/ode/robertson_fit.py."""
    r1, r2, r3 = k[0] * y[0], k[1] * y[1] ** 2, k[2] * y[1] * y[2]
    return np.array([-r1 + r3, r1 - r2 - r3, r2])


@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_a_gradient_replay_makes_no_python_call_per_solve(method):
    """The point of the compiled rules: replaying the steps of a stiff
    integration at new parameters calls none of the solves' Python code
    (their values and adjoints run in C), and gives the recording's numbers."""
    import sys
    from adsim.integrate import solve_ivp

    def loss(log_k):
        sol = solve_ivp(robertson, (0.0, 40.0), np.array([1.0, 0.0, 0.0]), method=method,
                        args=(np.exp(log_k),), rtol=1e-5, atol=[1e-8, 1e-12, 1e-8],
                        t_eval=[4.0, 40.0])
        return np.sum(sol.y * np.array([[1.0], [1e4], [1.0]]))
    log_k = np.log([0.04, 3e7, 1e4])
    tape = adsim.record(loss, log_k)
    solve_files = ("_newton_solve.py", "_dense_solve.py")
    calls = []

    def watch(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.endswith(solve_files):
            calls.append(frame.f_code.co_name)
    elsewhere = log_k + 1e-4
    sys.setprofile(watch)
    try:
        gradient = tape.gradient(elsewhere)
    finally:
        sys.setprofile(None)
    assert calls == []
    np.testing.assert_allclose(gradient, adsim.grad(loss, cache=False)(elsewhere),
                               rtol=1e-10)
