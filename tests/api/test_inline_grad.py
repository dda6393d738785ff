"""``adsim.grad(f)(x)`` written inline, as in autograd's optimisation loops.

Every call makes a new transformed function, so the tapes live with ``f``:
a function seen before replays its tape when its environment is unchanged,
records again when something it reads changed (an array changed in place,
an owner's attribute, a random draw), and its tapes go when it dies.
"""
import gc
import random
import weakref

import numpy as np

import adsim
from adsim._tapecache.purity import Snapshot
from fdcheck import assert_close

X = np.array([0.5, -0.3, 0.2])


def test_gradient_descent_with_inline_grad_replays_one_tape():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((20, 3))
    b = A @ np.array([1.0, -2.0, 0.5]) + 0.01 * rng.standard_normal(20)

    def loss(w):
        r = A @ w - b
        return 0.5 * np.sum(r * r)

    w = np.zeros(3)
    for _ in range(300):
        w = w - 0.02 * adsim.grad(loss)(w)
    assert_close(w, np.linalg.lstsq(A, b, rcond=None)[0], 1e-8, 1e-10)
    assert adsim.grad(loss).tapes.recordings == 1
    assert adsim.value_and_grad(loss).tapes is adsim.grad(loss).tapes


def test_closed_over_array_changed_in_place_gives_the_new_derivative():
    weights = np.ones(3)

    def energy(x):
        return np.sum(weights * x ** 2)

    for k in range(4):
        weights[k % 3] += 1.5                 # in place: same object, new values
        assert_close(adsim.grad(energy)(X), 2.0 * weights * X, 1e-15, 0)
    assert adsim.grad(energy).tapes.recordings == 4
    assert_close(adsim.grad(energy)(X), 2.0 * weights * X, 1e-15, 0)
    assert adsim.grad(energy).tapes.recordings == 4


def test_lambda_redefined_in_a_loop():
    for k in range(1, 5):
        assert_close(adsim.grad(lambda w: k * np.sum(w ** 3))(X), 3.0 * k * X ** 2, 1e-15, 0)
    springs = [lambda w, k=k: 0.5 * k * np.sum(w ** 2) for k in (1.0, 4.0, 9.0)]
    for _ in range(2):
        for k, spring in zip((1.0, 4.0, 9.0), springs):
            assert_close(adsim.grad(spring)(X), k * X, 1e-15, 0)
    assert [adsim.grad(s).tapes.recordings for s in springs] == [1, 1, 1]


class Pendulum:
    def __init__(self, length):
        self.length = length

    def energy(self, state):
        theta, omega = state[0], state[1]
        return 0.5 * self.length ** 2 * omega ** 2 + 9.81 * self.length * (1 - np.cos(theta))


def _pendulum_grad(length, state):
    return np.array([9.81 * length * np.sin(state[0]), length ** 2 * state[1]])


def test_bound_method_follows_its_owner():
    state = np.array([0.3, -1.2])
    short, long_ = Pendulum(0.5), Pendulum(2.0)
    for _ in range(2):                        # two owners of one method, interleaved
        assert_close(adsim.grad(short.energy)(state), _pendulum_grad(0.5, state), 1e-15, 0)
        assert_close(adsim.grad(long_.energy)(state), _pendulum_grad(2.0, state), 1e-15, 0)
    assert adsim.grad(short.energy).tapes.recordings == 1
    short.length = 1.5                        # the owner's attribute changes
    assert_close(adsim.grad(short.energy)(state), _pendulum_grad(1.5, state), 1e-15, 0)
    assert adsim.grad(short.energy).tapes.recordings == 2


def test_tapes_go_when_the_function_dies():
    def make_loss():
        data = np.linspace(0.0, 1.0, 50)

        def loss(w):
            return np.sum((w[0] * data + w[1] - data ** 2) ** 2)
        return loss

    loss = make_loss()
    adsim.grad(loss)(X[:2])
    function, tapes = weakref.ref(loss), weakref.ref(adsim.grad(loss).tapes)
    del loss
    gc.collect()
    assert function() is None and tapes() is None

    pendulum = Pendulum(1.0)
    adsim.grad(pendulum.energy)(X[:2])
    owner, tapes = weakref.ref(pendulum), weakref.ref(adsim.grad(pendulum.energy).tapes)
    del pendulum
    gc.collect()
    assert owner() is None and tapes() is None


