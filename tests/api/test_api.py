"""The functional API (grad, jvp, vjp, jacobian, hessian, hvp, ...) and the
Tape methods: results against analytic derivatives, finite differences or
another mode; replays against fresh recordings; the per-function tape cache;
the listing and statistics of a tape."""
import numpy as np
import pytest

import adsim
from fdcheck import assert_close, central, check_tape, fd_jacobian


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_grad(x):
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return g


def rosenbrock_hessian(x):
    n = x.size
    H = np.zeros((n, n))
    i = np.arange(n - 1)
    H[i, i] += 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    H[i + 1, i + 1] += 200.0
    H[i, i + 1] = H[i + 1, i] = -400.0 * x[:-1]
    return H


def mixed(x, y, c):
    """A function of two arrays and a constant."""
    return c * np.sum(np.sin(x) * y ** 2) + np.sum(x * x)


def mixed_grads(x, y, c):
    return c * np.cos(x) * y ** 2 + 2 * x, 2 * c * np.sin(x) * y


@pytest.fixture
def xy():
    rng = np.random.default_rng(1)
    return rng.standard_normal(4), rng.standard_normal(4)


# ------------------------------------------------------------- gradients

def test_grad_argnums_and_constant_arguments(xy):
    x, y = xy
    gx, gy = mixed_grads(x, y, 1.7)
    assert_close(adsim.grad(mixed)(x, y, 1.7), gx, 1e-14, 1e-14)
    assert_close(adsim.grad(mixed, argnums=1)(x, y, 1.7), gy, 1e-14, 1e-14)
    both = adsim.grad(mixed, argnums=(0, 1))(x, y, 1.7)
    assert isinstance(both, tuple) and len(both) == 2
    assert_close(both[0], gx, 1e-14, 1e-14)
    assert_close(both[1], gy, 1e-14, 1e-14)
    rev = adsim.grad(mixed, argnums=(1, 0))(x, y, 1.7)
    assert_close(rev[0], gy, 1e-14, 1e-14)
    assert_close(rev[1], gx, 1e-14, 1e-14)


def test_value_and_grad(xy):
    x, y = xy
    value, g = adsim.value_and_grad(mixed, argnums=1)(x, y, -0.3)
    assert isinstance(value, float)
    assert_close(value, mixed(x, y, -0.3), 1e-14, 0)
    assert_close(g, mixed_grads(x, y, -0.3)[1], 1e-14, 1e-14)


def test_grad_keyword_arguments_are_constants(xy):
    x, _ = xy

    def f(z, scale=1.0):
        return scale * np.sum(z ** 3)
    g = adsim.grad(f)
    assert_close(g(x, scale=2.0), 6.0 * x ** 2, 1e-14, 0)
    assert_close(g(x, scale=-1.0), -3.0 * x ** 2, 1e-14, 0)
    assert g.tapes.recordings == 2


def test_grad_integer_and_list_inputs_convert():
    assert_close(adsim.grad(lambda z: np.sum(z ** 3))(np.array([1, 2, 3])), [3.0, 12.0, 27.0], 0, 0)
    assert_close(adsim.grad(lambda z: np.sum(z ** 3))([1.0, 2.0]), [3.0, 12.0], 0, 0)


def test_grad_of_function_independent_of_input():
    value, g = adsim.value_and_grad(lambda z: 3.0)(np.ones(3))
    assert value == 3.0
    assert_close(g, np.zeros(3), 0, 0)


def test_output_that_is_an_input():
    """The tape's output slot may be an input slot (no op in between)."""
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    assert adsim.grad(lambda t: t)(2.0) == 1.0
    assert_close(adsim.jacobian(lambda t: t)(x), np.eye(2), 0, 0)
    Ja, Jb = adsim.jacobian(lambda a, b: a, argnums=(0, 1))(x, y)
    assert_close(Ja, np.eye(2), 0, 0)
    assert_close(Jb, np.zeros((2, 2)), 0, 0)
    tape = adsim.record(lambda a: a, x)
    assert_close(tape.forward(y), y, 0, 0)
    assert_close(tape.vjp(y, x)[1], x, 0, 0)
    assert adsim.hvp(lambda t: t, 2.0, 1.0) == 0.0


def test_rosenbrock_gradient_analytic():
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = rng.uniform(-1.5, 1.5, size=6)
        assert_close(adsim.grad(rosenbrock)(x), rosenbrock_grad(x), 1e-13, 1e-12)


