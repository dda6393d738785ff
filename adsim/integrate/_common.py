"""What every method shares: the error norm, the initial step size, the
smallest step at a time, the step-size factors and what they pass on.

Written so that the same code runs on plain arrays and, inside a recording,
on active ones: every decision is a comparison (recorded as a branch when
its operands are active), no value is turned into a plain number, and the
continuous kinks (``abs``, ``min``, ``max``) are recorded without branches
(:mod:`adsim.integrate._piecewise`).
The definitions are those of Hairer, Norsett & Wanner and of SciPy's
``solve_ivp``, whose results the solvers reproduce to rounding.
"""
import numpy as np

from .._np.elementwise import stop_gradient
from .._active import Active
from ._piecewise import at_least, larger, magnitude, smaller

__all__ = ["EPS", "SAFETY", "MIN_FACTOR", "MAX_FACTOR", "norm", "state_magnitude",
           "state_norm", "select_initial_step",
           "min_step", "spacing_bound", "powers", "along_times"]

EPS = np.finfo(float).eps
SAFETY = 0.9            # fraction of the optimal step size taken
MIN_FACTOR = 0.2        # smallest step-size factor after a rejection
MAX_FACTOR = 10         # largest step-size factor after an acceptance
_TINY = np.finfo(float).tiny


def norm(x):
    """Root-mean-square norm."""
    return np.linalg.norm(x) / x.size ** 0.5


def state_magnitude(y, pairs=None):
    """``|y|`` as SciPy's scales take it. A complex state of ``pairs``
    components is held as its real parts followed by its imaginary parts
    (adsim/integrate/_complex_state.py): each pair's modulus, on both halves,
    as SciPy's ``np.abs`` of the complex state. It steers the steps only, so
    it passes no derivative (the modulus has none where a component is 0)."""
    if pairs is None:
        return magnitude(y)
    modulus = stop_gradient(np.hypot(y[:pairs], y[pairs:]))
    return np.concatenate([modulus, modulus])


def state_norm(x, pairs=None):
    """:func:`norm` of a state; of a complex one held as pairs, the norm of
    the complex vector (its ``pairs`` components, as SciPy's)."""
    return norm(x) if pairs is None else np.linalg.norm(x) / pairs ** 0.5


def select_initial_step(call, t0, y0, t_bound, max_step, f0, direction, order, rtol, atol,
                        pairs=None):
    """First step size from the scaled norms of y0, f0 and of a difference
    quotient of f (one more evaluation of the right-hand side ``call``).

    References
    ----------
    E. Hairer, S. P. Norsett and G. Wanner, *Solving Ordinary Differential
    Equations I*, 2nd ed., Springer, 1993, sec. II.4 ("Starting step size").
    """
    if y0.size == 0:
        return np.inf
    interval_length = magnitude(t_bound - t0)
    if interval_length == 0.0:
        return 0.0
    scale = atol + state_magnitude(y0, pairs) * rtol
    d0 = state_norm(y0 / scale, pairs)
    d1 = state_norm(f0 / scale, pairs)
    if d0 < 1e-5 or d1 < 1e-5:
        h0 = 1e-6
    else:
        h0 = 0.01 * d0 / d1
    h0 = smaller(h0, interval_length)
    y1 = y0 + h0 * direction * f0
    f1 = call(t0 + h0 * direction, y1)
    d2 = state_norm((f1 - f0) / scale, pairs) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = larger(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / larger(d1, d2)) ** (1 / (order + 1))
    return smaller(smaller(smaller(100 * h0, h1), interval_length), max_step)


def min_step(t, direction):
    """``10 * |nextafter(t, direction * inf) - t|``: steps shorter than ten
    floating-point spacings at ``t`` fail.

    The spacing comes from rounding alone (exact in binary floating point,
    subnormals included), so that at an active ``t`` it is recorded without
    a guard on the binary exponent of ``t``: adding half a unit in the last
    place of ``a = |t|`` rounds up to the next number unless ``a`` is a
    power of two (a tie, rounded to ``a``, which is even); at a power of
    two the next number away from zero is a whole unit above it and the one
    towards zero half a unit below.
    """
    a = larger(magnitude(t), _TINY)
    spacing = (a + a * (EPS / 2)) - a
    if spacing == 0:
        spacing = (a + a * EPS) - a
        if a > _TINY and t * direction < 0:
            spacing = spacing / 2
    return 10 * spacing


