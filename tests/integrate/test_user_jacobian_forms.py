"""jac= in the forms users write it (a function of ``(t, y, *args)``, a
closure, a bound method reading ``self.k`` set by the caller), through
SciPy's own ``solve_ivp`` name as user programs call it, for Radau and
BDF: the gradient against central differences and against the gradient
with adsim's own Jacobian, forward mode against reverse mode, the
Hessian-vector product against differences of the gradient, and a replay
at a new point that runs the recorded ``jac`` without calling it (it is
recorded into the step tapes like ``fun``)."""
import numpy as np
import pytest
import scipy.integrate

import adsim
from fdcheck import assert_close
from ivp_problems import robertson, robertson_jacobian

IMPLICIT = ("Radau", "BDF")
LOG_K = np.log([0.04, 3e7, 1e4])
Y0 = np.array([1.0, 0.0, 0.0])
T_END = 4.0
TOLERANCES = dict(rtol=1e-8, atol=1e-12)


class Kinetics:
    """Robertson's kinetics as a class: the caller sets the rate constants
    on ``self.k``; ``rhs`` and ``jac`` are bound methods."""

    def __init__(self):
        self.k = np.exp(LOG_K)

    def rhs(self, t, y):
        return robertson(t, y, self.k)

    def jac(self, t, y):
        return robertson_jacobian(t, y, self.k)


MODEL = Kinetics()


def _loss(y):
    return y[0, -1] + 1e4 * y[1, -1] + y[2, -1] ** 2


def by_function(log_k, method, with_jac, t_eval):
    sol = scipy.integrate.solve_ivp(robertson, (0.0, T_END), Y0, method=method,
                                    args=(np.exp(log_k),), t_eval=t_eval,
                                    jac=robertson_jacobian if with_jac else None, **TOLERANCES)
    return _loss(sol.y)


def by_closure(log_k, method, with_jac, t_eval):
    k = np.exp(log_k)

    def fun(t, y):
        return robertson(t, y, k)

    def jac(t, y):
        return robertson_jacobian(t, y, k)
    sol = scipy.integrate.solve_ivp(fun, (0.0, T_END), Y0, method=method, t_eval=t_eval,
                                    jac=jac if with_jac else None, **TOLERANCES)
    return _loss(sol.y)


def by_method(log_k, method, with_jac, t_eval):
    MODEL.k = np.exp(log_k)
    sol = scipy.integrate.solve_ivp(MODEL.rhs, (0.0, T_END), Y0, method=method, t_eval=t_eval,
                                    jac=MODEL.jac if with_jac else None, **TOLERANCES)
    return _loss(sol.y)


FORMS = {"function": by_function, "closure": by_closure, "bound method": by_method}


def _differences(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


@pytest.mark.parametrize("method", IMPLICIT)
@pytest.mark.parametrize("form", sorted(FORMS))
def test_gradient_with_user_jac(form, method):
    def f(lk, with_jac=True, t_eval=(T_END,)):
        return FORMS[form](lk, method, with_jac, t_eval)
    g = adsim.grad(f)(LOG_K)
    # the same steps and Newton matrices as with adsim's own Jacobian
    assert_close(g, adsim.grad(lambda lk: f(lk, False))(LOG_K), rtol=1e-9, atol=1e-14,
                 what="user jac vs adsim's Jacobian")
    assert_close(g, _differences(f, LOG_K), rtol=1e-5, atol=1e-9, what="central differences")
    v = np.array([0.3, -1.0, 0.5])
    _, tangent = adsim.jvp(f, (LOG_K,), (v,))
    assert tangent == pytest.approx(g @ v, rel=1e-10)
    # without t_eval every step is recorded in the enclosing tape: the same steps
    assert_close(adsim.grad(lambda lk: f(lk, t_eval=None))(LOG_K), g, rtol=1e-9, atol=1e-14,
                 what="every step recorded vs t_eval")


@pytest.mark.parametrize("method", IMPLICIT)
@pytest.mark.parametrize("form", ["bound method", "function"])
def test_hessian_vector_product_with_user_jac(form, method):
    def f(lk):
        return FORMS[form](lk, method, True, [T_END])
    v = np.array([1.0, 0.5, -0.3])
    hv = adsim.hvp(f, LOG_K, v)
    grad, eps = adsim.grad(f), 1e-5
    assert_close(hv, (grad(LOG_K + eps * v) - grad(LOG_K - eps * v)) / (2 * eps), rtol=1e-4,
                 atol=1e-8, what="hvp vs differences of the gradient")


class _Counted:
    """jac that counts its calls (kept apart from what the tape caches see:
    the replay below is of a tape recorded once, not of a cached function)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, t, y, k):
        self.calls += 1
        return robertson_jacobian(t, y, k)


@pytest.mark.parametrize("t_eval", [None, [T_END]], ids=["every step", "t_eval"])
@pytest.mark.parametrize("method", IMPLICIT)
def test_a_replay_does_not_call_jac(method, t_eval):
    jac = _Counted()

    def f(lk):
        sol = scipy.integrate.solve_ivp(robertson, (0.0, T_END), Y0, method=method,
                                        args=(np.exp(lk),), t_eval=t_eval, jac=jac, **TOLERANCES)
        return _loss(sol.y)
    tape = adsim.record(f, LOG_K)
    assert jac.calls > 0
    recorded = jac.calls
    x2 = LOG_K + np.array([1e-4, -2e-4, 1e-4])
    try:
        got = tape.gradient(x2)
    except adsim.BranchChanged:     # the steps differ at the new point: recorded afresh
        pytest.skip("the step sequence changed at the new point")
    assert jac.calls == recorded, "the replay called jac from Python"
    assert_close(got, adsim.grad(f)(x2), rtol=1e-12, atol=1e-300, what="replay at a new point")
