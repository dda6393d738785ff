"""Fifty-odd scientific programs as their authors write them
(programs_s16.py: Newton–Krylov with adsim.hvp inside the model and
scipy's newton_krylov, equations of state with parameters in dicts, PDE
codes updating plain arrays in place through views, Kalman, extended and
unscented Kalman filters with names imported from numpy, likelihoods
summing lists, thin films by characteristic matrices, matrix powers and
cmath, population genetics, Black–Scholes, implied volatilities, Heston
by the trapezoid rule and by quad, images through scipy.ndimage, SciPy's
solvers, quadrature, splines and sparse solves inside the models),
differentiated as they are: adsim.grad against central differences,
forward mode against reverse mode, the Hessian-vector product against
differences of the gradient, the tape recorded at one point replayed at a
second point, and for programs written with NumPy functions of their
parameters alone, the complex step. A program printing float() of its
result is refused, naming the cause."""
import numpy as np
import pytest

import adsim
import programs_s16 as prog
from fdcheck import assert_close, central
from program_checks import differences, moved, program_tests

# What SciPy itself warns of while these programs run, on plain values too,
# in some runs and not others: quad's subdivision limit at some of brentq's
# trial currents (the LIF rate), and trust-krylov's subproblem solver
# (trlib) at some of the difference points
pytestmark = [
    pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning"),
    pytest.mark.filterwarnings("ignore:invalid value encountered in multiply:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:overflow encountered in dot:RuntimeWarning"),
]

# name: (function, parameters, Hessian-vector product checked,
#        the path depends on the point)
PROGRAMS = {
    "newton-cg chain with adsim.hvp": (prog.relaxed_chain, np.array([1.0, 0.3]), False, True),
    "newton-krylov scipy cg of adsim.hvp": (prog.newton_krylov_scipy_cg, np.array([1.0, 0.3]),
                                            False, False),
    "srk mixture kij dict np.roots": (prog.srk_ln_phi_methane, np.array([260.0, 0.7]), True,
                                      False),
    "virial mixture pair dict": (prog.virial_fugacity, np.array([310.0, 0.3]), True, False),
    "vdw helmholtz pressure by adsim.grad": (prog.vdw_work, np.array([0.137, 3.87]), True,
                                             False),
    "einstein heat capacity by adsim.hessian": (prog.heat_capacity_fit,
                                                np.array([240.0, 1.0]), True, False),
    "pr liquid fsolve full_output": (prog.liquid_density, np.array([300.0, 0.0]), True, False),
    "upwind ghost cells u[1:-1] -=": (prog.advected_mass_centre, np.array([0.8, 0.01]), True,
                                      False),
    "fisher-kpp empty_like laplacian": (prog.fisher_front, np.array([1.0, 0.5]), True, False),
    "heat plate u[1:-1, 1:-1] +=": (prog.plate_centre, np.array([1.0, 2.0]), True, False),
    "spring net through a view": (prog.relaxed_net, np.array([2.0, 0.3]), True, False),
    "periodic mixing np.roll list": (prog.periodic_mixing, np.array([0.3, 0.5]), True, False),
    "vasicek crank-nicolson solve_banded": (prog.vasicek_bond, np.array([0.5, 0.02]), True,
                                            False),
    "kalman from numpy import": (prog.kf_neg_loglik, np.array([-1.0, -0.5]), True, False),
    "ukf zeros P += outer": (prog.ukf_pendulum, np.array([0.01, 0.05]), True, False),
    "ekf preallocated x[:] P[:]": (prog.ekf_range_nll, np.array([-2.0, -1.0]), True, False),
    "gmm np.sum of a list": (prog.gmm_loglik, np.array([2.0, 0.1]), True, False),
    "von mises mean std var of lists": (prog.von_mises_fit, np.array([0.3, 2.0]), True, False),
    "stats logpdf lists logsumexp b=": (prog.stats_mixture_posterior, np.array([2.0, -0.5]),
                                        True, False),
    "hardy-weinberg math.log dict": (prog.hw_inbreeding_loglik, np.array([0.6, 0.1]), True,
                                     False),
    "bragg mirror functools.reduce": (prog.bragg_reflectance, np.array([60.0, 95.0]), True,
                                      False),
    "absorbing film emath.sqrt e**": (prog.absorbing_reflectance, np.array([1.8, 120.0]), True,
                                      False),
    "periodic mirror cmath matrix_power": (prog.periodic_mirror, np.array([60.0, 95.0]), True,
                                           False),
    "selection dominance list": (prog.selection_sse, np.array([0.1, 0.5]), True, False),
    "kimura np.vectorize": (prog.mean_fixation, np.array([0.01, 0.2]), True, True),
    "wright-fisher binom.pmf solve": (prog.wf_fixation_time, np.array([0.05, 0.01]), True,
                                      False),
    "black-scholes math norm.cdf": (prog.straddle_book, np.array([0.25, 0.03]), True, False),
    "implied vol brentq in a loop": (prog.implied_vol_spread, np.array([12.0, 7.0]), True,
                                     False),
    "heston complex power trapezoid": (prog.heston_call, np.array([1.5, 0.4]), True, False),
    "heston digital by quad": (prog.heston_digital, np.array([1.5, 0.4]), True, False),
    "american put in-place tree": (prog.american_put, np.array([0.25, 0.04]), True, True),
    "blob gaussian_filter sobel": (prog.blob_edges, np.array([3.0, 2.0]), True, False),
    "template ndimage.shift": (prog.shifted_template_misfit, np.array([0.9, 2.1]), True, False),
    "centroid center_of_mass label": (prog.blob_centroid, np.array([8.3, 2.5]), True, False),
    "rachford-rice brentq wilson dict": (prog.flash_vapour_fraction, np.array([350.0, 10.0]),
                                         True, False),
    "gene switch fsolve args": (prog.switch_state, np.array([3.0, 2.0]), True, False),
    "dblquad active density": (prog.dose_over_square, np.array([0.8, 1.3]), False, False),
    "lif rate brentq of quad": (prog.lif_threshold_current, np.array([1.0, 0.5]), False, False),
    "sphere CubicSpline drag table": (prog.sphere_fall, np.array([0.002, 1000.0]), True, False),
    "coo_matrix assembly spsolve": (prog.conductivity_flux, np.array([0.2, 1.0]), True, False),
    "lil_matrix assembly spsolve": (prog.lil_network_potential, np.array([1.0, 0.2]), True,
                                    False),
    "groundwater sp.diags spsolve": (prog.groundwater_head, np.array([0.2, -0.5]), True, False),
    "bratu newton_krylov": (prog.bratu_newton_krylov, np.array([2.0, 1.5]), True, False),
    "hardening np.piecewise lambdas": (prog.hardening_misfit, np.array([2.0, 30.0]), True, True),
    "logit np.apply_along_axis": (prog.logit_loglik, np.array([0.7, 0.3]), True, False),
    "calibration np.polyfit": (prog.calibration_curvature, np.array([1.3, 0.2]), True, False),
    "sensor Polynomial.fit convert": (prog.sensor_curve, np.array([1.2, 0.3]), True, False),
    "sigma cloud atleast_2d r_ append": (prog.sigma_cloud_spread, np.array([0.7, 1.3]), True,
                                         False),
    "chirp unwrap kron 3-d polyfit": (prog.chirp_phase_slope, np.array([3.0, 4.0]), True, False),
    "lennard-jones frompyfunc ties": (prog.frompyfunc_energy, np.array([1.0, 1.0]), True, True),
}
ADAPTIVE = {"pr liquid fsolve full_output", "implied vol brentq in a loop",
            "heston digital by quad", "rachford-rice brentq wilson dict", "gene switch fsolve args",
            "dblquad active density", "lif rate brentq of quad", "bratu newton_krylov",
            "newton-krylov scipy cg of adsim.hvp"}