def spacing_bound(t, t_bound, direction):
    """A number at least :func:`min_step` at ``t``, for ``t`` not past
    ``t_bound``: ``10 * EPS * max(|t|, tiny)`` (a spacing of floating-point
    numbers at ``a >= tiny`` is at most ``EPS * a``; the product rounds to
    no less, as ``10 * EPS`` is exact), or the same at ``|t_bound|`` when
    ``t_bound`` is a plain number and ``|t| <= |t_bound|`` (one comparison:
    ``t`` lies between ``-|t_bound|`` and ``t_bound``). A step size at least
    this large needs no exact minimum: two ops where :func:`min_step` takes
    seven and a branch."""
    if not isinstance(t_bound, Active):
        reach = abs(float(t_bound))
        if t >= -reach if direction > 0 else t <= reach:
            return max(reach, _TINY) * (10 * EPS)
    return larger(magnitude(t), _TINY) * (10 * EPS)


def powers(x, k):
    """``x, x**2, ..., x**k`` (products in that order) along a first axis:
    shape ``(k,)`` for one time, ``(k, m)`` for ``m`` times (the form of
    SciPy's interpolants, whose numbers an interpolant at several times
    gives)."""
    products = [x]
    for _ in range(k - 1):          # cumprod's products, without its copies and views
        products.append(products[-1] * x)
    return np.stack(products)


def stage_sums(stages, weights):
    """``sum_s stages[m, s, :] * weights[s, m]`` as a column per m, shape
    ``(n, m)``: the stages of m steps (shape ``(m, s, n)``) combined with
    each step's own weights (an interpolant's coefficients at its time)."""
    return np.sum(stages * weights.T[:, :, None], axis=1).T


def along_times(y, t):
    """``y`` (a state, shape ``(n,)``) as a column when ``t`` holds several
    times, so that it adds to an interpolant's ``(n, m)`` values."""
    return y if np.ndim(t) == 0 else y[:, None]


class Stepper:
    """What every method holds for one problem (right-hand side, direction,
    tolerances, largest step) and how it starts."""

    dense_evaluations = 0       # evaluations of fun the interpolant of a step adds
                                # (count_dense adds them to a state's count)
    follow_steps = False        # derivatives follow the step sizes (see controlled)
    pairs = None                # a complex state's components, held as pairs (state_norm)

    def __init__(self, rhs, direction, rtol, atol, max_step):
        self.rhs = rhs
        self.direction = direction
        self.rtol = rtol
        self.atol = atol
        self.max_step = max_step

    def controlled(self, size):
        """A step size, or a step-size factor, chosen by the error controller:
        its value steers the steps exactly as SciPy's does. By default it
        passes no derivative, as in diffrax: the derivatives are those of
        the steps taken with their sizes held fixed, the time grid moving
        only with ``t0`` and, through the last step it clips, ``t_bound``.
        With ``follow_steps`` they also follow the step sizes: the exact
        derivative of the computed numbers.

        The two differ by the derivative of the discretisation error, of the
        order of the tolerance where the steps follow smooth features of the
        solution, and either can be far off (docs/integrate.md, "Step sizes
        held or followed"): held, where a sharp feature moves with the
        parameters (the jumps of a relaxation oscillation); followed, where
        the steps react to features fixed in time (a dose switched off at a
        time, a forcing interpolated from a table), where a derivative
        through the controller grows from step to step, and where stability
        or rounding sets the steps.
        """
        if self.follow_steps or not isinstance(size, Active):
            return size
        return stop_gradient(size)

    def first_evaluation(self, t0, y0, t_bound, args, first_step, error_order):
        """(f(t0, y0), the first step size, evaluations made): SciPy's
        select_initial_step unless ``first_step`` is given."""
        f0 = self.rhs(t0, y0, args)
        if first_step is not None:
            return f0, first_step, 1
        h_abs = select_initial_step(lambda t, y: self.rhs(t, y, args), t0, y0, t_bound,
                                    self.max_step, f0, self.direction, error_order, self.rtol,
                                    self.atol, self.pairs)
        # a NaN first step (fun NaN at the start: SciPy's solve then runs for
        # ever) becomes 0: the smallest step is tried, rejected, and the
        # integration fails with status -1
        return f0, self.controlled(at_least(0.0, h_abs)), 2


class ImplicitStepper(Stepper):
    """A :class:`Stepper` with a Jacobian source and SciPy's Newton tolerance."""

    def __init__(self, rhs, jacobian, direction, rtol, atol, max_step):
        super().__init__(rhs, direction, rtol, atol, max_step)
        self.jacobian = jacobian
        self.newton_tol = max(10 * np.finfo(float).eps / rtol, min(0.03, rtol ** 0.5))
