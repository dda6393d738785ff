"""Fifteen published-style scientific programs (programs_as_published.py)
differentiated as written, as a new user would: each wrapped in adsim.grad
against central differences, every sweep of its tape (fdcheck.check_tape:
replay, tangents, adjoints, Jacobians, Hessian-vector products), the
complex step where the plain program is holomorphic, and the recorded tape
replayed at a new point against differences there.

Programs: a Lennard-Jones cluster; a leapfrog orbit kept as a list of
positions; an explicit heat equation updating a plain initial state by
slices; a Kalman filter class built from names imported from NumPy; EM
steps of a Gaussian mixture class; a Bragg mirror of characteristic
matrices filled entry by entry; Lax-Friedrichs shallow water; a cantilever
assembled with np.ix_ and solved; two-compartment pharmacokinetics with
solve_ivp and a dict of parameters; a Black-Scholes book with
scipy.stats.norm; pseudo-spectral Burgers with RK4; the stationary
distribution of a Markov chain; a neural ODE; Lucas-Kanade flow by lstsq;
a 1-D Ising chain's free energy by its transfer matrix."""
import numpy as np
import pytest

import adsim
import programs_as_published as prog
from fdcheck import assert_close, central, check_tape, complex_step

RNG = np.random.default_rng(2026)
TETRAHEDRON = (np.array([0, 0, 0, 1.12, 0, 0, 0.56, 0.97, 0.0, 0.56, 0.32, 0.91])
               + 0.02 * RNG.standard_normal(12))


def lk_flow_combination(shift):
    u, v = prog.lucas_kanade_flow(shift)
    return u + 2.0 * v


# name: (function, parameters, finite-difference step, plain program holomorphic)
PROGRAMS = {
    "lennard-jones cluster": (prog.lj_energy, TETRAHEDRON, 1e-3, True),
    "leapfrog orbit": (prog.orbit_miss, np.array([1.0, 1.1]), 1e-3, False),
    "explicit heat equation": (prog.rod_temperature, np.array([0.8, 2.0]), 1e-3, False),
    "kalman filter": (prog.kalman_nll, np.array([-1.0, -4.0]), 1e-3, True),
    "gaussian mixture EM": (prog.mixture_after_em, np.array([-1.0, 1.5]), 1e-3, True),
    "bragg mirror": (prog.bragg_reflectance, np.array([0.06, 0.095, 0.06, 0.095, 0.06]),
                     1e-5, False),
    "shallow water": (prog.dam_break_energy, np.array([0.2, 0.1]), 1e-3, True),
    "cantilever beam": (prog.beam_tip_deflection, np.array([1.0, 1.5, 0.8, 1.2]), 1e-3, False),
    "pharmacokinetics": (prog.pk_sse, np.log(np.array([1.0, 3.0])), 1e-3, False),
    "black-scholes book": (prog.book_value, np.array([100.0, 0.03, 0.25]), 1e-4, False),
    "spectral burgers": (prog.burgers_energy, np.array([0.05, 1.0]), 1e-3, False),
    "markov chain": (prog.long_run_reward, RNG.standard_normal(16), 1e-3, True),
    "neural ODE": (prog.node_loss, 0.3 * RNG.standard_normal(42), 1e-3, True),
    "lucas-kanade flow": (lk_flow_combination, np.array([0.3, -0.2]), 1e-3, False),
    "ising transfer matrix": (prog.ising_free_energy, np.array([0.7, 0.3]), 1e-3, False),
}
SWEPT = sorted(set(PROGRAMS) - {"pharmacokinetics", "neural ODE"})    # the costly ones below


def differences(f, x, h):
    return np.array([central(f, [x], [e], h) for e in np.eye(x.size)])


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_gradient_as_written_and_the_tape_at_a_new_point(name):
    f, x, h, holomorphic = PROGRAMS[name]
    assert_close(adsim.grad(f)(x), differences(f, x, h), what=name)
    if holomorphic:
        cs = np.array([complex_step(f, [x], [e]) for e in np.eye(x.size)])
        assert_close(adsim.grad(f)(x), cs, rtol=1e-10, atol=1e-12, what="complex step")
    tape = adsim.record(f, x)
    moved = x * (1.0 + 0.01 * np.random.default_rng(1).standard_normal(x.size))
    assert_close(tape.forward(moved), f(moved), rtol=1e-12, atol=1e-14, what="replayed value")
    assert_close(tape.gradient(moved), differences(f, moved, h), what="replayed gradient")


@pytest.mark.parametrize("name", SWEPT)
def test_every_sweep_of_the_tape(name):
    f, x, h, _ = PROGRAMS[name]
    check_tape(f, [x], h=h)


@pytest.mark.parametrize("name", ["pharmacokinetics", "neural ODE"])
def test_forward_against_reverse_and_hvp_against_the_gradient(name):
    f, x, h, _ = PROGRAMS[name]
    v = np.random.default_rng(3).standard_normal(x.size)
    _, jv = adsim.jvp(f, (x,), (v,))
    assert_close(jv, adsim.grad(f)(x) @ v, rtol=1e-12, atol=1e-14, what="jvp vs grad")
    assert_close(adsim.hvp(f, x, v), central(adsim.grad(f), [x], [v], h), what="hvp")

