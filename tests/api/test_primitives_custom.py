"""User-registered primitives (adsim.primitive): one CALLBACK op whose rules
are Python functions; gradients, tangents and Hessian-vector products
through it, constant arguments, vector modes, replays, and the errors for
missing rules."""
import numpy as np
import pytest

import adsim
from adsim._opcodes import Opcode
from fdcheck import assert_close, check_tape, fd_jacobian

N = 6
KERNEL = np.fft.rfft(np.random.default_rng(30).standard_normal(N))


def conv_value(x):
    """Circular convolution by FFT: a linear map adsim has no rule for."""
    return np.fft.irfft(np.fft.rfft(x) * KERNEL, n=x.size)


def conv_t_value(w):
    """The transpose map: circular correlation with the kernel."""
    return np.fft.irfft(np.fft.rfft(w) * KERNEL.conj(), n=w.size)


def conv_jvp(args, out, tangents):
    (dx,) = tangents
    return conv_value(dx)


def conv_vjp(args, out, out_adjoint):
    # calling the transpose primitive keeps the rule recordable (for hvp)
    return (conv_t(out_adjoint),)


conv = adsim.primitive(conv_value, jvp=conv_jvp, vjp=conv_vjp, name="conv")
conv_t = adsim.primitive(conv_t_value, jvp=lambda a, o, t: conv_t_value(t[0]),
                         vjp=lambda a, o, w: (conv(w),), name="conv_t")


def softplus_value(x):
    return np.logaddexp(0.0, x)           # no adsim rule for logaddexp


def softplus_jvp(args, out, tangents):
    (x,), (dx,) = args, tangents
    return dx / (1.0 + np.exp(-x))


def softplus_vjp(args, out, w):
    (x,) = args
    return (w / (1.0 + np.exp(-x)),)     # written with supported ops: hvp works


softplus = adsim.primitive(softplus_value, jvp=softplus_jvp, vjp=softplus_vjp)


def scaled_value(a, b):
    """a * sum(b^2): two arguments of different shapes."""
    return a * np.sum(b ** 2)


def scaled_jvp(args, out, tangents):
    a, b = args
    da, db = tangents
    t = np.zeros_like(out)
    if da is not None:
        t = t + da * np.sum(b ** 2)
    if db is not None:
        t = t + a * 2.0 * np.sum(b * db)
    return t


def scaled_vjp(args, out, w):
    a, b = args
    return w * np.sum(b ** 2), 2.0 * np.sum(w * a) * b


scaled = adsim.primitive(scaled_value, jvp=scaled_jvp, vjp=scaled_vjp, name="scaled")


def test_conv_matches_its_dense_matrix():
    C = np.stack([conv_value(e) for e in np.eye(N)], axis=1)
    assert_close(np.stack([conv_t_value(e) for e in np.eye(N)], axis=1), C.T, 1e-14, 1e-15)
    rng = np.random.default_rng(31)
    x = rng.standard_normal(N)
    assert_close(adsim.jacobian(conv, mode="forward")(x), C, 1e-13, 1e-14)
    assert_close(adsim.jacobian(conv, mode="reverse")(x), C, 1e-13, 1e-14)
    tape = adsim.record(lambda z: conv(z ** 2), x)
    assert Opcode.CALLBACK in tape.op_codes()
    assert "CALLBACK" in tape.stats()["ops"]


def test_grad_jvp_hvp_through_a_linear_primitive():
    rng = np.random.default_rng(32)
    x = rng.standard_normal(N)
    check_tape(lambda z: np.sin(conv(z ** 2)) * z, [x])


def test_hvp_through_a_nonlinear_primitive_from_its_recorded_vjp():
    rng = np.random.default_rng(33)
    x = rng.standard_normal(N)
    v = rng.standard_normal(N)
    f = lambda z: np.sum(softplus(z) * z)  # noqa: E731
    s = 1.0 / (1.0 + np.exp(-x))
    # d/dx [softplus(x) x] = s x + softplus(x); second derivative s(1-s) x + 2 s
    assert_close(adsim.grad(f)(x), s * x + softplus_value(x), 1e-14, 1e-15)
    assert_close(adsim.hvp(f, x, v), (s * (1 - s) * x + 2 * s) * v, 1e-13, 1e-15)
    check_tape(lambda z: softplus(z @ np.ones((N, 3))) ** 2, [x])


def test_primitive_of_two_arguments_with_a_constant_one():
    rng = np.random.default_rng(34)
    a, b = rng.standard_normal(3), rng.standard_normal(4)
    check_tape(lambda p, q: scaled(p, q) * p, [a, b])
    check_tape(lambda p: scaled(p, b), [a])                # b constant: its tangent is None
    check_tape(lambda q: scaled(a, np.sin(q)), [b])


