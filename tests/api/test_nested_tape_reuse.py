"""A derivative taken inside a recording keeps its inner function's tapes.

The inner function of ``adsim.grad(energy)(u)`` inside a recorded function
reads the recording's active values (``k`` below) from its closure; adsim
passes them in as inputs of the inner tape (adsim/_nesting/nested.py
``_lifted``), so that tape is replayed at the next Newton step rather than
recorded again -- while whatever else the function reads (plain values,
changed between steps) is still checked before each replay."""
import numpy as np

import adsim
from fdcheck import assert_close, fd_jacobian

U0 = np.array([0.1, -0.2, 0.3, 0.05])


def chain_energy(u, k, load):
    ext = np.diff(np.concatenate(([0.0], u)))
    return np.sum(0.5 * k * ext ** 2 + 0.25 * ext ** 4) - load * np.sum(u)


def newton_relaxed(params, kept, steps=4):
    """The chain's energy after Newton steps on adsim's gradient and Hessian
    (``kept`` collects the gradient functions, to count their recordings)."""
    k, load = params[0], params[1]
    energy = lambda u: chain_energy(u, k, load)  # noqa: E731
    gradient, hessian = adsim.grad(energy), adsim.hessian(energy)
    kept.append(gradient)
    u = U0
    for _ in range(steps):
        u = u - np.linalg.solve(hessian(u), gradient(u))
    return energy(u)


def test_a_newton_loop_inside_a_recording_records_its_inner_function_once():
    kept = []
    for params in (np.array([1.3, 0.4]), np.array([0.8, -0.6])):
        f = lambda p: newton_relaxed(p, kept)  # noqa: E731
        g = adsim.grad(f)(params)
        assert kept[-1].tapes.recordings == 1, kept[-1].tapes
        assert kept[-1].tapes.reuse_blocked_by is None
        assert_close(g, fd_jacobian(lambda p: newton_relaxed(p, []), [params])[0], 1e-6, 1e-8)


def test_the_lifted_value_rebound_between_calls_is_the_one_differentiated():
    # the closure cell `c` holds a new active array at every step: the
    # replayed inner tape takes each one as its input
    def outer(k):
        c = k
        f = lambda u: np.sum(c * u ** 3)  # noqa: E731
        total = 0.0
        for i in range(3):
            total = total + np.sum(adsim.grad(f)(U0 + i) ** 2)
            c = c * k
        return total
    k = np.array([0.7, 1.1, -0.4, 0.9])
    assert_close(adsim.grad(outer)(k), fd_jacobian(outer, [k])[0], 1e-7, 1e-9)


def test_a_plain_value_changed_between_calls_is_not_replayed_stale():
    # the inner function reads an active parameter (lifted) and a plain
    # scale that changes at every step: each change records it again
    def outer(k):
        scale = [1.0]
        f = lambda u: scale[0] * np.sum(k * u ** 2)  # noqa: E731
        total = 0.0
        for i in range(3):
            scale[0] = 1.0 + i
            total = total + np.sum(adsim.grad(f)(U0) * U0)
        return total
    k = np.array([0.7, 1.1, -0.4, 0.9])
    expected = sum(2 * (1.0 + i) * U0 ** 2 for i in range(3))
    assert_close(adsim.grad(outer)(k), expected, 1e-13, 1e-14)
    assert_close(adsim.grad(outer)(k), fd_jacobian(outer, [k])[0], 1e-7, 1e-9)


def test_a_lifted_value_of_another_shape_records_again():
    def outer(k):
        f = lambda u: np.sum(k * u ** 2)  # noqa: E731
        return np.sum(adsim.grad(f)(np.ones_like(k)))
    for n in (3, 5, 3):
        k = np.linspace(0.5, 1.5, n)
        assert_close(adsim.grad(outer)(k), np.full(n, 2.0), 1e-14, 1e-14)


def _rate(y, t, q):
    out = np.exp(q) * y ** 2
    if t >= 1.0:
        out = out + 3.0 * y
    return out


def _jacobian_of_a_rate(p):
    J = adsim.jacobian(_rate)(p ** 2, p[0] * 1.5, p)
    return np.sum(J * J) + np.sum(p)


def test_a_replay_across_a_branch_on_another_argument_records_again():
    """A replay whose ``t`` crosses the branch leaves the pinned inner tape's
    path; the function, unchanged, is recorded again at the pinned point first
    and must match. The inner tapes take every float argument as an input, so
    that recording must too: with ``y`` the only input, ``t >= 1.0`` and
    ``np.exp(q)`` fold into constants and the unchanged function was refused
    (BranchChanged), as on the stiff set's Brusselator."""
    x, x2 = np.array([0.6, 0.9]), np.array([0.7, 0.9])     # t = 0.9, then 1.05
    tape = adsim.record(_jacobian_of_a_rate, x)
    assert_close(tape.forward(x2), _jacobian_of_a_rate(x2), 1e-12, 0.0)
    assert_close(tape.gradient(x2), fd_jacobian(_jacobian_of_a_rate, [x2])[0], 1e-6, 1e-8)
