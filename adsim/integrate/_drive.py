"""Running a method: to each output time under checkpointing, or step by step.

With ``t_eval`` the integration is cut at the output times: the attempts
up to the first step that reaches ``t_eval[j]`` are one
``adsim.checkpoint_while`` loop (one op of the enclosing tape, replayed in
C, reversed with online checkpointing), and the output at ``t_eval[j]`` is
the dense output of that step, recorded in the enclosing tape. The adjoint
of output ``j`` therefore enters the reverse sweep between loop ``j + 1``
and loop ``j``, at its time. The loops do not change the steps: each runs
the same attempts a single loop would, so the step sequence is SciPy's.

Without ``t_eval`` every accepted step is an output; the attempts are then
recorded one after the other in the enclosing tape (memory grows with the
number of steps, as the output does).
"""
from ..checkpoint import checkpoint_while
from ..errors import UnsupportedOperation
from ._rhs import FAILED, RUNNING

__all__ = ["outputs_at", "every_step"]


def _loop_step(method):
    def attempt(state, t_bound, t_target, *args):
        return tuple(method.attempt(method.State(*state), t_bound, args)[0])
    return attempt


def _until(method):
    """Loop condition: attempts continue until a step reaches ``t_target``
    (at least one step, so that there is an interpolant)."""
    direction = method.direction

    def reaching(state, t_bound, t_target, *args):
        s = method.State(*state)
        return bool(s.status == RUNNING and (s.n_accepted == 0
                                             or direction * (s.t - t_target) < 0))
    return reaching


def _running(method):
    def running(state, t_bound, t_target, *args):
        return bool(method.State(*state).status == RUNNING)
    return running


def outputs_at(method, state, t_bound, times, args, loop, stats=None):
    """Dense outputs at ``times`` (in the direction of integration), then the
    attempts to the end of the interval. Returns (outputs, marks, state):
    ``marks[j]`` is the number of accepted steps when output ``j`` was made
    (outputs that share a step share their mark); ``outputs`` stops before
    the first time that a failed integration did not reach. ``loop`` holds
    options of ``checkpoint_while``; ``stats`` (a list) receives one dict of
    work counts per loop."""
    step = _loop_step(method)

    def run(cond, state, t_target):
        options = dict(loop)
        if stats is not None:
            options["stats"] = {}
            stats.append(options["stats"])
        try:
            final = checkpoint_while(cond, step, tuple(state), args=(t_bound, t_target) + args,
                                     **options)
        except ValueError as error:
            if "two different recordings" not in str(error):
                raise
            raise UnsupportedOperation(
                "adsim.integrate.solve_ivp: fun reads an active value that is not one of its "
                "arguments (from a closure, a global or an object). With t_eval the steps are "
                "recorded on their own tape, so pass such values through args=: "
                "fun(t, y, *args)") from error
        return method.State(*final)
    outputs, marks = [], []
    for t_target in times:
        state = run(_until(method), state, t_target)
        if state.status == FAILED:
            break
        outputs.append(method.dense(state, t_target, args))
        marks.append(state.n_accepted)
    return outputs, marks, run(_running(method), state, t_bound)


def every_step(method, state, t_bound, args):
    """(times, solutions, final state) of every accepted step, the start included."""
    times, ys = [state.t], [state.y]
    while state.status == RUNNING:
        state, accepted = method.attempt(state, t_bound, args)
        if accepted:
            times.append(state.t)
            ys.append(state.y)
    return times, ys, state
