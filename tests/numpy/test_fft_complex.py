"""numpy.fft and complex intermediates of real functions (adsim/_np/fft.py,
adsim/_np/complex.py): values against NumPy, every sweep against central
differences (fdcheck.check_tape: replay, J v, J^T w, dot-product test, dense
Jacobians both ways, H v against differences of gradients), spectral PDE
solvers written plainly, and the errors that keep complex values inside."""
import numpy as np
import pytest

import adsim
from adsim.testing import check_grads
from adsim.errors import ActiveValueLeak, InvalidInput, UndefinedDerivative, UnsupportedOperation
from fdcheck import assert_close, check_tape

NORMS = [None, "backward", "ortho", "forward"]


def as_complex(x, shape):
    """The complex array whose real and imaginary parts are the halves of x."""
    half = x.size // 2
    return (x[:half] + 1j * x[half:]).reshape(shape)


def parts(z):
    """Real and imaginary parts stacked: a real output that loses nothing."""
    return np.stack([np.real(z), np.imag(z)])


# (function, input shape, complex input?, keyword arguments)
TRANSFORMS = [
    (np.fft.fft, (6,), True, {}), (np.fft.fft, (6,), False, {"n": 4}),
    (np.fft.fft, (5,), True, {"n": 8}), (np.fft.ifft, (6,), True, {}),
    (np.fft.ifft, (5,), False, {"n": 7}), (np.fft.ifft, (6,), True, {"n": 4}),
    (np.fft.rfft, (7,), False, {}), (np.fft.rfft, (6,), False, {"n": 9}),
    (np.fft.rfft, (8,), False, {"n": 5}), (np.fft.rfft, (3, 6), False, {"axis": 0}),
    (np.fft.irfft, (5,), True, {}), (np.fft.irfft, (5,), True, {"n": 7}),
    (np.fft.irfft, (5,), True, {"n": 12}), (np.fft.irfft, (6,), True, {"n": 4}),
    (np.fft.irfft, (4,), False, {}), (np.fft.irfft, (3, 4), True, {"axis": 0}),
    (np.fft.fft2, (3, 4), True, {}), (np.fft.fft2, (3, 4), False, {"s": (4, 3)}),
    (np.fft.ifft2, (3, 4), True, {"axes": (1, 0)}), (np.fft.ifft2, (3, 4), True, {"s": (2, 5)}),
    (np.fft.rfft2, (4, 5), False, {}), (np.fft.rfft2, (4, 5), False, {"s": (3, 6)}),
    (np.fft.irfft2, (3, 4), True, {}), (np.fft.irfft2, (3, 4), True, {"s": (4, 5)}),
    (np.fft.irfft2, (3, 3), True, {"s": (2, 4)}),
    (np.fft.fftn, (2, 3, 4), True, {}), (np.fft.fftn, (2, 3, 4), False, {"axes": (0, 2)}),
    (np.fft.ifftn, (2, 3, 4), True, {"s": (3, 2), "axes": (2, 0)}),
    (np.fft.rfftn, (2, 3, 4), False, {}), (np.fft.rfftn, (2, 3, 4), False,
                                           {"s": (4, 5), "axes": (0, 1)}),
    (np.fft.irfftn, (2, 3, 4), True, {}), (np.fft.irfftn, (2, 3, 4), True,
                                           {"s": (3, 5), "axes": (1, 2)}),
]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("func, shape, complex_input, kwargs", TRANSFORMS,
                         ids=[f"{f.__name__}-{s}-{'c' if c else 'r'}-{k}"
                              for f, s, c, k in TRANSFORMS])
def test_transform_every_sweep(func, shape, complex_input, kwargs, norm):
    rng = np.random.default_rng(1)
    n = int(np.prod(shape))
    x = rng.standard_normal(2 * n if complex_input else n)

    def f(x):
        a = as_complex(x, shape) if complex_input else x.reshape(shape)
        return parts(func(a, norm=norm, **kwargs))
    want = func(as_complex(x, shape) if complex_input else x.reshape(shape), norm=norm, **kwargs)
    got = adsim.record(f, x).forward(x)
    assert_close(got, parts(want), 1e-13, 1e-14, "value against numpy.fft")
    check_tape(f, [x], order=2, k=2)


