"""The time-dependent programs of programs_ode_s15.py, differentiated as a
user would (``adsim.grad``, ``jvp``, ``hvp``, ``adsim.record`` replayed at
the user's point and at a moved one), against central differences of the
same programs run by SciPy on plain arrays.

The solves run at ``rtol`` 1e-10 to 1e-11, so differences of the solver
(fourth-order stencil, relative step 1e-3) are good to about 1e-7 and the
held-step derivative (docs/integrate.md, "Step sizes held or followed") is
the solver's to about the tolerance; the hand-written integrators are plain
arithmetic, good to rounding. The Brusselator reads its quantities at the
solver's own steps, where held and followed steps differ (its own tests).
"""
import functools
from collections import namedtuple

import numpy as np
import pytest

import adsim
import adsim.integrate
import programs_ode_s15 as prog
from fdcheck import assert_close, differences, replayed_gradient

Case = namedtuple("Case", "f x x2 h bound hvp")


def case(f, x, x2, bound, h=1e-3, hvp=True):
    return Case(f, np.array(x, dtype=float), np.array(x2, dtype=float), h, bound, hvp)


PROGRAMS = {
    "heat 2-D radau jac_sparsity trapezoid": case(prog.plate_mean_exposure, [1.0, 0.5],
                                                  [1.1, 0.4], 1e-7),
    "odeint tfirst Dfun mixed args": case(prog.chain_outflow, [1.0, 0.5, 0.8, 0.6, 0.4, 0.3],
                                          [1.1, 0.45, 0.8, 0.65, 0.4, 0.35], 1e-7),
    "callable object self.k lsoda": case(prog.enzyme_sse, [1.0, 0.5, 0.8], [1.1, 0.45, 0.85],
                                         1e-6),
    "frozen dataclass in args dop853": case(prog.tumour_at_day_30, [0.3, 100.0, 0.05],
                                            [0.32, 90.0, 0.06], 1e-7),
    "module-level dict of parameters": case(prog.lv_final_prey, [0.1, 0.075], [0.11, 0.07],
                                            1e-7),
    # the maximum over the steps moves to another step within h = 1e-3: a smaller step
    "explicit euler preallocated": case(prog.euler_sir, [0.4, 0.1], [0.42, 0.11], 1e-8, h=1e-6),
    "rk4 in place": case(prog.rk4_duffing_energy, [0.2, 0.3], [0.25, 0.35], 1e-9),
    "verlet by hand": case(prog.verlet_chain_by_hand, [1.0, 2.0, 1.5], [1.1, 1.9, 1.6], 1e-8),
    "verlet checkpoint_loop": case(prog.verlet_chain_checkpointed, [1.0, 2.0, 1.5],
                                   [1.1, 1.9, 1.6], 1e-8),
    "logistic fit loss": case(prog.growth_loss, [0.8, 5.0], [0.9, 4.8], 1e-6),
    "drag events terminal and not": case(prog.range_and_apex, [0.01, 0.7], [0.012, 0.75], 1e-7),
    "selkov dense output 601 times": case(prog.selkov_spectrum_proxy, [0.08, 0.6],
                                          [0.085, 0.62], 1e-6),
    "cable operator D * lap read by fun": case(prog.cable_potential_at_the_end, [0.3, 0.5],
                                               [0.33, 0.45], 1e-7),
}


def _close(got, want, bound, what):
    err = np.max(np.abs(got - want)) / np.max(np.abs(want))
    assert err <= bound, f"{what}: {got} against differences {want}: {err:.1e} > {bound:.0e}"


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_and_jvp_against_differences(name):
    c = PROGRAMS[name]
    g = adsim.grad(c.f)(c.x)
    _close(g, differences(c.f, c.x, c.h), c.bound, name)
    v = c.x * np.linspace(1.0, -0.5, c.x.size)
    _, jv = adsim.jvp(c.f, (c.x,), (v,))
    assert_close(jv, g @ v, rtol=1e-10, atol=1e-14 * np.abs(g) @ np.abs(v), what="jvp vs grad")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_tape_at_the_users_point_and_a_moved_one(name):
    c = PROGRAMS[name]
    got, _ = replayed_gradient(c.f, c.x, c.x2, 1e-8)
    _close(got, differences(c.f, c.x2, c.h), c.bound, name + " at x2")


@pytest.mark.parametrize("name", sorted(n for n, c in PROGRAMS.items() if c.hvp))
def test_hvp_against_differences_of_the_gradient(name):
    c = PROGRAMS[name]
    v = c.x * np.linspace(1.0, -0.5, c.x.size)
    g = adsim.grad(c.f)
    h = 1e-5
    want = (g(c.x + h * v) - g(c.x - h * v)) / (2 * h)
    _close(adsim.hvp(c.f, c.x, v), want, 1e-6, name)


def test_verlet_by_hand_and_by_checkpoint_loop_agree():
    x = PROGRAMS["verlet by hand"].x
    assert_close(prog.verlet_chain_checkpointed(x), prog.verlet_chain_by_hand(x), rtol=1e-14,
                 atol=0.0, what="value")
    assert_close(adsim.grad(prog.verlet_chain_checkpointed)(x),
                 adsim.grad(prog.verlet_chain_by_hand)(x), rtol=1e-12, atol=0.0, what="gradient")


