"""The ODE programs of programs_ode_s14.py, differentiated as they are
written, against the derivatives of the models themselves
(ode_s14_reference.py: central differences of SciPy's solvers at
``rtol = 1e-12``), not against differences of the solvers at the
programs' own tolerances.

adsim's default derivative is that of the exact solution to about the
tolerance (docs/integrate.md, "The default derivative, in short"), so each
program's bound is stated against its own ``rtol`` (``rtol_program``):
``BOUND_FACTOR[name] * rtol_program``, the factor at most 100 (the
guarantee issue 23 asks of every default), mostly far less: each is
the measured error rounded up by a factor of about five. Each program is
also checked forward against reverse mode, replayed from its tape at a
second point (or recorded again there where its path changes: another
number of steps or events), and, for those marked, its Hessian-vector
product against the model's (mixed second differences of SciPy's tight
solves).
"""
from collections import namedtuple

import numpy as np
import pytest

import adsim
import programs_ode_s14 as prog
from fdcheck import assert_close

Case = namedtuple("Case", "f x x2 rtol factor hvp hvp_factor why")


def case(f, x, x2, rtol, factor, hvp_factor=None, why=None):
    """``why``: the reason for a factor above 100 (issue 23's guarantee
    holds on the stiff test set; these programs show where it does not)."""
    return Case(f, np.array(x, dtype=float), np.array(x2, dtype=float), rtol, factor,
                hvp_factor is not None, hvp_factor, why)


def direction(x):
    """The Hessian-vector products' direction: a mix of every parameter."""
    return np.asarray(x) * np.array([1.0, -0.5, 0.25])[:len(x)]


Case.v = property(lambda self: direction(self.x))

# name: case(program, x, x2, the program's rtol, bound factor, hvp bound factor or None)
PROGRAMS = {
    "sir odeint tuple arg rmse": case(prog.sir_rmse, [0.5, 0.25], [0.55, 0.24], 1.49e-8, 100, 1000),
    "seir closure vectorized": case(prog.seir_loss, [0.9, 0.3, 0.2], [0.95, 0.28, 0.21], 1e-6, 10),
    "seirs keywords poisson": case(prog.seirs_nll, [np.log(0.5), np.log(0.2)],
                                   [np.log(0.52), np.log(0.19)], 1e-7, 10, 100),
    "repeated doses restarted": case(prog.multiple_dose_sse, [1.0, 0.1], [1.1, 0.09], 1e-8, 10),
    "infusion max_step": case(prog.infusion_auc_and_trough, [0.2, 0.1], [0.22, 0.11], 1e-6, 100),
    "lsoda dict args defaults": case(prog.network_yield, [2.0, 0.4], [2.1, 0.38], 1e-3, 1),
    "lotka globals dense": case(prog.lotka_residuals_half_ss, [0.5, 0.03], [0.52, 0.031], 1e-7,
                                10, 100),
    "pendulum period events": case(prog.pendulum_period, [1.0, 0.1], [1.05, 0.12], 1e-9, 100,
                                   5000, why="hvp through event times: the interpolant's "
                                   "curvature (docs/integrate.md), measured 1.3e-6"),
    "orbit aphelion y_events": case(prog.aphelion_distance, [1.0, 1.2], [1.02, 1.19], 1e-10, 200,
                                    why="measured 4.8e-9 and 8.8e-9: rtol 1e-10 is near where "
                                    "rounding, not the tolerance, sets the error"),
    "fitzhugh-nagumo spike": case(prog.first_spike_time, [0.7, 0.08], [0.72, 0.085], 1e-8, 1000,
                                  why="measured 2.7e-7 at x, 3.0e-6 at x2 (the spike time's "
                                  "value 1.1e-8): the error control weighs the states, not "
                                  "their tangents, which an excitable system's slow passage "
                                  "amplifies; proportional to rtol (4.4e-7 at 1e-9)"),
    "hodgkin-huxley object": case(prog.hh_peak_and_time, [120.0, 36.0], [115.0, 38.0], 1e-8,
                                  100),
    "heat bdf jac_sparsity": case(prog.heat_midpoint, [0.5, 2.0], [0.55, 1.9], 1e-6, 10, 100),
    "fisher radau sparsity vectorized": case(prog.fisher_front_mass, [0.5, 1.0], [0.45, 1.1],
                                             1e-5, 10, 100),
    "van der pol lsoda first_step": case(prog.vdp_amplitude, [2.0, 1.5], [2.1, 1.4], 1e-8, 1000,
                                         why="measured 3.7e-6 and 4.1e-6: the loss at LSODA's "
                                         "values (1.3e-7 off the model's: LSODA's own error) "
                                         "with the donor's derivatives, which are the "
                                         "model's sensitivities to 1.4e-7 (docs/integrate.md)"),
    "odeint Dfun full_output loglik": case(prog.mm_loglik, [1.5, 2.0, np.log(0.2)],
                                           [1.45, 2.1, np.log(0.25)], 1.49e-8, 100, 1000),
    "bergman np.interp input": case(prog.glucose_fit, [0.03, 1.3], [0.028, 1.35], 1e-8, 5000,
                                    why="measured 1.9e-5 and 2.0e-5: np.interp's kinks at the "
                                    "table's times cost the steps across them their order; "
                                    "the values are 4e-5 and 7e-5 off too (1.2e-7 at 1e-10)"),
    "trapezoid over steps, active end": case(prog.auc_to_tlast, [0.3, 8.0], [0.32, 7.5], 1e-10,
                                             None),
    "partial in a lambda": case(prog.cooling_final, [0.4, 10.0], [0.42, 9.0], 1e-7, 100),
    "sir radau class peak event": case(prog.peak_time_and_size, [0.3, 1e-3], [0.32, 1.2e-3],
                                       1e-6, 500, 30000,
                                       why="measured 9.3e-5 and 1.6e-4, the hvp 2.0e-2: an event "
                                       "on dI/dt is located by the slope of Radau's cubic "
                                       "interpolant, and the hvp holds its curvature too "
                                       "(docs/integrate.md); the hvp's second component is a "
                                       "difference of terms many times larger; both converge "
                                       "(1.5e-7 and 5e-3 at rtol 1e-8)"),
    "lsoda threshold event": case(prog.time_above_mec, [0.2, 2.0], [0.21, 1.8], 1e-8, 50, 1000,
                                  why="hvp measured 3.5e-6: the event time's second derivative"),
    "backwards in time": case(prog.backwards_start, [2.0, 0.3], [2.1, 0.25], 1e-8, 10, 100),
    "bdf vectorized lag t_eval": case(prog.lagged_fit, [0.8, 0.4], [0.85, 0.45], 1e-7, 100, 1000),
    "odeint tfirst hmax math.exp": case(prog.final_temperature, [np.log(1e7), 60000.0],
                                        [np.log(1.2e7), 61000.0], 1.49e-8, 10, 100),
}