def test_fft_values_at_recording_are_numpys():
    x = np.random.default_rng(2).standard_normal(6)
    seen = {}

    def f(x):
        z = np.fft.fft(x)
        assert z.dtype == np.complex128 and z.shape == (6,) and z.ndim == 1 and z.size == 6
        seen["repr"] = repr(z)
        return np.sum(np.abs(z) ** 2)
    value, _ = adsim.value_and_grad(f)(x)
    assert_close(value, np.sum(np.abs(np.fft.fft(x)) ** 2), 1e-13)
    assert seen["repr"].startswith("ComplexActive(shape=(6,)")


def test_parseval_gradient():
    """sum |fft(x)|^2 = n sum x^2: gradient 2 n x, and a Hessian 2 n I."""
    x = np.random.default_rng(3).standard_normal(9)
    f = lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2)     # noqa: E731
    assert_close(adsim.grad(f)(x), 18.0 * x, 1e-12)
    v = np.random.default_rng(4).standard_normal(9)
    assert_close(adsim.hvp(f, x, v), 18.0 * v, 1e-12)
    assert check_grads(f, x, modes=("fwd", "rev"), order=2)


def test_abs_squared_at_zero_has_zero_derivative():
    """|z|^2 is smooth at z = 0: no NaN from the square root of |z|."""
    x = np.zeros(4)
    g = adsim.grad(lambda x: np.sum(abs(np.fft.fft(x)) ** 2))(x)
    assert_close(g, np.zeros(4), 0, 0)
    x = np.array([1.0, -1.0, 1.0, -1.0])        # fft is zero except at the Nyquist entry
    assert_close(adsim.grad(lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2))(x), 8 * x, 1e-12)


K8 = 2 * np.pi * np.fft.rfftfreq(8, 1.0 / 8) / 8


COMPOSITIONS = {
    "filter": lambda x: np.fft.irfft(np.fft.rfft(x) * np.exp(-K8 ** 2 + 0.3j * K8), n=8),
    "spectral derivative": lambda x: np.fft.irfft(1j * K8 * np.fft.rfft(x), n=8) ** 2,
    "exp, angle, abs": lambda x: np.stack([np.angle(np.exp(1j * x) * (1 + 1j)), np.abs(x - 2j)]),
    "division": lambda x: parts((x + 1j * x[::-1]) / (2.0 - x * (0.5 + 1j)) + 1 / (1j + x)),
    "powers": lambda x: parts((x * (1 - 0.5j)) ** 3 + (x + 1j) ** -2 + (x + 0.5j) ** 0),
    "conj, real, imag": lambda x: (np.conj(np.fft.fft(x)) * np.fft.fft(x[::-1])).real
    + np.imag(np.fft.fft(x).conjugate()) + np.fft.fft(x).conj().imag,
    "log": lambda x: parts(np.log(np.fft.fft(x) + 3.0)),
    "sums and shapes": lambda x: parts(np.concatenate([
        np.fft.fft(x).reshape(2, 4).T.sum(axis=1), np.mean(np.fft.fft2(x.reshape(2, 4)), axis=0),
        np.fft.fft(x)[1:6:2], np.fft.fftshift(np.fft.fft(x)), np.ravel(x[:2] * 1j)])),
    "matmul with a complex matrix": lambda x: parts(
        (np.exp(1j * np.outer(np.arange(8), np.arange(8)) / 3.0) @ (x * (1 + 1j))) / 8),
    "ufuncs and operators": lambda x: parts(np.multiply(np.add(1j, x), np.fft.fft(x))
                                            - np.subtract(np.fft.fft(x), 2j) / np.square(x + 1j)
                                            + np.reciprocal(x + 1j) - (-np.fft.fft(x)) ** 2
                                            + np.positive(abs(x + 1j) * 1j) + np.power(x * 1j, 2)),
    "setitem and in-place": lambda x: _dealias(x),
    "workspace and more shapes": lambda x: _workspace(x),
}


def _workspace(x):
    z = np.fft.fft2(x.reshape(2, 4))
    w = z * 0
    w[:, 1:] = z[:, :-1]
    w[0] = x[:4] + 1j
    w **= 2
    w -= 1j
    w /= 1 + x[4:]
    m = np.vstack([w, np.fft.fftshift(z)]).reshape(4, 4)
    pieces = [np.trace(m), np.sum(np.diagonal(m)), np.sum(np.rot90(m)[0]),
              np.sum(np.flip(m, axis=1) @ m), np.cumsum(np.roll(m.ravel(), 3))[-1],
              np.sum(np.stack([z, 2 * z]) * np.moveaxis(np.tile(z, (2, 1, 1)), 0, 0)),
              np.sum(np.fft.fftshift(x) * np.fft.ifftshift(np.conj(z.ravel())))]
    pieces += [np.dot(row, row.conj()) for row in m[:2]]
    return parts(np.stack(pieces)) if len(m) == 4 else None


