"""scipy.fft's and scipy.fftpack's real-to-real transforms (DCT and DST of
types 1-4, inverses, n-D forms) and the Hermitian transforms (hfft, ihfft
and their 2-D and n-D forms, numpy.fft's and scipy.fft's) of active arrays.

The adjoint rule of adsim/_scipy/fft_r2r.py is checked against the
transposed matrix of every variant (kind, inverse, type, norm,
orthogonalize); each spelling users write is checked in every sweep
(values against SciPy's, tangents and adjoints against central
differences, the dot-product test, hvp, vector modes, dense Jacobians),
its sparsity pattern, replays at a new point, batched replays and tape
files."""
import itertools

import numpy as np
import pytest
import scipy.fft as sf
import scipy.fftpack as fp

import adsim as ad
from adsim import tapefile
from adsim._scipy.fft_r2r import R2R
from adsim.sparse.pattern import hessian_pattern, jacobian_pattern
from fdcheck import assert_close, check_tape, fd_jacobian

RNG = np.random.default_rng(15)


def _matrix(f, n):
    return np.stack([f(np.eye(n)[i]) for i in range(n)], axis=1)


@pytest.mark.parametrize("kind,inverse", list(itertools.product(("dct", "dst"), (False, True))))
def test_the_adjoint_is_the_transposed_matrix_of_every_variant(kind, inverse):
    fn = getattr(sf, f"{'i' if inverse else ''}{kind}")
    for t, norm, orth, n in itertools.product((1, 2, 3, 4), (None, "backward", "ortho", "forward"),
                                              (None, False, True), (2, 3, 6)):
        M = _matrix(lambda e: fn(e, type=t, norm=norm, orthogonalize=orth), n)
        plan = R2R(kind, inverse, t, (n,), (n,), (0,), norm, orth)
        MT = _matrix(plan.adjoint, n)
        assert_close(MT, M.T, 1e-13, 1e-13, f"{kind} inverse={inverse} type {t} {norm} {orth}")


def test_the_adjoint_with_padding_truncation_and_several_axes_passes_the_dot_test():
    x = RNG.standard_normal((3, 4, 5))
    for s, axes in (((5, 2), (0, 2)), ((4, 7), (2, 1)), ((2,), (1,))):
        for kind, inverse, t in (("dct", False, 1), ("dst", True, 2), ("dct", True, 3),
                                 ("dst", False, 4)):
            plan = R2R(kind, inverse, t, x.shape, s, axes, "forward", None)
            y = plan.forward(x)
            w = RNG.standard_normal(y.shape)
            assert np.vdot(w, y) == pytest.approx(np.vdot(plan.adjoint(w), x), rel=1e-12)


def _sum_weighted(y):
    return np.sin(np.arange(y.size)).reshape(y.shape) * y


def _complex_parts(fn, shape, **kw):
    def f(x):
        z = fn(x[0] + 1j * x[1], **kw)
        return np.stack([np.real(z), np.imag(z)])
    return f, (2,) + shape


