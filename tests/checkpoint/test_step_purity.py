"""A checkpointed loop records its step once and replays it: a step that
draws random numbers, or whose result depends on state it changes itself,
is refused with a clear error instead of replaying stale draws or times.
Steps that only count their calls stay fine."""
import numpy as np
import pytest

import adsim as ad


def test_random_draws_in_a_step_are_refused():
    def step(s, c):
        return s - 0.01 * c[0] * s + 0.1 * np.random.standard_normal(s.shape)

    def f(c):
        return np.sum(ad.checkpoint_loop(step, np.ones(3), 5, args=(c,)))
    with pytest.raises(ad.UnsupportedOperation, match="draws random numbers"):
        ad.grad(f)(np.array([0.5]))

    rng = np.random.default_rng(0)

    def step_with_generator(s, c):
        return s * c[0] + rng.standard_normal(s.shape)
    with pytest.raises(ad.UnsupportedOperation, match="draws random numbers"):
        ad.grad(lambda c: np.sum(ad.checkpoint_loop(step_with_generator, np.ones(2), 3,
                                                    args=(c,))))(np.array([0.5]))


@pytest.mark.parametrize("draw", [
    lambda rng, p: p[0] + p[1] * rng.standard_normal(3),
    lambda rng, p: rng.normal(p[0], p[1], 3),           # adsim/_np/draws.py
], ids=["standard draws", "draws of the parameters"])
def test_draws_from_a_generator_beside_active_values_in_the_closure_are_refused(draw):
    """The step closes over the parameters (active values, which the walk of
    its environment cannot see past) and a generator: two recordings of the
    step at the same point differ, so it is refused rather than replaying
    the first draws at every step."""
    def f(p):
        rng = np.random.default_rng(0)

        def step(x):
            return x + 0.1 * draw(rng, p)
        return np.sum(ad.checkpoint_loop(step, np.zeros(3), n_steps=5) ** 2)
    with pytest.raises(ad.UnsupportedOperation, match="draws random numbers"):
        ad.grad(f)(np.array([0.2, 0.5]))


def test_a_step_closing_over_active_values_is_still_recorded_once():
    def f(p):
        def step(x):
            return x * p[0] + p[1]
        return np.sum(ad.checkpoint_loop(step, np.ones(2), n_steps=4))

    def plain(p):
        x = np.ones(2)
        for _ in range(4):
            x = x * p[0] + p[1]
        return np.sum(x)
    p = np.array([0.9, 0.2])
    g = ad.grad(f)(p)
    want = [(plain(p + e * 1e-6) - plain(p - e * 1e-6)) / 2e-6 for e in np.eye(2)]
    np.testing.assert_allclose(g, want, rtol=1e-6)


def test_a_time_counter_in_a_closure_is_refused():
    clock = [0.0]

    def step(s, c):
        clock[0] += 0.1
        return s * c[0] + clock[0]
    with pytest.raises(ad.UnsupportedOperation, match="changes its own environment"):
        ad.grad(lambda c: np.sum(ad.checkpoint_loop(step, np.ones(3), 5, args=(c,))))(
            np.array([0.5]))


def test_counting_calls_is_harmless():
    calls = []

    def step(s, c):
        calls.append(1)
        return s * c[0] + 0.1

    def plain(c):
        s = np.ones(3)
        for _ in range(5):
            s = s * c[0] + 0.1
        return np.sum(s)
    c = np.array([0.5])
    value, g = ad.value_and_grad(lambda c: np.sum(ad.checkpoint_loop(step, np.ones(3), 5,
                                                                     args=(c,))))(c)
    assert np.isclose(value, plain(c))
    h = 1e-6
    assert np.isclose(g[0], (plain(c + h) - plain(c - h)) / (2 * h), rtol=1e-6)


def test_noise_drawn_before_the_loop_works():
    noise = np.random.default_rng(1).standard_normal((5, 3))

    def step(state, c, noise):
        s, k = state[:3], state[3]
        return np.concatenate([s - 0.01 * c[0] * s + 0.1 * noise[int(k)], [k + 1.0]])

    def f(c):
        return np.sum(ad.checkpoint_loop(step, np.array([1.0, 1.0, 1.0, 0.0]), 5,
                                         args=(c, noise))[:3])

    def plain(c):
        s = np.ones(3)
        for k in range(5):
            s = s - 0.01 * c[0] * s + 0.1 * noise[k]
        return np.sum(s)
    c = np.array([0.5])
    value, g = ad.value_and_grad(f)(c)
    assert np.isclose(value, plain(c))
    h = 1e-6
    assert np.isclose(g[0], (plain(c + h) - plain(c - h)) / (2 * h), rtol=1e-6)


def test_containers_of_active_values_in_args_reach_the_step():
    def f(th):
        step = lambda s, p, dt: s - dt * p["k"] * s            # noqa: E731
        return np.sum(ad.checkpoint_loop(step, np.ones(2), 3, args=({"k": np.exp(th)}, 0.1)))
    k = np.exp(0.2)
    # sum of 2 (1 - 0.1 k)^3, differentiated in th (dk/dth = k)
    assert ad.grad(f)(np.array([0.2]))[0] == pytest.approx(2 * 3 * (1 - 0.1 * k) ** 2 * -0.1 * k)


def test_a_solver_whose_right_hand_side_draws_random_numbers_is_refused_by_what_it_is():
    """odeint and LSODA run as checkpointed loops: a right-hand side drawing
    from a generator beside active parameters (a silent wrong value before:
    its first draws replayed) or from np.random is refused, naming the
    solver and the user's function."""
    from scipy.integrate import odeint, solve_ivp

    def with_generator(p):
        rng = np.random.default_rng(0)
        return odeint(lambda y, t: -p[0] * y + 0.05 * rng.standard_normal(1), [1.0],
                      [0.0, 1.0], rtol=1e-8, atol=1e-8)[-1, 0]

    def with_global_state(p):
        np.random.seed(0)
        return solve_ivp(lambda t, y: -p[0] * y + 0.05 * np.random.standard_normal(1),
                         (0.0, 1.0), [1.0], method="LSODA", rtol=1e-8, atol=1e-8).y[0, -1]

    for f in (with_generator, with_global_state):
        with pytest.raises(ad.UnsupportedOperation,
                           match=r"a solver adsim runs as a checkpointed loop.*draws random"):
            ad.grad(f)(np.array([0.7]))
