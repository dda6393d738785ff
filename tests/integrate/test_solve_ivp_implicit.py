"""Radau and BDF: SciPy's steps and the discrete adjoint of their Newton iterations.

SciPy approximates the Jacobian by differences unless given ``jac``; adsim
computes it exactly. The references below give SciPy the exact Jacobian,
so both run the same iteration: the counts (nfev, njev, nlu) agree and the
values agree to rounding (amplified by the step-size controller for the
step times; not at all for the outputs at fixed times).
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp
from ivp_problems import heat, heat_problem, robertson, robertson_jacobian, van_der_pol

IMPLICIT = ("Radau", "BDF")


def van_der_pol_jacobian(t, y, mu):
    return np.array([[0.0, 1.0], [-2 * mu[0] * y[0] * y[1] - 1, mu[0] * (1 - y[0] ** 2)]])


K = np.array([0.04, 3e7, 1e4])
Y0 = np.array([1.0, 0.0, 0.0])
T_OBS = np.array([0.4, 4.0, 40.0])
U0, KAPPA, DX = heat_problem(12)
CASES = {
    "robertson": dict(fun=robertson, jac=robertson_jacobian, t_span=(0.0, 40.0), y0=Y0,
                      args=(K,), rtol=1e-6, atol=1e-10),
    "van_der_pol": dict(fun=van_der_pol, jac=van_der_pol_jacobian, t_span=(0.0, 20.0),
                        y0=np.array([2.0, 0.0]), args=(np.array([50.0]),), rtol=1e-5,
                        atol=1e-8),
}


def _solve(solver, case, **options):
    kwargs = {k: v for k, v in case.items() if k not in ("fun", "t_span", "y0")}
    kwargs.update(options)
    return solver(case["fun"], case["t_span"], case["y0"], **kwargs)


@pytest.mark.parametrize("method", IMPLICIT)
@pytest.mark.parametrize("name", sorted(CASES))
def test_plain_integration_takes_scipys_steps(name, method):
    case = CASES[name]
    t0, tf = case["t_span"]
    t_eval = np.linspace(t0, tf, 7)
    for options in (dict(t_eval=t_eval), {}):
        ref = _solve(scipy_solve_ivp, case, method=method, **options)
        ours = _solve(solve_ivp, dict(case, jac=None), method=method, **options)
        assert (ours.nfev, ours.njev, ours.nlu, ours.status) == \
            (ref.nfev, ref.njev, ref.nlu, ref.status)
        assert ours.t.shape == ref.t.shape
        if "t_eval" in options:
            np.testing.assert_allclose(ours.y, ref.y, rtol=1e-9, atol=1e-12)
        else:
            np.testing.assert_allclose(ours.t, ref.t, rtol=1e-6, atol=0)


@pytest.mark.parametrize("method", IMPLICIT)
def test_user_jacobians_as_scipy(method):
    """jac= as a function (with args) or a constant matrix, as in SciPy."""
    n = U0.size
    lap = (np.eye(n, k=1) - 2 * np.eye(n) + np.eye(n, k=-1)) / DX ** 2

    def linear_heat(t, u, kappa):
        return kappa * (lap @ u)
    constant = KAPPA[:, None] * lap
    for fun, jac in ((robertson, robertson_jacobian), (linear_heat, constant)):
        args = (K,) if fun is robertson else (KAPPA,)
        y0 = Y0 if fun is robertson else U0
        ref = scipy_solve_ivp(fun, (0.0, 2.0), y0, method=method, args=args, jac=jac,
                              t_eval=[1.0, 2.0], rtol=1e-6, atol=1e-10)
        ours = solve_ivp(fun, (0.0, 2.0), y0, method=method, args=args, jac=jac,
                         t_eval=[1.0, 2.0], rtol=1e-6, atol=1e-10)
        assert (ours.nfev, ours.njev, ours.nlu) == (ref.nfev, ref.njev, ref.nlu)
        np.testing.assert_allclose(ours.y, ref.y, rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="shape"):
        solve_ivp(robertson, (0.0, 1.0), Y0, method=method, args=(K,), jac=np.eye(2))


def weighted(log_k, y0, method, **options):
    res = solve_ivp(robertson, (0.0, 40.0), y0, method=method, t_eval=T_OBS,
                    args=(np.exp(log_k),), rtol=1e-8, atol=1e-12, **options)
    return np.sum(res.y[0] + 1e4 * res.y[1] + res.y[2] ** 2)


@pytest.mark.parametrize("method", IMPLICIT)
def test_gradient_against_differences_and_modes(method):
    """Central differences in the rates and the dominant initial value (the
    others move the stiff transient, where a perturbation of 1e-6 flips
    Newton and step decisions: differences of the solver are not smooth
    there, while forward and reverse mode agree to rounding)."""
    log_k = np.log(K)
    g_k, g_y0 = adsim.grad(lambda lk, y0: weighted(lk, y0, method), argnums=(0, 1))(log_k, Y0)
    eps = 1e-6
    for i in range(3):
        e = np.zeros(3)
        e[i] = eps
        fd = (weighted(log_k + e, Y0, method) - weighted(log_k - e, Y0, method)) / (2 * eps)
        assert g_k[i] == pytest.approx(fd, rel=1e-5, abs=1e-9)
    e = np.array([eps, 0.0, 0.0])
    fd = (weighted(log_k, Y0 + e, method) - weighted(log_k, Y0 - e, method)) / (2 * eps)
    assert g_y0[0] == pytest.approx(fd, rel=1e-6)
    v, w = np.array([0.3, -1.0, 0.5]), np.array([0.2, 0.7, -0.4])
    _, tangent = adsim.jvp(lambda lk, y0: weighted(lk, y0, method), (log_k, Y0), (v, w))
    assert tangent == pytest.approx(g_k @ v + g_y0 @ w, rel=1e-10)


@pytest.mark.parametrize("method", IMPLICIT)
def test_gradient_against_forward_sensitivities(method):
    """d y(t_j) / d log k from the continuous sensitivity equations (SciPy,
    tight tolerance): the discrete adjoint agrees to the integration error."""
    jac = adsim.jacobian(lambda y, k: np.array(robertson(0.0, y, k)), argnums=(0, 1))

    def augmented(t, w):
        y, S = w[:3], w[3:].reshape(3, 3)
        f_y, f_k = jac(y, K)
        return np.concatenate([robertson(t, y, K), (f_y @ S + f_k * K).ravel()])
    ref = scipy_solve_ivp(augmented, (0.0, 40.0), np.concatenate([Y0, np.zeros(9)]),
                          method="Radau", t_eval=T_OBS, rtol=1e-11, atol=1e-14)
    y, S = ref.y[:3], ref.y[3:].reshape(3, 3, -1)
    dL_dy = np.stack([np.ones_like(y[0]), 1e4 * np.ones_like(y[1]), 2 * y[2]])
    expected = np.einsum("ik,ijk->j", dL_dy, S)
    g = adsim.grad(lambda lk: weighted(lk, Y0, method))(np.log(K))
    np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-4 * np.max(np.abs(expected)))


@pytest.mark.parametrize("method", IMPLICIT)
def test_hessian_vector_products_with_either_jacobian(method):
    """With jac= written in NumPy the Newton matrices are recorded like fun;
    with adsim's Jacobian their derivatives are third derivatives of fun."""
    log_k, v = np.log(K), np.array([1.0, 0.5, -0.3])

    def f(lk):
        return weighted(lk, Y0, method, jac=robertson_jacobian)
    hv = adsim.hvp(f, log_k, v)
    eps = 1e-5
    grad = adsim.grad(f)
    np.testing.assert_allclose(hv, (grad(log_k + eps * v) - grad(log_k - eps * v)) / (2 * eps),
                               rtol=1e-4, atol=1e-8)
    np.testing.assert_allclose(grad(log_k), adsim.grad(lambda lk: weighted(lk, Y0, method))(log_k),
                               rtol=1e-9)
    # with adsim's Jacobian the Newton matrices are the same: so are the
    # Hessian-vector products (third derivatives of fun, recorded)
    np.testing.assert_allclose(adsim.hvp(lambda lk: weighted(lk, Y0, method), log_k, v), hv,
                               rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("method", IMPLICIT)
def test_method_of_lines_outputs_recorded(method):
    """A heat equation by the method of lines: recorded outputs are SciPy's."""
    ref = scipy_solve_ivp(heat, (0.0, 0.5), U0, method=method, args=(KAPPA, DX),
                          t_eval=[0.25, 0.5], rtol=1e-6, atol=1e-9,
                          jac=adsim.jacobian(lambda t, u, k, dx: heat(t, u, k, dx), argnums=1))
    tape = adsim.record(lambda u0: solve_ivp(heat, (0.0, 0.5), u0, method=method,
                                             args=(KAPPA, DX), t_eval=[0.25, 0.5], rtol=1e-6,
                                             atol=1e-9).y, U0)
    np.testing.assert_allclose(tape.forward(U0), ref.y, rtol=1e-10, atol=1e-12)
