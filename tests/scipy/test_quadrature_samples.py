"""scipy.integrate's rules on samples (trapezoid, cumulative_trapezoid,
simpson, romb) called unchanged on active samples, sample points and
spacings: values against SciPy's, every sweep against central differences,
replays at new samples, and a fitted profile integrated as written."""
import numpy as np
import pytest
import scipy.integrate as si

import adsim as ad
from adsim.errors import UnsupportedOperation
from fdcheck import assert_close, check_tape

rng = np.random.default_rng(5)
X = np.sort(rng.uniform(0.0, 2.0, 7))
Y = rng.standard_normal(7)
Y2 = rng.standard_normal((3, 6))
Y9 = rng.standard_normal(9)

CASES = {
    "trapezoid dx": (lambda y: si.trapezoid(y, dx=0.3), [Y]),
    "trapezoid x": (lambda y, x: si.trapezoid(y, x), [Y, X]),
    "trapezoid 2-d axis 0": (lambda y: si.trapezoid(y, dx=0.5, axis=0), [Y2]),
    "trapezoid 2-d x": (lambda y, x: si.trapezoid(y, x=x), [Y2, np.linspace(0, 1, 6) ** 2]),
    "cumulative_trapezoid": (lambda y, x: si.cumulative_trapezoid(y, x), [Y, X]),
    "cumulative_trapezoid initial": (
        lambda y: si.cumulative_trapezoid(y, dx=0.2, axis=0, initial=0), [Y2]),
    "simpson odd x": (lambda y: si.simpson(y, x=X), [Y]),
    "simpson even x": (lambda y: si.simpson(y[:6], x=X[:6]), [Y]),
    "simpson dx": (lambda y, dx: si.simpson(y, dx=dx), [Y2, np.array(0.25)]),
    "simpson axis 0": (lambda y: si.simpson(y, dx=0.1, axis=0), [Y2]),
    "romb": (lambda y, dx: si.romb(y, dx), [Y9, np.array(0.125)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_rules_every_sweep(name):
    f, xs = CASES[name]
    check_tape(f, xs, rtol=1e-7, value_rtol=1e-12, value_atol=1e-13)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_rules_replay_at_new_samples(name):
    f, xs = CASES[name]
    tape = ad.record(f, *xs)
    moved = [x + 0.01 * rng.standard_normal(np.shape(x)) for x in xs]
    assert_close(tape.forward(*moved), f(*moved), rtol=1e-12, atol=1e-13)


def test_fitted_decay_profile_integrated():
    """Total dose from a sampled concentration profile: the profile's rate
    and amplitude are fitted parameters; the dose by Simpson's rule and the
    running dose by the cumulative trapezoid."""
    t = np.linspace(0.0, 4.0, 17)

    def dose(theta):
        c = theta[0] * np.exp(-theta[1] * t)
        return si.simpson(c, x=t) + si.cumulative_trapezoid(c, t)[-1]
    theta = np.array([2.0, 0.7])
    exact = theta[0] / theta[1] * (1.0 - np.exp(-4.0 * theta[1]))
    assert_close(dose(theta), 2 * exact, rtol=1e-2)
    check_tape(dose, [theta], rtol=1e-7)


def test_active_simpson_sample_points_are_refused():
    with pytest.raises(UnsupportedOperation, match="trapezoid"):
        ad.grad(lambda x: si.simpson(np.sin(x), x=x))(X)