def _values(name):
    from ode_s14_values import VALUES          # written by ode_s14_reference.py
    return {k: np.array(v) for k, v in VALUES[name].items()}


def _bound(name):
    """The relative (max-norm) bound of program ``name``'s gradient."""
    c = PROGRAMS[name]
    if c.factor is None:        # the trapezoid over the steps: as good as the value itself
        return 5 * abs(prog.auc_to_tlast(c.x) - _exact_auc(c.x)) / abs(_exact_auc(c.x))
    assert c.factor <= 100 or c.why, "beyond the default derivative's guarantee: say why"
    return c.factor * c.rtol


def _exact_auc(x):
    from ode_s14_reference import exact_auc
    return exact_auc(x)


def _close(got, want, bound, what):
    got = np.atleast_1d(np.asarray(got, dtype=float))
    err = np.max(np.abs(got - want)) / np.max(np.abs(want))
    assert err <= bound, f"{what}: {got} against the model's {want}: {err:.2e} > {bound:.1e}"


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_against_the_models_and_the_other_mode(name):
    c = PROGRAMS[name]
    g = np.atleast_1d(adsim.grad(c.f)(c.x))
    _close(g, _values(name)["x"], _bound(name), name)
    v = c.v
    _, jv = adsim.jvp(c.f, (c.x,), (v,))
    assert_close(jv, g @ v, rtol=1e-9, atol=1e-14 * np.abs(g) @ np.abs(v), what="jvp vs grad")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_tape_replayed_at_a_second_point(name):
    c = PROGRAMS[name]
    tape = adsim.record(c.f, c.x)
    try:
        got = tape.gradient(c.x2)
    except adsim.BranchChanged:        # another number of steps or events: recorded again
        got = adsim.grad(c.f)(c.x2)
    else:
        # the replay is the recording's arithmetic: a new recording's to rounding; SciPy's
        # steps to about the tolerance (adsim's stages round otherwise and the controller
        # amplifies that: the infusion's outputs at t_eval differ by 7e-9, tests/integrate/
        # test_solve_ivp_forward.py)
        value = tape.forward(c.x2)
        assert_close(value, adsim.record(c.f, c.x2).forward(c.x2), rtol=1e-12, atol=0.0,
                     what="replayed value")
        assert_close(value, c.f(c.x2), rtol=10 * c.rtol, atol=0.0, what="SciPy's value")
    _close(got, _values(name)["x2"], _bound(name), name + " at x2")


