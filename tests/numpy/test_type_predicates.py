"""Library code that asks an array about its type before computing --
``np.iscomplexobj`` to pick a formula, ``np.iscomplex``/``np.isreal`` to mask
entries -- runs on active arrays with NumPy's answers, and its derivatives
are checked in every mode and on replay."""
import numpy as np

import adsim
from fdcheck import check_tape

X = np.array([0.3, -1.2, 0.8, 2.0])


def energy(u):
    """|u|^2 summed, written for real or complex fields as libraries do."""
    if np.iscomplexobj(u):
        return np.sum(u.real ** 2 + u.imag ** 2)
    return np.sum(u ** 2)


def field_energy(x):
    real_part = energy(x)                        # real branch
    wave = x * np.exp(1j * x[::-1])              # complex branch
    return real_part + energy(wave) + np.sum(np.where(np.isreal(x), x, 0.0) ** 3)


def test_answers_are_numpys():
    def f(x):
        z = x + np.array([0.0, 1j, 0.0, -2j])
        got = (np.iscomplexobj(x), np.isrealobj(x), np.iscomplex(x), np.isreal(x),
               np.iscomplexobj(z), np.isrealobj(z), np.iscomplex(z), np.isreal(z))
        plain_z = X + np.array([0.0, 1j, 0.0, -2j])
        want = (np.iscomplexobj(X), np.isrealobj(X), np.iscomplex(X), np.isreal(X),
                np.iscomplexobj(plain_z), np.isrealobj(plain_z), np.iscomplex(plain_z),
                np.isreal(plain_z))
        for g, w in zip(got, want):
            assert np.array_equal(adsim.value(g), w)      # boolean data of z read as plain
        return np.sum(x)
    adsim.grad(f)(X)


def test_a_formula_chosen_by_type_in_every_mode():
    check_tape(field_energy, [X])


def test_scalar_branch_on_iscomplex():
    f = lambda t: np.real(t ** 2 if np.iscomplex(t) else 3.0 * t)    # noqa: E731
    assert adsim.grad(f)(2.0) == 3.0


def test_replay_at_a_new_point():
    tape = adsim.record(field_energy, X)
    x2 = X * 0.9
    np.testing.assert_allclose(tape.gradient(x2), adsim.grad(field_energy)(x2), rtol=1e-12)
    np.testing.assert_allclose(tape.forward(x2), field_energy(x2), rtol=1e-13)