def _dealias(x):
    z = np.fft.fft(x)
    z[3:6] = 0.0
    z[0] = z[1] * 2j
    z[1:3] += x[:2] * 1j
    z *= 1 + 0.5j
    z.real = z.imag * 2
    return np.real(np.fft.ifft(z)) + np.fft.ifft(z).imag


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_real_compositions_every_sweep(name):
    x = np.random.default_rng(5).uniform(0.5, 1.5, 8)
    check_tape(COMPOSITIONS[name], [x], order=2, k=2)


def _kuramoto_sivashinsky(n_steps, N=32, h=0.25):
    """ETDRK4 for u_t = -u u_x - u_xx - u_xxxx on [0, 32 pi), periodic
    (Kassam & Trefethen 2005, their program kursiv.m written in NumPy)."""
    k = np.concatenate([np.arange(0, N // 2), [0], np.arange(-N // 2 + 1, 0)]) / 16.0
    L = k ** 2 - k ** 4
    E, E2 = np.exp(h * L), np.exp(h * L / 2)
    M = 16
    r = np.exp(1j * np.pi * (np.arange(1, M + 1) - 0.5) / M)
    LR = h * L[:, None] + r[None, :]
    Q = h * np.real(np.mean((np.exp(LR / 2) - 1) / LR, axis=1))
    f1 = h * np.real(np.mean((-4 - LR + np.exp(LR) * (4 - 3 * LR + LR ** 2)) / LR ** 3, axis=1))
    f2 = h * np.real(np.mean((2 + LR + np.exp(LR) * (-2 + LR)) / LR ** 3, axis=1))
    f3 = h * np.real(np.mean((-4 - 3 * LR - LR ** 2 + np.exp(LR) * (4 - LR)) / LR ** 3, axis=1))
    g = -0.5j * k

    def solve(u):
        v = np.fft.fft(u)
        for _ in range(n_steps):
            Nv = g * np.fft.fft(np.real(np.fft.ifft(v)) ** 2)
            a = E2 * v + Q * Nv
            Na = g * np.fft.fft(np.real(np.fft.ifft(a)) ** 2)
            b = E2 * v + Q * Na
            Nb = g * np.fft.fft(np.real(np.fft.ifft(b)) ** 2)
            c = E2 * a + Q * (2 * Nb - Nv)
            Nc = g * np.fft.fft(np.real(np.fft.ifft(c)) ** 2)
            v = E * v + Nv * f1 + 2 * (Na + Nb) * f2 + Nc * f3
        return np.real(np.fft.ifft(v))
    return solve


def test_kuramoto_sivashinsky_etdrk4():
    N = 32
    x = 32 * np.pi * np.arange(1, N + 1) / N
    u0 = np.cos(x / 16) * (1 + np.sin(x / 16))
    solve = _kuramoto_sivashinsky(n_steps=8)
    weight = np.sin(x / 16) + 0.5

    def loss(u):
        return np.sum(weight * solve(u) ** 2)
    g = adsim.grad(loss)(u0)
    assert np.all(np.isfinite(g)) and np.max(np.abs(g)) > 1e-3
    check_tape(loss, [u0], order=2, k=1, rtol=1e-6)
    check_tape(lambda u: solve(u)[::4], [u0], order=1, k=1, rtol=1e-6)


def test_split_step_schrodinger():
    """i psi_t = -psi_xx / 2 + V psi + kappa |psi|^2 psi by Strang splitting;
    the loss is |psi|^2 against a window, differentiated with respect to the
    initial amplitude and the potential."""
    N, dt, kappa = 16, 0.05, 0.7
    xg = np.linspace(-4, 4, N, endpoint=False)
    k = 2 * np.pi * np.fft.fftfreq(N, xg[1] - xg[0])
    half_kinetic = np.exp(-0.25j * k ** 2 * dt)
    window = np.exp(-(xg - 1.0) ** 2)

    def loss(amplitude, V):
        psi = amplitude * np.exp(1j * xg)
        for _ in range(5):
            psi = np.fft.ifft(half_kinetic * np.fft.fft(psi))
            psi = psi * np.exp(-1j * dt * (V + kappa * np.abs(psi) ** 2))
            psi = np.fft.ifft(half_kinetic * np.fft.fft(psi))
        return np.sum(window * np.abs(psi) ** 2)
    rng = np.random.default_rng(6)
    amplitude = np.exp(-xg ** 2) + 0.1 * rng.uniform(size=N)
    V = 0.5 * xg ** 2
    check_tape(loss, [amplitude, V], order=2, k=1, rtol=1e-6)
    # the linear flow conserves the norm: its gradient is 2 amplitude
    free = lambda a: np.sum(np.abs(np.fft.ifft(half_kinetic * np.fft.fft(a * (1 + 1j)))) ** 2)  # noqa: E731,E501
    assert_close(adsim.grad(free)(amplitude), 4 * amplitude, 1e-12)


def test_pseudo_spectral_navier_stokes_2d():
    """Vorticity form on the periodic square, 2/3 dealiasing, Heun steps."""
    N, nu, dt = 12, 0.05, 0.05
    kk = np.fft.fftfreq(N, 1.0 / N)
    kx, ky = np.meshgrid(kk, kk, indexing="ij")
    k2 = kx ** 2 + ky ** 2
    k2[0, 0] = 1.0
    dealias = (np.abs(kx) < N / 3) & (np.abs(ky) < N / 3)

    def rhs(w_hat):
        psi_hat = w_hat / k2
        u = np.real(np.fft.ifft2(1j * ky * psi_hat))
        v = np.real(np.fft.ifft2(-1j * kx * psi_hat))
        wx = np.real(np.fft.ifft2(1j * kx * w_hat))
        wy = np.real(np.fft.ifft2(1j * ky * w_hat))
        return -np.fft.fft2(u * wx + v * wy) * dealias - nu * k2 * w_hat

    def energy(w0):
        w_hat = np.fft.fft2(w0)
        for _ in range(3):
            k1 = rhs(w_hat)
            w_hat = w_hat + 0.5 * dt * (k1 + rhs(w_hat + dt * k1))
        return np.sum(np.real(np.fft.ifft2(w_hat)) ** 2 * (1.0 + kx / N))
    g = np.linspace(0, 2 * np.pi, N, endpoint=False)
    w0 = np.sin(g)[:, None] * np.cos(2 * g)[None, :] + 0.3 * np.cos(g + g[:, None])
    check_tape(energy, [w0], order=2, k=1, rtol=1e-6)


def test_s_without_axes_warns_as_numpy():
    x = np.random.default_rng(9).standard_normal((3, 4))
    with pytest.warns(DeprecationWarning, match="axes"):
        got = adsim.jacobian(lambda x: np.real(np.fft.fftn(x, s=(6,))))(x)
    with pytest.warns(DeprecationWarning):
        want_shape = np.fft.fftn(x, s=(6,)).shape
    assert got.shape == want_shape + x.shape


def test_primitive_rules_written_with_fft_record_for_second_order():
    """A user primitive's vjp rule with numpy.fft is recorded by hvp."""
    exp_ = adsim.primitive(np.exp, jvp=lambda a, o, t: o * t[0],
                           vjp=lambda a, o, w: (np.fft.irfft(np.fft.rfft(o * w), n=o.size),))
    x, v = np.array([0.1, 0.2, 0.3, 0.4]), np.array([1.0, -2.0, 0.5, 3.0])
    assert_close(adsim.hvp(lambda z: np.sum(exp_(z)), x, v), np.exp(x) * v, 1e-13, 1e-15)


def test_sparsity_of_elementwise_complex_arithmetic():
    """Complex arithmetic is real ops: an elementwise complex map keeps a
    diagonal Jacobian; through an FFT the pattern is dense."""
    x = np.random.default_rng(7).uniform(1, 2, 5)
    P = adsim.jacobian_sparsity(lambda x: np.abs(np.exp(1j * x) * (x + 2j)) ** 2, x)
    assert (P.toarray() != 0).sum() == 5 and np.all(P.toarray().diagonal())
    f = lambda x: np.abs(np.fft.fft(x)) ** 2      # noqa: E731
    J = adsim.sparse_jacobian(f, x)
    assert_close(J.toarray(), adsim.jacobian(f)(x), 1e-12, 1e-12)


# ---- errors: complex values never leave the recording silently -------------

def _raises(exc, match, body):
    x = np.random.default_rng(8).standard_normal(4)
    with pytest.raises(exc, match=match):
        adsim.grad(body)(x)


@pytest.mark.parametrize("body, exc, match", [
    (lambda x: np.fft.fft(x), InvalidInput, "real quantity"),
    (lambda x: float(np.sum(np.fft.fft(x))), ActiveValueLeak, r"float\(\)"),
    (lambda x: np.sum(np.asarray(np.fft.fft(x)).real), ActiveValueLeak, "imaginary part"),
    (lambda x: complex(np.fft.fft(x)[0]).real + x[0], ActiveValueLeak, r"complex\(\)"),
    (lambda x: np.sum(np.expm1(np.fft.fft(x)).real), UnsupportedOperation, "numpy.expm1"),
    (lambda x: np.sum(np.sort(np.fft.fft(x)).real), UnsupportedOperation, "numpy.sort"),
    (lambda x: np.sum((((x - x) * 1j) ** 0.5).real), UndefinedDerivative, "base a is 0"),
    (lambda x: np.sum(np.maximum(x, 1j * x).real), UnsupportedOperation, "maximum"),
    (lambda x: x[0] if np.fft.fft(x)[0] == 1 else x[1], UnsupportedOperation, "=="),
    (lambda x: np.sum(np.fft.rfft(1j * x).real), TypeError, "real input"),
    (lambda x: np.sum(np.fft.ihfft(1j * x).real), TypeError, "real input"),
    (lambda x: np.sum(np.fft.fft(x, out=np.zeros(4, complex)).real), UnsupportedOperation,
     "out="),
    (lambda x: np.sum(np.add.reduce(np.fft.fft(x)).real), UnsupportedOperation, "reduce"),
    (lambda x: np.sum(np.diff(np.fft.fft(x), prepend=0).real), UnsupportedOperation, "prepend"),
    (lambda x: np.sum(_store(x)), InvalidInput, "imaginary part"),
    (lambda x: np.sum(_store_plain(x).real), ActiveValueLeak, "imaginary part"),
    (lambda x: np.sum(np.fft.fft(x).astype(float)), ActiveValueLeak, "astype"),
])
def test_unsupported_uses_raise(body, exc, match):
    _raises(exc, match, body)


def _store(x):
    y = x * 1.0
    y[0] = np.fft.fft(x)[1]            # NumPy would drop the imaginary part
    return y


_PLAIN_COMPLEX = np.zeros(4, dtype=complex)      # made outside the recording: plain


def _store_plain(x):
    y = _PLAIN_COMPLEX.copy()
    y[0] = np.fft.fft(x)[1]
    return y


def test_complex_inputs_stay_refused():
    with pytest.raises(InvalidInput, match="complex"):
        adsim.grad(lambda z: np.sum(np.abs(z) ** 2))(np.ones(3) + 1j)


def test_norm_is_checked():
    with pytest.raises(ValueError, match="norm"):
        adsim.grad(lambda x: np.sum(np.fft.fft(x, norm="unitary").real))(np.ones(4))


def test_in_place_operators_on_a_new_complex_array_leave_its_operands_alone():
    """``x + 2j`` is a new array whose real part equals x, and ``z ** 1`` one
    equal to z: writing into them in place must not write into x or z."""
    x = np.array([0.3, 0.8, 1.3, -0.6])

    def f(x):
        z = x + 2j
        z *= 2.0
        w = z ** 1
        w **= 0.5
        return np.concatenate([x, z.real, z.imag, w.real, w.imag])
    tape = adsim.record(f, x)
    assert_close(tape.forward(x), f(x), rtol=1e-14, atol=1e-15)
    check_tape(f, [x])


def test_jacobian_patterns_of_transforms_are_dense_along_their_axes_only():
    """A transform along one axis couples only the elements of each line
    along it (real and imaginary parts of complex outputs alike)."""
    from adsim.sparse.pattern import hessian_pattern, jacobian_pattern
    x = np.linspace(0.1, 1.2, 12).reshape(3, 4)
    for f in (lambda z: np.abs(np.fft.fft(z, axis=1)) ** 2,
              lambda z: np.fft.rfft(z, n=6, axis=0).imag,
              lambda z: np.fft.irfft(np.fft.rfft(z) * np.array([1.0, 0.5, 2.0]), n=4)):
        tape = adsim.record(f, x)
        P = jacobian_pattern(tape).toarray()
        J = adsim.jacobian(f)(x).reshape(P.shape)
        assert not np.any((np.abs(J) > 1e-12) & ~P)
        assert P.sum() < P.size                      # not dense
    P = jacobian_pattern(adsim.record(lambda z: np.fft.fft(z, axis=1).real, x)).toarray()
    assert np.array_equal(P, np.kron(np.eye(3), np.ones((4, 4))).astype(bool))
    assert hessian_pattern(adsim.record(lambda z: np.fft.fft(z, axis=0).real, x)).nnz == 0