def test_grad_of_scalar_input():
    """0-d inputs stay 0-d, and the output may be the result of the first op."""
    assert_close(adsim.grad(np.sin)(0.5), np.cos(0.5), 1e-15, 0)
    assert_close(adsim.grad(np.sin)(np.array([0.5])), [np.cos(0.5)], 1e-15, 0)
    assert np.shape(adsim.grad(lambda t: t * t)(3.0)) == ()
    assert_close(adsim.hessian(np.sin)(0.5), -np.sin(0.5), 1e-15, 0)


def test_grad_with_respect_to_a_scalar_argument(xy):
    x, y = xy
    gx, gc = adsim.grad(lambda a, c: c * np.sum(a ** 2), argnums=(0, 1))(x, 2.0)
    assert_close(gx, 4.0 * x, 1e-15, 0)
    assert_close(gc, np.sum(x ** 2), 1e-15, 0)
    assert np.shape(gc) == ()


def test_record_of_scalar_input_replays():
    tape = adsim.record(lambda t: t ** 3, np.float64(2.0))
    assert tape.input_shapes == [()]
    assert_close(tape.gradient(np.float64(3.0)), 27.0, 0, 0)
    assert_close(tape.gradient(3.0), 27.0, 0, 0)
    assert_close(tape.hvp(3.0, 1.0), 18.0, 0, 0)


# ------------------------------------------------------------- jvp / vjp

def test_jvp_against_central_differences(xy):
    x, y = xy
    f = lambda a: np.sin(a) * a[::-1]  # noqa: E731
    value, jv = adsim.jvp(f, x, y)
    assert_close(value, f(x), 1e-15, 0)
    assert_close(jv, central(f, [x], [y]), 1e-9, 1e-10)


def test_jvp_and_vjp_of_several_arguments(xy):
    x, y = xy
    f = lambda a, b: np.exp(a) * b ** 2  # noqa: E731
    J = fd_jacobian(f, [x, y])
    rng = np.random.default_rng(3)
    va, vb, w = rng.standard_normal((3, 4))
    value, jv = adsim.jvp(f, (x, y), (va, vb))
    assert_close(value, f(x, y), 1e-15, 0)
    assert_close(jv, J @ np.concatenate([va, vb]), 1e-8, 1e-9)
    value, (ga, gb) = adsim.vjp(f, (x, y), w)
    assert_close(np.concatenate([ga, gb]), J.T @ w, 1e-8, 1e-9)
    assert abs(w @ jv - (ga @ va + gb @ vb)) < 1e-12 * max(1.0, abs(w @ jv))


def test_jvp_vjp_vector_mode_equal_single_calls(xy):
    x, _ = xy
    f = lambda a: np.cumsum(a ** 3)  # noqa: E731
    rng = np.random.default_rng(4)
    V = rng.standard_normal((4, 3))
    _, JV = adsim.jvp(f, x, V)
    _, WJ = adsim.vjp(f, x, V)
    assert JV.shape == WJ.shape == (4, 3)
    for j in range(3):
        assert_close(JV[:, j], adsim.jvp(f, x, V[:, j])[1], 1e-15, 0)
        assert_close(WJ[:, j], adsim.vjp(f, x, V[:, j])[1], 1e-15, 0)


# -------------------------------------------------------------- jacobian

@pytest.mark.parametrize("shapes", [((3,), (5,)), ((2, 3), (4,)), ((4,), (2,))])
def test_jacobian_forward_equals_reverse(shapes):
    (sin_, sout) = shapes
    rng = np.random.default_rng(5)
    A = rng.standard_normal((int(np.prod(sout)), int(np.prod(sin_))))

    def f(x):
        return np.tanh(A @ np.ravel(x)) * np.sum(x ** 2)
    x = rng.standard_normal(sin_)
    Jf = adsim.jacobian(f, mode="forward")(x)
    Jr = adsim.jacobian(f, mode="reverse")(x)
    Ja = adsim.jacobian(f)(x)
    assert Jf.shape == sout + sin_
    assert_close(Jf, Jr, 1e-13, 1e-14)
    assert_close(Ja, Jr, 1e-13, 1e-14)
    assert_close(Jf.reshape(A.shape[0], -1), fd_jacobian(f, [x]), 1e-8, 1e-9)


