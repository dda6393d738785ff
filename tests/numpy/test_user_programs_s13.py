"""Thirty-odd scientific programs as their authors write them
(programs_s13.py: stiff kinetics with parameters in dicts, objects,
globals and args=, odeint, solve_bvp, stencil updates of plain states,
sparse Laplacians, solvers inside models, log-densities of lists),
differentiated with respect to their natural parameters without changing a
line: adsim.grad against central differences, forward mode against reverse
mode, the Hessian-vector product against differences of the gradient, and
the tape recorded at one point replayed at a second point (or refusing
with BranchChanged where the path depends on the point)."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import adsim
import programs_s13 as prog
from fdcheck import assert_close
from program_checks import check_derivatives, differences, moved, program_tests

# name: (function, parameters, Hessian-vector product checked,
#        the path depends on the point)
PROGRAMS = {
    "robertson radau dict args": (prog.robertson_yield, np.array([0.04, 1e4]), True, False),
    "robertson bdf self": (prog.reactor_final_c, np.array([0.04, 1e4]), True, True),
    "lsoda lambda globals": (prog.equilibration, np.array([2.0, 0.5]), True, False),
    "oregonator radau jac": (prog.oregonator_peak, np.array([0.05, 0.02]), True, False),
    "odeint pk Dfun": (prog.pk_cmax_proxy, np.array([1.2, 0.3]), True, False),
    "lotka-volterra dense sol(t)": (prog.lv_mean_prey, np.array([1.1, 0.4]), True, True),
    "ball apex and landing events": (prog.ball_apex_and_landing, np.array([20.0, 0.01]), False,
                                     False),
    "catalyst pellet solve_bvp": (prog.effectiveness, np.array([2.0, 1.5]), True, True),
    "fin solve_bvp p": (prog.fin_heat, np.array([1.5, 0.3]), True, True),
    "heat u[1:-1] += plain start": (prog.heat_explicit, np.array([1.0, 0.5]), True, False),
    "burgers zeros filled": (prog.burgers_energy, np.array([0.05, 0.3]), True, False),
    "diffusion 2d padded views": (prog.diffusion_2d, np.array([0.2, 0.1]), True, False),
    "poisson kron spsolve": (prog.poisson_2d, np.array([1.0, 2.0]), True, True),
    "rod splu reused": (prog.rod_implicit, np.array([0.5, 3.0]), True, False),
    "bubble point brentq": (prog.bubble_temperature, np.array([0.1, 0.4]), True, False),
    "van der waals fsolve": (prog.vdw_volume, np.array([3.6, 0.043]), True, False),
    "cstr root dict": (prog.cstr_conversion, np.array([1e6, 5000.0]), True, False),
    "planck quad args": (prog.band_power, np.array([5000.0, 3.0]), True, False),
    "cubicspline active node": (prog.calibrated_area, np.array([1.1, 0.2]), True, False),
    "interp1d cubic and linear": (prog.interp_readout, np.array([0.7, 1.3]), True, True),
    "loglik list of logpdfs": (prog.loglik_list, np.array([1.3, -0.4]), True, False),
    "vectorize drag branches": (prog.settling, np.array([1.0, 0.15]), True, True),
    "piecewise friction": (prog.piecewise_friction, np.array([1.0, 0.01]), True, True),
    "mixture logsumexp": (prog.mixture_loglik, np.array([0.4, 3.0]), True, False),
    "kalman zeros array list": (prog.kalman_loglik, np.array([0.1, 0.5]), True, False),
    "peng-robinson np.roots": (prog.pr_compressibility, np.array([250.0, 50.0]), True, True),
    "odeint sir zeros tuple(params)": (prog.sir_peak, np.array([0.5, 0.1]), True, True),
    "crank-nicolson cable": (prog.cable_cn, np.array([0.3, 1.0]), True, False),
    "brusselator bdf jac_sparsity": (prog.brusselator_total, np.array([1.0, 3.0]), True, True),
    "flame brentq cp": (prog.flame_temperature, np.array([0.8, 80000.0]), True, False),
    "odeint global array": (prog.mm_product, np.array([1.0, 0.5]), True, False),
    "unscented kalman zeros +=": (prog.ukf_loglik, np.array([0.1, 0.5]), True, False),
    "n-body plain velocities -= mean": (prog.cluster_energy, np.array([0.1, 1.0]), True, False),
    "posterior lists mean std append": (prog.hier_logpost, np.array([1.0, 0.8]), True, False),
    "robertson odeint full_output": (prog.robertson_odeint, np.array([0.04, 1e4]), True, True),
    "ignition radau event dense": (prog.ignition_delay, np.array([2.0, 3.0]), False, True),
    "resonator unwrap complex power": (prog.resonator_phase, np.array([1.0, 5.0]), True, True),
    "polyfit trend": (prog.trend_slope, np.array([1.0, 0.5]), True, False),
    "r_ c_ kron 3-d": (prog.assembled, np.array([1.0, 0.5]), True, False),
    "plain history with a view": (prog.relaxation_history, np.array([0.7, 2.5]), True, True),
    "nelder-mead optimum": (prog.best_temperature, np.array([40.0, 50.0]), False, False),
    "quad semi-infinite active limit": (prog.tail_mass, np.array([0.5, 2.0]), True, False),
    "vectorized rhs periodic spline": (prog.tide_response, np.array([1.0, 0.5]), True, False),
    "interp1d extrapolate": (prog.saturation_extrapolated, np.array([1.0, 2.0]), True, False),
    "root lm speciation": (prog.speciation, np.array([-2.0, -5.0]), True, False),
    "newton with splu of an active matrix": (prog.newton_steady, np.array([0.5, 2.0]), True,
                                             False),
    "max of tied values": (prog.tied_scores, np.array([1.0, 0.8]), True, True),
    "u_old aliasing u in place": (prog.gauss_seidel_sweeps, np.array([1.0, 2.0]), True, False),
    "tumour object radau jac event, lsoda dense": (prog.time_to_limit, np.array([0.3, 6.0]),
                                                   True, True),
    "grid relaxed through named views": (prog.relaxed_profile, np.array([1.0, 0.5]), True,
                                         False),
}
ADAPTIVE = {"robertson radau dict args", "robertson bdf self", "lsoda lambda globals",
            "oregonator radau jac", "odeint pk Dfun", "lotka-volterra dense sol(t)",
            "ball apex and landing events", "catalyst pellet solve_bvp", "fin solve_bvp p",
            "bubble point brentq", "van der waals fsolve", "cstr root dict",
            "planck quad args", "odeint sir zeros tuple(params)",
            "brusselator bdf jac_sparsity", "flame brentq cp", "odeint global array",
            "robertson odeint full_output", "ignition radau event dense",
            "nelder-mead optimum", "quad semi-infinite active limit",
            "vectorized rhs periodic spline", "root lm speciation",
            "tumour object radau jac event, lsoda dense"}
STEPS = {}


(test_gradient_against_differences_and_the_other_mode,
 test_the_tape_replayed_at_a_new_point) = program_tests(PROGRAMS, ADAPTIVE, STEPS)


def test_the_event_time_of_the_ignition_program_to_second_order():
    """The ignition program reads its dense output at half the event time:
    the second derivative of that term holds the interpolant's second
    derivative in time, which converges slowly with rtol (0.4 % off at
    rtol 1e-10), so its hvp is not checked against differences; the
    event time's own second derivative is the model's to 1e-5."""
    def t_ign(params):
        sol = solve_ivp(_ignition_rhs, (0, 100), [1.0, 1.0], method="Radau",
                        events=_hot, args=tuple(params), rtol=1e-10, atol=1e-12)
        return sol.t_events[0][0]

    def tight(params):
        return solve_ivp(_ignition_rhs, (0, 100), [1.0, 1.0], method="DOP853", events=_hot,
                         args=tuple(params), rtol=1e-13, atol=1e-14).t_events[0][0]
    x, e = np.array([2.0, 3.0]), np.array([1.0, 0.0])
    second = [(tight(x + h * e) - 2 * tight(x) + tight(x - h * e)) / h ** 2 for h in (1e-2, 5e-3)]
    want = second[1] - (second[0] - second[1]) / 3            # Richardson
    assert_close(adsim.hvp(t_ign, x, e)[0], want, rtol=2e-5, atol=0.0, what="event time")


def _ignition_rhs(t, y, a, b):
    rate = a * y[0] * np.exp(-b / y[1])
    return [-rate, 50.0 * rate - 0.1 * (y[1] - 1.0)]


def _hot(t, y, a, b):
    return y[1] - 3.0


_hot.terminal = True


def _ground(t, s):
    return s[0]


_ground.terminal = True
_ground.direction = -1


def test_the_second_derivative_of_an_event_program_is_the_model_s():
    """The apex and landing program's rhs has k s|s|, whose second
    derivative jumps at the apex: RK45's hvp there is accurate to about
    1e-4 (differences of its gradient too, and farther off), so it is
    checked against second differences of a DOP853 solve at rtol 1e-13."""
    def tight(params):
        v0, k = params
        sol = solve_ivp(lambda t, s: [s[1], -9.81 - k * s[1] * abs(s[1])], (0, 50),
                        [0.0, v0], events=[lambda t, s: s[1], _ground], rtol=1e-13,
                        atol=1e-13, method="DOP853")
        return sol.y_events[0][0][0] + 2.0 * sol.t_events[1][0]
    x = np.array([20.0, 0.01])
    for e, h in zip(np.eye(2), (0.05, 1e-4)):
        want = (tight(x + h * e) - 2 * tight(x) + tight(x - h * e)) / h ** 2
        got = adsim.hvp(prog.ball_apex_and_landing, x, e) @ e
        assert_close(got, want, rtol=5e-4, atol=0.0, what="second derivative")


def test_a_fit_by_bfgs_inside_the_model():
    """minimize without a jac: SciPy's BFGS on finite-difference gradients,
    so a replay (SciPy's solver on the recorded objective, warm-started)
    stops at another point within gtol, and the gradient agrees to that
    tolerance, not to rounding; the hvp is checked with a difference step
    above the solver's noise."""
    f, x = prog.fitted_rate, np.array([2.0, 0.7])
    check_derivatives("bfgs", f, x, check_hvp=False, adaptive=True)
    _hvp_above_the_solver_s_noise(f, x, 3e-3)
    g = adsim.grad(f)
    tape = adsim.record(f, x)
    assert_close(tape.gradient(x), g(x), rtol=1e-7, atol=0.0, what="replay")
    x2 = moved(x)
    assert_close(tape.gradient(x2), differences(f, x2), rtol=1e-5, atol=0.0, what="moved")


def _hvp_above_the_solver_s_noise(f, x, step):
    g = adsim.grad(f)
    for e in np.eye(x.size):
        want = (g(x + step * e) - g(x - step * e)) / (2 * step)
        assert_close(adsim.hvp(f, x, e), want, rtol=1e-4, atol=1e-7 * np.max(np.abs(want)),
                     what="hvp")


def test_the_hvp_of_a_nelder_mead_optimum():
    """Nelder-Mead stops within xatol: differences of the gradient at the
    harness's step (1e-6 relative) are that noise; at 1e-2 they agree."""
    _hvp_above_the_solver_s_noise(prog.best_temperature, np.array([40.0, 50.0]), 1e-2)


def test_a_rhs_writing_into_a_module_buffer_is_refused_naming_the_store():
    """_F_BUF[0] = ... in a module-level buffer the rhs returns: a plain
    array that other code holds cannot take an active value, and adsim
    cannot rebind a global; the refusal names the store and the remedy."""
    with pytest.raises(adsim.ActiveValueLeak, match=r"_F_BUF\[0\] = .*global"):
        adsim.grad(prog.buffered_robertson)(np.array([0.04, 1e4]))
    assert prog.buffered_robertson(np.array([0.04, 1e4])) > 0     # the program still runs


def test_a_named_view_of_a_plain_grid_updated_in_place_is_refused_with_the_right_remedy():
    """`inner += ...` where inner = u[1:-1] of a plain grid made by NumPy's
    own linspace (reached through another name) writes into u, which adsim
    cannot replace while three views hold it; the refusal advised
    `a = a + ...`, which would silently stop updating u (and left, right):
    it says to make u active where it is made. (Spelled np.linspace in the
    program, the grid is an active array of constants: "grid relaxed
    through named views" in PROGRAMS.)"""
    numpy_linspace = np.linspace

    def relaxed(params):
        D, lam = params
        u = numpy_linspace(1.0, 0.0, 21)
        inner, left, right = u[1:-1], u[:-2], u[2:]
        for _ in range(4):
            inner += 0.2 * D * (left + right - 2 * inner) - 0.01 * lam * inner ** 2
        return np.sum(inner)
    with pytest.raises(adsim.UnsupportedOperation, match=r"np.linspace\(0, 1, n\) spelled so.*"
                                                          r"unchanged"):
        adsim.grad(relaxed)(np.array([1.0, 0.5]))
