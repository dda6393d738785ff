"""Sixteen scientific programs as their authors write them
(programs_s7.py), differentiated with respect to their natural parameters
without changing a line: adsim.grad against central differences (a step
relative to each parameter), forward mode against reverse mode, the
Hessian-vector product against differences of the gradient, the complex
step where the plain program accepts complex parameters, Jacobians of the
programs with several outputs, and the tape recorded at one point replayed
at another.

A program that takes a different path at the new point (a Newton loop that
stops after another number of iterations, the sign of a force that is zero
up to rounding) makes the replay raise BranchChanged, as it must; the
functional API records again there.

Programs: lattice Boltzmann (D2Q9) shear-wave decay; velocity-Verlet
molecular dynamics with a cut-off and np.add.at; a Kalman filter and RTS
smoother of a dataclass model; a hidden Markov model's forward-backward in
log space; Newton-Raphson power flow with complex voltages, np.r_ and
np.diag; Crank-Nicolson Black-Scholes with Fortran-ordered matrices;
ammonia equilibrium from Gibbs energies; two-stream radiative transfer by
the adding method (functools.reduce over layer objects); a stage-structured
population with np.vectorize and np.fill_diagonal; an SEIR epidemic with a
lockdown, np.clip and an lstsq growth rate; a plane truss assembled with
np.ix_ and solved by Cholesky; elastic-net coordinate descent; a Gaussian
beam through ray transfer matrices; a spring net relaxing under its
weight; a periodic Poisson problem solved with np.fft; a particle-in-cell
plasma depositing charge with np.bincount."""
import numpy as np
import pytest

import adsim
import programs_s7 as prog
from fdcheck import assert_close, central, complex_step, fd_jacobian

WEIGHTS6 = np.arange(1.0, 7.0)


def power_flow_summary(loads):
    return prog.solve_power_flow(loads) @ WEIGHTS6


def beam_summary(optics):
    return prog.beam_at_detector(optics) @ np.array([1.0, 0.3, 0.2])


# name: (function, parameters, the plain program takes complex parameters,
#        the path depends on the point)
PROGRAMS = {
    "lattice boltzmann": (prog.lbm_shear_wave_energy, np.array([0.8, 0.05]), False, False),
    "molecular dynamics": (prog.md_mean_kinetic_energy, np.array([1.0, 1.0]), False, False),
    "rts smoother": (prog.smoothed_velocity_error, np.array([0.5, -4.0]), True, False),
    "hidden markov model": (prog.hmm_objective, np.array([0.1, 2.0, 1.0]), False, False),
    "power flow": (power_flow_summary, np.array([0.5, 0.4, 0.2, 0.15]), False, True),
    "crank-nicolson put": (prog.crank_nicolson_put, np.array([0.3, 0.05]), False, False),
    "ammonia equilibrium": (prog.ammonia_yield, np.array([700.0, 200.0]), False, True),
    "two-stream clouds": (prog.cloud_albedo, np.array([2.0, 5.0, 1.0, 0.99, 0.95, 0.9]),
                          True, False),
    "stage-structured population": (prog.projected_population, np.array([1.5, 0.02, 6.0]),
                                    False, False),
    "seir with lockdown": (prog.seir_negative_log_likelihood, np.array([0.6, 0.3, 0.2]),
                           False, False),
    "plane truss": (prog.truss_compliance, np.linspace(8.0, 12.0, 11), False, True),
    "elastic net": (prog.validation_error, np.array([-2.0, 0.5]), False, False),
    "gaussian beam": (beam_summary, np.array([50.0, 100.0, 160.0]), False, False),
    "spring net": (prog.sagging_net, np.array([5.0, 2.0]), False, False),
    "spectral poisson": (prog.potential_energy, np.array([1.0, -0.5, 0.08]), False, False),
    "particle in cell": (prog.pic_field_energy, np.array([0.1, 0.2]), False, False),
}


def differences(f, x):
    """Central differences with a step of 1e-3 relative to each parameter."""
    steps = 1e-3 * np.maximum(np.abs(x), 0.1)
    return np.array([central(f, [x], [e * h], 1.0) / h for e, h in zip(np.eye(x.size), steps)])


def moved(x):
    return x * (1.0 + 0.01 * np.random.default_rng(2).standard_normal(x.size))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_against_differences_and_the_other_mode(name):
    f, x, _, _ = PROGRAMS[name]
    g = adsim.grad(f)(x)
    assert_close(g, differences(f, x), rtol=1e-6, atol=1e-9 * np.max(np.abs(g)), what=name)
    v = 1e-3 * np.maximum(np.abs(x), 0.1) * np.random.default_rng(1).standard_normal(x.size)
    _, jv = adsim.jvp(f, (x,), (v,))
    assert_close(jv, g @ v, rtol=1e-12, atol=1e-15 * np.abs(g) @ np.abs(v), what="jvp vs grad")
    hv = adsim.hvp(f, x, v)
    want = central(adsim.grad(f), [x], [v], 1e-3)
    assert_close(hv, want, rtol=1e-5, atol=1e-7 * np.max(np.abs(want)), what="hvp")


@pytest.mark.parametrize("name", sorted(n for n, p in PROGRAMS.items() if p[2]))
def test_the_complex_step(name):
    f, x, _, _ = PROGRAMS[name]
    steps = np.maximum(np.abs(x), 0.1)
    cs = np.array([complex_step(f, [x], [e * h]) / h for e, h in zip(np.eye(x.size), steps)])
    assert_close(adsim.grad(f)(x), cs, rtol=1e-11, atol=1e-14 * np.max(np.abs(cs)),
                 what="complex step")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_tape_replayed_at_a_new_point(name):
    f, x, _, path_depends_on_point = PROGRAMS[name]
    tape = adsim.record(f, x)
    assert_close(tape.gradient(x), adsim.grad(f)(x), rtol=1e-13, atol=1e-300, what="replay")
    x2 = moved(x)
    want = differences(f, x2)
    if path_depends_on_point:
        with pytest.raises(adsim.BranchChanged):
            tape.gradient(x2)
        assert_close(adsim.grad(f)(x2), want, rtol=1e-6, atol=1e-9 * np.max(np.abs(want)),
                     what="recorded again at the new point")
        return
    assert_close(tape.forward(x2), f(x2), rtol=1e-13, atol=1e-300, what="replayed value")
    assert_close(tape.gradient(x2), want, rtol=1e-6, atol=1e-9 * np.max(np.abs(want)),
                 what="replayed gradient")


@pytest.mark.parametrize("f, x", [(prog.solve_power_flow, np.array([0.5, 0.4, 0.2, 0.15])),
                                  (prog.beam_at_detector, np.array([50.0, 100.0, 160.0]))],
                         ids=["power flow", "gaussian beam"])
def test_jacobians_of_programs_with_several_outputs(f, x):
    J = fd_jacobian(f, [x], 1e-4)
    for mode in ("forward", "reverse"):
        assert_close(adsim.jacobian(f, mode=mode)(x), J, rtol=1e-6,
                     atol=1e-8 * np.max(np.abs(J)), what=mode)


def test_single_precision_parameters():
    """float32 parameters are differentiated in double precision, as adsim
    computes every recorded value; the gradient is that of the float64
    program."""
    x = np.array([1.0, -0.5, 0.08], dtype=np.float32)
    g32 = adsim.grad(prog.potential_energy)(x)
    assert g32.dtype == np.float64
    assert_close(g32, adsim.grad(prog.potential_energy)(x.astype(float)), rtol=1e-15, atol=0.0)
