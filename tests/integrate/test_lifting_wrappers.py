"""The wrappers that hand a solver's functions their lifted parameters
(containers spread, objects bound, closures and sparse matrices of active
values swapped in: adsim/_containers) share one frame,
``adsim._nesting.nested.wrapped``: an absent function stays absent, the
wrapper bears the function's name and attributes (an event's ``terminal``
and ``direction``, also from the class of a callable object), and every
place swapped in holds the caller's value again afterwards, whatever the
function raises."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.integrate import solve_ivp

import adsim
from adsim._nesting.nested import swapped, wrapped


class Crossing:
    """An event as a callable object: SciPy reads terminal and direction
    from its class."""
    terminal = True
    direction = -1.0

    def __call__(self, t, y, p, params, L):
        return y[0] - 0.5


def test_the_frame_keeps_names_attributes_and_absence():
    def body(f, *a, **kw):
        return 2 * f(*a, **kw)

    def event(t, y):
        return y
    event.terminal = True
    assert wrapped(None, body) is None
    w = wrapped(event, body)
    assert w.__name__ == "event" and w.__wrapped__ is event and w.terminal is True
    assert w(0.0, 3.0) == 6.0
    c = wrapped(Crossing(), body)
    assert (c.terminal, c.direction) == (True, -1.0)


def test_swapped_places_are_restored_when_the_function_raises():
    class Place:
        def __init__(self):
            self.v = "outer"

        def get(self):
            return self.v

        def set(self, v):
            self.v = v
    place = Place()
    with pytest.raises(ZeroDivisionError):
        with swapped([place], ["inner"]):
            assert place.v == "inner"
            1 / 0
    assert place.v == "outer"


L = sp.diags([np.ones(2), -2.0 * np.ones(3), np.ones(2)], [-1, 0, 1], format="csr")


class Params:
    def __init__(self, k):
        self.k = k


def terminal_time(x):
    """Every wrapper at once: an object bound (``Params``), a container
    spread (the dict), a closure lifted (``x[2]``), a sparse matrix of
    active values passed by its entries, and a terminal event given as a
    callable object."""
    def rhs(t, y, p, params, M):
        return -p.k * y + params["c"] * (M @ y) + x[2]
    sol = solve_ivp(rhs, (0.0, 5.0), np.ones(3), args=(Params(x[0]), {"c": x[1]}, x[3] * L),
                    events=Crossing(), rtol=1e-10, atol=1e-12)
    assert sol.status == 1
    return sol.t_events[0][0]


def _differences(f, x, h=1e-5):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def test_a_terminal_event_through_every_wrapper_is_differentiated():
    x = np.array([0.6, 0.1, 0.02, 0.2])
    g = adsim.grad(terminal_time)
    np.testing.assert_allclose(g(x), _differences(terminal_time, x), rtol=1e-5, atol=1e-7)
    x2 = x * 1.1        # the held gradient replays at a new point
    np.testing.assert_allclose(g(x2), _differences(terminal_time, x2), rtol=1e-5, atol=1e-7)
    v = np.array([0.3, -0.2, 0.5, 0.1])
    _, jv = adsim.jvp(terminal_time, (x,), (v,))
    np.testing.assert_allclose(jv, g(x) @ v, rtol=1e-10)
