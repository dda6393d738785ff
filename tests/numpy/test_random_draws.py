"""Draws of numpy.random with active distribution parameters
(adsim/_np/draws.py): the value is NumPy's bit for bit, the derivative is
the pathwise one (the random numbers held fixed), a replay reuses the same
random numbers, and the distributions that are not a location-scale
transform of a parameter-free draw are refused by name."""
import numpy as np
import pytest
from numpy.random import laplace        # a module that imports NumPy's name

import adsim
from fdcheck import assert_close, central

# method: (parameters (active), extra plain keyword arguments)
GENERATOR_CASES = {
    "normal": ((0.3, 1.7), {}),
    "uniform": ((-0.5, 2.0), {}),
    "exponential": ((1.3,), {}),
    "gumbel": ((0.2, 0.8), {}),
    "laplace": ((-0.1, 1.2), {}),
    "logistic": ((0.4, 0.6), {}),
    "rayleigh": ((2.1,), {}),
    "gamma": ((1.5,), {"shape": 2.5}),
}


def _call(owner, name, params, extra, size):
    if name == "gamma":
        return owner.gamma(extra["shape"], params[0], size)
    return getattr(owner, name)(*params, size)


def _drawing(make, name, extra, size=7):
    def f(x):
        return _call(make(), name, list(x), extra, size)
    return f


MAKERS = {"Generator": lambda: np.random.default_rng(11),
          "RandomState": lambda: np.random.RandomState(11)}


@pytest.mark.parametrize("kind", sorted(MAKERS))
@pytest.mark.parametrize("name", sorted(GENERATOR_CASES))
def test_value_is_numpys_bit_for_bit_and_derivative_pathwise(kind, name):
    params, extra = GENERATOR_CASES[name]
    f = _drawing(MAKERS[kind], name, extra)
    x = np.array(params)
    tape = adsim.record(f, x)
    assert np.array_equal(tape.forward(x), f(x))            # NumPy's own draw, no recording
    J = adsim.jacobian(f)(x)
    want = np.stack([central(f, [x], [e], 1e-3) for e in np.eye(x.size)], axis=1)
    assert_close(J, want, rtol=1e-9, atol=1e-12, what=f"{kind}.{name}")
    x2 = x * 1.1 + 0.05
    assert np.array_equal(tape.forward(x2), f(x2))          # the same random numbers
    assert_close(tape.jacobian(x2), J, rtol=1e-12, atol=1e-15, what="replayed jacobian")


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_array_and_listed_parameters_broadcast_as_numpy_does(kind):
    def f(x):
        rng = MAKERS[kind]()
        a = rng.normal(x[:3], x[3])                      # size from the parameters
        b = rng.uniform([x[0], x[1]], x[4], size=(4, 2))
        c = rng.exponential(scale=x[3] * np.ones((2, 1)), size=(2, 3))
        return np.concatenate([a, b.ravel(), c.ravel()])
    x = np.array([0.1, -0.2, 0.3, 0.9, 1.4])
    assert np.array_equal(adsim.record(f, x).forward(x), f(x))
    J = adsim.jacobian(f)(x)
    want = np.stack([central(f, [x], [e], 1e-3) for e in np.eye(x.size)], axis=1)
    assert_close(J, want, rtol=1e-9, atol=1e-12)


def test_multivariate_normal_with_an_active_mean():
    cov = np.array([[1.0, 0.3], [0.3, 0.5]])

    def f(mu):
        return np.random.default_rng(3).multivariate_normal(mu, cov, size=5).sum(axis=0) ** 2

    mu = np.array([0.4, -1.0])
    assert np.array_equal(adsim.record(f, mu).forward(mu), f(mu))
    want = np.stack([central(f, [mu], [e], 1e-3) for e in np.eye(2)], axis=1)
    assert_close(adsim.jacobian(f)(mu), want, rtol=1e-9, atol=1e-12)


def test_the_legacy_global_functions_after_seed():
    def f(p):
        np.random.seed(5)
        x = np.random.normal(p[0], p[1], 6)
        y = laplace(p[0], p[1], 4)                 # `from numpy.random import laplace`
        return np.sum(x ** 2) + np.sum(np.sin(y))

    p = np.array([0.3, 0.7])
    assert adsim.record(f, p).forward(p) == f(p)
    g = adsim.grad(f)(p)
    assert_close(g, np.array([central(f, [p], [e], 1e-3) for e in np.eye(2)]), rtol=1e-9,
                 atol=1e-12)
    v = np.array([0.2, -0.5])
    want = central(adsim.grad(f), [p], [v], 1e-3)
    assert_close(adsim.hvp(f, p, v), want, rtol=1e-7, atol=1e-10, what="hvp")
    _, jv = adsim.jvp(f, (p,), (v,))
    assert_close(jv, g @ v, rtol=1e-12, atol=1e-14, what="jvp")