def test_closure_over_a_large_fitted_model_replays():
    rng = np.random.default_rng(1)
    model = {f"feature{k}": rng.standard_normal(10 ** 5) for k in range(10)}
    weights = [float(v) for v in rng.standard_normal(3000)]
    weights[7] = 0.0

    def log_likelihood(w):
        total = sum(w[k] ** 2 * np.mean(model[f"feature{k}"]) for k in range(10))
        return total + weights[7] * w[0] + weights[-1] * w[1]

    def expected(w):
        g = np.array([2.0 * w[k] * np.mean(model[f"feature{k}"]) for k in range(10)])
        g[0] += weights[7]
        g[1] += weights[-1]
        return g

    w = np.linspace(0.5, 1.5, 10)
    for _ in range(3):
        assert_close(adsim.grad(log_likelihood)(w), expected(w), 1e-14, 1e-15)
    tapes = adsim.grad(log_likelihood).tapes
    assert tapes.recordings == 1 and tapes.reuse_blocked_by is None
    model["feature3"][12345] += 1e3           # one point of one array, in place
    assert_close(adsim.grad(log_likelihood)(w), expected(w), 1e-14, 1e-15)
    weights[-1] = 2.5                         # one float of the list
    assert_close(adsim.grad(log_likelihood)(w), expected(w), 1e-14, 1e-15)
    assert tapes.recordings == 3
    snapshot = Snapshot(log_likelihood)
    weights[7] = -0.0                         # a signed zero counts, as for short lists
    assert not snapshot.matches(log_likelihood)
    weights[7], weights[8] = 0.0, 2.0
    snapshot = Snapshot(log_likelihood)
    weights[8] = 2                            # an equal number of another type counts too
    assert not snapshot.matches(log_likelihood)


def test_random_draws_served_from_a_cached_normal_are_seen():
    # the legacy generator and Python's random draw normals in pairs and keep
    # the second: every other call draws without moving the generator's words
    def noisy(w):
        return np.sum(w ** 2) * np.random.normal()

    def python_noisy(w):
        return np.sum(w ** 2) * random.gauss(0.0, 1.0)

    for f, seed, draw in ((noisy, np.random.seed, lambda: np.random.normal()),
                          (python_noisy, random.seed, lambda: random.gauss(0.0, 1.0))):
        seed(3)
        got = [adsim.grad(f)(X) for _ in range(5)]
        seed(3)
        want = [2.0 * X * draw() for _ in range(5)]
        for g, h in zip(got, want):
            assert_close(g, h, 1e-15, 0)
        assert "random" in adsim.grad(f).tapes.reuse_blocked_by


def test_inline_jacobian_shares_the_tapes():
    def velocity(q):
        return np.array([q[1], -np.sin(q[0])])

    q = np.array([0.4, 0.1])
    for _ in range(3):
        assert_close(adsim.jacobian(velocity)(q), [[0.0, 1.0], [-np.cos(0.4), 0.0]], 1e-15, 0)
    assert adsim.jacobian(velocity).tapes.recordings == 1


def test_newton_steps_with_inline_hessian_and_gradient():
    def energy(x):                            # a smooth convex energy, minimum at x = 1/3
        return np.sum(np.exp(3.0 * x) - 3.0 * np.e * x) + np.sum((x[1:] - x[:-1]) ** 2)

    x = np.zeros(4)
    for _ in range(12):
        x = x - np.linalg.solve(adsim.hessian(energy)(x), adsim.grad(energy)(x))
    assert_close(x, np.full(4, 1.0 / 3.0), 1e-12, 1e-14)
    assert adsim.hessian(energy).tapes is adsim.grad(energy).tapes
    assert adsim.grad(energy).tapes.recordings == 1


def test_a_lambda_made_anew_each_step_replays_the_last_ones_tape():
    """``adsim.grad(lambda w: loss(w, data))(w)`` in a loop: each lambda is a
    new function with an empty cache, but the same code and environment as
    the last one, whose tape it replays; a changed environment records."""
    rng = np.random.default_rng(3)
    data = rng.standard_normal((30, 3))
    target = data @ np.array([0.5, -1.0, 2.0])

    def loss(w, data, target):
        r = data @ w - target
        return 0.5 * np.sum(r * r)

    w, recorded = np.zeros(3), []
    for _ in range(50):
        step = lambda v: loss(v, data, target)         # noqa: E731
        w = w - 0.01 * adsim.grad(step)(w)
        recorded.append(adsim.grad(step).tapes.recordings)
    assert sum(recorded) <= 1
    assert_close(adsim.grad(lambda v: loss(v, data, target))(w), data.T @ (data @ w - target),
                 1e-12, 1e-12)
    target = target + 1.0       # another environment: recorded, and right
    assert_close(adsim.grad(lambda v: loss(v, data, target))(w), data.T @ (data @ w - target),
                 1e-12, 1e-12)
    data[0, 0] += 3.0           # changed in place: the snapshot sees it
    assert_close(adsim.grad(lambda v: loss(v, data, target))(w), data.T @ (data @ w - target),
                 1e-12, 1e-12)


def test_tapes_kept_by_code_are_small_and_hold_no_function():
    big = np.random.default_rng(4).standard_normal((400, 400))     # 1.3 MB in the tape
    for _ in range(2):
        fn = lambda v: np.sum(big @ v)              # noqa: E731
        adsim.grad(fn)(np.ones(400))
    assert adsim.grad(fn).tapes.recordings == 1    # too large to be kept by its code
    small = lambda v: np.sum(v ** 2)                # noqa: E731
    adsim.grad(small)(X)
    held = weakref.ref(small)
    del small
    gc.collect()
    assert held() is None
    again = lambda v: np.sum(v ** 2)                # noqa: E731
    assert_close(adsim.grad(again)(X), 2.0 * X, 1e-15, 0)
