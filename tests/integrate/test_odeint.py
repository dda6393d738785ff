"""scipy.integrate.odeint inside adsim recordings (adsim/integrate/_odeint.py):
SciPy's values to rounding (SciPy's odeint runs on adsim's recording of
func, whose arithmetic may round otherwise than the Python function's, a
difference LSODA's step control amplifies a little), and the derivatives of the exact solution to
about the tolerance, checked against closed forms, against forward
sensitivity equations written out by hand and solved by SciPy at rtol 1e-12,
and against central differences of SciPy's odeint at rtol 1e-11."""
import warnings

import numpy as np
import pytest
import scipy.integrate
from scipy.integrate import odeint

import adsim

T_DECAY = np.linspace(0.0, 2.0, 6)
Y0 = np.array([1.0, 2.0])


def relative_error(got, want):
    got, want = np.ravel(got), np.ravel(want)
    return np.max(np.abs(got - want)) / np.max(np.abs(want))


def central(f, x, h=1e-4):
    """Central differences of f at x, step h relative to each entry."""
    x = np.asarray(x, dtype=float)
    out = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h * max(1.0, abs(x.flat[i]))
        e = e.reshape(x.shape)
        out.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * e.flat[i]))
    return np.moveaxis(np.array(out), 0, -1).reshape(np.shape(f(x)) + x.shape)


# ---------------------------------------------------------------- the problems

def decay(y, t, k):
    return -k * y


def lotka_volterra(z, t, a, b, c, d):
    x, y = z
    return [a * x - b * x * y, -c * y + d * x * y]


def lotka_volterra_sensitivities(w, t, a, b, c, d):
    """(z, dz/d(z0, a, b, c, d)): S' = f_z S + [0 | f_p]."""
    x, y = w[:2]
    S = w[2:].reshape(2, 6)
    fz = np.array([[a - b * y, -b * x], [d * y, -c + d * x]])
    fp = np.array([[x, -x * y, 0.0, 0.0], [0.0, 0.0, -y, x * y]])
    return np.concatenate([lotka_volterra(w[:2], t, a, b, c, d),
                           (fz @ S + np.hstack([np.zeros((2, 2)), fp])).ravel()])


def robertson(y, t, k1, k2, k3):
    y1, y2, y3 = y
    return [-k1 * y1 + k3 * y2 * y3, k1 * y1 - k2 * y2 ** 2 - k3 * y2 * y3, k2 * y2 ** 2]


def robertson_sensitivities(w, t, k1, k2, k3):
    """(y, dy/d(y0, log k)), the rates as exp of their logs."""
    y1, y2, y3 = w[:3]
    S = w[3:].reshape(3, 6)
    fy = np.array([[-k1, k3 * y3, k3 * y2],
                   [k1, -2 * k2 * y2 - k3 * y3, -k3 * y2],
                   [0.0, 2 * k2 * y2, 0.0]])
    flog = np.array([[-y1, 0.0, y2 * y3], [y1, -y2 ** 2, -y2 * y3], [0.0, y2 ** 2, 0.0]]) * \
        np.array([k1, k2, k3])
    return np.concatenate([robertson(w[:3], t, k1, k2, k3),
                           (fy @ S + np.hstack([np.zeros((3, 3)), flog])).ravel()])


LV_T = np.linspace(0.0, 15.0, 31)
LV_Z0 = np.array([10.0, 5.0])
LV_P = np.array([1.0, 0.1, 1.5, 0.075])
ROB_T = np.concatenate([[0.0], np.logspace(-5, 5, 21)])
ROB_Y0 = np.array([1.0, 0.0, 0.0])
ROB_LOGK = np.log([0.04, 3e7, 1e4])
ROB_TOL = dict(rtol=1e-8, atol=[1e-10, 1e-14, 1e-10])


