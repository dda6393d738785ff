"""Thirty-eight scientific programs as their authors write them
(programs_s9.py), differentiated with respect to their natural parameters
without changing a line: adsim.grad against central differences (a step
relative to each parameter), forward mode against reverse mode, the
Hessian-vector product against differences of the gradient where the
program is smooth enough for it, and the tape recorded at one point
replayed at a second point (or, where the program's path depends on the
point, the replay refusing with BranchChanged and a fresh recording right
there).

Programs: a Hodgkin-Huxley neuron; a worm-like polymer chain; RBF
interpolation by cdist; AR(2) and smoothing filters by lfilter; implicit
heat steps with sparse diagonals; a queue drawing rng.exponential and
rng.uniform of its parameters; measurement error drawn by the legacy
np.random.normal; a spring mesh with np.add.at; a two-state protein by
np.logaddexp.reduce; quantum tunnelling by complex transfer matrices; an
RK4 pendulum with math constants; ridge regression's validation error
through L-BFGS-B; Michaelis-Menten kinetics in a class; a decay chain by
expm; a Gaussian process by cho_factor; a Morse cluster by triu_indices; a
finite-element bar assembled with np.ix_; a Hill dose-response; a Kepler
radial-velocity fit; a two-box climate model by solve_ivp with a dict; a
windowed periodogram; a Ricker map grown in a list; LWR traffic updated in
place on a plain state that named views also hold; a tight-binding ring by
eigh; a Cox partial likelihood; a bivariate normal by scipy.stats; cubic
elasticity by einsum; a drug profile by np.convolve; a spline by
solve_banded; a Markov chain by eig; a bond yield by brentq; a particle
filter resampling with rng.choice of active probabilities; a projectile's
range at a solve_ivp terminal event; a spring chain assembled as a sparse
COO matrix; a Wasserstein distance by sorting draws of the parameters; a
value at risk by np.percentile; explicit diffusion by `u += ...` on a
plain state with a named view of it."""
import numpy as np

import programs_s9 as prog
from program_checks import program_tests

# name: (function, parameters, Hessian-vector product checked,
#        the path depends on the point); the optimiser's and the adaptive
# solver's derivatives agree with differences of their results to about
# their tolerances only, and a replay re-solves (to the same tolerance)
ADAPTIVE = {"climate two-box solve_ivp", "ridge l-bfgs-b", "projectile terminal event"}
PROGRAMS = {
    "hodgkin-huxley": (prog.hh_mean_voltage, np.array([120.0, 36.0]), True, True),
    "polymer chain": (prog.chain_energy, prog.CHAIN, True, False),
    "rbf cdist": (prog.rbf_prediction, np.array([2.0, 0.3, 0.8, 1.1, 0.5, 0.9, 0.2]), True,
                  False),
    "ar2 lfilter": (prog.ar2_conditional_loglik, np.array([0.9, -0.4, -1.0]), True, False),
    "smoothing lfilter": (prog.ar1_smoothed_mean, np.array([0.6, 1.5]), True, False),
    "implicit heat sparse diags": (prog.rod_after_implicit_steps, np.array([0.5, 1.0]), True,
                                   False),
    "queue generator draws": (prog.mean_waiting_time, np.array([1.0, 0.3, 1.2]), True, False),
    "legacy np.random draws": (prog.calibration_bias, np.array([1.0, 0.8, 0.3]), True, False),
    "spring mesh add.at": (prog.sagging_membrane, np.array([1.0, 0.5]), True, False),
    "protein logaddexp.reduce": (prog.unfolding_free_energy, np.array([50.0, 0.15, 0.3]),
                                 True, False),
    "tunnelling transfer matrices": (prog.transmission, np.array([0.8, 1.5, 0.7]), True, False),
    "pendulum rk4": (prog.pendulum_energy_drift, np.array([1.0, 0.1]), True, False),
    "ridge l-bfgs-b": (prog.validation_mse, 0.3, False, True),
    "enzyme class": (prog.assay_misfit, np.array([0.12, 1.5, 8.0]), True, False),
    "decay chain expm": (prog.daughter_activity, np.array([0.0, 0.5, -0.3]), True, False),
    "gaussian process cholesky": (prog.gp_log_marginal, np.array([0.0, 0.0, -2.0]), True,
                                  False),
    "morse triu_indices": (prog.morse_energy, prog.CLUSTER, True, False),
    "fem bar ix_": (prog.bar_tip_displacement, np.array([200.0, 180.0, 150.0, 210.0]), True,
                    False),
    "hill binomial": (prog.hill_loglik, np.array([1.0, 1.2]), True, False),
    "kepler newton": (prog.rv_chi2, np.array([10.0, 40.0, 0.2, 0.5]), True, True),
    "climate two-box solve_ivp": (prog.transient_warming, np.array([1.3, 0.7]), False, True),
    "periodogram rfft": (prog.windowed_peak_power, np.array([3.1, 0.4]), True, False),
    "ricker list": (prog.ricker_nll, np.array([0.3, 33.0]), True, False),
    "traffic in place": (prog.traffic_delay, np.array([1.0, 1.0]), True, False),
    "tight-binding eigh": (prog.band_energy, np.array([1.0, 0.6]), True, False),
    "cox cumsum": (prog.cox_partial_loglik, np.array([0.3, -0.2]), True, False),
    "bivariate normal scipy.stats": (prog.bivariate_loglik,
                                     np.array([0.4, 1.3, -0.5, -0.3, 0.8]), True, False),
    "einsum elasticity": (prog.strain_energy_density, np.array([168.0, 121.0, 75.0]), True,
                          False),
    "pk convolve": (prog.peak_concentration, np.array([1.2, 0.3, 10.0]), True, True),
    "spline solve_banded": (prog.spline_length, np.array([0.0, 0.4, 0.9, 0.7, 1.2, 1.0]),
                            True, False),
    "markov eig": (prog.long_run_cost,
                   np.array([0.1, 0.5, -0.2, 0.3, 0.0, 0.4, -0.1, 0.2, 0.6]), True, True),
    "bond brentq": (prog.bond_yield, np.array([0.05, 97.0]), True, True),
    "particle filter choice": (prog.particle_loglik, np.array([0.8, -2.0, -1.5]), True, True),
    "projectile terminal event": (prog.projectile_range, np.array([20.0, 0.7]), False, True),
    "spring chain sparse coo": (prog.spring_chain_tip, np.array([2.0, 3.0, 1.5, 2.5]), True,
                                False),
    "wasserstein sort": (prog.wasserstein_to_standard, np.array([0.3, 1.2]), True, True),
    "value at risk percentile": (prog.value_at_risk, np.array([1.0, 0.5]), True, True),
    "diffusion += with a view": (prog.diffused_interior, np.array([0.5, 0.3]), True, False),
}
# the particle filter's resampled indices jump where a uniform draw crosses a
# cumulative weight: differences need steps that cross none
STEP = {"particle filter choice": 1e-7}


(test_gradient_against_differences_and_the_other_mode,
 test_the_tape_replayed_at_a_new_point) = program_tests(PROGRAMS, ADAPTIVE, STEP)
