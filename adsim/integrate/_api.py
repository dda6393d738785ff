"""``adsim.integrate.solve_ivp``: SciPy's ``solve_ivp``, differentiable."""
import functools

import numpy as np
from scipy.integrate import OdeSolver, solve_ivp as scipy_solve_ivp

from .._active import Active
from .._containers.tree import placed
from ..checkpoint.group import LoopGroup
from .._np.complex import ComplexActive
from .._np.core import active_leaves, tape_of
from .._np.elementwise import stop_gradient
from .._record.creation import current_tape, suspended
from ..errors import AdsimError, InvalidArgumentValue, MixedRecordings
from ._complex_state import complex_solve, is_complex_state
from ._drive import Run
from ._events import Events
from .._nesting.nested import reads_recorded_values
from .._nesting.outer_values import args_hold_recorded_objects
from ._parameters import event_functions, gathered, reads_active_matrix
from .._tapecache.purity import output_channel
from ._options import (SUPPORTED, check_args, check_events, check_first_step, check_fun,
                       check_max_step, check_method, check_sparsity, check_stats, check_t_eval,
                       check_t_span, check_tolerances, check_y0,
                       warn_extraneous)
from .._validate import flag
from ._result import Count, OdeResult
from ._rhs import FAILED, RUNNING, RightHandSide, real_array
from ._bdf import BDF
from ._bdf_derivatives import (bdf_with_radau_derivatives, checked_donor, donor_method,
                               takes_radau_derivatives, with_donor_derivatives)
from ._dense import ConstantSolution, DenseSolution, recorded_values
from ._lsoda import LSODA_ONLY, lsoda_values
from ._implicit import JacobianSource
from ._radau import Radau
from ._rk import ExplicitRungeKutta
from ._step_reuse import StepSetup, settings_of
from ._kinks import first_order_only
from ._switches import guard_step_ends, moving_switches, refuse_moving_switches
from ._tableaux import EXPLICIT
from ._zero_step import flowed

__all__ = ["solve_ivp"]

MESSAGES = {0: "The solver successfully reached the end of the integration interval.",
            1: "A termination event occurred.",
            -1: "Required step size is less than spacing between numbers."}

_EXPLICIT_OPTIONS = ("rtol", "atol", "max_step", "first_step")
_IMPLICIT_OPTIONS = _EXPLICIT_OPTIONS + ("jac", "jac_sparsity")
IMPLICIT = {"Radau": Radau, "BDF": BDF}


def solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
              vectorized=False, args=None, *, memory_limit=None, snapshots=None, stats=None,
              follow_steps=False, **options):
    """Solve an initial value problem ``y' = fun(t, y, *args)``, ``y(t0) = y0``,
    as ``scipy.integrate.solve_ivp`` does, differentiably.

    Called with plain arrays it returns what SciPy returns (the same steps,
    values equal to rounding). Called inside an adsim recording (``adsim.grad``,
    ``jvp``, ``vjp``, ``hvp``, ``jacobian``, ``record``) with active ``y0``,
    ``args``, ``t_span`` or ``t_eval``, the outputs are recorded and their
    derivatives are those of the steps taken, their sizes held fixed (see
    ``follow_steps``): the discrete adjoint (or tangent) of the integrator.
    A replay at a point where an accept/reject decision differs records
    again.

    Parameters
    ----------
    fun : callable
        ``fun(t, y, *args)``, plain NumPy code returning ``dy/dt`` of shape
        ``(n,)`` (a list such as ``[y[1], -y[0]]`` is fine).
    t_span : pair of float
        ``(t0, tf)``; either may be active. ``tf < t0`` integrates backwards.
    y0 : array_like, shape (n,)
        Initial state, real.
    method : {"RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA"}
        As in SciPy (or SciPy's class of that name). The implicit methods
        use the exact Jacobian from adsim (dense, or for systems of 100
        equations or more with a sparse pattern, sparse by coloring with
        sparse LU), or ``jac=`` as in SciPy. ``"LSODA"`` gives SciPy's
        values with the derivatives of adsim's Radau (where LSODA switched
        to its stiff method) or DOP853 solve at the same tolerances.
    dense_output : bool, optional
        As in SciPy: ``sol`` is an ``OdeSolution``-like callable, whose
        interpolants (each step's, recorded) carry derivatives with respect
        to the parameters, ``y0`` and the query time. Every step is then
        recorded (no ``memory_limit``, ``snapshots``).
    t_eval : array_like, optional
        Output times, sorted in the direction of integration, within
        ``t_span``. With ``t_eval`` the integration is checkpointed: memory
        stays bounded (``memory_limit``, ``snapshots``) however many steps
        it takes. Without it every accepted step is an output and all steps
        are recorded, and so they are when ``fun`` compares the state (or
        the time with a parameter), or takes its ``np.maximum``,
        ``np.minimum`` or ``np.abs``, and neither bound is given: its
        outcomes are checked at every step end (docs/integrate.md).
    args : tuple, optional
        Extra arguments of ``fun`` (and of ``jac`` and the events); arrays
        among them may be active, also inside a dict, list or tuple of
        parameters, which ``fun`` receives as given.
    rtol, atol, max_step, first_step, jac, jac_sparsity : optional
        As in SciPy (defaults 1e-3, 1e-6, inf, chosen automatically; ``jac``
        a NumPy function ``jac(t, y, *args)`` or a constant matrix, dense or
        sparse; ``jac_sparsity``, used without ``jac``, the pattern of
        adsim's Jacobian, whose nonzeros make the Newton matrices sparse:
        entries outside it are left out of them, see docs/integrate.md).
    memory_limit : int or str, optional
        With ``t_eval``: bound (``"100MB"``) on the memory the checkpointing
        of each checkpointed loop adds to a sweep (see
        ``adsim.checkpoint_while``). Inside a recording, outputs small next
        to the solver state travel in the state of one loop over the whole
        integration; otherwise each interval between output times is a loop.
    snapshots : int, optional
        With ``t_eval``: snapshots per interval between output times
        (default 20; with ``memory_limit``, at most what it holds).
    stats : list, optional
        Receives one dict per checkpointed loop (the work counts of
        ``adsim.checkpoint_while``): one in all, or one per interval between
        output times, the last one for the part after the last output time,
        if the integration goes on after it; none when every step is kept
        for the check of a switch in ``fun`` (``t_eval`` above).
    follow_steps : bool, optional
        Whether derivatives follow the step sizes the error controller
        chooses (the exact derivative of the numbers computed). By default
        they do not, as in diffrax: the derivatives are those of the steps
        taken with their sizes held fixed. See docs/integrate.md ("Step
        sizes held or followed") for when each is the better estimate of the
        exact solution's derivative. With ``method="BDF"`` and the default,
        the values are BDF's and the derivatives those of a Radau solve at
        the same tolerances (held): BDF's own held derivatives are not
        reliable across fast transitions (docs/integrate.md, "BDF's default
        derivatives"); ``follow_steps=True`` gives BDF's own, followed.

    Returns
    -------
    OdeResult
        ``t``, ``y`` (shape ``(n, len(t))``), ``sol`` (None without
        ``dense_output``; call it inside the recording), ``t_events``,
        ``y_events`` (None without events), ``nfev``, ``njev``, ``nlu``, ``status``,
        ``message``, ``success``. Inside a recording, reading ``nfev``
        (``njev``, ``nlu``) guards its value: a replay whose count differs
        records again.

    Events (``events=`` with ``terminal`` and ``direction``, as in SciPy)
    are located on each step's interpolant; their times are differentiable
    (implicit function theorem). Not differentiated (with active values
    each raises ``adsim.UnsupportedOperation``; a call without any is
    SciPy's): solver classes other than SciPy's, a complex ``y0`` with an
    implicit method (the explicit ones integrate it: _complex_state.py). Not
    supported either: Hessian-vector products through ``Radau``/``BDF``
    with adsim's sparse Jacobian and through event times. See
    docs/integrate.md.
    """
    check_fun(fun)
    events = check_events(events)
    check_t_span(t_span)       # before SciPy's solve too: it never ends on a NaN or infinite time
    if _only_scipy_has(method, dense_output, y0) and not _holds_active(
            fun, t_span, y0, t_eval, events, args, options):
        try:
            return scipy_solve_ivp(fun, t_span, y0, method=method, t_eval=t_eval,
                                   dense_output=dense_output, events=events,
                                   vectorized=vectorized, args=args, **options)
        except Exception as err:      # checked only now: valid calls pay nothing
            _check_scipy_call(method, t_span, y0, t_eval, args, err)
            raise
    name = check_method(method)
    follow_steps = flag(follow_steps, "follow_steps", "integrate.solve_ivp")
    if is_complex_state(y0):
        def solve_pairs(split_fun, split_y0, split_events, split_options, pairs):
            return _solve_ivp(split_fun, t_span, split_y0, name, t_eval, dense_output,
                              split_events, vectorized, args, memory_limit, snapshots, stats,
                              False, pairs=pairs, **split_options)
        return complex_solve(solve_pairs, name, fun, y0, events, options, follow_steps)
    # LSODA's own options serve SciPy's solve only, not its donor's
    adsim_options = {k: v for k, v in options.items()
                     if not (name == "LSODA" and k in LSODA_ONLY)}
    solve = functools.partial(_solve_ivp, fun, t_span, y0, dense_output=dense_output,
                              events=events, vectorized=vectorized, args=args,
                              memory_limit=memory_limit, snapshots=snapshots, stats=stats,
                              follow_steps=follow_steps, **adsim_options)
    if name == "LSODA":
        return _lsoda(solve, fun, t_span, y0, t_eval, dense_output, events, vectorized, args,
                      options)
    if not takes_radau_derivatives(name, follow_steps) or current_tape() is None:
        return solve(name, t_eval)      # (outside a recording: no derivatives, no donor)
    return bdf_with_radau_derivatives(solve, t_eval)