def test_jacobian_argnums(xy):
    x, y = xy
    f = lambda a, b: a * b ** 2  # noqa: E731
    Ja, Jb = adsim.jacobian(f, argnums=(0, 1))(x, y)
    assert_close(Ja, np.diag(y ** 2), 0, 0)
    assert_close(Jb, np.diag(2 * x * y), 1e-15, 0)
    assert_close(adsim.jacobian(f, argnums=1, mode="reverse")(x, y), np.diag(2 * x * y), 1e-15, 0)


# ------------------------------------------------------ second order

def test_rosenbrock_hessian_analytic_and_symmetric():
    rng = np.random.default_rng(6)
    x = rng.uniform(-1.5, 1.5, size=5)
    H = adsim.hessian(rosenbrock)(x)
    assert_close(H, rosenbrock_hessian(x), 1e-13, 1e-11)
    assert np.array_equal(H, H.T)
    x[2] = 0.0        # a zero gives the exact zeros of the tridiagonal band
    assert_close(adsim.hessian(rosenbrock)(x), rosenbrock_hessian(x), 1e-13, 1e-11)


def test_hessian_of_matrix_argument_and_argnums(xy):
    x, y = xy
    X = x.reshape(2, 2)
    H = adsim.hessian(lambda z: np.sum(z @ z * z))(X)
    assert H.shape == (2, 2, 2, 2)
    Hfd = fd_jacobian(lambda z: np.ravel(adsim.grad(lambda w: np.sum(w @ w * w))(z)), [X])
    assert_close(H.reshape(4, 4), Hfd, 1e-8, 1e-9)
    # w.r.t. the second argument: d2/dy2 of c sum(sin x y^2) = diag(2 c sin x)
    assert_close(adsim.hessian(mixed, argnums=1)(x, y, 1.5), np.diag(3.0 * np.sin(x)), 1e-14, 1e-15)


