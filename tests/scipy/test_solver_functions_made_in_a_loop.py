"""A solver's function made in a loop reads the loop's variables from its
closure (or a script's globals) when it runs, as Python reads them; the
program's own calls run during the solve, but adsim calls the function
again later (the second-order rules of the implicit function theorem,
replays solving again), when the loop has moved on. Those calls must see
the values the program's solve saw (adsim/_nesting/outer_values.py,
PlainReads); they saw the loop's last values, which gave Hessians wrong
without an error, or replays that did not converge. A setting held in a
dict updated in place cannot be rebound: there the second-order rules
differentiate the tapes recorded at each solve."""
import numpy as np
import pytest
from scipy.optimize import brentq, fixed_point, fsolve, least_squares, minimize, root

import adsim
from fdcheck import assert_close

SETTINGS = [(0, 1.0), (1, 3.0)]


def by_brentq(p):
    out = []
    for i, k in SETTINGS:
        a = p[i]
        out.append(brentq(lambda x: x ** 3 + k * x - a, -5.0, 5.0, xtol=1e-15))
    return out[0] ** 2 + out[1]


def by_fsolve(p):
    out = []
    for i, k in SETTINGS:
        a = p[i]
        out.append(fsolve(lambda x: x ** 3 + k * x - a, [0.5], xtol=1e-14)[0])
    return out[0] ** 2 + out[1]


def by_minimize(p):
    out = []
    for i, k in SETTINGS:
        a = p[i]
        out.append(minimize(lambda x: np.sum(x ** 4) + k * np.sum((x - a) ** 2), np.zeros(1),
                            method="BFGS", options={"gtol": 1e-12}).x[0])
    return out[0] ** 2 + out[1]


def by_args_and_a_plain_closure(p):
    # the active value through args=, the loop's plain setting from the closure
    out = []
    for i, k in SETTINGS:
        out.append(brentq(lambda x, a: x ** 3 + k * x - a, -5.0, 5.0, args=(p[i],), xtol=1e-15))
    return out[0] ** 2 + out[1]


# The loop's setting held in a dict or array updated in place, which a
# rebinding of places cannot restore: the second-order rules differentiate
# the tapes recorded at each solve instead of calling the function again.

def by_root_reading_a_dict(p):
    setting = {"k": 0.0}
    out = []
    for i, k in SETTINGS:
        setting["k"] = k
        out.append(root(lambda x: x ** 3 + setting["k"] * x - p[i], [0.5], tol=1e-12).x[0])
    return out[0] ** 2 + out[1]


def by_minimize_reading_a_dict(p):
    setting = {"k": 0.0}
    out = []
    for i, k in SETTINGS:
        setting["k"] = k
        out.append(minimize(lambda x: np.sum(x ** 4) + setting["k"] * np.sum((x - p[i]) ** 2),
                            np.zeros(1), method="BFGS", options={"gtol": 1e-12}).x[0])
    return out[0] ** 2 + out[1]


def by_least_squares_reading_a_list(p):
    setting = [0.0]
    out = []
    for i, k in SETTINGS:
        setting[0] = k
        out.append(least_squares(lambda x: x ** 3 + setting[0] * x - p[i], [0.5], xtol=1e-15,
                                 ftol=1e-15, gtol=1e-15).x[0])
    return out[0] ** 2 + out[1]


def by_fixed_point_reading_a_dict(p):
    setting = {"k": 0.0}
    out = []
    for i, k in SETTINGS:
        setting["k"] = k
        # a Newton map of the same equation
        out.append(fixed_point(lambda x: x - (x ** 3 + setting["k"] * x - p[i]) /
                               (3 * x ** 2 + setting["k"]), [0.5], xtol=1e-14)[0])
    return out[0] ** 2 + out[1]


def _gradient_differences(f, x, h=1e-5):
    g = adsim.grad(f)
    return np.array([(g(x + e) - g(x - e)) / (2 * h) for e in np.eye(x.size) * h]).T


@pytest.mark.parametrize("f", [by_brentq, by_fsolve, by_minimize, by_args_and_a_plain_closure,
                               by_root_reading_a_dict, by_minimize_reading_a_dict,
                               by_least_squares_reading_a_list, by_fixed_point_reading_a_dict])
def test_second_derivatives_and_replays_see_the_values_of_their_own_solve(f):
    x = np.array([0.7, 1.3])
    # BFGS's solutions, to about 1e-9
    rtol = 1e-4 if f in (by_minimize, by_minimize_reading_a_dict) else 1e-6
    want = _gradient_differences(f, x)
    assert_close(adsim.hessian(f)(x), want, rtol=rtol, atol=1e-9, what="Hessian")
    assert_close(adsim.hvp(f, x, np.array([1.0, -0.5])), want @ np.array([1.0, -0.5]),
                 rtol=rtol, atol=1e-9, what="hvp")
    tape = adsim.record(f, x)
    x2 = x * np.array([1.02, 0.97])
    assert_close(tape.forward(x2), f(x2), rtol=1e-4 * rtol, atol=1e-14, what="replayed value")


def test_the_programs_places_keep_what_it_put_there():
    """The values are rebound only while adsim's own later calls run: after
    them the closure holds the loop's last value again, and a counter the
    function keeps counts the program's calls as before."""
    calls = {"n": 0}
    seen = []

    def f(p):
        k = 0.0
        out = []
        for k in (1.0, 3.0):
            def residual(x):
                calls["n"] += 1
                seen.append(k)
                return x ** 3 + k * x - p[0]
            out.append(brentq(residual, -5.0, 5.0, xtol=1e-15))
        return out[0] ** 2 + out[1]

    x = np.array([0.7])
    adsim.hvp(f, x, np.array([1.0]))
    assert set(seen) == {1.0, 3.0}
    calls["n"] = 0
    plain = f(np.array([0.7]))
    assert np.isfinite(plain) and calls["n"] > 0


def by_default_arguments(p):
    # the idiom that fixes a loop's values in a function made in it
    out = []
    for i, k in SETTINGS:
        out.append(brentq(lambda x, k=k, a=p[i]: x ** 3 + k * x - a, -5.0, 5.0, xtol=1e-15))
    return out[0] ** 2 + out[1]


def by_keyword_only_default(p):
    def residual(x, *, a=p[0]):
        return x ** 3 + 2.0 * x - a
    return brentq(residual, -5.0, 5.0, xtol=1e-15) ** 2 + p[1]


@pytest.mark.parametrize("f", [by_default_arguments, by_keyword_only_default])
def test_active_values_bound_as_default_arguments_are_parameters(f):
    """An active value bound as a default (``lambda x, a=p[i]: ...``) is a
    parameter of the solve, as one read from the closure is; it was refused
    as read from a place adsim does not search."""
    x = np.array([0.7, 1.3])
    want = _gradient_differences(f, x)
    assert_close(adsim.hessian(f)(x), want, rtol=1e-6, atol=1e-9, what="Hessian")
    _, jv = adsim.jvp(f, (x,), (np.array([0.3, -0.2]),))
    assert_close(jv, adsim.grad(f)(x) @ np.array([0.3, -0.2]), rtol=1e-12, atol=1e-15,
                 what="jvp vs grad")
    tape = adsim.record(f, x)
    x2 = x * np.array([1.02, 0.97])
    assert_close(tape.forward(x2), f(x2), rtol=1e-12, atol=1e-14, what="replayed value")
    assert_close(tape.gradient(x2), adsim.grad(f)(x2), rtol=1e-12, atol=1e-14,
                 what="replayed gradient")
