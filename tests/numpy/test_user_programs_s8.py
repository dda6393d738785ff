"""Twenty-two scientific programs as their authors write them (programs_s8.py),
differentiated with respect to their natural parameters without changing
a line: adsim.grad against central differences (a step relative to each
parameter), forward mode against reverse mode, the Hessian-vector product
against differences of the gradient where the program is smooth enough
for it, and the tape recorded at one point replayed at a second point
(or, where the program's path depends on the point, the replay refusing
with BranchChanged and a fresh recording right there).

Programs: Peng-Robinson fugacity through numpy.roots; a van der Waals
mixture's Helmholtz energy (chemical potentials and stability matrix);
Robertson kinetics in a class with Radau; an SIR fit with odeint; a
Lotka-Volterra fit with BDF reading a module-global dict; Bratu's problem
by newton_krylov; Gray-Scott reaction-diffusion; a 2-D heat plate updated
through a view; a pendulum EKF; a Gaussian mixture through scipy.stats; an
oblique thin-film stack; a black-body band fraction by quad; a spline
stress-strain curve; an interp1d heat-capacity table at an active
temperature; a hierarchical Poisson posterior of frozen distributions; a
light response with np.piecewise and np.vectorize; an Arrhenius polyfit; a
minmod-limited MUSCL scheme; an SLSQP portfolio; a sparse
reaction-diffusion slab closed by scipy.optimize.root; a negative-binomial
regression through scipy.stats.nbinom; a stochastic growth model drawing
rng.normal(r, sigma) with active parameters (the pathwise derivative,
adsim/_np/draws.py)."""
import numpy as np

import programs_s8 as prog
from program_checks import program_tests

# name: (function, parameters, Hessian-vector product checked,
#        the path depends on the point); adaptive ODE solvers' derivatives
# are those of the steps taken (held where a replay follows the recorded
# steps), so they agree with differences of the adaptive solution to about
# the solver's tolerance only
ADAPTIVE = {"robertson radau", "lotka-volterra bdf", "sir odeint"}
PROGRAMS = {
    "peng-robinson": (prog.peng_robinson_ln_phi, np.array([250.0, 30e5]), True, True),
    "helmholtz vdw": (prog.helmholtz_vdw, np.array([0.3, 0.5, 0.2]), True, False),
    "robertson radau": (prog.robertson_product, np.log([0.04, 3e7, 1e4]), False, True),
    "sir odeint": (prog.sir_sse, np.array([0.5, 0.2]), True, True),
    "lotka-volterra bdf": (prog.predator_prey_loss, np.array([1.0, 0.1, 0.075, 1.5]), False, True),
    "bratu newton-krylov": (prog.bratu_mean, 1.0, True, True),
    "gray-scott": (prog.gray_scott_mass, np.array([0.035, 0.065]), True, False),
    "heat plate view": (prog.plate_temperature, np.array([1.0, 5.0]), True, False),
    "pendulum ekf": (prog.pendulum_ekf_nll, np.array([1.2, -4.0, -3.0]), True, False),
    "gaussian mixture": (prog.mixture_log_likelihood,
                         np.array([0.2, -1.0, 1.0, -0.3, -0.2]), True, False),
    "thin-film stack": (prog.stack_reflectance, np.array([0.06, 0.1, 0.07]), True, False),
    "band fraction quad": (prog.band_fraction, 1.2, True, False),
    "spline stress-strain": (prog.strain_energy_and_stiffness,
                             np.array([150.0, 260.0, 330.0, 370.0, 390.0]), True, False),
    "interp1d heat capacity": (prog.enthalpy_rise, 650.0, True, False),
    "hierarchical poisson": (prog.hierarchical_log_posterior,
                             np.array([1.2, -0.5, 1.3, 2.1, 0.3]), True, False),
    "piecewise light response": (prog.canopy_assimilation, np.array([0.05, 20.0, 22.0]),
                                 True, False),
    "arrhenius polyfit": (prog.fitted_activation_energy,
                          np.array([1e7, 50e3, 1e10, 75e3]), True, False),
    "muscl minmod": (prog.advected_front, np.array([0.8, 1.0]), True, False),
    "slsqp portfolio": (prog.optimal_portfolio_utility, np.array([0.08, 0.12, 0.1]), False, True),
    "sparse slab and root": (prog.catalyst_effectiveness, np.array([0.5, 4.0]), True, False),
    "negative binomial regression": (prog.nb2_log_likelihood, np.array([0.5, 0.8, -1.0]),
                                     True, False),
    "stochastic growth draws": (prog.mean_final_biomass, np.array([0.8, 0.3]), True, False),
}


(test_gradient_against_differences_and_the_other_mode,
 test_the_tape_replayed_at_a_new_point) = program_tests(PROGRAMS, ADAPTIVE)