def test_l_bfgs_b_with_adsim_gradient_reaches_a_stationary_point():
    """minimize(loss, p0, jac=adsim.grad(loss)) ends where the gradient is
    ~1e-10 of its start's, at SciPy's own optimum (differences) to 1e-6."""
    from scipy.optimize import minimize
    result = prog.fit_growth()
    assert result.success, result.message
    g0 = adsim.grad(prog.growth_loss)(np.array([0.5, 3.0]))
    g_opt = adsim.grad(prog.growth_loss)(result.x)
    assert np.max(np.abs(g_opt)) <= 1e-7 * np.max(np.abs(g0)), (g_opt, g0)
    plain = minimize(prog.growth_loss, np.array([0.5, 3.0]), method="L-BFGS-B",
                     bounds=[(0.01, 5.0), (0.5, 20.0)])
    assert_close(result.x, plain.x, rtol=1e-6, atol=0.0, what="optimum")


def test_an_object_in_args_holding_the_parameters():
    """A plain object in ``args=`` whose attributes are the active
    parameters, alone or in a list or dict: solve_ivp (fun and a terminal
    event reading it) and odeint differentiate through it. It was SciPy's
    solve, refused with advice not to step solver classes by hand."""
    class Decay:
        def __init__(self, k, level):
            self.k, self.level = k, level

    def rhs(t, y, p):
        return -p.k * y

    def reaches(t, y, p):
        return y[0] - p.level
    reaches.terminal = True

    def crossing(x):
        return prog.solve_ivp(rhs, (0, 10), [1.0], args=(Decay(x[0], x[1]),), events=reaches,
                              rtol=1e-11, atol=1e-12).t_events[0][0]

    def at_two(x):
        return prog.odeint(rhs, [1.0], [0.0, 2.0], args=(Decay(x[0], x[1]),), tfirst=True,
                           rtol=1e-11, atol=1e-12)[-1, 0]
    def listed(x):                  # a list of objects, each holding one rate
        def chain(t, y, species):
            return [-species[0].k * y[0], species[0].k * y[0] - species[1].k * y[1]]
        species = [Decay(x[0], 0.0), Decay(x[1], 0.0)]
        return prog.solve_ivp(chain, (0, 3), [1.0, 0.0], args=(species,), rtol=1e-11,
                              atol=1e-12).y[1, -1]

    def in_a_dict(x):
        def chain(y, t, p):
            return [-p["a"].k * y[0], p["a"].k * y[0] - p["b"].k * y[1]]
        return prog.odeint(chain, [1.0, 0.0], [0.0, 3.0], args=({"a": Decay(x[0], 0.0),
                                                                "b": Decay(x[1], 0.0)},),
                           rtol=1e-11, atol=1e-12)[-1, 1]
    x = np.array([0.7, 0.2])        # t = -log(level) / k
    assert_close(adsim.grad(crossing)(x), [np.log(0.2) / 0.49, -1 / (0.2 * 0.7)], rtol=1e-8,
                 atol=0.0, what="event time")
    assert_close(adsim.grad(at_two)(x), [-2 * np.exp(-1.4), 0.0], rtol=1e-8, atol=1e-12,
                 what="odeint")
    a, b = 0.7, 0.3                 # y1(3) = a / (b - a) (exp(-3 a) - exp(-3 b))
    d = np.exp(-3 * a) - np.exp(-3 * b)
    exact = [(1 / (b - a) + a / (b - a) ** 2) * d - 3 * a / (b - a) * np.exp(-3 * a),
             -a / (b - a) ** 2 * d + 3 * a / (b - a) * np.exp(-3 * b)]
    for f in (listed, in_a_dict):
        assert_close(adsim.grad(f)(np.array([a, b])), exact, rtol=1e-8, atol=0.0,
                     what=f.__name__)


def test_checkpointed_steps_reading_an_object_in_args():
    """checkpoint_loop and checkpoint_while with a dataclass of parameters
    in ``args=``: it was refused with MixedRecordings telling the user to
    pass the value through args=, which they had done."""
    import dataclasses

    @dataclasses.dataclass
    class Rates:
        k: float

    def step(s, p):
        return s - 0.01 * p.k * s

    def looped(x):
        return adsim.checkpoint_loop(step, np.array([1.0]), 100, args=(Rates(x[0]),))[0]

    def until_half(x):
        def above(s, p):
            return s[0] > 0.5
        return adsim.checkpoint_while(above, step, np.array([1.0]), args=(Rates(x[0]),))[0]
    x = np.array([0.7])
    assert_close(adsim.grad(looped)(x), [-100 * 0.01 * 0.993 ** 99], rtol=1e-12, atol=0.0,
                 what="checkpoint_loop")
    n = int(np.ceil(np.log(0.5) / np.log(0.993)))       # the steps taken while above 0.5
    assert_close(adsim.grad(until_half)(x), [-n * 0.01 * 0.993 ** (n - 1)], rtol=1e-12,
                 atol=0.0, what="checkpoint_while")