def reference_jacobian(sensitivities, y0, t, args, inputs):
    """d outputs / d inputs (len(t), n, inputs) from the sensitivity
    equations, solved by SciPy's odeint at rtol 1e-12."""
    n = y0.size
    w0 = np.concatenate([y0, np.hstack([np.eye(n), np.zeros((n, inputs - n))]).ravel()])
    W = odeint(sensitivities, w0, t, args=args, rtol=1e-12, atol=1e-16, mxstep=100000)
    return W[:, n:].reshape(len(t), n, inputs)


# ---------------------------------------------------------------- values

def test_values_are_scipys_to_rounding():
    def outputs(z0, p):
        return odeint(lotka_volterra, z0, LV_T, args=tuple(p))
    tape = adsim.record(outputs, LV_Z0, LV_P)
    close = dict(rtol=1e-12, atol=0)      # SciPy's LSODA on the recording of func
    np.testing.assert_allclose(tape.forward(LV_Z0, LV_P), odeint(lotka_volterra, LV_Z0, LV_T,
                                                                 args=tuple(LV_P)), **close)
    other = LV_P * 1.01                  # a replay at another point: SciPy's numbers again
    np.testing.assert_allclose(tape.forward(LV_Z0, other), odeint(lotka_volterra, LV_Z0, LV_T,
                                                                  args=tuple(other)), **close)
    value, _ = adsim.value_and_grad(lambda p: outputs(LV_Z0, p)[-1, 0])(LV_P)
    np.testing.assert_allclose(value, odeint(lotka_volterra, LV_Z0, LV_T,
                                             args=tuple(LV_P))[-1, 0], **close)


def test_full_output_and_tfirst():
    seen = {}

    def loss(k, tfirst):
        if tfirst:
            y, info = odeint(lambda t, y, k: decay(y, t, k), Y0, T_DECAY, args=(k,), tfirst=True,
                             full_output=True)
        else:
            y, info = odeint(decay, Y0, T_DECAY, args=(k,), full_output=True)
        seen[tfirst] = info
        return np.sum(y ** 2)
    k = np.array(0.7)
    g_first, g_second = (adsim.grad(loss)(k, flag) for flag in (True, False))
    assert g_first == g_second
    _, want = odeint(decay, Y0, T_DECAY, args=(0.7,), full_output=True)
    for info in seen.values():
        assert info["message"] == want["message"] == "Integration successful."
        np.testing.assert_array_equal(info["nst"], want["nst"])
    y = Y0 * np.exp(-0.7 * T_DECAY[:, None])
    np.testing.assert_allclose(g_first, np.sum(-2 * T_DECAY[:, None] * y ** 2), rtol=3e-7)


# ---------------------------------------------------------------- derivatives

# odeint's derivatives are adsim's Radau's at odeint's tolerances: within a
# few hundred times rtol of the exact ones (49 and 180 times here)
RADAU = 300


def test_exponential_decay_against_the_exact_solution():
    """y = y0 exp(-k (t - t0)): derivatives in y0, k (in args), and every
    time, t0 through the initial condition."""
    def outputs(y0, k, t, **tol):
        return odeint(decay, y0, t, args=(k,), **tol)
    k = np.array(0.7)
    J = adsim.jacobian(outputs, argnums=(0, 1, 2))(Y0, k, T_DECAY)
    E = np.exp(-0.7 * (T_DECAY - T_DECAY[0]))[:, None]
    y = Y0 * E
    dt = -0.7 * y                        # dy_j / dt_j; dy_j / dt_0 = -dt_j for j >= 1
    want_t = np.zeros((6, 2, 6))
    for j in range(1, 6):
        want_t[j, :, j] = dt[j]
        want_t[j, :, 0] = -dt[j]
    want = (E[:, :, None] * np.eye(2), -(T_DECAY - T_DECAY[0])[:, None] * y, want_t)
    for got, exact in zip(J, want):
        assert relative_error(got, exact) < RADAU * 1.49012e-8     # odeint's default rtol
    tight = adsim.jacobian(lambda y0, k, t: outputs(y0, k, t, rtol=1e-11, atol=1e-13),
                           argnums=(0, 1, 2))(Y0, k, T_DECAY)
    for got, exact in zip(tight, want):
        assert relative_error(got, exact) < RADAU * 1e-11