# difference steps where 1e-3 of the parameter crosses a kink or is too coarse
STEPS = {"american put in-place tree": 1e-4, "sphere CubicSpline drag table": 1e-4,
         "gene switch fsolve args": 1e-4}

(test_gradient_against_differences_and_the_other_mode,
 test_the_tape_replayed_at_a_new_point) = program_tests(PROGRAMS, ADAPTIVE, STEPS)


@pytest.mark.parametrize("f, x", [(prog.bratu_trust_krylov, np.array([2.0, 1.5])),
                                  (prog.leader_revenue, np.array([2.0, 0.5]))])
def test_inner_minimisers_accurate_to_their_tolerance(f, x):
    """trust-krylov given adsim's gradient and Hessian products, and BFGS on
    its own difference gradients (gtol=1e-7): their
    solutions, and so the derivatives by the implicit function theorem,
    agree with differences to about 1e-5, and a replay (SciPy run again
    from the previous solution) with the first solve to about 1e-7."""
    g = adsim.grad(f)(x)
    assert_close(g, differences(f, x, 1e-2), rtol=1e-4, atol=1e-9, what="gradient")
    v = np.array([0.3, -0.2])
    _, jv = adsim.jvp(f, (x,), (v,))
    assert_close(jv, g @ v, rtol=1e-9, atol=1e-15, what="jvp vs grad")
    want = central(adsim.grad(f), [x], [v], 1e-2)
    assert_close(adsim.hvp(f, x, v), want, rtol=1e-3, atol=1e-6 * np.max(np.abs(want)),
                 what="hvp")
    tape = adsim.record(f, x)
    assert_close(tape.gradient(x), g, rtol=1e-6, atol=1e-12, what="replay")
    x2 = moved(x)
    assert_close(tape.forward(x2), f(x2), rtol=1e-6, atol=1e-12, what="replayed value")


@pytest.mark.parametrize("f, x", [(prog.selection_sse, np.array([0.1, 0.5])),
                                  (prog.gmm_loglik, np.array([2.0, 0.1])),
                                  (prog.virial_fugacity, np.array([310.0, 0.3])),
                                  (prog.kf_neg_loglik, np.array([-1.0, -0.5])),
                                  (prog.logit_loglik, np.array([0.7, 0.3]))])
def test_the_complex_step(f, x):
    """Programs written with NumPy functions of their parameters alone run
    on complex parameters: Im f(x + i h e_k) / h is the derivative to
    rounding, with no cancellation, a check independent of differences."""
    h = 1e-30
    want = np.array([np.imag(f(x + 1j * h * e)) / h for e in np.eye(x.size)])
    assert_close(adsim.grad(f)(x), want, rtol=1e-11, atol=1e-14, what="complex step")


def test_float_of_the_result_for_printing_is_refused_naming_the_line():
    """``print(f"{float(loss):.6f}")`` inside the model: float() would drop
    the derivative; the refusal names the line and what to write."""
    with pytest.raises(adsim.ActiveValueLeak,
                       match=r"float\(\) of an active value.*print\(f\"loss.*adsim.value"):
        adsim.grad(prog.reported_loss)(np.array([1.1, 0.6]))
    assert np.isfinite(prog.reported_loss(np.array([1.1, 0.6])))
