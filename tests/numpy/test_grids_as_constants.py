"""Grids made inside a recorded function (``np.linspace``, ``np.logspace``,
``np.geomspace``, a float ``np.arange``, and ``np.full``, ``np.eye``,
``np.identity``, ``np.empty`` as before) are active arrays of constants, as
``np.zeros`` makes: active values can be written into them in place and
through their named views, they carry no derivative, and given to SciPy
they are the plain values they hold (adsim/_scipy/constant_arguments.py).

Every program is checked in every sweep against differences
(fdcheck.check_tape: values against the same function on plain numbers,
tangents, adjoints, the dot-product test and the hvp), replayed at a new
point, and where its path depends on the point, the replay must raise."""
import numpy as np
import pytest
import scipy.integrate as si
from scipy.interpolate import interp1d

import adsim
from fdcheck import assert_close, check_tape

X = np.array([0.7, 1.3])


def _relaxed_grid(p):
    u = np.linspace(0.0, 1.0, 11)
    inner, left, right = u[1:-1], u[:-2], u[2:]
    for _ in range(5):
        inner += 0.2 * p[0] * (left + right - 2 * inner) - 0.05 * p[1] * inner ** 2
    return np.sum(u ** 3) + inner[3]


def _grid_updated_whole(p):
    x = np.linspace(-1.0, 1.0, 9)
    x *= p[0]
    x += p[1] * np.sin(x)
    return np.sum(np.exp(-x ** 2))


def _grid_written_by_item(p):
    t, dt = np.linspace(0.0, 2.0, 7, retstep=True)
    t[0] = p[0]
    t[-1] = p[1] * dt
    return np.sum(t ** 2)


def _log_and_geometric_grids(p):
    f = np.logspace(-1.0, 1.0, 5)
    g = np.geomspace(1.0, 16.0, 5)
    f[2:] *= p[0]
    g[:3] += p[1] * f[:3]
    return np.sum(f * g) + np.sum(np.log(g))


def _float_arange_stencil(p):
    x = np.arange(0.0, 1.0, 0.125)
    v = np.full(x.size, 0.5)
    identity = np.eye(x.size)
    for _ in range(3):
        x[1:-1] += p[0] * (x[2:] - 2 * x[1:-1] + x[:-2]) + 0.01 * p[1]
        v += p[1] * (identity @ x)
    return np.sum(x * v)


def _empty_then_filled(p):
    w = np.empty(4)
    w.fill(p[0])
    w[1] = p[1] ** 2
    a = np.identity(2)
    a[0, 1] = p[0] * p[1]
    return np.sum(w ** 3) + np.sum(a @ a)


PROGRAMS = [_relaxed_grid, _grid_updated_whole, _grid_written_by_item,
            _log_and_geometric_grids, _float_arange_stencil, _empty_then_filled]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_a_grid_made_in_the_function_takes_active_values(f):
    check_tape(f, [X])
    tape = adsim.record(f, X)
    x2 = X * np.array([1.05, 0.93])
    assert_close(tape.forward(x2), f(x2), rtol=1e-13, atol=0.0, what="replayed value")
    _, tangent = adsim.jvp(f, (X,), (np.array([0.3, -0.8]),))
    assert_close(tangent, adsim.grad(f)(X) @ np.array([0.3, -0.8]), rtol=1e-12, atol=1e-14,
                 what="forward against reverse")


def test_grids_are_numpys_values_and_carry_no_derivative():
    seen = {}

    def f(p):
        grids = [np.linspace(0.0, 1.0, 5), np.logspace(0.0, 2.0, 3), np.geomspace(2.0, 8.0, 3),
                 np.arange(0.5, 3.0, 0.5), np.linspace(0.0, 1.0, 4, endpoint=False)]
        seen["types"] = [type(g) for g in grids]
        seen["values"] = [g.tolist() for g in grids]
        seen["step"] = np.linspace(0.0, 1.0, 5, retstep=True)[1]
        seen["integer arange"] = type(np.arange(4))
        return p[0] * sum(np.sum(g) for g in grids)
    g = adsim.grad(f)(X)
    want = [np.linspace(0.0, 1.0, 5), np.logspace(0.0, 2.0, 3), np.geomspace(2.0, 8.0, 3),
            np.arange(0.5, 3.0, 0.5), np.linspace(0.0, 1.0, 4, endpoint=False)]
    assert all(t is adsim.Active for t in seen["types"])
    for got, w in zip(seen["values"], want):
        assert np.array_equal(got, w)
    numpy_step = np.linspace(0.0, 1.0, 5, retstep=True)[1]
    assert seen["step"] == numpy_step and type(seen["step"]) is type(numpy_step)
    assert seen["integer arange"] is np.ndarray          # integer data stays plain
    assert_close(g, [sum(np.sum(w) for w in want), 0.0], rtol=1e-15, atol=0.0, what="gradient")


def test_a_replay_where_a_grid_comparison_changes_raises():
    def f(p):
        x = np.linspace(0.0, 1.0, 6)
        x *= p[0]
        total = 0.0
        for xi in x:
            total = total + (xi ** 2 if xi < 0.5 else p[1] * xi)
        return total
    tape = adsim.record(f, X)
    assert_close(tape.forward(X * 1.001), f(X * 1.001), rtol=1e-14, atol=0.0, what="same path")
    with pytest.raises(adsim.BranchChanged):
        tape.forward(np.array([0.3, 1.3]))        # 0.6 * 0.3 < 0.5: another branch
    check_tape(f, [X])


def test_scipy_takes_a_grid_as_the_plain_values_it_holds():
    """simpson's sample points, solve_ivp's t_eval, interp1d's nodes and
    quad's break points given a grid made in the function: SciPy's values,
    derivatives in the active values only; a call whose active values are
    all constants is SciPy's own (plain results)."""
    seen = {}

    def f(p):
        x = np.linspace(0.0, 2.0, 9)
        area = si.simpson(np.exp(-p[0] * x ** 2), x=x)
        sol = si.solve_ivp(lambda t, y: -p[1] * y, (0.0, 1.0), [1.0],
                           t_eval=np.linspace(0.0, 1.0, 5), rtol=1e-10, atol=1e-12)
        inner = interp1d(x, p[1] * np.sin(x))(0.7)
        tail = si.quad(lambda s: np.exp(-p[0] * s), 0.0, 2.0, points=np.linspace(0.5, 1.5, 3))[0]
        seen["constant"] = si.simpson(x ** 2, x=x)
        seen["t"] = sol.t
        return area + np.sum(sol.y) + inner + tail
    check_tape(f, [X], rtol=1e-6)
    assert type(seen["constant"]) is np.float64 and seen["constant"] == si.simpson(
        np.linspace(0.0, 2.0, 9) ** 2, x=np.linspace(0.0, 2.0, 9))
    assert type(seen["t"]) is np.ndarray


def test_a_vectorized_function_reading_a_parameter_maps_a_plain_array():
    """np.vectorize(g)(plain) where g reads a parameter from its closure:
    the calls on plain elements return active values, which NumPy's own
    vectorize would convert; adsim maps them (also for a grid made in the
    function, which SciPy-like routing would otherwise pass as plain)."""
    data = np.array([1.0, -2.0, 3.0])

    def f(p):
        g = np.vectorize(lambda t: p[0] * t if t > 0 else p[1] * t * t)
        return np.sum(g(data)) + np.sum(g(np.linspace(-1.0, 1.0, 4)))
    check_tape(f, [X])