HVP = sorted(name for name, c in PROGRAMS.items() if c.hvp)


@pytest.mark.parametrize("name", HVP)
def test_hessian_vector_product_against_the_models(name):
    c = PROGRAMS[name]
    _close(adsim.hvp(c.f, c.x, c.v), _values(name)["hvp"], c.hvp_factor * c.rtol, name)


def test_robertson_in_a_class_with_bdf_at_scipys_default_tolerances():
    """Robertson's kinetics in a class (bound ``rhs`` and ``jac``), BDF at
    rtol 1e-3, atol 1e-6: the concentrations' sensitivities are the
    model's to 5.0e-5 (bound 1e-3, the 1 % issue 23 asks, ten times over);
    the misfit's gradient is 1.3 % off the model's because BDF's
    concentrations are 7e-4 off (its residuals of a few sigma move with
    them), and is the model's sensitivities weighted by BDF's own
    residuals to 3.4e-5."""
    x = np.array([np.log(0.04), np.log(1e4)])

    def concentrations(log_k12):
        k = np.array([np.exp(log_k12[0]), 3e7, np.exp(log_k12[1])])
        return prog.Reactor(k).run(prog.ROB_T).y[0]
    J = adsim.jacobian(concentrations)(x)
    J_model = np.array(_values("robertson concentrations")["x"]).T
    _close(J, J_model, 1e-3, "sensitivities")
    residuals = (concentrations(x) - prog.ROB_C) / 0.01
    _close(adsim.grad(prog.reactor_misfit)(x), 2 * residuals / 0.01 @ J_model, 2e-4,
           "misfit at BDF's values")


def test_solver_classes_stepped_by_hand_are_refused_with_what_to_call():
    """``RK45(fun, t0, y0, t_bound)`` stepped in a loop and the older
    ``scipy.integrate.ode`` with parameters the derivative needs: a typed
    refusal that names solve_ivp (not advice to rewrite SciPy with NumPy)."""
    from scipy.integrate import RK45, ode

    def stepped(k):
        solver = RK45(lambda t, y: -k * y, 0.0, np.array([1.0]), 2.0)
        while solver.status == "running":
            solver.step()
        return solver.y[0]

    def legacy(y0):
        r = ode(lambda t, y: -0.5 * y).set_integrator("dopri5")
        r.set_initial_value(y0, 0.0)
        return r.integrate(2.0)[0]
    with pytest.raises(adsim.UnsupportedOperation, match=r"solve_ivp\(fun, \(t0, t_bound\)"):
        adsim.grad(stepped)(np.array(0.5))
    with pytest.raises(adsim.UnsupportedOperation, match=r"scipy.integrate.ode .*solve_ivp"):
        adsim.grad(legacy)(np.array([1.0]))


@pytest.mark.parametrize("method", ["RK45", "Radau", "BDF", "LSODA"])
def test_a_buffer_that_fun_fills_and_returns(method):
    """``dydt[0] = ...; return dydt`` with one array for every call: the
    solver must not keep the returned object while fun runs again (Radau
    stacked its three stages' results after computing all three, so all
    three were the last: the value 3e-4 off and the gradient 1e-4, silently,
    and 25 times slower). SciPy's own BDF keeps it too and fails on this
    program (values of 1e11), and its Radau differences its Jacobian with
    the returned buffer; adsim records the Jacobian and is right."""
    x = np.array([2.0, 0.3])
    def f(p):
        return prog.pendulum_with_buffer(p, method)
    value, g = adsim.value_and_grad(f)(x)
    assert_close(value, prog.pendulum_with_buffer(x, "DOP853"), rtol=1e-6, atol=0.0,   # 100 rtol
                 what="value")
    _close(g, _values("pendulum buffer")["x"], 100 * 1e-8, "gradient")