CASES = {
    "dct": (lambda x: sf.dct(x), (6,)),
    "dct type 1 n ortho": (lambda x: sf.dct(x, type=1, n=8, norm="ortho"), (6,)),
    "dct type 3 forward axis 0": (lambda x: sf.dct(x, 3, axis=0, norm="forward"), (4, 3)),
    "dct type 4 orthogonalize": (lambda x: sf.dct(x, 4, norm="backward", orthogonalize=True),
                                 (5,)),
    "dct type 2 ortho not orthogonalized": (
        lambda x: sf.dct(x, norm="ortho", orthogonalize=False), (5,)),
    "idct type 1 truncated": (lambda x: sf.idct(x, type=1, n=4), (6,)),
    "idct type 2 ortho": (lambda x: sf.idct(x, norm="ortho", workers=2), (5,)),
    "idct type 3": (lambda x: sf.idct(x * 1.0, type=3, overwrite_x=True), (5,)),
    "dst type 1": (lambda x: sf.dst(x, type=1), (5,)),
    "dst type 2 orthogonalize": (lambda x: sf.dst(x, orthogonalize=True), (5,)),
    "dst type 3 ortho": (lambda x: sf.dst(x, type=3, norm="ortho"), (2, 5)),
    "idst type 4 forward": (lambda x: sf.idst(x, type=4, norm="forward"), (5,)),
    "idst type 2 padded": (lambda x: sf.idst(x, n=7, axis=-2), (4, 2)),
    "dctn": (lambda x: sf.dctn(x), (3, 4)),
    "dctn type 1 s axes": (lambda x: sf.dctn(x, type=1, s=(5, 3), axes=(0, 2)), (3, 2, 4)),
    "idctn ortho": (lambda x: sf.idctn(x, norm="ortho", axes=1), (3, 4)),
    "dstn type 3 s": (lambda x: sf.dstn(x, type=3, s=(3, 6)), (3, 4)),
    "idstn type 4": (lambda x: sf.idstn(x, type=4, orthogonalize=False, norm="ortho"), (3, 3)),
    "dct of a complex array": _complex_parts(sf.dct, (5,), type=2, norm="ortho"),
    "idstn of a complex array": _complex_parts(sf.idstn, (2, 3), type=1),
    "fftpack dct": (lambda x: fp.dct(x, type=1), (6,)),
    "fftpack idct": (lambda x: fp.idct(x, axis=0), (4, 2)),
    "fftpack idct ortho": (lambda x: fp.idct(x, type=3, norm="ortho", n=6), (5,)),
    "fftpack dst": (lambda x: fp.dst(x * 1.0, type=4, overwrite_x=True), (5,)),
    "fftpack idst": (lambda x: fp.idst(x, type=1), (5,)),
    "fftpack dctn": (lambda x: fp.dctn(x, shape=(4, 2)), (3, 3)),
    "fftpack idctn": (lambda x: fp.idctn(x, type=3, axes=(0,)), (3, 3)),
    "fftpack dstn": (lambda x: fp.dstn(x, type=2, norm="ortho"), (3, 4)),
    "fftpack idstn": (lambda x: fp.idstn(x, type=4, shape=(5,), axes=1), (3, 4)),
    "scipy hfft": (lambda x: sf.hfft(x, n=8), (5,)),
    "scipy ihfft": (lambda x: sf.ihfft(x, norm="ortho").imag, (6,)),
    "scipy hfft2": (lambda x: sf.hfft2(x, s=(2, 5)), (2, 2, 3)),
    "scipy ihfft2": (lambda x: np.abs(sf.ihfft2(x)) ** 2, (3, 4)),
    "scipy hfftn": (lambda x: sf.hfftn(x, norm="forward"), (3, 3)),
    "scipy ihfftn": (lambda x: sf.ihfftn(x, s=(4,), axes=(0,)).real, (3, 3)),
    "scipy hfft of a complex array": _complex_parts(sf.hfft, (4,), norm="ortho"),
    "numpy hfft": (lambda x: np.fft.hfft(x), (5,)),
    "numpy hfft axis norm": (lambda x: np.fft.hfft(x, n=4, axis=0, norm="forward"), (3, 2)),
    "numpy ihfft": (lambda x: np.fft.ihfft(x, n=5).real, (6,)),
    "numpy hfft of a complex array": _complex_parts(np.fft.hfft, (4,), n=6),
}


@pytest.mark.parametrize("name", CASES)
def test_every_sweep_agrees_with_differences(name):
    f, shape = CASES[name]
    x = RNG.uniform(-1.0, 1.0, shape)
    check_tape(f, [x], order=2, value_rtol=1e-12, value_atol=1e-13)


@pytest.mark.parametrize("name", ["dct type 1 n ortho", "idstn type 4", "dctn type 1 s axes",
                                  "fftpack idctn", "scipy hfft2", "dct of a complex array"])
