"""Scientific programs as their authors write them (programs_s18.py: ODE
models through solve_ivp and odeint with parameters in dicts, on objects,
in partials and module globals, events restarted in loops, dense output;
equations of state as Helmholtz energies differentiated by adsim inside
the model; mixture likelihoods closed over data objects; Kalman, ensemble
and unscented filters; thin-film and grating optics in complex
arithmetic; PDE codes updating plain states in place; SciPy's sparse,
root-finding, minimising, quadrature, spline and special-function
machinery inside the models; lists of active values, np.vectorize,
np.piecewise and np.apply_along_axis), differentiated as they are: the
value against the plain run, adsim.grad against central differences,
forward mode against reverse mode, the Hessian-vector product against
differences of the gradient, and the tape recorded at one point replayed
at a second point. Stiff kinetics at SciPy's default tolerances are
checked against the derivative of the exact solution to about the
tolerance. Programs adsim cannot differentiate are refused with a typed
error naming the cause."""
import functools

import numpy as np
import pytest

import adsim
import programs_s18 as prog
from fdcheck import assert_close, central
from program_checks import check_jvp_and_replay, differences, program_tests

# name: (function, parameters, Hessian-vector product checked,
#        the path depends on the point)
PROGRAMS = {
    "michaelis-menten dict t_eval": (prog.mm_misfit, np.array([1.2, 2.0]), True, True),
    "projectile terminal event": (prog.projectile_range, np.array([30.0, 0.01]), True, True),
    "pk threshold event args": (prog.time_below_threshold, np.array([1.0, 0.2]), True, True),
    "oscillator dense_output sol.sol": (prog.oscillator_dense, np.array([2.0, 0.1]), True, True),
    "sir odeint tfirst module globals": (prog.sir_final_size, np.array([0.3, 0.1]), True, True),
    "lotka functools.partial list y0": (prog.lotka_partial, np.array([1.0, 10.0]), True, True),
    "bouncing ball events restarted": (prog.bouncing_ball, np.array([0.8, 1.0]), True, True),
    "odeint Dfun full_output mxstep": (prog.robertson_like_odeint, np.array([0.5, 3.0]), True,
                                       True),
    "solve_ivp vectorized=True": (prog.logistic_vectorized, np.array([1.2, 2.0]), True, True),
    "rk vapour Z by Cardano cbrt": (prog.rk_vapour_z, np.array([1.2, 0.5]), True, True),
    "debye quad active limit": (prog.debye_free_energy, np.array([300.0, 150.0]), True, False),
    "carnahan-starling Z by adsim.grad": (
        lambda s: s[0] * adsim.grad(lambda r: prog.cs_free_energy(r, s[1]))(s[0]),
        np.array([0.4, 1.5]), True, False),
    "gmm np.split closure over data": (prog.gmm_nll,
                                       np.array([0.1, -0.1, -1.0, 1.4, -0.4, -0.1]), True,
                                       False),
    "student-t mixture logsumexp b=": (prog.t_mixture_nll, np.array([1.0, -0.3]), True, False),
    "poisson mixture logaddexp expit": (prog.poisson_mixture, np.array([0.2, 1.4]), True,
                                        False),
    "von mises mixture i0e vstack": (prog.von_mises_mixture, np.array([2.5, 2.0]), True, False),
    "ukf from numpy import outer": (prog.ukf_range_nll, np.array([0.1, 0.2]), True, False),
    "kalman joseph form inv": (prog.kalman_joseph, np.array([-2.0, -1.0]), True, False),
    "enkf np.cov": (prog.enkf_analysis, np.array([1.1, 0.05]), True, False),
    "kalman solve on transposes symmetrised": (prog.symmetrised_kalman, np.array([0.1, 0.2]),
                                               True, False),
    "film exp(1j beta d) T[1][0]/T[0][0]": (prog.film_reflectance, np.array([1.38, 100.0]),
                                            True, False),
    "absorbing film oblique inv": (prog.absorbing_stack, np.array([0.1, 60.0]), True, False),
    "grating complex sqrt sinh cosh": (prog.grating_reflectance, np.array([1.5, 1.2]), True,
                                       False),
    "nls split-step fft": (prog.nls_split_step, np.array([1.0, 0.2]), True, False),
    "waveguide E[1:] *= exp(1j k dz)": (prog.waveguide_phase, np.array([2.0, 0.1]), True,
                                        False),
    "heat neumann u[0] = u[1]": (prog.heat_neumann, np.array([1.0, 2.0]), True, True),
    "box model Mass += dt * flux": (prog.carbon_box_model, np.array([0.05, 0.02]), True, False),
    "upwind np.where on velocity sign": (prog.upwind_where, np.array([1.0, 0.01]), True, False),
    "semi-lagrangian np.interp period=": (prog.semi_lagrangian, np.array([1.3, 0.1]), True,
                                          True),
    "energy balance np.gradient": (prog.ebm_global_mean, np.array([0.5, 200.0]), True, False),
    "cahn-hilliard c += dt lap(mu)": (prog.cahn_hilliard, np.array([0.1, 0.5]), True, False),
    "maccormack predictor copy": (prog.maccormack_burgers, np.array([0.3, 0.05]), True, False),
    "fisher 2-d np.pad edge": (prog.fisher_2d_pad, np.array([0.2, 1.0]), True, False),
    "rod object self.state in place": (prog.rod_object, np.array([1.0, 0.5]), True, False),
    "poisson-boltzmann sparse newton": (prog.poisson_boltzmann, np.array([1.0, 4.0]), True,
                                        False),
    "sparse kron laplacian spsolve": (prog.sparse_kron_poisson, np.array([1.0, 0.5]), True,
                                      True),
    "equilibrium root hybr dict args": (prog.equilibrium_root, np.array([2.0, 0.5]), True,
                                        False),
    "natural CubicSpline integrate derivative": (prog.spline_work, np.array([1.0, 0.5]), True,
                                                 False),
    "make_interp_spline second derivative": (prog.bspline_roughness, np.array([1.0, 0.3]),
                                             True, False),
    "bessel jn_zeros j1 jv": (prog.cylinder_centre, np.array([0.5, 0.3]), True, False),
    "special lambertw ellipk gammaincc erfcx kv": (prog.special_functions,
                                                   np.array([0.7, 0.6]), True, False),
    "simpson cumulative_trapezoid": (prog.cumulative_dose, np.array([0.5, 2.0]), True, False),
    "newton array x0 fprime": (prog.kepler_newton_array, np.array([0.3, 0.2]), True, False),
    "bubble point brentq antoine dict": (prog.bubble_point, np.array([0.4, 760.0]), True,
                                         False),
    "interp1d quadratic inside fsolve": (prog.interp_fsolve, np.array([0.7, 3.0]), True, True),
    # (no Hessian products: |x - c| is a kink moving with c, whose second derivatives the
    # Leibniz rule misses, refused: test_user_programs_s19.py)
    "quad args points": (prog.quad_points, np.array([0.5, 0.8]), False, False),
    "np.sum np.mean np.vstack np.r_ of lists": (prog.lists_to_numpy, np.array([0.7, 1.3]),
                                                True, False),
    "np.vectorize branches": (prog.vectorized_drag, np.array([0.15, 1.0]), True, True),
    "np.vectorize otypes keyword piecewise scalar": (prog.vectorize_otypes,
                                                     np.array([1.3, 1.1]), True, True),
    "np.piecewise lambdas active h0": (prog.piecewise_flow, np.array([1.2, 0.93]), True, True),
    "np.apply_along_axis rows and columns": (prog.apply_along_axis_stats,
                                             np.array([1.0, 0.5]), True, True),
    "max min sorted sum abs of scalars": (prog.builtins_of_scalars, np.array([0.8, 0.6]), True,
                                          True),
    "np.stack axis=1 norm of a list": (prog.trajectory_geometry, np.array([3.0, 4.0]), True,
                                       False),
    "np.asarray of scalars in a loop": (prog.array_of_scalars, np.array([2.0, 0.3]), True,
                                        False),
    "np.r_ slices np.c_ np.hstack": (prog.index_tricks, np.array([0.7, 1.3]), True, False),
    "np.interp active xp": (prog.active_knots, np.array([0.43, 0.7]), True, True),
    # (refused until interp1d's linear kind took active x, adsim/_scipy/interp1d.py)
    "interp1d active breakpoint": (prog.active_knots_interp1d, np.array([0.43, 0.7]), True,
                                   True),
    "tight binding eigh": (prog.tight_binding, np.array([1.0, 0.3]), True, False),
    "chain energy logsumexp": (prog.chain_energy_logsumexp, np.array([0.1, 0.3, 0.5, 0.6]),
                               True, False),
    # (Hessian products: test_hessian_products_against_wider_differences)
    "pk LSODA infusion": (prog.pk_lsoda, np.array([2.0, 10.0]), False, True),
    "while t < t_end active dt": (prog.cfl_while_loop, np.array([1.0, 0.5]), False, True),
    # the derivative of V (1e-3 m^3) is taken by differences over 1e-6 of it
    "peng-robinson helmholtz": (prog.pr_helmholtz, np.array([250.0, 1e-3, 0.6, 0.4]), True,
                                False),
    "pressure -dA/dV by adsim.grad": (
        lambda s: -adsim.grad(lambda v: prog.pr_helmholtz(np.r_[s[0], v, 0.6, 0.4]))(s[1]),
        np.array([250.0, 1e-3]), True, False),
    # (no Hessian products: a Hessian inside a gradient inside an hvp, slow and
    # checked by the Helmholtz energy's own above)
    "stability eigvalsh of adsim.hessian": (prog.pr_stability, np.array([250.0, 1e-3]), False,
                                            False),
    "repeated doses y0 = sol.y[:, -1].copy()": (prog.repeated_doses, np.array([1.0, 0.2]),
                                                 True, True),
    "lambda event dict attribute t_eval": (prog.time_to_half_capacity, np.array([1.0, 0.1]),
                                           True, True),
    "rhs zeros_like empty args=(dict,)": (prog.buffered_rhs_dict_args, np.array([1.0, 0.5]),
                                          True, True),
    "rk23 t_eval list of tuples": (prog.rk23_misfit, np.array([0.5, 1.5]), True, True),
    "rate on a @property": (prog.decay_property, np.array([2.0, 400.0]), True, True),
    "fugacities by adsim.grad inside brentq": (prog.flash_fraction, np.array([300.0, 5.0]),
                                               True, False),
    "stacked complex tmm einsum": (prog.stacked_tmm, np.array([2.3, 60.0]), True, False),
    # (differences over 1e-6 of the width: wider ones cross the limiter's kinks)
    "minmod limiter np.where sign minimum": (prog.minmod_advection, np.array([1.0, 0.1]), True,
                                             True),
    # (refused until expm_multiply took start/stop/num, adsim/_scipy/sparse_active_linalg.py)
    "expm_multiply lil setdiag start stop num": (prog.sparse_master_equation,
                                                 np.array([1.0, 0.5]), True, False),
    "np.vectorize signature (n)->()": (prog.vectorize_signature, np.array([0.7, 0.3]), True,
                                       False),
    "np.convolve np.correlate": (prog.convolved_response, np.array([2.0, 1.5]), True, False),
    "np.histogram active weights": (prog.weighted_histogram, np.array([0.2, 0.3]), True, False),
    "fixed_quad moments": (prog.gauss_legendre_moments, np.array([0.7, 1.5]), True, False),
    "pinv least squares": (prog.pinv_fit, np.array([1.3, 1.5]), True, False),
    "logsumexp return_sign": (prog.signed_logsumexp, np.array([0.3, 0.9]), True, True),
    "kalman x[:] P[:] P -= outer": (prog.kalman_in_place, np.array([0.1, 0.2]), True, False),
    "ukf matrix Pxz += outer inv(Pzz)": (prog.ukf_matrix_update, np.array([0.1, 0.05]), True,
                                         False),
    "einsum optimize tensordot": (prog.contractions, np.array([0.7, 1.3]), True, False),
    "helpers writing the caller's plain array": (prog.rod_with_helpers, np.array([1.0, 2.0]),
                                                 True, False),
    "in place on reversed strided transposed views": (prog.view_updates, np.array([0.3, 0.7]),
                                                      True, False),
    "maximum.accumulate multiply.accumulate": (prog.drawdown, np.array([0.1, 0.5]), True, True),
    "copyto where putmask place put": (prog.masked_writes, np.array([0.7, 1.3]), True, False),
    "sort percentile quantile argsort": (prog.robust_summary, np.array([0.3, 1.2]), True, True),
    "nansum nanmean nan_to_num": (prog.nan_aware, np.array([0.5, 1.5]), True, False),
    "matrix_power markov chain": (prog.markov_power, np.array([0.8, 0.2]), True, False),
    "savgol uniform_filter1d fftconvolve": (prog.smoothed_peak, np.array([1.0, 0.7]), True,
                                            True),
    "np.gradient edge_order=2 cumulative_simpson": (prog.nonuniform_gradient,
                                                    np.array([2.0, 0.5]), True, False),
    "expm solve_continuous_lyapunov": (prog.linear_system_covariance, np.array([2.0, 0.5]),
                                       True, False),
    "terminal=2 second crossing": (prog.second_crossing, np.array([2.0, 0.3]), True, True),
    "misfit of solve_ivp residuals": (lambda p: np.sum(prog.decay_residuals(p) ** 2),
                                      np.array([0.5, 1.0]), True, True),
    # (Hessian products: test_hessian_products_against_wider_differences)
    "active t_span (0, tf) and t_eval": (prog.flight_time_fit, np.array([3.0, 1.5]), False,
                                         True),
    "BDF terminal event state": (prog.bdf_event_state, np.array([1.0, 0.5]), False, True),
    "odeint hmax tcrit switched forcing": (prog.forced_odeint, np.array([1.0, 2.0]), False,
                                           True),
    # (a gradient inside the model: its Hessian products would be third order, refused
    # through an ODE solve: test_third_order_through_an_ode_solve_is_refused_by_name)
    "adsim.grad of an ODE misfit inside the model": (prog.gradient_norm_objective,
                                                      np.array([0.5, 1.0]), False, True),
    "truss K[np.ix_(dofs, dofs)] += ke, free mask": (prog.truss_compliance,
                                                      np.array([200.0, 70.0]), True, False),
    "lattice boltzmann np.roll streaming in place": (prog.lbm_channel, np.array([0.8, 1e-3]),
                                                     True, False),
    "periodic LJ minimum image np.round": (prog.periodic_lj, np.array([1.0, 3.3]), True, True),
    "chebyshev collocation chebfit chebval": (prog.chebyshev_bvp, np.array([1.5, 0.7]), True,
                                              False),
    "map_coordinates registration": (prog.registration_misfit, np.array([0.3, -0.2]), True,
                                     True),
    "butler-volmer brentq args list": (prog.overpotential, np.array([0.1, 0.5]), True, False),
    # (refused until complex states were integrated, adsim/integrate/_complex_state.py)
    "rabi complex psi' = -1j H psi": (prog.rabi_population, np.array([0.5, 1.0]), True, True),
}
# (adaptive solvers and inner solves accurate to their tolerances)
ADAPTIVE = {"michaelis-menten dict t_eval", "projectile terminal event",
            "pk threshold event args", "oscillator dense_output sol.sol",
            "sir odeint tfirst module globals", "lotka functools.partial list y0",
            "bouncing ball events restarted", "odeint Dfun full_output mxstep",
            "solve_ivp vectorized=True", "pk LSODA infusion", "debye quad active limit",
            "equilibrium root hybr dict args", "newton array x0 fprime",
            "bubble point brentq antoine dict", "interp1d quadratic inside fsolve",
            "quad args points", "repeated doses y0 = sol.y[:, -1].copy()",
            "lambda event dict attribute t_eval", "rhs zeros_like empty args=(dict,)",
            "rk23 t_eval list of tuples", "rate on a @property",
            "fugacities by adsim.grad inside brentq", "terminal=2 second crossing",
            "misfit of solve_ivp residuals", "active t_span (0, tf) and t_eval",
            "BDF terminal event state", "odeint hmax tcrit switched forcing",
            "adsim.grad of an ODE misfit inside the model", "butler-volmer brentq args list",
            "rabi complex psi' = -1j H psi"}