def _check_scipy_call(method, t_span, y0, t_eval, args, err):
    """The arguments of a call SciPy's solve refused with ``err``, checked
    as adsim's solve checks them (complex states allowed): a mistake in one
    raises adsim's error naming it; else ``err`` (raised in the user's
    functions, or by a check of SciPy's alone) stands."""
    try:
        if not (isinstance(method, type) and issubclass(method, OdeSolver)):
            check_method(method)
        t0, tf = check_t_span(t_span)
        check_y0(y0, scipy_solves=True)
        if t_eval is not None:
            check_t_eval(t_eval, t0, tf)
        check_args(args)
    except AdsimError as mistake:
        raise mistake from err


def _lsoda(solve, fun, t_span, y0, t_eval, dense_output, events, vectorized, args, options):
    """SciPy's LSODA for the values, adsim's solve by the donor method
    (Radau where LSODA used its stiff method, DOP853 otherwise) for the
    derivatives, at the same tolerances and output times."""
    warn_extraneous([k for k in options if k not in _IMPLICIT_OPTIONS + LSODA_ONLY])
    t0, tf = check_t_span(t_span)
    y0 = check_y0(y0)
    check_tolerances(options.get("rtol", 1e-3), options.get("atol", 1e-6), y0.shape[0])
    check_max_step(options.get("max_step", np.inf))
    check_first_step(options.get("first_step"), t0, tf)
    if t_eval is not None:
        t_eval = check_t_eval(t_eval, t0, tf)
    fun, jac, events, args = gathered(fun, options.get("jac"), events, check_args(args))
    # jac_sparsity serves the donor's Newton matrices (SciPy's LSODA has no use for it)
    plain_options = {k: v for k, v in options.items() if k != "jac_sparsity"}
    if callable(jac):
        plain_options["jac"] = jac
    values = lsoda_values(fun, t0, tf, y0, t_eval, dense_output, events, vectorized, args,
                          plain_options)
    method = donor_method(values.stiff)

    def solve_donor(times):
        return checked_donor(solve(method, times), "solve_ivp(method='LSODA')", method)
    return with_donor_derivatives(values, solve_donor, t_eval, ("LSODA", method))