def test_lotka_volterra_against_sensitivities_and_differences():
    W = np.random.default_rng(0).standard_normal((31, 2))

    def loss(z0, p, **tol):
        return np.sum(W * odeint(lotka_volterra, z0, LV_T, args=tuple(p), **tol))
    J = reference_jacobian(lotka_volterra_sensitivities, LV_Z0, LV_T, tuple(LV_P), 6)
    want = np.einsum("jn,jni->i", W, J)
    for tol, bound in ((None, 3e-7), (1e-10, 2e-9)):
        options = {} if tol is None else dict(rtol=tol, atol=tol)
        g = adsim.grad(lambda z0, p: loss(z0, p, **options), argnums=(0, 1))(LV_Z0, LV_P)
        assert relative_error(np.concatenate(g), want) < bound
    differences = np.concatenate([
        central(lambda z: loss(z, LV_P, rtol=1e-11, atol=1e-11), LV_Z0),
        central(lambda p: loss(LV_Z0, p, rtol=1e-11, atol=1e-11), LV_P)])
    assert relative_error(differences, want) < 3e-6     # the differences' own error

    def over_times(t, **tol):
        return np.sum(W * odeint(lotka_volterra, LV_Z0, t, args=tuple(LV_P), **tol))
    g_times = adsim.grad(over_times)(LV_T)
    differences = central(lambda t: over_times(t, rtol=1e-11, atol=1e-11), LV_T, h=1e-5)
    assert relative_error(g_times, differences) < 3e-6


def test_robertson_stiff_kinetics():
    """The classic stiff problem, rates in log space: reverse and forward
    mode against the sensitivity equations."""
    W = np.random.default_rng(1).standard_normal((22, 3)) * np.array([1.0, 1e4, 1.0])

    def loss(y0, logk):
        return np.sum(W * odeint(robertson, y0, ROB_T, args=tuple(np.exp(logk)), **ROB_TOL))
    J = reference_jacobian(robertson_sensitivities, ROB_Y0, ROB_T, tuple(np.exp(ROB_LOGK)), 6)
    want = np.einsum("jn,jni->i", W, J)
    g = np.concatenate(adsim.grad(loss, argnums=(0, 1))(ROB_Y0, ROB_LOGK))
    assert relative_error(g, want) < 1e-7
    assert np.all(np.abs(g[3:] - want[3:]) < 1e-6 * np.abs(want[3:]))
    v = np.random.default_rng(2).standard_normal(6)
    _, jv = adsim.jvp(loss, (ROB_Y0, ROB_LOGK), (v[:3], v[3:]))
    # relative to the terms summed (the weights on y2, 1e4, make them cancel)
    assert abs(jv - want @ v) < 2e-6 * np.einsum("jn,jni,i->", np.abs(W), np.abs(J), np.abs(v))


def test_forward_and_reverse_mode_agree():
    """<w, J v> by sensitivities against <J^T w, v> by the adjoint: equal to
    about the tolerance (two different approximations of one derivative)."""
    def outputs(z0, p, t):
        return odeint(lotka_volterra, z0, t, args=tuple(p), rtol=1e-10, atol=1e-10)
    rng = np.random.default_rng(3)
    t = LV_T[:11]
    w = rng.standard_normal((11, 2))
    v = (rng.standard_normal(2), rng.standard_normal(4), rng.standard_normal(11))
    _, jv = adsim.jvp(outputs, (LV_Z0, LV_P, t), v)
    _, wJ = adsim.vjp(outputs, (LV_Z0, LV_P, t), w)
    lhs, rhs = np.sum(w * jv), sum(np.dot(a, b) for a, b in zip(wJ, v))
    assert abs(lhs - rhs) < 1e-8 * abs(lhs)
    forward = adsim.jacobian(lambda p: outputs(LV_Z0, p, t))(LV_P)
    reverse = adsim.jacobian(lambda p: outputs(LV_Z0, p, t), mode="reverse")(LV_P)
    assert relative_error(reverse, forward) < 1e-8