STEPS = {"peng-robinson helmholtz": 1e-5, "pressure -dA/dV by adsim.grad": 1e-5,
         "stability eigvalsh of adsim.hessian": 1e-5,
         "minmod limiter np.where sign minimum": 1e-5}

(test_gradient_against_differences_and_the_other_mode,
 test_the_tape_replayed_at_a_new_point) = program_tests(PROGRAMS, ADAPTIVE, STEPS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_value_is_the_plain_run(name):
    """adsim's value (recorded on active parameters) is NumPy's (an adaptive
    solve's to far below its tolerance: BDF's steps on the recorded
    right-hand side may round otherwise, 2e-11 at rtol=1e-8)."""
    f, x, _, _ = PROGRAMS[name]
    value, _ = adsim.value_and_grad(f)(x)
    assert_close(value, f(x), rtol=1e-9 if name in ADAPTIVE else 1e-12, atol=1e-300, what=name)


@pytest.mark.parametrize("f, x", [(prog.pk_lsoda, np.array([2.0, 10.0])),
                                  (prog.flight_time_fit, np.array([3.0, 1.5])),
                                  (prog.bdf_event_state, np.array([1.0, 0.5])),
                                  (prog.forced_odeint, np.array([1.0, 2.0])),
                                  (prog.cfl_while_loop, np.array([1.0, 0.5])),
                                  (prog.nelder_mead_offset, np.array([0.7, 1.3]))])
def test_hessian_products_against_wider_differences(f, x):
    """Programs whose gradient carries noise of its inner solver (LSODA and
    odeint at rtol=1e-10, BDF at 1e-8, RK45 with an active end time,
    Nelder–Mead's simplex at fatol=1e-14, about 1e-7 in x) or
    whose Hessian products are 1e-9 of the gradient (an upwind step whose
    last time step is clipped): differences over 1e-6 of the parameters
    amplify that noise, so they step 1e-2 of them (fourth order: truncation
    about 1e-8; an adaptive solve's steps still move with the parameters,
    which leaves up to 1e-5)."""
    v = np.array([0.3, -0.5]) * 1e-2 * x
    want = central(adsim.grad(f), [x], [v], 1.0)
    assert_close(adsim.hvp(f, x, v), want, rtol=1e-5, atol=1e-9 * np.max(np.abs(want)),
                 what="hvp")


def test_nelder_mead_and_bfgs_inside_the_model_to_their_tolerance():
    """Nelder–Mead (xatol=1e-12, fatol=1e-14) and BFGS on its own difference
    gradients with gtol=1e-12, which SciPy ends with "precision loss" a
    Newton step of 3.5e-8 (relative) from the minimum: both stand, and the
    derivatives by the implicit function theorem agree with differences of
    the solutions (over 1e-2 of the parameters, above their noise) to
    2e-5, and BFGS's with those of a Newton solve to 1e-7."""
    for f, x in [(prog.nelder_mead_offset, np.array([0.7, 1.3])),
                 (prog.relaxed_energy, np.array([1.0, 0.5]))]:
        value, g = adsim.value_and_grad(f)(x)
        # (the solve on the recorded function may take another path to the tolerance)
        assert_close(value, f(x), rtol=1e-8, atol=1e-300, what="value")
        assert_close(g, differences(f, x, 1e-2), rtol=2e-5, atol=1e-9, what="gradient")

    def newton_solved(params):
        k, force = params
        u = np.full(4, 0.3)
        for _ in range(30):
            du = np.diff(np.r_[0.0, u])
            grad = k * (du - np.r_[du[1:], 0.0]) + u ** 3 - force * (np.arange(4) == 3)
            hess = k * (2 * np.eye(4) - np.eye(4, k=1) - np.eye(4, k=-1)) + np.diag(3 * u ** 2)
            hess[3, 3] -= k
            u = u - np.linalg.solve(hess, grad)
        du = np.diff(np.r_[0.0, u])
        return 0.5 * k * np.sum(du ** 2) + 0.25 * np.sum(u ** 4) - force * u[-1] + u[-1]
    x = np.array([1.0, 0.5])
    assert_close(adsim.grad(prog.relaxed_energy)(x), differences(newton_solved, x), rtol=1e-7,
                 atol=0, what="against a Newton solve")


@pytest.mark.parametrize("f, x, exact", [
    (lambda y: prog.reactor_c_yield(y, "Radau"), np.array([0.8, 2.0]), prog.reactor_c_yield),
    (lambda y: prog.reactor_c_yield(y, "LSODA"), np.array([0.8, 2.0]), prog.reactor_c_yield),
    (prog.enzyme_bdf, np.array([1.0, 5.0]), prog.enzyme_bdf),
    (prog.vdp_radau, np.array([50.0, 2.0]), prog.vdp_radau),
    (prog.growth_fit_default_tolerances, np.array([1.5, 1.0]),
     prog.growth_fit_default_tolerances)])
def test_models_at_scipys_default_tolerances(f, x, exact):
    """A reactor object's bound method by Radau and LSODA, an enzyme by
    BDF with a hand-written Jacobian, Van der Pol (mu = 50) by Radau, a
    growth fit by RK45, all at rtol=1e-3, atol=1e-6: the gradient is the
    derivative of the exact solution to about the tolerance (within 3e-3 of
    differences of a solve at rtol=1e-8; measured 2e-5 to 1e-4 for the
    stiff ones, 1.8e-3 for RK45), forward and reverse agree to
    rounding, and the tape replayed at a new point gives what a recording
    there gives."""
    value, g = adsim.value_and_grad(f)(x)
    assert_close(value, f(x), rtol=1e-9, atol=1e-300, what="value")
    if exact is prog.reactor_c_yield:
        want = differences(lambda y: exact(y, "Radau", rtol=1e-8, atol=1e-10), x)
    else:
        want = differences(lambda y: exact(y, rtol=1e-8, atol=1e-10), x)
    assert_close(g, want, rtol=3e-3, atol=3e-3 * np.max(np.abs(want)), what="gradient")
    check_jvp_and_replay(f, x, g)


def test_a_grid_point_where_a_complex_sqrt_vanishes_is_refused_by_its_name():
    """The grating's sqrt(kappa**2 - dbeta**2 + 0j) on a grid holding
    dbeta = kappa: the derivative of sqrt is infinite there (the
    reflectance itself is analytic in s**2, which adsim cannot see); the
    refusal names np.sqrt and the vanishing argument, not a power the
    program did not write (NumPy's own value there is NaN, 0 / 0). Off that
    point the program is differentiated (PROGRAMS)."""
    on_grid = np.linspace(-3.0, 3.0, 13)               # holds +-1.5 (NumPy's value: 0 / 0)
    with pytest.raises(adsim.UndefinedDerivative, match=r"np\.sqrt of a complex value that is 0"):
        adsim.grad(lambda p: prog.grating_reflectance(p, on_grid))(np.array([1.5, 1.2]))


def test_newton_krylov_with_adsim_products_reaches_the_minimum():
    """The chain energy minimised by SciPy's trust-krylov and Newton-CG given
    adsim.grad and adsim.hvp (hessp): both reach the same minimum, where
    adsim's gradient vanishes, in few iterations."""
    from scipy.optimize import minimize
    f = prog.chain_energy_logsumexp
    jac = adsim.grad(f)

    def hessp(u, p):
        return adsim.hvp(f, u, p)
    ends = []
    for method in ("trust-krylov", "Newton-CG"):
        res = minimize(f, np.zeros(6), jac=jac, hessp=hessp, method=method,
                       options={"gtol": 1e-10} if method == "trust-krylov" else {"xtol": 1e-12})
        assert res.success and res.nit < 30, (method, res.message)
        ends.append(res.x)
        assert np.max(np.abs(jac(res.x))) < 1e-8
    assert_close(ends[0], ends[1], rtol=1e-7, atol=1e-9, what="the two minima")


def test_an_auc_over_the_solvers_steps():
    """np.trapezoid(sol.y[1], sol.t) without t_eval: the trapezoid's error
    over RK45's long steps is in the value and in any derivative of it
    (docs/integrate.md); at rtol=1e-8 the held gradient is within 1e-4 of
    the gradient's size (measured 4e-5) of the exact derivative of the AUC of the
    one-compartment oral model, and forward and reverse agree."""
    def exact(p):
        ka, ke = p
        return 100.0 * ka / (ka - ke) * ((1 - np.exp(-24 * ke)) / ke - (1 - np.exp(-24 * ka)) / ka)

    def f(p):
        return prog.auc_over_steps(p, rtol=1e-8, atol=1e-10)
    x = np.array([1.0, 0.2])
    value, g = adsim.value_and_grad(f)(x)
    assert_close(value, f(x), rtol=1e-12, atol=0, what="value")
    want = differences(exact, x)
    assert_close(g, want, rtol=0, atol=1e-4 * np.max(np.abs(want)), what="gradient")
    _, jv = adsim.jvp(f, (x,), (np.array([0.3, -0.2]),))
    assert_close(jv, g @ np.array([0.3, -0.2]), rtol=1e-9, atol=1e-12, what="jvp vs grad")


def test_a_module_parameter_array_written_by_the_model_is_refused():
    """RATES[:] = params into a module-level plain array that the
    right-hand side reads: a plain array cannot hold the active values and
    adsim cannot rebind a global; the refusal names the assignment and says
    to make the array inside the function or pass the values by args=."""
    x = np.array([1.0, 0.5])
    saved = prog.RATES.copy()
    try:
        with pytest.raises(adsim.ActiveValueLeak, match=r"`RATES\[:\] = \.\.\.` is an "
                                                         r"assignment into a plain array"):
            adsim.grad(prog.global_rates_written)(x)
    finally:
        prog.RATES[:] = saved
    assert np.isfinite(prog.global_rates_written(x))


def test_residuals_through_solve_ivp_by_adsim_jacobian():
    """A least-squares fit's residual vector through solve_ivp: adsim.jacobian
    against column differences, and its J^T r against the misfit's gradient."""
    x = np.array([0.5, 1.0])
    J = adsim.jacobian(prog.decay_residuals)(x)
    want = np.column_stack([central(prog.decay_residuals, [x], [e], 1e-4) for e in np.eye(2)])
    assert_close(J, want, rtol=1e-6, atol=1e-10, what="jacobian")
    g = adsim.grad(lambda p: np.sum(prog.decay_residuals(p) ** 2))(x)
    assert_close(g, 2 * J.T @ prog.decay_residuals(x), rtol=1e-10, atol=1e-14, what="J^T r")


def test_third_order_through_an_ode_solve_is_refused_by_name():
    """adsim.grad of an ODE misfit inside the model differentiates (PROGRAMS);
    its Hessian products would be third order through the solve, which is
    refused naming the cause and the remedy."""
    with pytest.raises(adsim.UnsupportedOperation, match="derivatives of order three and more"):
        adsim.hvp(prog.gradient_norm_objective, np.array([0.5, 1.0]), np.array([1.0, 0.0]))


def test_a_masked_array_of_active_values_is_refused_by_name():
    """np.ma.masked_where of active values makes a plain masked array: refused
    naming numpy.ma.masked_where (write the mask with np.where instead)."""
    with pytest.raises(adsim.UnsupportedOperation, match=r"numpy\.ma\.masked_where"):
        adsim.grad(prog.masked_mean)(np.array([0.7, 1.3]))


def test_matrix_free_newton_krylov_with_adsim_jvp():
    """Newton's method on the Bratu residual, each step's linear system
    solved by SciPy's GMRES on a LinearOperator whose products are
    adsim.jvp of the residual: quadratic convergence to the root fsolve
    finds, and the products agree with adsim.jacobian's matrix."""
    from scipy.optimize import fsolve
    from scipy.sparse.linalg import LinearOperator, gmres
    F = prog.bratu_residual
    n = 20
    u = np.zeros(n)
    norms = []
    for _ in range(8):
        r = F(u)
        norms.append(np.linalg.norm(r))
        if norms[-1] < 1e-9:
            break
        J = LinearOperator((n, n), matvec=lambda v, u=u: adsim.jvp(F, (u,), (v,))[1])
        du, info = gmres(J, -r, rtol=1e-12, atol=0.0, restart=n)
        assert info == 0
        u = u + du
    assert norms[-1] < 1e-9 and len(norms) <= 6, norms
    assert_close(u, fsolve(F, np.zeros(n), xtol=1e-13), rtol=1e-8, atol=1e-12, what="root")
    v = np.linspace(-1, 1, n)
    assert_close(adsim.jvp(F, (u,), (v,))[1], adsim.jacobian(F)(u) @ v, rtol=1e-12,
                 atol=1e-9, what="jvp vs jacobian")


def test_newton_cg_with_adsim_hvp_on_a_free_energy():
    """A mean-field free energy minimised by Newton-CG and trust-ncg with
    adsim.grad and adsim.hvp: the Hessian products agree with differences
    of the gradient, both methods reach the same stationary point, and the
    Hessian there (adsim.hessian) is positive definite."""
    from scipy.optimize import minimize
    f = prog.landau_free_energy
    m0 = np.full(8, 0.1) + 0.01 * np.arange(8)
    v = np.cos(np.arange(8))
    assert_close(adsim.hvp(f, m0, v), central(adsim.grad(f), [m0], [v]), rtol=1e-7, atol=1e-9,
                 what="hvp")
    ends = []
    for method in ("Newton-CG", "trust-ncg"):
        res = minimize(f, m0, jac=adsim.grad(f), hessp=lambda m, p: adsim.hvp(f, m, p),
                       method=method, options={"xtol": 1e-12} if method == "Newton-CG"
                       else {"gtol": 1e-10})
        assert res.success, (method, res.message)
        assert np.max(np.abs(adsim.grad(f)(res.x))) < 1e-6
        ends.append(res.x)
    # (Newton-CG stops on the size of its step, about 1e-6 from the minimum here)
    assert_close(ends[0], ends[1], rtol=1e-5, atol=1e-9, what="the two minima")
    assert np.linalg.eigvalsh(adsim.hessian(f)(ends[0]))[0] > 0


def test_observations_interpolated_from_the_solvers_steps():
    """np.interp(t_obs, sol.t, sol.y[0]) without t_eval (RK45, rtol=1e-10,
    109 steps): the held derivative is that of the interpolated steps at
    their times, within 5e-4 (measured 3e-4) of the exact derivative of the
    observations (t_eval at rtol=1e-12); differences of the program are 1e-2
    off, moving the steps under the interpolation (docs/integrate.md)."""
    x = np.array([0.9, 0.4])
    f = functools.partial(prog.interpolated_observations, rtol=1e-10, atol=1e-12)
    exact = differences(functools.partial(prog.interpolated_observations,
                                          t_eval=[0.7, 2.2, 4.1], rtol=1e-12, atol=1e-13), x)
    assert_close(adsim.grad(f)(x), exact, rtol=5e-4, atol=0, what="against the exact derivative")
