"""solve_ivp's arguments: SciPy's checks and messages, clear adsim errors for
what adsim does not support, and counts that are guarded only when read."""
import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp


def decay(t, y):
    return -0.5 * y


@pytest.mark.parametrize("options", [dict(method="LSODA"), dict(dense_output=True)])
def test_options_only_scipy_has_are_scipys_on_plain_calls_and_differentiated_on_active_ones(
        options):
    from scipy.integrate import solve_ivp as scipy_solve_ivp
    ours, scipys = solve_ivp(decay, (0, 1), [1.0], **options), \
        scipy_solve_ivp(decay, (0, 1), [1.0], **options)
    np.testing.assert_array_equal(ours.y, scipys.y)
    assert (ours.sol is None) == (scipys.sol is None)
    g = adsim.grad(lambda y0: solve_ivp(decay, (0, 1), y0, **options).y[0, -1])(np.array([1.0]))
    assert np.allclose(g, np.exp(-0.5), rtol=1e-3)          # y(1) = y0 exp(-1/2)
    k = adsim.value(np.array(0.5))

    def closure(c):
        return solve_ivp(lambda t, y: -c * y, (0, 1), [1.0], **options).y[0, -1]
    assert np.isclose(adsim.grad(closure)(k), -np.exp(-0.5), rtol=1e-3)


def test_complex_states_by_implicit_methods_and_non_numeric_states_are_refused():
    from scipy.integrate import solve_ivp as scipy_solve_ivp
    plain = solve_ivp(decay, (0, 1), np.array([1 + 1j]))          # SciPy's, on a plain call
    np.testing.assert_array_equal(plain.y, scipy_solve_ivp(decay, (0, 1), np.array([1 + 1j])).y)
    # (a complex active state is integrated by the explicit methods:
    # tests/integrate/test_complex_states.py)
    g = adsim.grad(lambda a: solve_ivp(decay, (0, 1), np.array([1 + 1j]) * a, rtol=1e-10,
                                       atol=1e-12).y.real[0, -1])(np.array(1.0))
    np.testing.assert_allclose(g, scipy_solve_ivp(decay, (0, 1), np.array([1.0]), rtol=1e-10,
                                                  atol=1e-12).y[0, -1], rtol=1e-12)
    with pytest.raises(adsim.UnsupportedOperation, match="complex"):
        adsim.grad(lambda a: solve_ivp(decay, (0, 1), np.array([1 + 1j]) * a,
                                       method="Radau").y.real[0, -1])(np.array(1.0))
    with pytest.raises(TypeError, match="real numbers"):
        solve_ivp(decay, (0, 1), np.array(["a"]))
    with pytest.raises(adsim.UnsupportedOperation, match="complex"):
        solve_ivp(lambda t, y: 1j * y, (0, 1), [1.0])


def test_solver_classes_other_than_scipys_are_refused():
    from scipy.integrate import LSODA, RK45

    class Tuned(RK45):
        pass
    plain = solve_ivp(decay, (0, 1), [1.0], method=Tuned)          # SciPy's, on a plain call
    assert plain.success
    with pytest.raises(adsim.UnsupportedOperation, match="by name"):
        adsim.grad(lambda y0: solve_ivp(decay, (0, 1), y0, method=Tuned).y[0, -1])(
            np.array([1.0]))
    g = adsim.grad(lambda y0: solve_ivp(decay, (0, 1), y0, method=LSODA).y[0, -1])(
        np.array([1.0]))
    assert np.allclose(g, np.exp(-0.5), rtol=1e-3)
    with pytest.raises(ValueError, match="must be one of"):
        solve_ivp(decay, (0, 1), [1.0], method="Euler")


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(t_eval=[0.5, 2.0]), ValueError, "not within"),
    (dict(t_eval=[0.5, 0.2]), ValueError, "properly sorted"),
    (dict(t_eval=[[0.5]]), ValueError, "1-dimensional"),
    (dict(args=3), TypeError, "cannot be unpacked"),
    (dict(first_step=-1.0), ValueError, "positive"),
    (dict(first_step=5.0), ValueError, "exceeds bounds"),
    (dict(max_step=0.0), ValueError, "positive"),
    (dict(atol=[1e-6, 1e-6]), ValueError, "wrong shape"),
    (dict(atol=-1.0), ValueError, "positive"),
])
def test_scipy_argument_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        scipy_solve_ivp(decay, (0, 1), [1.0], **kwargs)
    with pytest.raises(error, match=match):
        solve_ivp(decay, (0, 1), [1.0], **kwargs)


