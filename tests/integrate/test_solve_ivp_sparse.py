"""Radau and BDF with sparse Newton matrices: the automatic choice,
``jac_sparsity``, SciPy's steps on a method-of-lines problem, and exact
derivatives (against the dense path and against differences of the solver).
"""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp
from adsim.integrate._implicit import SPARSE_MIN_SIZE, JacobianSource
from adsim.integrate._rhs import RightHandSide
from adsim.integrate._sparse_jacobian import ColoredJacobian

IMPLICIT = ("Radau", "BDF")
P0 = np.array([1.0, 3.0, 0.02])       # a, b, diffusion


def brusselator(t, y, a, b, alpha):
    """1-D Brusselator with diffusion (Hairer & Wanner II, IV.1): u = y[:N],
    v = y[N:], u = 1 and v = 3 at both ends of [0, 1]."""
    N = y.shape[0] // 2
    u, v = y[:N], y[N:]
    k = alpha * (N + 1) ** 2
    up = np.concatenate([np.ones(1), u, np.ones(1)])
    vp = np.concatenate([3 * np.ones(1), v, 3 * np.ones(1)])
    uuv = u * u * v
    return np.concatenate([a + uuv - (b + 1) * u + k * (up[2:] - 2 * u + up[:-2]),
                           b * u - uuv + k * (vp[2:] - 2 * v + vp[:-2])])


def initial(N):
    x = np.arange(1, N + 1) / (N + 1)
    return np.concatenate([1 + np.sin(2 * np.pi * x), 3 * np.ones(N)])


def banded(N):
    """The pattern: tridiagonal blocks for u and v, coupled on the diagonal."""
    T = sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(N, N))
    I = sp.eye_array(N)
    return sp.csc_array(sp.block_array([[T, I], [I, T]]))


def _source(fun, y0, args, sparsity=None):
    source = JacobianSource(RightHandSide(fun, y0.size), None, y0.size, sparsity)
    source(0.0, y0, args)
    return source


def test_the_jacobian_is_sparse_for_large_sparse_systems_only():
    big, small = 60, SPARSE_MIN_SIZE // 4 - 1           # 120 and fewer than 50 equations
    assert _source(brusselator, initial(big), tuple(P0)).sparse is not None
    assert _source(brusselator, initial(small), tuple(P0)).sparse is None
    coupled = _source(lambda t, y: y * np.sum(y), np.ones(2 * big), ())
    assert coupled.sparse is None                       # a dense Jacobian stays dense
    forced = _source(brusselator, initial(small), tuple(P0), banded(small))
    assert forced.sparse is not None and forced.linear.nnz == banded(small).nnz


@pytest.mark.parametrize("method", IMPLICIT)
def test_scipys_steps_on_a_method_of_lines_problem(method):
    """300 equations: adsim's sparse Jacobian (chosen by itself) against SciPy
    given the exact sparse Jacobian, and given only ``jac_sparsity`` (finite
    differences by column groups): the same counts, the same steps."""
    N = 150
    y0, args = initial(N), tuple(P0)
    t_eval = np.linspace(0.0, 4.0, 5)
    options = dict(method=method, args=args, rtol=1e-6, atol=1e-8)
    jac = adsim.sparse_jacobian_plan(brusselator, 0.0, y0, *args, argnum=1).as_ivp_jac()
    for extra in (dict(t_eval=t_eval), {}):
        ours = solve_ivp(brusselator, (0.0, 4.0), y0, **options, **extra)
        for ref in (scipy_solve_ivp(brusselator, (0.0, 4.0), y0, jac=jac, **options, **extra),
                    scipy_solve_ivp(brusselator, (0.0, 4.0), y0, jac_sparsity=banded(N),
                                    **options, **extra)):
            assert (ours.nfev, ours.njev, ours.nlu, ours.status) == \
                (ref.nfev, ref.njev, ref.nlu, ref.status)
            assert ours.t.shape == ref.t.shape
            # step times: rounding (and SciPy's differences) amplified by the step-size
            # controller; outputs at fixed times: to rounding
            tight = "t_eval" in extra
            np.testing.assert_allclose(ours.t, ref.t, rtol=1e-12 if tight else 1e-6, atol=0)
            np.testing.assert_allclose(ours.y, ref.y, rtol=1e-12 if tight else 1e-6,
                                       atol=1e-14 if tight else 1e-9)