def _operator():
    import scipy.sparse as sp
    return sp.diags([np.full(5, 1.0), np.full(6, -2.0), np.full(5, 1.0)], [-1, 0, 1],
                    format="csr")


def test_a_sparse_matrix_of_active_values_read_by_fun():
    """``J = k * L`` (a scipy.sparse matrix of active values) read by fun
    through args= or its closure, by each solver and odeint. It was an
    UnsupportedOperation telling the user to pass through args= what they
    had (RK45), MixedRecordings about a derivative inside a recorded
    function (Radau), and SciPy's odeint refusing a conversion to a plain
    array."""
    L = _operator()
    y0 = np.linspace(1.0, 2.0, 6)
    tight = dict(rtol=1e-11, atol=1e-12)

    def through_args(x, method="RK45"):
        return prog.solve_ivp(lambda t, y, J: J @ y, (0, 1), y0, args=(x[0] * L,),
                              method=method, **tight).y[0, -1]

    def through_closure(x, method="Radau"):
        J = x[0] * L
        return prog.solve_ivp(lambda t, y: J @ y + x[1], (0, 1), y0, method=method,
                              **tight).y[:, -1].sum()

    def by_odeint(x):
        return prog.odeint(lambda y, t, J: J @ y, y0, [0.0, 1.0], args=(x[0] * L,), **tight)[-1, 0]
    x = np.array([0.7, 0.3])
    for f in (through_args, functools.partial(through_args, method="LSODA"), through_closure,
              functools.partial(through_closure, method="BDF"), by_odeint):
        _close(adsim.grad(f)(x)[:1], differences(f, x, 1e-3)[:1], 1e-6, str(f))
    g, h = adsim.grad(through_closure), 1e-5
    _close(adsim.hvp(through_closure, x, x), (g(x + h * x) - g(x - h * x)) / (2 * h), 1e-6,
           "hvp")


def test_jac_and_jac_sparsity_given_a_sparse_matrix_of_active_values():
    """``jac_sparsity=k * L``: its stored entries are the pattern. A
    constant ``jac=k * L`` is refused by name, saying what to pass (it was
    the refusal of np.asarray of a sparse matrix, not naming jac)."""
    L = _operator()

    def with_pattern(x):
        return prog.solve_ivp(lambda t, y, k: k * (L @ y) + 1.0, (0, 1), np.ones(6), args=(x[0],),
                              method="BDF", jac_sparsity=x[0] * L, rtol=1e-10,
                              atol=1e-12).y[0, -1]
    x = np.array([0.7])
    _close(adsim.grad(with_pattern)(x), differences(with_pattern, x, 1e-3), 1e-6, "pattern")

    def with_jac(x):
        return prog.solve_ivp(lambda t, y, k: k * (L @ y), (0, 1), np.ones(6), args=(x[0],),
                              method="Radau", jac=x[0] * L).y[0, -1]
    with pytest.raises(adsim.UnsupportedOperation, match=r"jac= is a scipy.sparse matrix.*"
                       r"jac=J.toarray\(\).*jac_sparsity=J"):
        adsim.grad(with_jac)(x)


# ---- the Brusselator: quantities read at the solver's own steps ----------------------------------

BRUSSELATOR_X = np.array([3.0, 0.02])


def brusselator_following_steps(params):
    """The same program with follow_steps=True: the exact derivative of the
    numbers solve_ivp returns, which differences of the solver measure."""
    original = prog.solve_ivp
    prog.solve_ivp = lambda *a, **k: adsim.integrate.solve_ivp(*a, follow_steps=True, **k)
    try:
        return prog.brusselator_peak_and_crossing(params)
    finally:
        prog.solve_ivp = original


def test_brusselator_steps_followed_against_differences_of_the_program():
    g = adsim.grad(brusselator_following_steps)(BRUSSELATOR_X)
    want = differences(prog.brusselator_peak_and_crossing, BRUSSELATOR_X, 1e-4)
    _close(g, want, 1e-6, "followed")


def test_brusselator_steps_held_against_the_model():
    """Held (the default), the maximum over the steps and the crossing
    interpolated between them are differentiated with the steps' times
    fixed: the model's derivatives to the interpolation's error between
    steps (2.9e-4 for the peak, 5.9e-3 for the crossing, against a solve at
    rtol 1e-12), not the program's differences (1.5e-3: those move the
    steps)."""
    def tight(params):
        original = prog.solve_ivp

        def solve(*a, **k):
            return original(*a, **dict(k, rtol=1e-12, atol=1e-12))
        prog.solve_ivp = solve
        try:
            return prog.brusselator_peak_and_crossing(params)
        finally:
            prog.solve_ivp = original
    g = adsim.grad(prog.brusselator_peak_and_crossing)(BRUSSELATOR_X)
    _close(g, differences(tight, BRUSSELATOR_X, 1e-4), 1e-2, "held")
    _, jv = adsim.jvp(prog.brusselator_peak_and_crossing, (BRUSSELATOR_X,), (BRUSSELATOR_X,))
    assert_close(jv, g @ BRUSSELATOR_X, rtol=1e-10, atol=0.0, what="jvp vs grad")