def test_state_and_derivative_shapes():
    with pytest.raises(ValueError, match="1-dimensional"):
        solve_ivp(decay, (0, 1), [[1.0]])
    with pytest.raises(ValueError, match="finite"):
        solve_ivp(decay, (0, 1), [np.nan])
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        solve_ivp(lambda t, y: np.zeros(3), (0, 1), [1.0, 2.0])
    with pytest.raises(ValueError, match="pair"):
        solve_ivp(decay, (0, 1, 2), [1.0])


def test_warnings_as_scipy():
    for solver in (solve_ivp, scipy_solve_ivp):
        with pytest.warns(UserWarning, match="no effect"):
            solver(decay, (0, 1), [1.0], jac=lambda t, y: -0.5)
        with pytest.warns(UserWarning, match="rtol"):
            solver(decay, (0, 1), [1.0], rtol=1e-20)


def test_checkpoint_options_need_t_eval_and_tolerances_are_plain():
    with pytest.raises(ValueError, match="t_eval"):
        solve_ivp(decay, (0, 1), [1.0], memory_limit="1MB")

    def f(rtol):
        return np.sum(solve_ivp(decay, (0, 1), [1.0], rtol=rtol).y)
    with pytest.raises(adsim.UnsupportedOperation, match="rtol"):
        adsim.grad(f)(np.array(1e-3))


def _integral(y0, read_nfev):
    res = solve_ivp(lambda t, y: -y ** 3, (0.0, 4.0), y0, t_eval=[4.0], rtol=1e-8, atol=1e-10)
    total = np.sum(res.y)
    return total * res.nfev / res.nfev if read_nfev else total


def test_counts_are_guarded_only_when_read():
    """A tape that read nfev replays only where nfev is the same; one that
    did not read it replays at a point where the steps differ."""
    near, far = np.array([1.0]), np.array([3.0])
    assert solve_ivp(lambda t, y: -y ** 3, (0, 4), near, t_eval=[4.0], rtol=1e-8,
                     atol=1e-10).nfev != solve_ivp(lambda t, y: -y ** 3, (0, 4), far,
                                                   t_eval=[4.0], rtol=1e-8, atol=1e-10).nfev
    unread = adsim.record(lambda y0: _integral(y0, False), near)
    np.testing.assert_allclose(unread.forward(far), _integral(far, False), rtol=1e-10)
    read = adsim.record(lambda y0: _integral(y0, True), near)
    with pytest.raises(adsim.BranchChanged):
        read.forward(far)
    # the functional API records again and is right at both points: y(4) of
    # y' = -y^3 is (y0^-2 + 8)^-1/2, whose derivative is y0^-3 (y0^-2 + 8)^-3/2
    grad = adsim.grad(lambda y0: _integral(y0, True))
    for y0 in (near, far, near):
        exact = y0 ** -3 * (y0 ** -2 + 8.0) ** -1.5
        np.testing.assert_allclose(grad(y0), exact, rtol=1e-5)


def test_status_is_guarded():
    """A tape recorded where the integration succeeds does not replay where it fails."""
    def final(y0):
        res = solve_ivp(lambda t, y: y ** 2, (0.0, 2.0), y0, t_eval=[0.5])
        return np.sum(res.y) + res.status
    tape = adsim.record(final, np.array([0.1]))
    assert tape.forward(np.array([0.2])) == pytest.approx(0.2 / (1 - 0.1), rel=1e-3)
    with pytest.raises(adsim.BranchChanged):
        tape.forward(np.array([1.0]))        # blows up at t = 1 < 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert final(np.array([1.0])) == pytest.approx(1 / (1 - 0.5) - 1, rel=1e-3)


def _final_with_constant_atol(k):
    sol = solve_ivp(lambda t, y, k: -k * y, (0.0, 1.0), [1.0, 2.0], args=(k,), t_eval=[1.0],
                    atol=np.array([1e-8, 1e-10]), rtol=1e-9)   # made inside the recording
    return np.sum(sol.y)


def test_tolerances_made_inside_the_recorded_function_are_options():
    g = adsim.grad(_final_with_constant_atol)(np.array(0.5))
    np.testing.assert_allclose(g, -3.0 * np.exp(-0.5), rtol=1e-8)
    with pytest.raises(adsim.UnsupportedOperation, match="atol is active"):
        adsim.grad(lambda k: np.sum(solve_ivp(lambda t, y: -y, (0.0, 1.0), [1.0], atol=k).y))(
            np.array(1e-6))


def damped(t, y, a):
    """A vectorized right-hand side as SciPy's docs write them: y is (n, k)."""
    return np.vstack([y[1], -a * np.sin(y[0]) - 0.1 * y[1] + 0.2 * np.cos(t)])


