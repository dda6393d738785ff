"""A scipy.sparse matrix of active values (``L = theta * lap``) nested in a
dict, list, namedtuple or the attributes of an object passed by ``args=``
(or held in a dict that ``fun`` reads from its closure) is an input of the
solve, as one passed by itself: solve_ivp, odeint, minimize and
checkpoint_loop, through SciPy's names as users write them. Each is
checked against differences in every mode, replayed at a new point, and
saved and loaded."""
import dataclasses
from collections import namedtuple

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.integrate import odeint, solve_ivp
from scipy.optimize import minimize

import adsim
from adsim.checkpoint import checkpoint_loop
from tapefile_replays import assert_same_replays, copies, nearby

N = 5
LAP = sp.diags([np.ones(N - 1), -2.0 * np.ones(N), np.ones(N - 1)], [-1, 0, 1], format="csr")
Y0 = np.linspace(1.0, 2.0, N)
TIGHT = dict(rtol=1e-11, atol=1e-12)


@dataclasses.dataclass
class Cable:
    L: object
    k: object


Pair = namedtuple("Pair", "L k")


def by_dict(x):
    sol = solve_ivp(lambda t, y, p: p["L"] @ y - p["k"] * y, (0, 1), Y0,
                    args=({"L": x[0] * LAP, "k": x[1]},), **TIGHT)
    return sol.y[:, -1]


def by_list(x):
    sol = solve_ivp(lambda t, y, ms: ms[0] @ y - ms[1] @ y, (0, 1), Y0, method="Radau",
                    args=([x[0] * LAP, x[1] * sp.eye(N, format="csr")],), **TIGHT)
    return sol.y[:, -1]


def by_dataclass(x):
    sol = solve_ivp(lambda t, y, c: c.L @ y - c.k * y, (0, 1), Y0,
                    args=(Cable(x[0] * LAP, x[1]),), **TIGHT)
    return sol.y[:, -1]


def by_dataclass_of_the_matrix_alone(x):
    sol = solve_ivp(lambda t, y, c: c.L @ y - c.k * y, (0, 1), Y0,
                    args=(Cable(x[0] * LAP + x[1] * sp.eye(N), 0.3),), **TIGHT)
    return sol.y[:, -1]


def by_namedtuple_in_closure(x):
    params = Pair(x[0] * LAP, x[1])
    sol = solve_ivp(lambda t, y: params.L @ y - params.k * y, (0, 1), Y0, method="BDF",
                    **TIGHT)
    return sol.y[:, -1]


def by_odeint(x):
    return odeint(lambda y, t, ms: ms[0] @ y - x[1] * y, Y0, [0.0, 1.0],
                  args=([x[0] * LAP],), **TIGHT)[-1]


def by_checkpoint_loop(x):
    def step(y, p):
        return y + 0.05 * (p["L"] @ y) * p["k"]
    return checkpoint_loop(step, Y0, 20, args=({"L": x[0] * LAP, "k": x[1]},))


def _least_squares(z, c):
    r = c.L @ z - np.sin(np.arange(N))
    return r @ r + c.k * (z @ z)


def by_minimize(x):
    cable = Cable(x[0] * LAP + sp.eye(N, format="csr"), x[1])
    return minimize(_least_squares, np.zeros(N), args=(cable,), method="BFGS",
                    options={"gtol": 1e-11}).x


PROGRAMS = [by_dict, by_list, by_dataclass, by_dataclass_of_the_matrix_alone,
            by_namedtuple_in_closure, by_odeint, by_checkpoint_loop, by_minimize]
X = np.array([0.3, 0.2])
W = np.linspace(-1.0, 1.0, N)


def exact_minimum(x):
    """The minimiser of by_minimize in closed form: finite differences of
    BFGS's answers are as noisy as its stopping rule."""
    A = (x[0] * LAP + sp.eye(N)).toarray()
    return np.linalg.solve(A.T @ A + x[1] * np.eye(N), A.T @ np.sin(np.arange(N)))


REFERENCE = {by_minimize: exact_minimum}


def _loss(program):
    return lambda x: W @ program(x)


def _differences(f, x, h=1e-5):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
def test_every_mode_against_differences_and_replayed_at_a_new_point(program):
    loss, reference = _loss(program), _loss(REFERENCE.get(program, program))
    g = adsim.grad(loss)
    for x in (X, np.array([0.35, 0.15])):       # the second: the held gradient replays
        np.testing.assert_allclose(g(x), _differences(reference, x), rtol=1e-6, atol=1e-8)
    v = np.array([0.7, -0.4])
    _, jv = adsim.jvp(program, (X,), (v,))
    np.testing.assert_allclose(W @ jv, g(X) @ v, rtol=1e-9)
    h, g_ref = 1e-4, adsim.grad(reference)
    np.testing.assert_allclose(adsim.hvp(loss, X, v),
                               (g_ref(X + h * v) - g_ref(X - h * v)) / (2 * h),
                               rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
def test_tapes_replay_bitwise_after_saving(program, tmp_path):
    """Bitwise at the recorded point and near it; a minimiser's replays
    start where the tape's last solve ended, so near the recorded point
    copies with another history agree to the solver's tolerance."""
    tape = adsim.record(program, X)
    copied = copies(tape, tmp_path)
    near = nearby(X, np.random.default_rng(1), 1e-7)
    if program is not by_minimize:
        assert_same_replays(tape, copied, [(X,), (near,)])
        return
    assert_same_replays(tape, copied, [(X,)])
    for other in copied:
        np.testing.assert_allclose(other.forward(near), exact_minimum(near), rtol=1e-6, atol=1e-7)
