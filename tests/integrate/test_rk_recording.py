"""How explicit Runge-Kutta steps are recorded: the cheap step-size floor
test never lets a step below SciPy's minimum through, the stage times are
left out only for a fun that provably never reads t, and a list-valued fun
(active numbers and plain ones) written into the stage matrix number by
number computes what its array would."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp
from adsim.integrate._common import min_step, spacing_bound
from adsim.integrate._rhs import RightHandSide
from ivp_problems import METHODS

TINY = np.finfo(float).tiny


def _times():
    """Powers of two and their neighbours, subnormals, zero, both signs."""
    rng = np.random.default_rng(5)
    powers = np.ldexp(1.0, np.arange(-1074, 1000, 37))
    near = np.concatenate([np.nextafter(powers, 0), powers, np.nextafter(powers, np.inf)])
    mixed = np.concatenate([near, rng.uniform(-1e3, 1e3, 200), [0.0, TINY, 5e-324]])
    return np.concatenate([mixed, -mixed])


@pytest.mark.parametrize("direction", [1.0, -1.0])
def test_spacing_bound_is_at_least_the_smallest_step(direction):
    for t in _times():
        smallest = min_step(t, direction)
        # t on its way to t_bound: |t| <= |t_bound| or the bound is taken at t itself
        for t_bound in (t, direction * (abs(t) + 1.0), 2 * t, -direction * 1e300):
            if direction * (t - t_bound) > 0:
                continue
            assert spacing_bound(t, t_bound, direction) >= smallest, (t, t_bound)
    # an active t_bound leaves the bound at t (recorded, not a constant of t_bound's value)
    tape = adsim.record(lambda x: spacing_bound(x[0], x[1], 1.0), np.array([3.0, 1e300]))
    assert tape.forward(np.array([3.0, 8.0])) == spacing_bound(3.0, 3.0, 1.0)
    assert tape.forward(np.array([1e300, 1e300])) == spacing_bound(1e300, 1e300, 1.0)


def test_time_is_passed_to_a_fun_that_reads_it_in_any_way():
    def autonomous(t, y):
        return -y

    def direct(t, y):
        return -t * y

    def nested(t, y):
        decay = lambda: np.exp(-t)         # noqa: E731  (reads t from an inner function)
        return -decay() * y

    def by_name(t, y):
        return -locals()["t"] * y

    readers = {f.__name__: RightHandSide(f, 2).reads_time
               for f in (autonomous, direct, nested, by_name, lambda *a: -a[1])}
    assert readers == {"autonomous": False, "direct": True, "nested": True, "by_name": True,
                       "<lambda>": True}
    t_eval = np.linspace(0.5, 2.0, 4)
    for fun in (autonomous, direct, nested, by_name):
        ref = scipy_solve_ivp(fun, (0.0, 2.0), [1.0, 2.0], t_eval=t_eval, rtol=1e-8)
        tape = adsim.record(
            lambda y0: solve_ivp(fun, (0.0, 2.0), y0, t_eval=t_eval, rtol=1e-8).y,
            np.array([1.0, 2.0]))
        np.testing.assert_allclose(tape.forward(np.array([1.0, 2.0])), ref.y, rtol=1e-10)


@pytest.mark.parametrize("method", METHODS)
def test_list_valued_fun_with_plain_numbers(method):
    """[y[1], 2.0 - sin(y[0]) * c]: an active number and, for c = 0, a plain one."""
    def fun(t, y, c):
        return [y[1], 2.0 - np.sin(y[0]) * c[0]] if c[0] else [y[1], 2.0]

    t_eval = np.linspace(0.25, 3.0, 12)
    for c in (np.array([0.7]), np.array([0.0])):
        ref = scipy_solve_ivp(fun, (0.0, 3.0), [0.3, 0.0], method=method, t_eval=t_eval,
                              args=(c,), rtol=1e-9, atol=1e-12)
        g = adsim.grad(lambda y0: np.sum(solve_ivp(fun, (0.0, 3.0), y0, method=method,
                                                   t_eval=t_eval, args=(c,), rtol=1e-9,
                                                   atol=1e-12).y[0]))(np.array([0.3, 0.0]))
        eps = 1e-4         # central differences, no step-size decision flipping

        def plain(y0):
            return np.sum(solve_ivp(fun, (0.0, 3.0), y0, method=method, t_eval=t_eval,
                                    args=(c,), rtol=1e-9, atol=1e-12).y[0])
        fd = [(plain(np.array([0.3, 0.0]) + eps * e) - plain(np.array([0.3, 0.0]) - eps * e))
              / (2 * eps) for e in np.eye(2)]
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)
        assert np.sum(ref.y[0]) == pytest.approx(plain(np.array([0.3, 0.0])), rel=1e-13)