def test_replays_at_a_new_point_batched_replays_and_files(name, tmp_path):
    f, shape = CASES[name]
    x, x2 = RNG.uniform(-1.0, 1.0, shape), RNG.uniform(-1.0, 1.0, shape)

    def g(z):
        return np.sum(_sum_weighted(f(z)) ** 3)
    tape = ad.record(g, x)
    assert tape.forward(x2) == pytest.approx(g(x2), rel=1e-12)
    assert_close(tape.gradient(x2).ravel(), fd_jacobian(g, [x2]).ravel(), 1e-6, 1e-8, "gradient at x2")
    X = np.stack([x, x2, 0.5 * x])
    G = tape.batched.gradient(X)
    for b in range(3):
        assert np.array_equal(G[b], tape.gradient(X[b]))
    path = tmp_path / "t.adsim"
    tape.save(path)
    loaded = tapefile.load(path)
    assert tapefile.dumps(loaded) == tapefile.dumps(tape)
    for z in (x, x2):
        assert loaded.gradient(z).tobytes() == tape.gradient(z).tobytes()
        assert loaded.forward(z) == tape.forward(z)


def test_the_jacobian_pattern_is_dense_along_the_transformed_axes_only():
    x = RNG.uniform(-1.0, 1.0, (3, 4))
    tape = ad.record(lambda z: sf.dctn(z, type=1, s=(5,), axes=(1,)), x)
    want = np.kron(np.eye(3), np.ones((5, 4)))
    assert np.array_equal(jacobian_pattern(tape).toarray(), want.astype(bool))
    J = fd_jacobian(lambda z: sf.dctn(z, type=1, s=(5,), axes=(1,)), [x])
    assert not np.any(np.abs(J)[~want.astype(bool)] > 1e-9)
    assert hessian_pattern(tape).nnz == 0          # linear: no second derivative


def test_an_empty_axes_is_the_identity_and_bad_arguments_fail_as_in_scipy():
    x = RNG.uniform(-1.0, 1.0, (3,))
    assert np.array_equal(ad.jacobian(lambda z: sf.dctn(z, axes=()))(x), np.eye(3))
    with pytest.raises(ValueError, match="type"):
        ad.grad(lambda z: np.sum(sf.dct(z, type=5)))(x)
    with pytest.raises(ValueError, match="norm"):
        ad.grad(lambda z: np.sum(sf.dst(z, norm="unitary")))(x)
    with pytest.raises(ValueError, match="DCT-I"):
        ad.grad(lambda z: np.sum(sf.dct(z, type=1, n=1)))(x)
    with pytest.raises(ValueError, match="axes and shape"):
        ad.grad(lambda z: np.sum(fp.dctn(z.reshape(3, 1), shape=(2,))))(x)


def test_a_spectral_poisson_solve_with_dst_differentiates():
    """-u'' = f on (0, 1) with u(0) = u(1) = 0, solved by DST-I; the
    gradient of the solution's energy with respect to f."""
    n = 15
    k = np.arange(1, n + 1)
    eig = (2 * (n + 1) * np.sin(np.pi * k / (2 * (n + 1)))) ** 2

    def energy(f):
        u = sf.idst(sf.dst(f, type=1) / eig, type=1)
        return np.sum(u * f) / (n + 1)
    f = np.sin(np.pi * np.linspace(0.05, 0.95, n)) + 0.1
    assert_close(ad.grad(energy)(f), fd_jacobian(energy, [f]).ravel(), 1e-7, 1e-10, "gradient")


def test_fftpacks_transforms_are_in_the_explicit_namespace_with_interposition_off():
    import adsim.scipy.fftpack as explicit
    x = RNG.uniform(-1.0, 1.0, (5,))

    def f(z):
        return np.sum(explicit.idct(z, type=2) ** 2)
    with ad.interposition(False):
        g = ad.grad(f)(x)
    M = _matrix(lambda e: fp.idct(e, type=2), 5)
    assert_close(g, 2.0 * M.T @ (M @ x), 1e-12, 1e-12, "gradient")
    assert explicit.dct(x).tolist() == fp.dct(x).tolist()     # plain: SciPy's own