def _solve_ivp(fun, t_span, y0, name, t_eval, dense_output, events, vectorized, args,
               memory_limit, snapshots, stats, follow_steps, values_only=False, pairs=None,
               **options):
    """solve_ivp by the method ``name`` (checked), in adsim's integrator;
    ``pairs``: a complex state of that many components held as real and
    imaginary parts (adsim/integrate/_complex_state.py)."""
    known = _EXPLICIT_OPTIONS if name in EXPLICIT else _IMPLICIT_OPTIONS
    warn_extraneous([k for k in options if k not in known])
    t0, tf = check_t_span(t_span)
    y0 = check_y0(y0)
    n = y0.shape[0]
    if check_stats(stats) is not None:
        output_channel(stats)        # filled by the sweeps: tape caches do not look at it
    args = check_args(args)
    given = (fun, options.get("jac"), events, options.get("jac_sparsity"))
    # active values fun (or jac, or an event) reads are passed as args to all
    # of them: the steps are recorded on tapes of their own
    fun, jac, events, args = gathered(fun, options.get("jac"), events, args)
    if values_only:      # no derivative of y0 or args flows through this solve
        y0 = stop_gradient(y0)
        args = tuple(stop_gradient(a) for a in args)
    if callable(jac):
        options = dict(options, jac=jac)
    rtol, atol = check_tolerances(options.get("rtol", 1e-3), options.get("atol", 1e-6), n)
    max_step = check_max_step(options.get("max_step", np.inf))
    first_step = check_first_step(options.get("first_step"), t0, tf)
    if t_eval is not None:
        t_eval = check_t_eval(t_eval, t0, tf)
    if dense_output and (memory_limit is not None or snapshots is not None):
        raise InvalidArgumentValue("adsim.integrate.solve_ivp: memory_limit and snapshots bound the "
                         "checkpointing of an integration with t_eval=; with "
                         "dense_output=True every step's interpolant is kept and all steps "
                         "are recorded. Leave dense_output out (the times you need as t_eval)")
    if t_eval is None and (memory_limit is not None or snapshots is not None):
        raise InvalidArgumentValue("adsim.integrate.solve_ivp: memory_limit and snapshots bound the "
                         "checkpointing of an integration with t_eval=; without t_eval every "
                         "step is an output and all steps are recorded. Give t_eval (e.g. "
                         "t_eval=[t_span[1]] for the final state)")
    direction = 1.0 if tf == t0 or tf > t0 else -1.0
    rhs = RightHandSide(fun, n, vectorized)
    solver = _solver(name, rhs, direction, rtol, atol, max_step, options, n)
    solver.follow_steps = follow_steps
    solver.pairs = pairs
    if n == 0 or tf == t0:
        njev = 0 if name in EXPLICIT or solver.jacobian.constant else 1
        result = _trivial(rhs, t0, tf, y0, t_eval, args, njev)
        if dense_output:
            result["sol"] = ConstantSolution(t0, y0)
        if events is not None:
            result["t_events"], result["y_events"] = Events(events, args).results(n)
        return result
    loop = {"max_steps": None}
    loop.update({k: v for k, v in (("memory_limit", memory_limit), ("snapshots", snapshots))
                 if v is not None})
    # the loops of a call share the budget and their recorded steps
    group = _group((t0, tf, y0, t_eval, args))
    # a later recording of this integration starts from its step variants
    setup = None if group is None else StepSetup(
        given, args, settings_of(name, values_only, vectorized, follow_steps, n, direction,
                                 rtol, atol, max_step, first_step, _event_settings(given[2]),
                                 pairs),
        budgeted=memory_limit is not None or snapshots is not None)
    switches = moving_switches(fun, vectorized, args, t0, y0) \
        if not values_only and active_leaves([t0, y0, args]) else None
    # a switch is checked at every step end (each crossing, even one crossed back between two
    # outputs), whose states the dense route records; a memory bound keeps the outputs' route,
    # and so does a fun with branches at fixed times alone (dosing, forcing: a dearer replay
    # for all of them, for a switch beyond such a branch, which its step ends found by a plain
    # run check at recording)
    every_step = switches is not None and switches.moves and t_eval is not None and \
        memory_limit is None and snapshots is None and n <= EVERY_STEP_UP_TO
    steps = None
    try:
        state = solver.start(t0, y0, tf, args, first_step)
        events = Events(events, args) if events is not None else None
        run = Run(solver, tf, args, events, group, setup)
        sol = None
        if dense_output or every_step:        # every step's state kept, for its interpolant
            times, ys = run.accepted_states(state)
            sol = DenseSolution(solver, times, run.steps, args, n)
            sol.event_end = run.stop is not None
            if t_eval is None:
                t, y = times, ys
            else:
                t, y = _interpolated(sol, t_eval, times[-1], direction, n)
                steps = (times, ys)
            # each step's interpolant is made, or (outputs alone) the steps holding an output
            run.marks = list(range(len(run.steps))) if dense_output else sorted(
                run.marks + _steps_holding(recorded_values(times), recorded_values(t),
                                           direction))
            sol = sol if dense_output else None
        elif t_eval is None:
            t, y = run.accepted_steps(state)
        else:
            outputs = run.outputs_at(state, t_eval, loop, stats)
            t = t_eval[:len(outputs)]
            y = np.stack(outputs, axis=1) if outputs else np.empty((n, 0))
    finally:
        if group is not None:
            group.finish()
    if setup is not None:
        setup.keep(group)
    if switches is not None:
        checked_only = None
        if steps is None and t_eval is not None:    # outputs checkpointed (a bound, a large y)
            checked_only = _plain_step_ends(name, fun, vectorized, direction, rtol, atol,
                                            max_step, options, n, (t0, y0, t), args, first_step)
        crossed = refuse_moving_switches(switches, t0, y0, t, y, steps, direction,
                                         checked_only)
        if checked_only is not None:    # a replay's step ends are checked by a plain run too
            positions = [i for i, a in enumerate(args) if isinstance(a, Active)]

            def step_ends(span, params, rhs=None):      # (rhs: fun's tape, replayed)
                return _plain_step_ends(name, fun if rhs is None else rhs,
                                        vectorized and rhs is None, direction, rtol, atol,
                                        max_step, options, n, span,
                                        placed(args, positions, params), first_step)
            guard_step_ends(switches, step_ends, (t0, y0, t), checked_only)
    else:
        crossed = False
    state = run.state
    status = -1 if state.status == FAILED else (1 if run.stop is not None else 0)
    t_events, y_events = events.results(n) if events is not None else (None, None)
    if crossed:
        y, t_events, y_events, sol = _first_order_only(y, t_events, y_events, sol)

    def count(i):
        return Count(lambda: solver.counts(state, lambda: _distinct(run.marks))[i])
    result = OdeResult(t=t, y=y, sol=sol, t_events=t_events, y_events=y_events,
                       nfev=count(0), njev=count(1), nlu=count(2), status=status,
                       message=MESSAGES[status], success=status >= 0)
    result.stopped_by = events.stopped_by if run.stop is not None else None
    return result