def loss(y0, p, method, **options):
    res = solve_ivp(brusselator, (0.0, 2.0), y0, method=method, args=(p[0], p[1], p[2]),
                    t_eval=[1.0, 2.0], rtol=1e-6, atol=1e-8, **options)
    w = np.linspace(0.5, 1.5, y0.size)
    return np.sum(w * res.y[:, 1] ** 2) + np.sum(res.y[:, 0])


@pytest.mark.parametrize("method", IMPLICIT)
def test_sparse_and_dense_derivatives_agree_and_match_differences(method):
    """30 equations: dense by default, sparse with ``jac_sparsity``. The
    gradients agree to rounding; both match central differences of the
    solver in the parameters; forward mode agrees with reverse mode."""
    N = 15
    y0 = initial(N)
    dense = adsim.grad(lambda p: loss(y0, p, method))(P0)
    sparse_loss = adsim.value_and_grad(
        lambda y0, p: loss(y0, p, method, jac_sparsity=banded(N)), argnums=(0, 1))
    _, (g_y0, g_p) = sparse_loss(y0, P0)
    np.testing.assert_allclose(g_p, dense, rtol=1e-9)
    eps = 1e-6
    fd = [(loss(y0, P0 + eps * e, method, jac_sparsity=banded(N))
           - loss(y0, P0 - eps * e, method, jac_sparsity=banded(N))) / (2 * eps)
          for e in np.eye(3)]
    np.testing.assert_allclose(g_p, fd, rtol=1e-6)
    v, dp = np.random.default_rng(3).standard_normal(y0.size), np.array([0.1, 0.2, 0.3])
    _, tangent = adsim.jvp(lambda y0, p: loss(y0, p, method, jac_sparsity=banded(N)),
                           (y0, P0), (v, dp))
    assert tangent == pytest.approx(g_y0 @ v + g_p @ dp, rel=1e-10)

    def outputs(p):
        return solve_ivp(brusselator, (0.0, 2.0), y0, method=method, args=(p[0], p[1], p[2]),
                         t_eval=[1.0, 2.0], rtol=1e-6, atol=1e-8, jac_sparsity=banded(N)).y
    out, _ = adsim.jvp(outputs, P0, dp)
    weight = np.stack([np.ones(y0.size), 2 * np.linspace(0.5, 1.5, y0.size) * out[:, 1]], 1)
    _, back = adsim.vjp(outputs, P0, weight)
    np.testing.assert_allclose(back, g_p, rtol=1e-10)


@pytest.mark.parametrize("method", IMPLICIT)
def test_a_pattern_that_misses_nonzeros_changes_the_steps_not_the_derivatives(method):
    """``jac_sparsity`` without the coupling of u and v: the Newton matrices
    leave those entries out (more iterations, other steps), the solution
    stays within the tolerance, and so do the derivatives: against central
    differences of the same solver (which also differentiate its step-size
    controller, whose sizes the gradient holds fixed) and against the
    gradient with the full pattern."""
    N = 20
    y0 = initial(N)
    missing = sp.csc_array(sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1],
                                          shape=(2 * N, 2 * N)))
    full = solve_ivp(brusselator, (0.0, 2.0), y0, method=method, args=tuple(P0),
                     jac_sparsity=banded(N), rtol=1e-6, atol=1e-8)
    part = solve_ivp(brusselator, (0.0, 2.0), y0, method=method, args=tuple(P0),
                     jac_sparsity=missing, rtol=1e-6, atol=1e-8)
    assert part.nfev != full.nfev
    np.testing.assert_allclose(part.y[:, -1], full.y[:, -1], rtol=1e-4)
    g = adsim.grad(lambda p: loss(y0, p, method, jac_sparsity=missing))(P0)
    eps = 1e-6
    fd = [(loss(y0, P0 + eps * e, method, jac_sparsity=missing)
           - loss(y0, P0 - eps * e, method, jac_sparsity=missing)) / (2 * eps)
          for e in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-5)
    g_full = adsim.grad(lambda p: loss(y0, p, method, jac_sparsity=banded(N)))(P0)
    np.testing.assert_allclose(g, g_full, rtol=1e-4)


