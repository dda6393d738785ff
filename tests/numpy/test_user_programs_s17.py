"""Fifty-odd scientific programs as their authors write them
(programs_s17.py: plain state arrays updated in place through out=,
views, aliases held in dicts and lists, overlapping shifts, repeated
indices and np.add.at; names imported from numpy and numpy handed in as a
module; lists of active values given to NumPy; parameters in dicts,
dataclasses, bound methods, module globals and a settings module imported
inside the model; SciPy's sparse solves, root finders, minimisers,
quadrature, splines, interpolators and integrators inside the models;
likelihoods from scipy.stats and scipy.special, Kalman and GP evidences;
finite volumes, spectral steps, lattices, N-body and optics),
differentiated as they are: the value against the plain run, adsim.grad
against central differences, forward mode against reverse mode, the
Hessian-vector product against differences of the gradient, and the tape
recorded at one point replayed at a second point. Stiff kinetics at
SciPy's default tolerances are checked against the derivative of the
exact solution to about the tolerance. Programs adsim cannot
differentiate are refused with a typed error naming the cause."""
import numpy as np
import pytest

import adsim
from adsim.errors import FinishedRecording
import programs_s17 as prog
import programs_s17_settings as settings
from fdcheck import assert_close, central
from program_checks import check_jvp_and_replay, differences, program_tests

