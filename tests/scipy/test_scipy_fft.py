"""scipy.fft's transforms in recorded functions, as spectral codes call them:
``from scipy.fft import rfft, irfft`` in a pseudo-spectral time stepper,
``workers=`` and ``overwrite_x=`` given as SciPy's documentation suggests.
Each runs numpy.fft's transform (adsim/_scipy/fft.py); values equal SciPy's
to rounding, gradients agree with central differences, with jvp and with a
replay at a new point, and hvp with differences of the gradient."""
import numpy as np
import pytest
import scipy.fft
from scipy.fft import fftfreq, irfft, rfft

import adsim as ad
from fdcheck import fd_jacobian

N = 16
GRID = np.linspace(0.0, 2.0 * np.pi, N, endpoint=False)


def viscous_burgers(params, steps=10, dt=2e-3):
    """Pseudo-spectral Burgers: u_t + u u_x = nu u_xx on a periodic grid,
    explicit Euler in time; params = (amplitude, viscosity)."""
    amplitude, nu = params
    k = fftfreq(N, d=1.0 / N)[: N // 2 + 1]
    u = amplitude * np.sin(GRID) + 0.1 * np.cos(2 * GRID)
    for _ in range(steps):
        u_hat = rfft(u, workers=2)
        u_x = irfft(1j * k * u_hat, n=N)
        u_xx = irfft(-(k ** 2) * u_hat, n=N, overwrite_x=True)
        u = u + dt * (nu * u_xx - u * u_x)
    return np.sum(u ** 2) / N


def power_in_band(x):
    spectrum = np.abs(scipy.fft.fft(x, norm="ortho")) ** 2
    return np.sum(spectrum[1:5])


def smoothed_field(x):
    field = x.reshape(4, 4)
    kx, ky = np.meshgrid(fftfreq(4), fftfreq(4))
    filtered = scipy.fft.ifftn(scipy.fft.fftn(field) * np.exp(-(kx ** 2 + ky ** 2)))
    return np.sum(np.real(filtered) ** 3)


CASES = [(viscous_burgers, np.array([0.8, 0.05])),
         (power_in_band, np.cos(np.arange(N) * 0.7)),
         (smoothed_field, np.sin(np.arange(16.0)))]


@pytest.mark.parametrize("f,x", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_gradients_agree_with_differences_and_replays(f, x):
    value, g = ad.value_and_grad(f)(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    np.testing.assert_allclose(g, fd_jacobian(f, [x]).ravel(), rtol=1e-6, atol=1e-9)
    v = np.cos(np.arange(x.size) + 0.3)
    assert ad.jvp(f, (x,), (v,))[1] == pytest.approx(g @ v, rel=1e-10)
    tape = ad.record(f, x)
    x2 = x * 1.05
    np.testing.assert_allclose(tape.gradient(x2), fd_jacobian(f, [x2]).ravel(),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f,x", CASES[:2], ids=lambda c: getattr(c, "__name__", ""))
def test_hvp_agrees_with_differences_of_the_gradient(f, x):
    v = np.sin(np.arange(x.size) + 1.0)
    h = 1e-5
    grad = ad.grad(f)
    want = (grad(x + h * v) - grad(x - h * v)) / (2 * h)
    np.testing.assert_allclose(ad.hvp(f, x, v), want, rtol=1e-5, atol=1e-7)


def test_calls_without_active_values_run_scipys_own_code():
    x = np.linspace(0.0, 1.0, 8)

    def f(z):
        plain = scipy.fft.dct(x)                # no active argument: SciPy's code
        return np.sum(z * plain)
    np.testing.assert_allclose(ad.grad(f)(x), scipy.fft.dct(x))


def test_transforms_without_a_rule_and_plans_are_refused_by_name():
    x = np.linspace(0.1, 1.0, 8)
    with pytest.raises(ad.UnsupportedOperation, match=r"scipy\.fft\.fht .*fft, ifft, rfft.*dctn"):
        ad.grad(lambda z: np.sum(scipy.fft.fht(z, 0.1, 0.5)))(x)
    with pytest.raises(ad.UnsupportedOperation, match="plan="):
        ad.grad(lambda z: np.sum(np.abs(scipy.fft.fft(z, plan=object()))))(x)