def test_jac_sparsity_is_validated():
    y0 = initial(5)
    with pytest.raises(ValueError, match="jac_sparsity"):
        solve_ivp(brusselator, (0.0, 1.0), y0, method="BDF", args=tuple(P0),
                  jac_sparsity=np.eye(3))
    with pytest.raises(ValueError, match="jac_sparsity"):
        solve_ivp(brusselator, (0.0, 1.0), y0, method="Radau", args=tuple(P0),
                  jac_sparsity=sp.eye(11))
    with pytest.raises(TypeError, match="jac_sparsity"):
        solve_ivp(brusselator, (0.0, 1.0), y0, method="BDF", args=tuple(P0),
                  jac_sparsity=np.full((10, 10), "x"))
    with pytest.raises(adsim.UnsupportedOperation, match="jac_sparsity"):
        adsim.grad(lambda s: solve_ivp(brusselator, (0.0, 1.0), y0, method="BDF",
                                       args=tuple(P0), jac_sparsity=s).y[0, -1])(np.eye(10))


def short_loss(x, method, **options):
    """A loss of the solution over a short span, of ``x = (y0, a, b, alpha)``."""
    y0, p = x[:-3], x[-3:]
    res = solve_ivp(brusselator, (0.0, 0.5), y0, method=method, args=(p[0], p[1], p[2]),
                    t_eval=[0.25, 0.5], rtol=1e-6, atol=1e-8, **options)
    w = np.linspace(0.5, 1.5, y0.size)
    return np.sum(w * res.y[:, 1] ** 2) + np.sum(y0 * res.y[:, 0])


def _directions(size, seed):
    """Two directions of ``(y0, p)``, on the scale of the parameters."""
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((size, 2))
    V[-3:] *= P0[:, None] * 0.5
    return V


def _counting_transcriptions(monkeypatch):
    """Counts the sparse Jacobian's values written out as ops (third derivatives)."""
    calls = []
    recorded = ColoredJacobian.recorded_values

    def counted(self, full):
        calls.append(1)
        return recorded(self, full)
    monkeypatch.setattr(ColoredJacobian, "recorded_values", counted)
    return calls


def _fd_of_gradient(f, x, v, eps=1e-4):
    """Central differences of the gradient along ``v``. The steps differ
    between the two points (the gradient jumps at the level of the
    tolerance), so the step is larger than for a smooth function."""
    grad = adsim.grad(f)
    return (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)


@pytest.mark.parametrize("method", IMPLICIT)
def test_hessian_vector_products_through_the_sparse_jacobian(method, monkeypatch):
    """100 equations: the detected sparse pattern and ``jac_sparsity`` give the
    same Hessian-vector products in (y0, p) (third derivatives of fun, one
    reverse pass per color), symmetric (u . H v = v . H u) and matching
    central differences of the gradient."""
    N = SPARSE_MIN_SIZE // 2
    x0 = np.concatenate([initial(N), P0])
    U = _directions(x0.size, seed=5)
    calls = _counting_transcriptions(monkeypatch)
    HU = adsim.hvp(lambda x: short_loss(x, method), x0, U)
    assert calls                                          # through the sparse Jacobian
    given = adsim.hvp(lambda x: short_loss(x, method, jac_sparsity=banded(N)), x0, U)
    np.testing.assert_allclose(given, HU, rtol=1e-12, atol=1e-12 * np.abs(HU).max())
    assert U[:, 0] @ HU[:, 1] == pytest.approx(U[:, 1] @ HU[:, 0], rel=1e-10)
    fd = _fd_of_gradient(lambda x: short_loss(x, method), x0, U[:, 0])
    np.testing.assert_allclose(HU[:, 0], fd, rtol=5e-4, atol=5e-4 * np.abs(fd).max())