def test_closure_values_and_parameter_dicts():
    k = np.array([0.7, 0.3])
    exact = -np.sum(T_DECAY[:, None] * Y0 * np.exp(-k * T_DECAY[:, None]), axis=0)

    def from_closure(k):
        return np.sum(odeint(lambda y, t: -k * y, Y0, T_DECAY))

    def from_dict(k):
        return np.sum(odeint(lambda y, t, p: -p["k"] * y, Y0, T_DECAY, args=({"k": k},)))
    for f in (from_closure, from_dict):
        np.testing.assert_allclose(adsim.grad(f)(k), exact, rtol=2e-7)


def test_branches_of_func_are_recorded_again():
    """A rate switched at t = 1 (`if t < 1`): the recording of func is
    redone where the branch changes; the derivative is the exact one."""
    def loss(k):
        return np.sum(odeint(lambda y, t: -k * y if t < 1.0 else -2.0 * k * y, Y0, T_DECAY,
                             tcrit=[1.0], rtol=1e-10, atol=1e-10))

    def exact(k):
        s = T_DECAY
        return np.sum(Y0) * np.sum(np.where(s < 1, np.exp(-k * s), np.exp(-k - 2 * k * (s - 1))))
    np.testing.assert_allclose(adsim.grad(loss)(np.array(0.7)),
                               (exact(0.7 + 1e-6) - exact(0.7 - 1e-6)) / 2e-6, rtol=1e-8)


# ---------------------------------------------------------------- as scientists write it

def sir(y, t, N, beta, gamma):
    S, I, R = y
    dSdt = -beta * S * I / N
    dIdt = beta * S * I / N - gamma * I
    dRdt = gamma * I
    return dSdt, dIdt, dRdt


def sir_into_array(y, t, N, beta, gamma):
    """The same model written into an array made in func."""
    dydt = np.zeros(3)
    S, I, R = y
    dydt[0] = -beta * S * I / N
    dydt[1] = beta * S * I / N - gamma * I
    dydt[2] = gamma * I
    return dydt


def test_sir_model_fit():
    """The SIR model as the SciPy cookbook writes it, fitted to noisy
    infection counts with SciPy's minimize and adsim's gradient."""
    N, t = 1000.0, np.linspace(0.0, 60.0, 61)
    y0 = 999.0, 1.0, 0.0
    truth = np.array([0.2, 0.1])
    rng = np.random.default_rng(4)
    data = odeint(sir, y0, t, args=(N, *truth))[:, 1] * (1 + 0.02 * rng.standard_normal(61))

    def misfit(rates):
        beta, gamma = rates
        S, I, R = odeint(sir, y0, t, args=(N, beta, gamma)).T
        return np.sum((I - data) ** 2) / 1e4
    start = np.array([0.25, 0.12])
    g = adsim.grad(misfit)(start)
    differences = central(lambda r: np.sum((odeint(sir, y0, t, args=(N, *r), rtol=1e-11,
                                                   atol=1e-11)[:, 1] - data) ** 2) / 1e4, start,
                          h=1e-5)
    assert relative_error(g, differences) < 1e-6
    def misfit_into_array(rates):
        return np.sum((odeint(sir_into_array, y0, t, args=(N, *rates))[:, 1] - data) ** 2) / 1e4
    np.testing.assert_array_equal(adsim.grad(misfit_into_array)(start), g)
    fit = scipy.optimize.minimize(adsim.value_and_grad(misfit), start, jac=True, method="BFGS")
    assert fit.success
    np.testing.assert_allclose(fit.x, truth, rtol=0.02)


# ---------------------------------------------------------------- refused