def test_a_replay_at_a_negative_scale_raises_where_numpy_does():
    def f(p):
        return np.sum(np.random.default_rng(0).normal(p[0], p[1], 3))

    tape = adsim.record(f, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="scale < 0"):
        f(np.array([0.0, -1.0]))
    with pytest.raises(adsim.BranchChanged):
        tape.forward(np.array([0.0, -1.0]))


@pytest.mark.parametrize("call, words", [
    (lambda rng, p: rng.lognormal(p, 1.0, 3), ["Generator.lognormal", "np.exp(mean + sigma"]),
    (lambda rng, p: rng.gamma(p, 1.0, 3), ["Generator.gamma", "active shape"]),
])
def test_draws_without_a_pathwise_rule_are_refused_by_name(call, words):
    def f(p):
        return np.sum(call(np.random.default_rng(0), p))

    with pytest.raises(adsim.ActiveValueLeak) as caught:
        adsim.grad(f)(1.5)
    for word in words:
        assert word in str(caught.value)


def test_other_compiled_draws_name_the_call():
    def f(lam):
        rng = np.random.default_rng(0)
        counts = rng.poisson(lam, 3)
        return np.sum(counts)

    with pytest.raises(adsim.ActiveValueLeak, match="Generator.poisson"):
        adsim.grad(f)(1.5)


def test_interposition_off_keeps_the_refusal_with_the_transform_to_write():
    def f(p):
        rng = np.random.default_rng(0)
        x = rng.normal(p, 1.0, 3)
        return np.sum(x)

    with adsim.interposition(False):
        with pytest.raises(adsim.ActiveValueLeak, match=r"loc \+ scale \* rng.standard_normal"):
            adsim.grad(f)(0.5)


def test_numpys_methods_are_back_after_the_recording():
    before = dict(vars(np.random.Generator)), dict(vars(np.random.RandomState))
    normal = np.random.normal
    adsim.grad(lambda p: np.sum(np.random.default_rng(0).normal(p, 1.0, 3)))(0.5)
    assert dict(vars(np.random.Generator)) == before[0]
    assert dict(vars(np.random.RandomState)) == before[1]
    assert np.random.normal is normal
    rng = np.random.default_rng(4)
    assert np.array_equal(rng.normal(0.0, 1.0, 3), np.random.default_rng(4).standard_normal(3))


def test_a_draw_reached_without_its_name_is_recorded():
    """A recording whose code spells no draw method's name runs with NumPy's
    own methods (adsim/_record/interpose.py, ``_DRAW_NAMES``); a draw made
    through a name built at run time still takes adsim's rule (f: a draw
    with plain parameters; g: an active one)."""
    import operator
    draw = operator.methodcaller("nor" + "mal", 0.0, 1.0, 3)

    def f(p):
        return np.sum(p * draw(np.random.default_rng(5)))

    def g(p):
        rng = np.random.default_rng(5)
        return np.sum(operator.methodcaller("nor" + "mal", p, 1.0, 3)(rng))

    z = np.random.default_rng(5).standard_normal(3)
    assert_close(adsim.grad(f)(0.5), np.sum(z))
    assert_close(adsim.grad(g)(0.5), 3.0)
    assert_close(adsim.grad(g)(-0.5), 3.0)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_choice_with_active_probabilities_and_population(kind):
    """Resampling: the indices are piecewise constant in p (derivative zero
    where it exists), the population gathered at them; NumPy's draws."""
    def f(x):
        rng = MAKERS[kind]()
        w = np.exp(x[:4])
        picked = rng.choice(x[4:], size=6, p=w / np.sum(w))
        return np.sum(picked ** 2 * w[0])

    x = np.array([0.1, -0.3, 0.5, 0.2, 1.0, 2.0, 3.0, 4.0])
    tape = adsim.record(f, x)
    assert tape.forward(x) == f(x)
    g = adsim.grad(f)(x)
    want = np.array([central(f, [x], [e * 1e-7], 1.0) / 1e-7 for e in np.eye(x.size)])
    assert_close(g, want, rtol=1e-6, atol=1e-9)
    with pytest.raises(adsim.BranchChanged):          # other probabilities
        tape.forward(x + np.r_[0.01, np.zeros(7)])
    assert tape.forward(x + np.r_[np.zeros(4), 0.1, 0, 0, 0]) == \
        f(x + np.r_[np.zeros(4), 0.1, 0, 0, 0])       # the same indices, a new population


def test_choice_with_interposition_off_says_what_to_write():
    def f(x):
        rng = np.random.default_rng(0)
        w = np.exp(x)
        idx = rng.choice(3, size=4, p=w / np.sum(w))
        return np.sum(x[idx])

    with adsim.interposition(False):
        with pytest.raises(adsim.ActiveValueLeak, match=r"adsim.value\(p\)"):
            adsim.grad(f)(np.array([0.1, 0.2, 0.3]))
    g = adsim.grad(f)(np.array([0.1, 0.2, 0.3]))        # with it on: recorded
    assert g.shape == (3,)