def test_vector_modes_call_the_rules_per_direction():
    rng = np.random.default_rng(35)
    x = rng.standard_normal(N)
    V = rng.standard_normal((N, 4))
    _, JV = adsim.jvp(conv, x, V)
    _, WJ = adsim.vjp(conv, x, V)
    for j in range(4):
        assert_close(JV[:, j], conv_value(V[:, j]), 1e-13, 1e-14)
        assert_close(WJ[:, j], conv_t_value(V[:, j]), 1e-13, 1e-14)


def test_replay_recomputes_the_primitive_value():
    calls = []

    def value(x):
        calls.append(1)
        return np.sin(x)
    sine = adsim.primitive(value, jvp=lambda a, o, t: np.cos(a[0]) * t[0],
                           vjp=lambda a, o, w: (np.cos(a[0]) * w,))
    x0 = np.array([0.1, 0.2])
    tape = adsim.record(lambda z: np.sum(sine(z) ** 2), x0)
    assert len(calls) == 1
    x1 = np.array([0.7, -0.4])
    assert_close(tape.forward(x1), np.sum(np.sin(x1) ** 2), 1e-15, 0)
    assert_close(tape.gradient(x1), 2 * np.sin(x1) * np.cos(x1), 1e-15, 0)
    assert len(calls) == 3


def test_plain_call_runs_the_value():
    x = np.arange(float(N))
    assert_close(conv(x), conv_value(x), 0, 0)
    assert repr(conv) == "<adsim.primitive conv>"
    assert softplus.name == "softplus_value"


def test_missing_rules_raise_unsupported_operation():
    only_jvp = adsim.primitive(np.exp, jvp=lambda a, o, t: o * t[0], name="exp_fwd")
    only_vjp = adsim.primitive(np.exp, vjp=lambda a, o, w: (o * w,), name="exp_rev")
    x = np.array([0.1, 0.2])
    f_fwd = lambda z: np.sum(only_jvp(z))  # noqa: E731
    f_rev = lambda z: np.sum(only_vjp(z))  # noqa: E731
    # the available mode works
    assert_close(adsim.jvp(f_fwd, x, np.ones(2))[1], np.sum(np.exp(x)), 1e-15, 0)
    assert_close(adsim.grad(f_rev)(x), np.exp(x), 1e-15, 0)
    with pytest.raises(adsim.UnsupportedOperation, match="`exp_fwd` has no vjp rule") as info:
        adsim.grad(f_fwd)(x)
    assert "vjp=" in str(info.value)
    with pytest.raises(adsim.UnsupportedOperation, match="`exp_rev` has no jvp rule"):
        adsim.jvp(f_rev, x, np.ones(2))
    with pytest.raises(adsim.UnsupportedOperation, match="no jvp rule"):
        adsim.hvp(f_rev, x, np.ones(2))


def test_hvp_needs_a_recordable_vjp_rule():
    bad = adsim.primitive(np.exp, jvp=lambda a, o, t: o * t[0],
                          vjp=lambda a, o, w: (np.ldexp(*np.frexp(o * w)),),
                          name="exp_fft")
    x = np.array([0.1, 0.2, 0.3, 0.4])
    f = lambda z: np.sum(bad(z))  # noqa: E731
    assert_close(adsim.grad(f)(x), np.exp(x), 1e-14, 0)        # first order is fine
    with pytest.raises(adsim.UnsupportedOperation,
                       match="second-order sweeps through primitive `exp_fft`"):
        adsim.hvp(f, x, np.ones(4))


def test_wrong_rule_output_size_is_a_value_error():
    bad = adsim.primitive(np.sin, jvp=lambda a, o, t: np.ones(3), vjp=lambda a, o, w: (np.ones(3),))
    x = np.array([0.1, 0.2])
    with pytest.raises(ValueError, match="primitive returned 3 numbers where 2 were expected"):
        adsim.jvp(bad, x, np.ones(2))


def test_primitive_around_linalg_solve_against_differences():
    """np.linalg.solve is itself a registered primitive."""
    rng = np.random.default_rng(36)
    A = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal(3)
    f = lambda M, r: np.linalg.solve(M @ M.T, r) * np.sum(r)  # noqa: E731
    J = fd_jacobian(f, [A, b])
    Ja, Jb = adsim.jacobian(f, argnums=(0, 1))(A, b)
    assert_close(np.concatenate([Ja.reshape(3, -1), Jb], axis=1), J, 1e-8, 1e-9)