# name: (function, parameters, Hessian-vector product checked,
#        the path depends on the point)
PROGRAMS = {
    "lax-friedrichs roll indices u[:] = u + dt * rhs": (prog.lax_friedrichs_burgers,
                                                        np.array([1.0, 0.3]), True, True),
    "godunov mask stores into ones_like": (prog.godunov_burgers, np.array([0.5, 0.1]), True,
                                           True),
    "heat out= subtract add multiply clip": (prog.heat_with_out_arguments, np.array([1.0, 0.5]),
                                             True, True),
    "deposit np.add.at 2-d index tuple rfft2": (prog.deposit_potential_energy,
                                                np.array([1.0, 0.8]), True, True),
    "state aliased by a dict and a list": (prog.aliased_state_diffusion, np.array([1.0, 2.0]),
                                           True, False),
    "plate views top interior reshape(-1) T[0]": (prog.plate_views, np.array([1.0, 0.3]), True,
                                                  False),
    "rk4 stage buffers out[...] = copyto": (prog.rk4_buffers, np.array([2.0, 0.1]), True, False),
    # (Hessian products: test_hessian_products_against_wider_differences)
    "nbody broadcast fill_diagonal einsum": (prog.nbody_energy_drift, np.array([1.0, 0.9]),
                                             False, False),
    "wave three buffers rotated": (prog.wave_three_buffers, np.array([1.0, 0.5]), True, False),
    "namespace import numpy as xp": (prog.gaussian_smoother_loss, np.array([0.1, 0.9]), True,
                                     False),
    "steppers partial map operator reduce": (prog.stepper_comparison, np.array([1.2, 2.0]),
                                             True, False),
    "ensemble mean std median average ptp of lists": (prog.ensemble_spread,
                                                      np.array([1.5, 0.7]), True, True),
    "design column_stack r_ diag atleast_2d lists": (prog.design_from_lists,
                                                     np.array([0.8, 1.3]), True, False),
    "polyval interp cumsum prod norm max of lists": (prog.lists_of_coefficients,
                                                     np.array([0.7, 1.4]), True, True),
    "chemostat dict update **kwargs": (prog.chemostat_biomass, np.array([0.6, 0.8]), True,
                                       False),
    "dataclasses.replace method": (prog.membrane_response, np.array([0.1, 1.2]), True, True),
    "bound method solve_ivp self.k": (prog.decay_chain_peak, np.array([1.0, 0.5]), True, True),
    "module globals set by the model": (prog.harvest_with_globals, np.array([1.0, 1.0]), True,
                                        False),
    "implicit diffusion spsolve eye - dt D L": (prog.implicit_diffusion_sparse,
                                                np.array([1.0, 0.5]), True, False),
    "plain sparse L @ u and G.dot(u)": (prog.sparse_operator_steps, np.array([1.0, 0.5]), True,
                                        False),
    "implicit euler fsolve per step": (prog.brusselator_implicit, np.array([1.0, 2.5]), True,
                                       False),
    "manning root_scalar brentq": (prog.manning_depth, np.array([0.03, 1.5]), True, False),
    "quad of erf profile": (prog.front_mass, np.array([0.1, 0.5]), True, False),
    # (refused until active boundary derivative values were differentiated,
    # adsim/_scipy/splines.py)
    "clamped CubicSpline active end slope": (prog.clamped_spline_slopes, np.array([1.1, 0.5]),
                                             True, True),
    "interp1d fill_value and cubic": (prog.interp1d_fill, np.array([1.5, 0.3]), True, True),
    "RegularGridInterpolator plain table": (prog.table_path, np.array([282.0, 2.3]), True,
                                            True),
    "odeint args two compartments": (prog.odeint_auc, np.array([1.0, 0.2]), True, False),
    "nbinom t gamma beta logpdfs": (prog.stats_posterior, np.array([0.5, 1.0]), True, False),
    "frozen norm active mean lognorm": (prog.frozen_mean_likelihood, np.array([0.3, -0.2]),
                                        True, False),
    "zero-inflated poisson gammaln logaddexp": (prog.zip_loglik, np.array([-0.5, 0.5]), True,
                                                False),
    "kalman matrix form slogdet solve": (prog.kalman_matrix_form, np.array([-1.0, -0.5]), True,
                                         False),
    "gp cdist cho_factor lower cho_solve": (prog.gp_evidence_cdist, np.array([-0.2, 0.1]),
                                            True, False),
    "probit log_ndtr norm.logcdf": (prog.probit_loglik, np.array([0.2, 1.1]), True, True),
    "dirichlet-multinomial betaln xlogy": (prog.dirichlet_multinomial, np.array([1.0, 0.3]),
                                           True, False),
    "finite volume harmonic faces np.diff": (prog.fv_harmonic, np.array([1.0, 3.0]), True,
                                             False),
    "allen-cahn semi-implicit fft": (prog.allen_cahn_fft, np.array([0.3, 0.8]), True, False),
    "ising 3x3 enumeration logsumexp": (prog.ising_free_energy, np.array([0.3, 0.1]), True,
                                        False),
    "xy model relaxed np.roll": (prog.xy_relaxed_energy, np.array([1.0, 0.2]), False, False),
    "tmm complex snell filled 2x2": (prog.tmm_reflectance, np.array([80.0, 120.0]), True,
                                     False),
    "gaussian beam abcd multi_dot complex q": (prog.beam_waist_after_lenses,
                                               np.array([40.0, 30.0]), True, False),
    "math.fsum of active terms": (prog.fsum_of_terms, np.array([0.5, 1.5]), True, False),
    "delay line overlapping shift": (prog.delay_line_outflow, np.array([1.0, 0.05]), True,
                                     False),
    "repeated cells u[cells] += w and add.at": (prog.repeated_index_scatter,
                                                np.array([1.2, 0.3]), True, False),
    # (refused until ufuncs took lists of active values, adsim/_record/listed.py)
    "ufunc reduce of lists": (prog.ufunc_reduce_of_lists, np.array([0.7, 1.3]), True, False),
    # (refused until np.ndenumerate of active arrays was hooked, adsim/_np/ndenumerate.py)
    "np.ndenumerate lattice": (prog.ndenumerate_lattice, np.array([0.7, 0.4]), True, False),
    "settings module imported in the model": (prog.arrhenius_from_settings,
                                              np.array([20.0, 1000.0]), True, False),
    "kernel ridge K.flat[::n + 1] += lam": (prog.krr_loo_error, np.array([-3.0, -0.5]), True,
                                            False),
    # (refused until voigt_profile had a rule, adsim/_scipy/voigt.py)
    "voigt lines voigt_profile": (prog.voigt_misfit, np.array([0.7, 0.6]), True, False),
    "rod from a copy of data, history copies": (prog.rod_from_measured_profile,
                                                 np.array([1.0, 0.5]), True, False),
    "mean field while until converged": (prog.mean_field_magnetisation, np.array([0.2, 0.1]),
                                         True, True),
}
# (inner solvers accurate to their tolerance)
ADAPTIVE = {"manning root_scalar brentq", "implicit euler fsolve per step"}

(test_gradient_against_differences_and_the_other_mode,
 test_the_tape_replayed_at_a_new_point) = program_tests(PROGRAMS, ADAPTIVE)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_value_is_the_plain_run(name):
    """adsim's value (recorded on active parameters) is NumPy's."""
    f, x, _, _ = PROGRAMS[name]
    value, _ = adsim.value_and_grad(f)(x)
    assert_close(value, f(x), rtol=1e-13, atol=1e-300, what=name)


@pytest.mark.parametrize("f, x", [(prog.nbody_energy_drift, np.array([1.0, 0.9])),
                                  (prog.xy_relaxed_energy, np.array([1.0, 0.2]))])
def test_hessian_products_against_wider_differences(f, x):
    """Programs whose Hessian products are a thousandth of their gradients:
    the gradient's rounding swamps differences over a step of 1e-6 of the
    parameters, so the differences step 3e-3 of them (fourth order)."""
    v = np.array([0.3, -0.5]) * 1e-2 * x
    want = central(adsim.grad(f), [x], [v], 0.3)
    assert_close(adsim.hvp(f, x, v), want, rtol=1e-7, atol=0, what="hvp")