EVERY_STEP_UP_TO = 256
"""States up to which an integration with ``t_eval`` whose ``fun`` has a
moving switch keeps every step (its step ends checked at recording and on
replays); a larger system (a method of lines with upwinding) stays
checkpointed, its memory bounded, and its step ends are checked at
recording by a plain run of the method."""

_KINK_CROSSED = (
    "adsim: the solution of solve_ivp crosses a kink of fun (np.where, max, np.maximum, "
    "np.minimum, np.clip, abs or a comparison of the state whose two sides agree there, "
    "fun's derivative jumping) where the parameters move the crossing. Its first derivatives are right, but second derivatives (hvp, hessian, a "
    "derivative of a derivative) would miss the crossing's term. Smooth the kink, or end the "
    "integration at the crossing with a terminal event and restart from sol.y_events "
    "(docs/integrate.md, 'A switch in fun that moves with the parameters')")


def _first_order_only(y, t_events, y_events, sol):
    """The outputs of an integration that crossed a kink of fun: ``y``, the
    events' times and states and the dense interpolant's values through an
    identity whose second-order sweeps raise (adsim/integrate/_kinks.py)."""
    def mark(v):
        return first_order_only(v, _KINK_CROSSED) if isinstance(v, Active) else v
    if y_events is not None:
        t_events, y_events = [mark(v) for v in t_events], [mark(v) for v in y_events]
    if sol is not None:
        sol.marked = mark
    return mark(y), t_events, y_events, sol


def _event_settings(events):
    """What the events (as given) decide besides their functions."""
    return tuple((getattr(e, "terminal", None), getattr(e, "direction", None))
                 for e in event_functions(events))


def _plain_step_ends(name, fun, vectorized, direction, rtol, atol, max_step, options, n,
                     span, args, first_step):
    """(times, states) of the accepted steps up to the last output time of
    ``span`` ((t0, y0, output times)), by the method ``name`` run again on
    plain values: the step ends of an integration whose outputs were
    checkpointed (its steps' states are in no Python variable)."""
    t0, y0, t = (recorded_values(v) for v in span)
    if t.shape[0] == 0:
        return np.empty(0), np.empty((n, 0))
    plain = tuple(recorded_values(a) if active_leaves(a) else a for a in args)
    solver = _solver(name, RightHandSide(fun, n, vectorized), direction, rtol, atol, max_step,
                     options, n)
    times, ys = [], []
    with suspended():
        state = solver.start(float(t0), y0, float(t[-1]), plain, first_step)
        while state.status == RUNNING:
            state, accepted = solver.attempt(state, float(t[-1]), plain)
            if accepted:
                times.append(state.t)
                ys.append(state.y)
    return np.array(times, dtype=float), np.stack(ys, axis=1) if ys else np.empty((n, 0))