@pytest.mark.parametrize("method", ["RK45", "Radau", "BDF"])
def test_vectorized_fun_is_called_on_one_column_as_scipy_does(method):
    from scipy.integrate import solve_ivp as scipy_solve_ivp
    y0, a = np.array([1.0, 0.0]), 2.0
    options = dict(method=method, t_eval=np.linspace(0, 4, 9), rtol=1e-8, atol=1e-10,
                   vectorized=True, args=(a,))
    ours, scipys = solve_ivp(damped, (0, 4), y0, **options), \
        scipy_solve_ivp(damped, (0, 4), y0, **options)
    # Radau and BDF: SciPy differences the Jacobian (on many columns), adsim
    # records it, so their Newton iterates differ within the tolerance
    exact = method == "RK45"
    np.testing.assert_allclose(ours.y, scipys.y, rtol=1e-12 if exact else 1e-7,
                               atol=1e-14 if exact else 1e-9)

    def loss(y0, a):
        return np.sum(solve_ivp(damped, (0, 4), y0, **dict(options, args=(a,))).y ** 2)
    g = adsim.grad(loss, argnums=(0, 1))(y0, np.array(a))
    eps = 1e-6
    fd_a = (loss(y0, a + eps) - loss(y0, a - eps)) / (2 * eps)
    fd_y = [(loss(y0 + eps * e, a) - loss(y0 - eps * e, a)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(g[1], fd_a, rtol=1e-5)
    np.testing.assert_allclose(g[0], fd_y, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("dense_output", [False, True])
@pytest.mark.parametrize("method", ["RK45", "DOP853", "Radau", "BDF", "LSODA"])
def test_every_method_checks_arguments_before_solving(method, dense_output):
    """A script that mistypes an argument gets the same adsim error whichever
    method it picked, also where SciPy's own solve runs the call."""
    def solve(t_span=(0.0, 1.0), y0=(1.0,), **kwargs):
        return solve_ivp(decay, t_span, y0, method=method, dense_output=dense_output, **kwargs)
    with pytest.raises(adsim.InvalidArgument, match=r"t_span must be a pair \(t0, tf\)"):
        solve(t_span=1.0)
    with pytest.raises(adsim.InvalidArgumentValue, match=r"`y0` must be 1-dimensional"):
        solve(y0=[[1.0], [2.0]])
    with pytest.raises(adsim.InvalidArgumentValue, match=r"`t_eval` are not properly sorted"):
        solve(t_eval=[0.5, 0.2])
    with pytest.raises(adsim.InvalidArgument, match=r"'args' cannot be unpacked, got 3"):
        solve(args=3)
    result = solve(t_eval=[0.5, 1.0])          # and the valid call still solves
    assert np.allclose(result.y[0], np.exp(-0.5 * result.t), rtol=1e-2)


def _turns_nan(t, y, k):
    return -k * y * (np.nan if t > 0.5 else 1.0)


@pytest.mark.parametrize("method", ["RK23", "RK45", "DOP853", "Radau", "BDF"])
def test_a_right_hand_side_that_turns_nan_fails_as_scipys_does(method):
    """A NaN error estimate shrinks the step by the smallest factor, as
    SciPy's controllers (Python's max) take it, until the step is too small:
    status -1 where the NaN begins, plain and recorded (np.maximum would
    make the step size NaN and the integration run for ever). SciPy's own
    BDF raises in its LU instead; adsim's fails like the others."""
    got = solve_ivp(_turns_nan, (0.0, 1.0), np.array([1.0]), method=method, args=(1.0,))
    assert got.status == -1 and "step size" in got.message
    assert 0.3 < got.t[-1] <= 0.5
    if method != "BDF":
        want = scipy_solve_ivp(_turns_nan, (0.0, 1.0), np.array([1.0]),
                               method=method, args=(1.0,))
        assert (want.status, want.t[-1]) == (got.status, got.t[-1])

    def last(k):
        sol = solve_ivp(_turns_nan, (0.0, 1.0), np.array([1.0]), method=method, args=(k,))
        assert sol.status == -1
        return sol.y[0, -1]
    g = adsim.grad(last)(np.array(1.0))           # of the solution where it stopped
    t_end = got.t[-1]
    np.testing.assert_allclose(g, -t_end * np.exp(-t_end), rtol=1e-3)


@pytest.mark.parametrize("method", ["RK23", "RK45", "DOP853", "Radau", "BDF"])
def test_a_right_hand_side_nan_at_the_start_fails_at_once(method):
    """fun NaN at t0 makes the first step size NaN, where SciPy's solve runs
    for ever: adsim tries the smallest step, rejects it and fails with
    status -1 at t0."""
    def nan_rhs(t, y, k):
        return -k * y * np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = solve_ivp(nan_rhs, (0.0, 1.0), np.array([1.0]), method=method, args=(1.0,))
    assert got.status == -1 and got.t[-1] == 0.0
