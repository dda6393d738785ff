"""adsim.integrate.solve_ivp computes what scipy.integrate.solve_ivp computes.

Called on plain arrays it runs the same arithmetic with NumPy, so steps and
values are SciPy's (the dense output differs in the last bit: SciPy
evaluates the outputs of a step together, adsim one by one). Inside a
recording the stages are computed by adsim's kernels, whose rounding
differs from BLAS's; the step-size controller amplifies such differences in
the error estimate by about 1/rtol, so recorded step times agree with
SciPy's only to that level, while outputs at fixed times ``t_eval`` agree
to rounding. The steps themselves (nfev) are the same.
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp
from ivp_problems import LORENZ, METHODS, PROBLEMS, VAN_DER_POL


def _both(problem, **options):
    kwargs = dict(args=problem["args"], **options)
    ours = solve_ivp(problem["fun"], problem["t_span"], problem["y0"], **kwargs)
    ref = scipy_solve_ivp(problem["fun"], problem["t_span"], problem["y0"], **kwargs)
    return ours, ref


def _same_result(ours, ref, rtol=1e-13):
    assert ours.status == ref.status and ours.message == ref.message
    assert ours.success == ref.success
    assert (ours.nfev, ours.njev, ours.nlu) == (ref.nfev, ref.njev, ref.nlu)
    np.testing.assert_array_equal(ours.t, ref.t)
    if isinstance(ref.y, list):             # SciPy's empty output is a list
        assert ref.y == [] and ours.y.shape == (ours.y.shape[0], 0)
        return
    assert ours.y.shape == ref.y.shape
    np.testing.assert_allclose(ours.y, ref.y, rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_plain_integration_is_scipys(name, method):
    problem = PROBLEMS[name]
    ours, ref = _both(problem, method=method, rtol=1e-6, atol=1e-9)
    _same_result(ours, ref, rtol=0)                   # every accepted step: bit for bit
    t0, tf = problem["t_span"]
    t_eval = np.linspace(t0, tf, 11)
    ours, ref = _both(problem, method=method, rtol=1e-6, atol=1e-9, t_eval=t_eval)
    _same_result(ours, ref)


@pytest.mark.parametrize("method", METHODS)
def test_backward_integration_with_step_bounds(method):
    def pendulum(t, y):
        return [y[1], -np.sin(y[0])]
    for options in (dict(t_eval=np.linspace(3, -1, 5)), dict(first_step=0.01, max_step=0.3),
                    dict(atol=np.array([1e-8, 1e-6]), rtol=1e-5)):
        ours = solve_ivp(pendulum, (3.0, -1.0), [1.0, 0.0], method=method, **options)
        ref = scipy_solve_ivp(pendulum, (3.0, -1.0), [1.0, 0.0], method=method, **options)
        _same_result(ours, ref)


@pytest.mark.parametrize("method", METHODS)
def test_failed_integration_reports_like_scipy(method):
    """y' = y^2 blows up at t = 1: the step size falls below the spacing of t."""
    t_eval = np.linspace(0, 2, 9)
    for options in ({}, dict(t_eval=t_eval)):
        ours = solve_ivp(lambda t, y: y ** 2, (0, 2), [1.0], method=method, **options)
        ref = scipy_solve_ivp(lambda t, y: y ** 2, (0, 2), [1.0], method=method, **options)
        assert ours.status == -1 and not ours.success
        _same_result(ours, ref, rtol=1e-13)


def test_scipy_method_classes_and_result_access():
    from scipy.integrate import DOP853
    ours = solve_ivp(LORENZ["fun"], (0, 1), LORENZ["y0"], method=DOP853, args=LORENZ["args"])
    ref = scipy_solve_ivp(LORENZ["fun"], (0, 1), LORENZ["y0"], method="DOP853",
                          args=LORENZ["args"])
    _same_result(ours, ref)
    assert ours["nfev"] == ours.nfev and set(ours) >= {"t", "y", "sol", "status", "message"}
    assert "nfev" in repr(ours)


def test_empty_interval_and_empty_state():
    for t_span, y0, t_eval in [((1.0, 1.0), [1.0, 0.0], None), ((1.0, 1.0), [1.0, 0.0], [1.0]),
                               ((0.0, 2.0), np.zeros(0), None)]:
        ours = solve_ivp(lambda t, y: -y, t_span, y0, t_eval=t_eval)
        ref = scipy_solve_ivp(lambda t, y: -y, t_span, y0, t_eval=t_eval)
        _same_result(ours, ref)


@pytest.mark.parametrize("method", METHODS)
def test_recorded_outputs_at_t_eval_are_scipys(method):
    """Outputs at fixed times do not feel the controller's amplified rounding."""
    problem = VAN_DER_POL
    t_eval = np.linspace(0.0, 8.0, 9)
    ref = scipy_solve_ivp(problem["fun"], problem["t_span"], problem["y0"], method=method,
                          args=problem["args"], t_eval=t_eval, rtol=1e-8, atol=1e-10)
    seen = {}

    def outputs(y0, mu):
        res = solve_ivp(problem["fun"], problem["t_span"], y0, method=method, args=(mu,),
                        t_eval=t_eval, rtol=1e-8, atol=1e-10)
        seen.update(nfev=res.nfev, status=res.status)
        return res.y
    tape = adsim.record(outputs, problem["y0"], *problem["args"])
    assert seen == dict(nfev=ref.nfev, status=0)
    np.testing.assert_allclose(tape.forward(problem["y0"], *problem["args"]), ref.y,
                               rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("method", METHODS)
def test_recorded_steps_are_scipys(method):
    """Without t_eval every step is an output: the same steps, at times that
    agree to the rounding of the error estimates, amplified by ~1/rtol."""
    problem = LORENZ
    ref = scipy_solve_ivp(problem["fun"], problem["t_span"], problem["y0"], method=method,
                          args=problem["args"])
    seen = {}

    def trajectory(p):
        res = solve_ivp(problem["fun"], problem["t_span"], problem["y0"], method=method,
                        args=(p,))
        seen.update(nfev=res.nfev, steps=res.t.shape[0])
        return np.concatenate([res.t, res.y.ravel()])
    tape = adsim.record(trajectory, *problem["args"])
    assert seen == dict(nfev=ref.nfev, steps=ref.t.size)
    np.testing.assert_allclose(tape.forward(*problem["args"]),
                               np.concatenate([ref.t, ref.y.ravel()]), rtol=1e-9, atol=1e-12)