@pytest.mark.parametrize("method", IMPLICIT)
def test_sparse_second_derivatives_in_every_form_and_replayed(method):
    """The Hessian in the parameters (symmetric), a jvp of the gradient, and
    a recorded tape's hvp at new parameters against a new recording there."""
    N = SPARSE_MIN_SIZE // 2
    y0 = initial(N)

    def f(p):
        return short_loss(np.concatenate([y0, p]), method, jac_sparsity=banded(N))
    dp = np.array([0.3, -0.2, 0.005])
    H = adsim.hessian(f)(P0)
    np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-12 * np.abs(H).max())
    hv = H @ dp
    _, jg = adsim.jvp(adsim.grad(f), (P0,), (dp,))
    np.testing.assert_allclose(jg, hv, rtol=1e-10, atol=1e-12 * np.abs(hv).max())
    tape = adsim.record(f, P0)
    moved = P0 * np.array([1.02, 0.98, 1.05])
    want = adsim.hvp(lambda p: f(p), moved, dp)
    np.testing.assert_allclose(tape.hvp(moved, dp), want, rtol=1e-10,
                               atol=1e-12 * np.abs(want).max())
    assert np.abs(want - hv).max() > 1e-3 * np.abs(hv).max()     # a new point indeed


@pytest.mark.parametrize("method", IMPLICIT)
def test_sparse_and_dense_hessian_vector_products_agree(method):
    """20 equations: adsim's dense Jacobian by default (its third derivatives
    one reverse pass per equation), sparse with ``jac_sparsity``: the same
    products to rounding. A pattern missing the coupling of u and v changes
    the Newton matrices; its products are those of the gradient it gives."""
    N = 10
    x0 = np.concatenate([initial(N), P0])
    U = _directions(x0.size, seed=6)
    dense = adsim.hvp(lambda x: short_loss(x, method), x0, U)
    sparse = adsim.hvp(lambda x: short_loss(x, method, jac_sparsity=banded(N)), x0, U)
    np.testing.assert_allclose(sparse, dense, rtol=1e-9, atol=1e-10 * np.abs(dense).max())
    missing = sp.csc_array(sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1],
                                          shape=(2 * N, 2 * N)))
    hv = adsim.hvp(lambda x: short_loss(x, method, jac_sparsity=missing), x0, U[:, 0])
    fd = _fd_of_gradient(lambda x: short_loss(x, method, jac_sparsity=missing), x0, U[:, 0])
    np.testing.assert_allclose(hv, fd, rtol=5e-4, atol=5e-4 * np.abs(fd).max())


_sech2 = adsim.primitive(lambda x: 1.0 - np.tanh(x) ** 2,
                         jvp=lambda args, out, t: -2.0 * t[0] * np.tanh(args[0]) * out,
                         name="tests.sparse_ivp.sech2_without_vjp")
_tanh = adsim.primitive(np.tanh, jvp=lambda args, out, t: t[0] * (1.0 - out ** 2),
                        vjp=lambda args, out, g: (g * _sech2(args[0]),),
                        name="tests.sparse_ivp.tanh", elementwise=True)