def test_hessian_unsymmetrised_vector_mode_is_symmetric():
    """H = [H e_1 ... H e_n] from the vector second-order sweep is symmetric
    by itself (hessian() symmetrises, so check the raw products)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal(5)
    f = lambda z: np.sum(np.exp(z[:-1] * z[1:])) * np.linalg.norm(z)  # noqa: E731
    H = adsim.hvp(f, x, np.eye(5))
    assert_close(H, H.T, 1e-13, 1e-13)


def test_hvp_and_grad_and_hvp():
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, size=6)
    v = rng.standard_normal(6)
    assert_close(adsim.hvp(rosenbrock, x, v), rosenbrock_hessian(x) @ v, 1e-13, 1e-11)
    g, hv = adsim.grad_and_hvp(rosenbrock, x, v)
    assert_close(g, rosenbrock_grad(x), 1e-13, 1e-12)
    assert_close(hv, rosenbrock_hessian(x) @ v, 1e-13, 1e-11)


def test_hvp_vector_mode_equals_single_calls():
    rng = np.random.default_rng(9)
    x = rng.uniform(-1, 1, size=5)
    V = rng.standard_normal((5, 4))
    f = lambda z: np.sum(np.sin(z) ** 2 * np.cumsum(z))  # noqa: E731
    HV = adsim.hvp(f, x, V)
    assert HV.shape == (5, 4)
    for j in range(4):
        assert_close(HV[:, j], adsim.hvp(f, x, V[:, j]), 1e-14, 1e-14)
    g_k, HV2 = adsim.grad_and_hvp(f, x, V)
    assert_close(g_k, adsim.grad(f)(x), 1e-15, 0)
    assert_close(HV2, HV, 0, 0)


def test_hvp_with_constant_arguments(xy):
    x, y = xy
    v = np.arange(4.0)
    # Hessian in x of c sum(sin x y^2) + sum(x^2) = diag(-c sin x y^2 + 2)
    H = np.diag(-1.5 * np.sin(x) * y ** 2 + 2.0)
    assert_close(adsim.hvp(mixed, x, v, y, 1.5), H @ v, 1e-14, 1e-14)
    V = np.eye(4)[:, :3]
    assert_close(adsim.hvp(mixed, x, V, y, 1.5), H @ V, 1e-14, 1e-14)
    assert_close(adsim.hessian(mixed)(x, y, 1.5), H, 1e-14, 1e-14)


def test_hvp_against_differences_of_the_gradient():
    rng = np.random.default_rng(10)
    x = rng.uniform(0.5, 1.5, size=(2, 3))
    v = rng.standard_normal((2, 3))
    f = lambda z: np.sum(np.log(z) * (z @ z.T).sum()) + np.prod(z)  # noqa: E731
    g = adsim.grad(f)
    assert_close(adsim.hvp(f, x, v), central(g, [x], [v]), 1e-8, 1e-9)


def test_hessp_and_hvp_operator():
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, size=4)
    H = rosenbrock_hessian(x)
    p = rng.standard_normal(4)
    assert_close(adsim.hessp(rosenbrock)(x, p), H @ p, 1e-13, 1e-11)
    op = adsim.hvp_operator(rosenbrock, x)
    assert op.shape == (4, 4)
    assert_close(op @ p, H @ p, 1e-13, 1e-11)
    assert_close(op.rmatvec(p), H @ p, 1e-13, 1e-11)
    assert_close(op.matmat(np.eye(4)), H, 1e-13, 1e-11)


def test_hessp_drives_scipy_newton_cg():
    from scipy.optimize import minimize
    x0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2])
    res = minimize(rosenbrock, x0, jac=adsim.grad(rosenbrock), hessp=adsim.hessp(rosenbrock),
                   method="Newton-CG", options={"xtol": 1e-10})
    assert res.success
    assert_close(res.x, np.ones(5), 1e-7, 1e-7)


def test_laplacian():
    rng = np.random.default_rng(12)
    x = rng.uniform(-1, 1, size=(2, 3))
    # f = sum x^4 + (sum x)^2: trace H = 12 sum x^2 + 2 n
    f = lambda z: np.sum(z ** 4) + np.sum(z) ** 2  # noqa: E731
    assert_close(adsim.laplacian(f)(x), 12.0 * np.sum(x ** 2) + 2.0 * x.size, 1e-14, 0)
    assert_close(adsim.laplacian(rosenbrock)(x[0]), np.trace(rosenbrock_hessian(x[0])), 1e-14, 0)


# --------------------------------------------------------------- tapes

def _program(x, y):
    z = np.sin(x) * y + np.maximum(x, 0.1) * np.sum(y ** 2)
    w = np.zeros_like(x)
    w[1:] = z[:-1] * x[1:]
    w[0] += np.exp(y[0])
    return w @ np.cumsum(z) + np.linalg.norm(w)


def _outputs(x, y):
    return np.concatenate([np.sin(x) * y, np.cumsum(x * y) ** 2])


def test_tape_replays_equal_rerecording():
    rng = np.random.default_rng(13)
    x0, y0 = rng.uniform(0.5, 1.5, size=(2, 4))
    tape = adsim.record(_program, x0, y0)
    vtape = adsim.record(_outputs, x0, y0)
    for _ in range(3):
        x, y = rng.uniform(0.5, 1.5, size=(2, 4))
        v, u, w = rng.standard_normal((3, 4))
        fresh = adsim.record(_program, x, y)
        assert tape.forward(x, y) == fresh.forward(x, y) == _program(x, y)
        for a, b in zip(tape.gradient(x, y), fresh.gradient(x, y)):
            assert_close(a, b, 0, 0)
        assert_close(tape.jvp((x, y), (v, u))[1], fresh.jvp((x, y), (v, u))[1], 0, 0)
        for a, b in zip(tape.hvp((x, y), (v, u)), fresh.hvp((x, y), (v, u))):
            assert_close(a, b, 0, 0)
        vfresh = adsim.record(_outputs, x, y)
        w8 = rng.standard_normal(8)
        for a, b in zip(vtape.vjp((x, y), w8)[1], vfresh.vjp((x, y), w8)[1]):
            assert_close(a, b, 0, 0)
        for mode in ("forward", "reverse"):
            for a, b in zip(vtape.jacobian(x, y, mode=mode), vfresh.jacobian(x, y, mode=mode)):
                assert_close(a, b, 0, 0)
        for a, b in zip(vtape.hvp((x, y), (v, u), w=w8), vfresh.hvp((x, y), (v, u), w=w8)):
            assert_close(a, b, 0, 0)
        # and the replayed gradient is right
        J = fd_jacobian(_program, [x, y])
        assert_close(np.concatenate(tape.gradient(x, y)), J[0], 1e-8, 1e-9)


def test_tape_value_and_gradient_and_forward():
    rng = np.random.default_rng(14)
    x = rng.standard_normal(6)
    tape = adsim.record(rosenbrock, x)
    assert tape.n_inputs == 1
    assert tape.input_shapes == [(6,)]
    assert tuple(tape.output_shape) == ()
    x1 = rng.standard_normal(6)
    value, g = tape.value_and_gradient(x1)
    assert isinstance(value, float) and isinstance(tape.forward(x1), float)
    assert_close(value, rosenbrock(x1), 1e-14, 0)
    assert_close(g, rosenbrock_grad(x1), 1e-13, 1e-12)
    assert_close(tape.hvp(x1, np.eye(6)), rosenbrock_hessian(x1), 1e-13, 1e-11)


def test_grad_caches_one_tape_per_shape_and_static_arguments(xy):
    x, y = xy

    def mixed_here(a, b, c):                 # a function of its own: no tapes yet
        return mixed(a, b, c)
    g = adsim.grad(mixed_here)
    assert g.tapes.recordings == 0
    g(x, y, 1.0)
    assert g.tapes.recordings == 1
    g(x + 1.0, y - 2.0, 1.0)                 # new values of array arguments: same tape
    assert g.tapes.recordings == 1
    assert_close(g(x + 1.0, y - 2.0, 1.0), mixed_grads(x + 1.0, y - 2.0, 1.0)[0], 1e-14, 1e-14)
    g(x, y, 2.0)                             # another static argument: another tape
    assert g.tapes.recordings == 2
    g(np.ones(3), np.ones(3), 1.0)           # another shape
    assert g.tapes.recordings == 3
    g(x, y, 1.0)
    g(x, y, 2.0)
    assert g.tapes.recordings == 3


def test_grad_without_cache_records_every_call(xy):
    x, y = xy
    g = adsim.grad(mixed, cache=False)
    g(x, y, 1.0)
    g(x, y, 1.0)
    assert g.tapes.recordings == 2


def test_value_and_grad_and_jacobian_expose_their_caches(xy):
    x, y = xy
    vg = adsim.value_and_grad(lambda a, b, c: mixed(a, b, c))
    J = adsim.jacobian(lambda a: np.sin(a) * a)
    for _ in range(3):
        vg(x, y, 1.0)
        J(x)
    assert vg.tapes.recordings == 1
    assert J.tapes.recordings == 1


def test_listing(capsys):
    x = np.array([0.5, -0.3, 0.2])
    tape = adsim.record(lambda a, b: np.sum(np.sin(a) * b)
                        + (2.0 if a[0] >= -1.0 else 3.0) * np.sum(np.maximum(a, 0.1)), x, x)
    print(tape)
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert lines[0] == repr(tape)
    assert lines[0].startswith("<adsim.Tape: ") and f"{len(tape)} ops" in lines[0]
    assert "inputs: s0(3,), s1(3,)" in lines[1]
    assert lines[-1].strip().startswith("output: s")
    assert len(lines) == len(tape) + 3
    names = [ln.split("<- ")[1].split("(")[0] for ln in lines[2:-1]]
    assert names == [adsim.ops.BY_CODE[int(c)].name.lower() for c in tape.op_codes()]
    assert {"sin", "mul", "sum", "compare", "maximum", "mul_c", "add"} <= set(names)
    assert "c=2" in out and "greater_equal" in out and "!=" in out


def test_listing_marks_saved_overwrites():
    def f(x):
        y = np.exp(x)              # exp's reverse rule reads y: overwriting it saves the old value
        y[0] = x[1] ** 2
        return y
    text = str(adsim.record(f, np.ones(3)))
    assert "scatter" in text and "(saves overwritten)" in text

    def g(x):
        y = x * 1.0                # a linear op's reverse rule reads nothing: nothing to save
        y[0] = x[1] ** 2
        return y
    scatter = [line for line in str(adsim.record(g, np.ones(3))).splitlines() if "scatter" in line]
    assert scatter and "(saves overwritten)" not in scatter[0]


def test_stats():
    x = np.linspace(0.1, 1.0, 10)

    def f(z):
        y = np.sin(z)
        y[2:5] = z[:3] ** 2
        return np.sum(y * z)
    tape = adsim.record(f, x)
    s = tape.stats()
    assert s["n_ops"] == len(tape)
    assert sum(s["ops"].values()) == len(tape)
    assert s["ops"]["SIN"] == 1 and s["ops"]["SCATTER"] == 1 and s["ops"]["SUM"] == 1
    assert s["arena_elements"] == tape.arena_elements >= x.size
    assert s["bytes"]["values"] == 8 * s["arena_elements"]
    assert s["bytes"]["indices"] > 0
    assert all(v >= 0 for v in s["bytes"].values())
    tape.gradient(x)
    assert tape.stats()["bytes"]["value_stack_peak"] >= 3 * 8       # y[2:5] was saved


def test_value_of_active_has_no_derivative_and_follows_replays():
    def f(z):
        c = adsim.value(z)
        return np.sum(z * c)
    x = np.array([1.0, 2.0])
    g = adsim.grad(f)
    assert_close(g(x), x, 0, 0)
    assert_close(g(2.0 * x), 2.0 * x, 0, 0)        # not the recorded value
    tape = adsim.record(f, x)
    assert_close(tape.gradient(3.0 * x), 3.0 * x, 0, 0)
    assert np.array_equal(adsim.value(x), x)


# ------------------------------------------------- nested derivatives

def test_nested_grad_inside_a_recording():
    """grad of a function that itself calls grad: first-order sweeps through
    the nested derivative against differences of the plain function."""
    inner = adsim.grad(lambda w: np.sum(np.sin(w) * w[::-1]))
    x = np.array([0.3, -0.5, 0.9])
    check_tape(lambda z: inner(z) * z, [x], order=1)
    outer = adsim.grad(lambda z: np.sum(adsim.grad(lambda w: np.sum(w ** 3))(z)))
    assert_close(outer(x), 6.0 * x, 1e-14, 0)


def test_nested_jacobian_in_a_newton_step():
    def F(y, c):
        return np.tanh(y * c) * y[0] + y

    J = adsim.jacobian(F)

    def newton_step(y, c):
        return y - np.linalg.solve(J(y, c), F(y, c) - 0.1)
    rng = np.random.default_rng(15)
    check_tape(newton_step, [rng.uniform(0.2, 0.8, 3), rng.uniform(0.5, 1.5, 3)], order=1)


def test_hvp_through_a_nested_derivative_takes_third_derivatives():
    inner = adsim.grad(lambda w: np.sum(np.sin(w) * w[::-1]))
    f = lambda z: np.sum(inner(z) * z)  # noqa: E731
    x = np.array([0.3, -0.5, 0.9])
    assert_close(adsim.grad(f)(x), fd_jacobian(f, [x])[0], 1e-8, 1e-9)
    grad_f = adsim.grad(f)
    assert_close(adsim.hvp(f, x, np.ones(3)),
                 fd_jacobian(lambda z: grad_f(z) @ np.ones(3), [x])[0], 1e-7, 1e-8)


def test_nested_derivatives_of_closures_over_outer_values_confuse_no_perturbation():
    # Siskind & Pearlmutter: d/dx [x * d/dy (x + y)] = 1 (confusing the two
    # perturbations gives 2)
    assert adsim.grad(lambda x: x * adsim.grad(lambda y: x + y)(np.array(1.0)))(
        np.array(1.0)) == 1.0
    # d/dk sum(d/du (k u^2) at u = 1) = d/dk (4 k) = 4
    assert adsim.grad(lambda k: np.sum(adsim.jacobian(lambda u: k * u ** 2)(np.ones(2))))(
        np.array(2.0)) == 4.0


def test_bilevel_inner_gradient_steps_closing_over_the_outer_parameters():
    def outer(theta):
        w = np.zeros(2)
        inner = adsim.grad(lambda w: np.sum((w - theta) ** 2) + 0.1 * np.sum(w ** 4))
        for _ in range(3):
            w = w - 0.1 * inner(w)
        return np.sum(w ** 2)
    theta = np.array([0.5, -1.0])
    assert_close(adsim.grad(outer)(theta), fd_jacobian(outer, [theta])[0], 1e-7, 1e-9)
    tape = adsim.record(outer, theta)
    theta2 = np.array([0.2, 0.7])
    assert_close(tape.gradient(theta2), fd_jacobian(outer, [theta2])[0], 1e-7, 1e-9)
    assert_close(tape.forward(theta2), outer(theta2), 1e-14, 0)