def _steps_holding(times, t, direction):
    """The accepted-step count of the step whose interpolant gives each
    output time of ``t`` (``times``: the step ends, the start first), as
    SciPy's ``t_eval`` takes them: a step's outputs lie in ``(t_old, t]``."""
    k = np.searchsorted(direction * times, direction * t, side="left")
    return [max(int(i), 1) for i in k]


def _interpolated(sol, t_eval, t_end, direction, n):
    """``(t, y)`` at the times of ``t_eval`` the integration reached (it
    ends at ``t_end``), from ``sol``, as SciPy gives them."""
    beyond = direction * (recorded_values(t_eval) - recorded_values(t_end)) > 0
    count = int(np.argmax(beyond)) if beyond.any() else beyond.shape[0]
    if active_leaves([t_eval, t_end]):      # the decisions, recorded: two comparisons
        reached = count == 0 or bool(np.all(direction * (t_eval[:count] - t_end) <= 0))
        passed = count == beyond.shape[0] or bool(direction * (t_eval[count] - t_end) > 0)
        assert reached and passed, "the output times reached differ from their values"
    t = t_eval[:count]
    return t, (sol(t) if count else np.empty((n, 0)))


def _group(values):
    """The LoopGroup of the recording the active ``values`` belong to, or
    None when none is active (nothing is recorded) or they are not of one
    recording (the loops raise that with their own message)."""
    found = active_leaves(list(values))
    try:
        return LoopGroup(tape_of(*found)) if found else None
    except (MixedRecordings, RuntimeError):
        return None


def _only_scipy_has(method, dense_output, y0):
    """Options only SciPy's solve_ivp implements: a call that uses one and
    holds no active value is SciPy's (it has nothing to differentiate)."""
    if dense_output or getattr(method, "__name__", method) == "LSODA":
        return True
    if isinstance(method, type):
        return not (method.__module__.startswith("scipy.integrate") and
                    method.__name__ in SUPPORTED)
    # a complex active y0 is adsim's (_complex_state.py); a plain one is SciPy's
    return not isinstance(y0, ComplexActive) and not active_leaves(y0) and np.iscomplexobj(y0)


def _holds_active(fun, t_span, y0, t_eval, events, args, options):
    """Whether any argument, or a closure of fun, jac or an event, holds an
    active value."""
    functions = [fun, options.get("jac")] + \
        (list(events) if isinstance(events, (list, tuple)) else [events])
    return bool(active_leaves([t_span, y0, t_eval, args, list(options.values())])) or \
        args_hold_recorded_objects(args) or reads_active_matrix(functions, args) or \
        any(callable(f) and reads_recorded_values(f) for f in functions)


def _solver(name, rhs, direction, rtol, atol, max_step, options, n):
    if name in EXPLICIT:
        return ExplicitRungeKutta(EXPLICIT[name], rhs, direction, rtol, atol, max_step)
    sparsity = check_sparsity(options.get("jac_sparsity"), n)
    jacobian = JacobianSource(rhs, options.get("jac"), n, sparsity)
    return IMPLICIT[name](rhs, jacobian, direction, rtol, atol, max_step)


def _stack_times(times):
    return real_array(list(times), "t")


def _distinct(marks):
    """Number of distinct steps among outputs (consecutive outputs of one
    step share their mark)."""
    return sum(1 for j, m in enumerate(marks) if j == 0 or m != marks[j - 1])


def _trivial(rhs, t0, tf, y0, t_eval, args, njev):
    """An empty state or an empty interval: no step is taken (SciPy's solver
    evaluates fun once and reports the state at t0 and tf; over an empty
    interval SciPy reports no ``t_eval`` output, and neither does this)."""
    rhs(t0, y0, args)
    n = y0.shape[0]
    if t_eval is None:
        # the end moves with the times as the flow does (d y(tf) / d tf = f(t0, y0))
        y_end = flowed(rhs, t0, y0, tf - t0, args) if n else y0
        t, y = _stack_times([t0, tf]), np.stack([y0, y_end], axis=1)
    elif tf == t0:
        t, y = t_eval[:0], np.empty((n, 0))
    else:
        t = t_eval
        y = np.stack([y0] * t_eval.shape[0], axis=1) if t_eval.shape[0] else np.empty((n, 0))
    return OdeResult(t=t, y=y, sol=None, t_events=None, y_events=None, nfev=1, njev=njev,
                     nlu=0, status=0, message=MESSAGES[0], success=True)