def test_second_derivatives_against_the_exact_solution():
    """Second derivatives are Radau's (odeint's derivatives come from adsim's
    Radau): the hvp, the Hessian and a derivative of a derivative agree with
    the exact solution's second derivative in k."""
    def loss(k):
        return np.sum(odeint(decay, Y0, T_DECAY, args=(k,), rtol=1e-10, atol=1e-12))
    k = np.array(0.7)
    s = T_DECAY - T_DECAY[0]
    exact = np.sum(Y0[None, :] * (s ** 2 * np.exp(-0.7 * s))[:, None])
    assert abs(adsim.hvp(loss, k, np.array(1.0)) - exact) < 1e-7 * abs(exact)
    assert abs(adsim.hessian(loss)(k) - exact) < 1e-7 * abs(exact)
    grad = adsim.grad(loss)
    assert abs(adsim.grad(lambda k: grad(k))(k) - exact) < 1e-7 * abs(exact)


def test_options_must_be_plain():
    for name in ("rtol", "atol", "hmax", "h0", "hmin", "tcrit"):
        def loss(x):
            return np.sum(odeint(decay, Y0, T_DECAY, args=(0.5,), **{name: x}))
        with pytest.raises(adsim.UnsupportedOperation, match=f"{name}="):
            adsim.grad(loss)(np.array(0.3))


def test_a_failed_integration_has_no_derivative():
    def loss(k):
        return np.sum(odeint(decay, Y0, np.linspace(0.0, 100.0, 3), args=(k,), mxstep=3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.integrate.ODEintWarning)
        with pytest.raises(adsim.UndefinedDerivative, match="did not complete"):
            adsim.grad(loss)(np.array(0.7))


def test_explicit_namespace_with_interposition_off():
    """adsim.scipy.integrate.odeint needs no change to SciPy; a final time
    given in a list with a plain start is differentiated too."""
    from adsim.scipy.integrate import odeint as explicit_odeint

    def loss(k, T, solver):
        return np.sum(solver(decay, Y0, [0.0, T], args=(k,))[-1])
    args = (np.array(0.7), np.array(1.5))
    hooked = adsim.grad(loss, argnums=(0, 1))(*args, odeint)
    with adsim.interposition(False):
        explicit = adsim.grad(loss, argnums=(0, 1))(*args, explicit_odeint)
    np.testing.assert_array_equal(hooked, explicit)
    exact = np.sum(Y0) * np.exp(-0.7 * 1.5) * np.array([-1.5, -0.7])
    np.testing.assert_allclose(hooked, exact, rtol=2e-7)


def test_plain_calls_stay_scipys():
    def f(y0):
        plain = odeint(decay, [1.0], [0.0, 1.0], args=(0.5,))
        assert type(plain) is np.ndarray
        return np.sum(y0) * plain[-1, 0]
    assert adsim.grad(f)(Y0)[0] == odeint(decay, [1.0], [0.0, 1.0], args=(0.5,))[-1, 0]


def test_van_der_pol_across_its_first_jump():
    """A relaxation oscillator (mu = 5) sampled before and after its first
    jump, where LSODA's own adjoint and sensitivities were 14 to 25 % off at
    rtol 1e-7: against adsim's Radau at a tolerance a hundred times tighter."""
    t = np.array([0.0, 1.5, 3.5, 4.5, 6.0])           # the jump is near t = 5.2

    def vdp(y, t, mu):
        return [y[1], mu * (1.0 - y[0] ** 2) * y[1] - y[0]]

    def x_odeint(p):
        return odeint(vdp, p[:2], t, args=(p[2],), rtol=1e-7, atol=1e-9)[:, 0]

    def x_radau(p):
        return adsim.integrate.solve_ivp(lambda s, y, mu: vdp(y, s, mu), (0.0, 6.0), p[:2],
                                         method="Radau", t_eval=t, args=(p[2],),
                                         rtol=1e-9, atol=1e-11).y[0]

    p = np.array([2.0, 0.0, 5.0])
    J, want = adsim.jacobian(x_odeint)(p), adsim.jacobian(x_radau)(p)
    assert relative_error(J, want) < 1e-4
    np.testing.assert_array_equal(x_odeint(p), scipy.integrate.odeint(
        vdp, p[:2], t, args=(p[2],), rtol=1e-7, atol=1e-9)[:, 0])
