"""Thirty-four scientific programs as their authors write them (programs_s11.py),
differentiated with respect to their natural parameters without changing a
line: adsim.grad against central differences (a step relative to each
parameter), forward mode against reverse mode, the Hessian-vector product
against differences of the gradient where the program is smooth enough for
it, and the tape recorded at one point replayed at a second point (or, where
the program's path depends on the point, the replay refusing with
BranchChanged and a fresh recording right there).

Programs: a damped oscillator's roots, total internal reflection, a
Kronig-Penney band gap, Cardano's formula and a waveguide's evanescent
modes with np.emath; an HMM forward pass with logaddexp.reduce and a
running log-hazard with logaddexp.accumulate; a residue by np.polydiv and a
deflation by poly1d division; Chebyshev and Legendre series converted to
powers; gaussian_kde of simulated, weighted 2-D and bimodal samples;
welch of an AR(2) process; find_peaks of a Lorentzian spectrum; welch and
find_peaks of a resonance; multivariate_normal with parameterised
covariances (Generator, RandomState, Cholesky); eigh(K, M) of a spring
chain and a shear building and eigvalsh of a buckling pencil; RK4 in place
on a plain state; a fixed-point iteration; a pseudo-spectral Burgers step;
Planck's law by np.trapezoid; a logistic posterior over a list; a heat
exchanger by np.where; half-lives by np.emath.logn; a spectral entropy; a
leave-one-out KDE bandwidth; Tikhonov filter factors by eigh(AtA, LtL);
turning points by Polynomial.deriv().roots()."""
import numpy as np

import programs_s11 as prog
from program_checks import program_tests

# name: (function, parameters, Hessian-vector product checked,
#        the path depends on the point)
ADAPTIVE = set()
PROGRAMS = {
    "oscillator emath.sqrt underdamped": (prog.oscillator_decay, np.array([1.0, 0.4, 2.0]), True,
                                          True),
    "oscillator emath.sqrt overdamped": (prog.oscillator_decay, np.array([1.0, 3.0, 0.5]), True,
                                         True),
    "tir emath.sqrt": (prog.tir_reflectance, np.array([1.52, 1.33]), True, True),
    "kronig-penney emath.arccos": (prog.band_gap_attenuation, np.array([3.0, 1.0]), True, True),
    "cardano emath.sqrt": (prog.vdw_volume, np.array([3.6, 0.043]), True, True),
    "waveguide emath.sqrt": (prog.waveguide_transmission, np.array([4.0, 2.0]), True, True),
    "hmm logaddexp.reduce": (prog.hmm_loglik, np.array([0.8, 1.2, 0.5]), True, True),
    "survival logaddexp.accumulate": (prog.survival_at_end, np.array([-3.0, 0.4]), True, True),
    "residue polydiv": (prog.step_response_residue, np.array([0.5, 2.0, 0.3, 1.5]), True,
                        False),
    "deflation poly1d division": (prog.deflated_roots_spread, np.array([0.7, 1.9]), True, True),
    "chebyshev fit convert": (prog.calibration_slope, np.array([3950.0, 10.0]), True, False),
    "legendre convert": (prog.angular_power_coeffs, np.array([0.3, 0.6]), True, False),
    "kde synthetic likelihood": (prog.kde_synthetic_loglik, np.array([1.0, -0.3]), True, False),
    "kde weighted 2-d": (prog.tempered_density, np.array([1.5, 0.3]), True, False),
    "kde silverman": (prog.mixture_density_peak, np.array([-1.0, 1.2]), True, True),
    "welch ar2": (prog.ar2_band_power, np.array([0.6, -0.3]), True, False),
    "find_peaks lorentzians": (prog.resolved_doublet, np.array([0.4, 0.2]), True, True),
    "welch find_peaks resonance": (prog.resonance_q, np.array([5.0, 0.05]), True, True),
    "multivariate_normal portfolio": (prog.expected_shortfall_proxy, np.array([0.2, 0.3, 0.4]),
                                      True, False),
    "multivariate_normal RandomState gp": (prog.gp_prior_roughness, np.array([0.3, 1.2]), True,
                                           False),
    "multivariate_normal cholesky": (prog.calibrated_bias, np.array([0.6, 0.3]), True, False),
    "eigh(K, M) chain": (prog.chain_frequency_misfit, np.array([0.3, 0.8, 0.5]), True, False),
    "eigh(K, M) mode shape": (prog.first_mode_participation, np.array([2.0, 0.7]), True, False),
    "eigvalsh(K, G) buckling": (prog.critical_load, np.array([2.0, 3.0]), True, False),
    "rk4 in place": (prog.lotka_volterra_final, np.array([1.1, 0.4]), True, False),
    "fixed point with tol": (prog.mean_field_magnetisation, np.array([0.3, 0.1]), True, True),
    "burgers rfft": (prog.burgers_energy, np.array([0.1, 1.0]), True, False),
    "planck trapezoid": (prog.band_radiance_fraction, np.array([5800.0, 0.2]), True, False),
    "logistic list sum": (prog.logistic_log_posterior, np.array([0.2, 0.9]), True, False),
    "heat exchanger where": (prog.exchanger_duty, np.array([40.0, 60.0]), True, True),
    "halvings emath.logn": (prog.halvings_to_threshold, np.array([3.0, 0.5]), True, False),
    "spectral entropy welch": (prog.spectral_entropy, np.array([5.0, 3.0]), True, False),
    "loo kde bandwidth": (prog.loo_kde_score, np.array([-0.5, 0.4]), True, False),
    "tikhonov eigh(AtA, LtL)": (prog.tikhonov_solution_norm, np.array([0.1, 0.5]), True, False),
    "turning points roots": (prog.turning_point_gap, np.array([0.5, 1.5]), True, True),
}


(test_gradient_against_differences_and_the_other_mode,
 test_the_tape_replayed_at_a_new_point) = program_tests(PROGRAMS, ADAPTIVE)