@pytest.mark.parametrize("f, x", [(prog.inner_least_squares, np.array([0.8, 0.05])),
                                  (prog.bounded_allocation, np.array([0.3, 1.0]))])
def test_inner_minimisers_to_their_tolerance(f, x):
    """least_squares (trf) and L-BFGS-B with bounds inside the model: their
    solutions, and so the derivatives by the implicit function theorem,
    agree with differences to about 1e-5 (their stopping tests, not the
    derivative, set the accuracy)."""
    value, g = adsim.value_and_grad(f)(x)
    assert_close(value, f(x), rtol=1e-8, atol=1e-300, what="value")
    assert_close(g, differences(f, x, 1e-2), rtol=2e-5, atol=1e-8, what="gradient")
    v = np.array([0.3, -0.2]) * x
    _, jv = adsim.jvp(f, (x,), (v,))
    assert_close(jv, g @ v, rtol=1e-9, atol=1e-15, what="jvp vs grad")


@pytest.mark.parametrize("f", [prog.kinetics_radau, prog.kinetics_bdf])
def test_stiff_kinetics_at_scipys_default_tolerances(f):
    """solve_ivp of stiff kinetics (k3 = 1e3) by Radau and BDF at rtol=1e-3,
    atol=1e-6, as chemists call it: the gradient is the derivative of the
    exact solution to about the tolerance (here within 2e-3 of differences
    of a solve at rtol=1e-8), forward and reverse agree to rounding, and
    the tape replayed at a new point gives that point's derivative."""
    x = np.array([0.8, 2.0])
    value, g = adsim.value_and_grad(f)(x)
    assert_close(value, f(x), rtol=1e-9, atol=1e-300, what="value")
    exact = differences(lambda y: f(y, rtol=1e-8), x)
    assert_close(g, exact, rtol=2e-3, atol=2e-3 * np.max(np.abs(exact)), what="gradient")
    check_jvp_and_replay(f, x, g)


def test_a_setting_changed_between_calls_is_seen(monkeypatch):
    """The model imports its settings module inside its body: a setting
    changed between calls of one transformed function gives the new value
    and derivative (the cached tape of the old setting was reused before)."""
    f = prog.arrhenius_from_settings
    x = np.array([20.0, 1000.0])
    g = adsim.value_and_grad(f)
    for activation in (5.0e4, 6.0e4, 6.0e4):
        monkeypatch.setattr(settings, "ACTIVATION", activation)
        value, grad = g(x)
        assert_close(value, f(x), rtol=1e-14, atol=0, what="value")
        assert_close(grad, differences(f, x), rtol=1e-6, atol=0, what="gradient")
    assert g.tapes.recordings == 2


@pytest.mark.parametrize("f, error, spelled", [
    # a default argument bound to NumPy's np.array before any recording
    (prog.mechanism_yield, adsim.UnsupportedOperation, r"`to_array\(\.\.\.\)` called NumPy's"),
    # a plain work buffer (and its view) made at import, written by the model
    (prog.module_work_buffer, adsim.ActiveValueLeak, r"assignment into a plain array"),
    # np.float64(x) makes a plain scalar
    (prog.float64_of_parameter, adsim.ActiveValueLeak, r"numpy.float64\(x\)"),
    # a named view of a plain copy of data written with an active result
    (prog.rod_view_of_copy, adsim.UnsupportedOperation, r"whose memory other arrays share"),
    # moments of a distribution with active parameters
    (prog.lognormal_mean_match, adsim.UnsupportedOperation, r"lognorm.mean with active"),
])
def test_refusals_name_the_cause(f, error, spelled):
    """Refused before any derivative is computed, naming the cause; the
    programs run on plain numbers."""
    x = np.array([350.0, 4.0]) if f is prog.mechanism_yield else np.array([0.7, 1.3])
    with pytest.raises(error, match=spelled):
        adsim.grad(f)(x)
    assert np.isfinite(f(x))


def test_a_warm_start_kept_between_calls_is_refused_at_the_next_call():
    """The root found in one call is kept in a module dict for the next: the
    recording leaves an active value there, and the next call, recorded or
    plain, meets it and raises FinishedRecording, whose message says to keep
    plain values in caches."""
    x = np.array([0.7, 1.3])
    try:
        want = differences(prog.warm_started_root, x)
        prog.WARM_START.clear()
        assert_close(adsim.grad(prog.warm_started_root)(x), want, rtol=1e-6, atol=0,
                     what="first call")
        for call in (prog.warm_started_root, adsim.grad(prog.warm_started_root)):
            with pytest.raises(FinishedRecording, match="cache holding one needs a plain"):
                call(x)
    finally:
        prog.WARM_START.clear()
