"""cmath's functions of active numbers inside a recorded function (a film
on a substrate written with ``cmath``, as thin-film codes are): NumPy's
complex functions recorded in their place, through the module and through
names imported from it; cmath raises where it raises; plain numbers get
cmath's own function. They were refused as complex() of an active value."""
import cmath
from cmath import exp, sqrt

import numpy as np
import pytest

import adsim
from fdcheck import assert_close


def film_reflectance(p):
    n_film, d = p
    s = 0.5
    c1 = cmath.sqrt(1 - (s / n_film) ** 2)
    c2 = sqrt(1 - (s / (1.5 + 0.01j)) ** 2)                # from cmath import sqrt
    delta = 2 * cmath.pi * n_film * d * c1 / 0.6
    r01 = (cmath.cos(0.52) - n_film * c1) / (cmath.cos(0.52) + n_film * c1)
    r12 = (n_film * c1 - 1.5 * c2) / (n_film * c1 + 1.5 * c2)
    r = (r01 + r12 * exp(2j * delta)) / (1 + r01 * r12 * cmath.exp(2j * delta))
    magnitude, phase = cmath.polar(r)
    return (abs(r) ** 2 + cmath.phase(r) + magnitude * phase + cmath.rect(n_film, d).real
            + cmath.log(n_film + 1j * d).imag + cmath.sqrt(-d).imag + cmath.tanh(d * 1j).imag)


def _differences(f, x, h=1e-6):
    return np.array([(f(x + e) - f(x - e)) / (2 * h) for e in np.eye(x.size) * h])


def test_a_film_written_with_cmath():
    x = np.array([1.38, 0.11])
    tape = adsim.record(film_reflectance, x)
    assert_close(tape.forward(x), film_reflectance(x), rtol=1e-14, atol=1e-15, what="value")
    g = adsim.grad(film_reflectance)(x)
    assert_close(g, _differences(film_reflectance, x), rtol=1e-7, atol=1e-9, what="gradient")
    v = np.array([1.0, 0.3])
    _, jv = adsim.jvp(film_reflectance, (x,), (v,))
    assert_close(jv, g @ v, rtol=1e-12, atol=1e-15, what="jvp vs grad")
    want = (adsim.grad(film_reflectance)(x + 1e-6 * v) -
            adsim.grad(film_reflectance)(x - 1e-6 * v)) / 2e-6
    assert_close(adsim.hvp(film_reflectance, x, v), want, rtol=1e-5, atol=1e-8, what="hvp")
    x2 = 1.02 * x
    assert_close(tape.forward(x2), film_reflectance(x2), rtol=1e-13, atol=1e-15,
                 what="replayed value")


def test_cmath_raises_where_it_raises_and_names_numpy_for_arrays():
    with pytest.raises(ValueError, match="math domain error"):
        adsim.grad(lambda p: cmath.log(0.0 * p[0]).real)(np.array([1.0]))
    with pytest.raises(TypeError, match=r"cmath.exp takes a number.*shape \(2,\)"):
        adsim.grad(lambda p: cmath.exp(p).real)(np.array([1.0, 2.0]))
    assert cmath.sqrt(-4.0) == 2j and exp is cmath.exp