def test_third_derivatives_that_cannot_be_recorded_are_refused_naming_jac():
    """fun's tanh has a vjp rule whose own derivative has no vjp rule: the
    gradient works, and so do Hessian-vector products with jac= (second
    derivatives of jac); through the sparse Jacobian they would need third
    derivatives of fun: refused, naming the operation, fun and jac=."""
    n = SPARSE_MIN_SIZE
    u0 = np.linspace(0.5, 1.5, n)
    coupling = 0.1 * (np.roll(np.eye(n), 1, axis=0) - np.eye(n))     # u[i-1] - u[i]

    def loss(k, with_jac=False):
        def fun(t, u):
            return -k[0] * _tanh(u) + coupling @ u

        def jac(t, u):
            return -k[0] * (np.eye(n) * (1.0 - np.tanh(u) ** 2)) + coupling
        res = solve_ivp(fun, (0.0, 0.3), u0, method="BDF", t_eval=[0.3], rtol=1e-6,
                        jac=jac if with_jac else None)
        return np.sum(res.y ** 2)
    k = np.array([1.0])
    assert np.isfinite(adsim.grad(loss)(k)).all()
    with pytest.raises(adsim.UnsupportedOperation, match="jac=") as err:
        adsim.hvp(loss, k, np.ones(1))
    assert "sech2_without_vjp" in str(err.value) and "solve_ivp's fun" in str(err.value)
    assert np.isfinite(adsim.hvp(lambda kk: loss(kk, with_jac=True), k, np.ones(1))).all()


def switching(t, u):
    """Each value couples to its left neighbour once it falls below 0.5 (a
    kink, no jump): at u0 > 0.5 the Jacobian is diagonal, later bidiagonal."""
    below = np.asarray(u < 0.5)          # a plain mask: a branch of the recording
    return np.where(below, 1e3 * (0.5 - u) * (np.roll(u, 1) - u), 0.0) - (u - 0.2)


def test_a_branch_outgrowing_the_detected_pattern_warns_and_stays_exact():
    n = SPARSE_MIN_SIZE
    u0 = np.linspace(0.6, 1.4, n)
    with pytest.warns(UserWarning, match="jac_sparsity"):
        ours = solve_ivp(switching, (0.0, 3.0), u0, method="BDF", t_eval=[3.0], rtol=1e-6,
                         atol=1e-9)
    full = sp.csc_array(sp.eye(n) + sp.eye(n, k=-1) + sp.eye(n, k=n - 1))
    ref = scipy_solve_ivp(switching, (0.0, 3.0), u0, method="BDF", t_eval=[3.0], rtol=1e-6,
                          atol=1e-9, jac_sparsity=full)
    assert ours.success and ours.nfev > ref.nfev
    np.testing.assert_allclose(ours.y, ref.y, rtol=1e-4)


def test_sparse_jacobians_of_jac_as_scipy():
    """A constant sparse ``jac`` is SciPy's sparse path; a ``jac`` function
    returning a sparse matrix is refused, naming the alternative."""
    n = 30
    lap = sp.csc_matrix(sp.diags_array([1.0, -2.0, 1.0], offsets=[-1, 0, 1], shape=(n, n)))

    def heat(t, u):
        return lap @ u
    u0 = np.sin(np.linspace(0.0, np.pi, n))
    for method in IMPLICIT:
        ref = scipy_solve_ivp(heat, (0.0, 2.0), u0, method=method, jac=lap, t_eval=[1.0, 2.0])
        ours = solve_ivp(heat, (0.0, 2.0), u0, method=method, jac=lap, t_eval=[1.0, 2.0])
        assert (ours.nfev, ours.njev, ours.nlu) == (ref.nfev, ref.njev, ref.nlu)
        np.testing.assert_allclose(ours.y, ref.y, rtol=1e-12, atol=1e-14)
    with pytest.raises(adsim.UnsupportedOperation, match="jac_sparsity"):
        solve_ivp(heat, (0.0, 1.0), u0, method="BDF", jac=lambda t, u: lap)
