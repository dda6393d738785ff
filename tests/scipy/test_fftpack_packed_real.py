"""scipy.fftpack's ``rfft`` and ``irfft`` -- the packed real format
[y0, Re y1, Im y1, ..., Re y(n/2)] -- of active arrays: values against
SciPy's for even and odd lengths, ``n=`` (truncating and padding),
``axis=`` and ``overwrite_x=``; every sweep against central differences
(the dot-product test, hvp, vector modes, dense Jacobians), replays at a
new point and tape files; complex input is refused as SciPy refuses it."""
import numpy as np
import pytest
import scipy.fftpack as fp

import adsim as ad
from fdcheck import check_tape
from tapefile_replays import assert_same_replays, copies

RNG = np.random.default_rng(24)

CASES = {
    "rfft even": (lambda x: fp.rfft(x), (8,)),
    "rfft odd": (lambda x: fp.rfft(x), (7,)),
    "rfft n truncates": (lambda x: fp.rfft(x, n=5), (7,)),
    "rfft n pads, axis 0": (lambda x: fp.rfft(x, 9, axis=0), (6, 2)),
    "rfft axis 1 overwrite_x": (lambda x: fp.rfft(x * 1.0, axis=1, overwrite_x=True), (2, 5)),
    "rfft of one point": (lambda x: fp.rfft(x, n=1), (3,)),
    "irfft even": (lambda x: fp.irfft(x), (8,)),
    "irfft odd": (lambda x: fp.irfft(x), (7,)),
    "irfft n truncates": (lambda x: fp.irfft(x, n=4), (7,)),
    "irfft n pads, axis 0": (lambda x: fp.irfft(x, 8, axis=0), (5, 3)),
    "irfft axis -2 overwrite_x": (lambda x: fp.irfft(x * 1.0, axis=-2, overwrite_x=True),
                                  (5, 2)),
    "irfft of rfft, squared": (lambda x: fp.irfft(fp.rfft(x) ** 2), (6,)),
}


def _point(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("name", list(CASES))
def test_values_every_sweep_replays_and_tape_files(name, tmp_path):
    f, shape = CASES[name]
    x = _point(shape)
    tape = check_tape(f, [x], value_rtol=1e-13, value_atol=1e-14)
    x2 = _point(shape, seed=1)
    np.testing.assert_allclose(tape.forward(x2), f(x2), rtol=1e-13, atol=1e-14)
    assert_same_replays(tape, copies(tape, tmp_path), [(x,), (x2,)])


@pytest.mark.parametrize("name", [name for name in CASES if "squared" not in name])
def test_the_jacobian_is_scipys_matrix(name):
    """Linear transforms: the Jacobian at any point is the matrix whose
    columns are SciPy's transforms of the unit vectors."""
    f, shape = CASES[name]
    x = _point(shape, seed=2)
    units = np.eye(x.size).reshape((x.size,) + shape)
    matrix = np.stack([np.ravel(f(e)) for e in units], axis=1)
    np.testing.assert_allclose(np.reshape(ad.jacobian(f)(x), matrix.shape), matrix,
                               rtol=1e-13, atol=1e-14)


def test_irfft_inverts_rfft():
    x = _point((3, 7))
    for axis in (0, 1):
        np.testing.assert_allclose(ad.record(lambda z: fp.irfft(fp.rfft(z, axis=axis), axis=axis),
                                             x).forward(x), x, rtol=1e-13, atol=1e-14)


def test_a_gradient_through_the_packed_spectrum():
    """The power at each packed frequency: y0^2, (Re yk)^2 + (Im yk)^2."""
    def power(x):
        p = fp.rfft(x)
        return p[0] ** 2 + np.sum(p[1::2] ** 2) + np.sum(p[2::2] ** 2)
    x = _point((8,))
    y = np.fft.rfft(x)
    # Parseval on the half spectrum of an even length: the power counts y0 and y4
    # once and the others once (not twice), so it is |y|^2 summed over 0..4
    want = np.sum(np.abs(y) ** 2)
    np.testing.assert_allclose(power(x), want, rtol=1e-13)
    check_tape(power, [x])


@pytest.mark.parametrize("f", [fp.rfft, fp.irfft])
def test_complex_input_is_refused(f):
    def g(x):
        return f(x * (1.0 + 1.0j)).real
    with pytest.raises(ad.InvalidInput, match=f"scipy.fftpack.{f.__name__} takes a real sequence"):
        ad.grad(lambda x: np.sum(g(x)))(_point((4,)))
