"""A loss recorded again (it sets its parameters on an object, or its step
count changed) starts its integrations from the step variants of the last
recording of the same setup (adsim/integrate/_step_reuse.py): far fewer
step recordings, and the very values and derivatives of a recording from
scratch. Whatever the steps hold as constants (a model attribute, a
closure, a global, the tolerances) changed, or a random generator or a
memory budget in the call: nothing is reused, and the results follow the
change."""
import numpy as np
import pytest
import scipy.integrate

import adsim
from adsim.checkpoint import steptape
from adsim.integrate import _step_reuse

P = np.log([0.04, 3e7, 1e4])
V = np.array([0.3, -0.2, 0.1])


@pytest.fixture(autouse=True)
def nothing_kept():
    adsim.integrate.clear_step_cache()
    yield
    adsim.integrate.clear_step_cache()


@pytest.fixture
def recordings(monkeypatch):
    """Counts the step and condition variants recorded."""
    count = [0]
    record = steptape.record

    def counted(*args, **kwargs):
        count[0] += 1
        return record(*args, **kwargs)
    monkeypatch.setattr(steptape, "record", counted)
    return count


class Kinetics:
    """Robertson's kinetics, the rates set on the object by the loss."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def rhs(self, t, y):
        k1, k2, k3 = self.k
        return self.scale * np.stack([-k1 * y[0] + k3 * y[1] * y[2],
                                      k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] ** 2,
                                      k2 * y[1] ** 2])


def fitted(model, method, t_eval=None, rtol=1e-6):
    def loss(p):
        model.k = np.exp(p)
        sol = scipy.integrate.solve_ivp(model.rhs, (0.0, 40.0), [1.0, 0.0, 0.0], method=method,
                                        t_eval=t_eval, rtol=rtol, atol=1e-10)
        return np.sum(sol.y[:, -1] * [1.0, 1e4, 2.0]) + np.sum(sol.y[1]) * 10.0
    return loss


def from_scratch(make_loss, p):
    """The results of a new loss from ``make_loss()``, recorded with nothing
    kept (the same loss would replay the tape the tape cache holds)."""
    adsim.integrate.clear_step_cache()
    loss = make_loss()
    return adsim.value_and_grad(loss)(p), adsim.hvp(loss, p, V)


def results(loss, p):
    return adsim.value_and_grad(loss)(p), adsim.hvp(loss, p, V)


def assert_same(a, b):
    (va, ga), ha = a
    (vb, gb), hb = b
    assert va == vb
    np.testing.assert_array_equal(ga, gb)
    np.testing.assert_array_equal(ha, hb)


@pytest.mark.parametrize("method, t_eval", [("Radau", None), ("Radau", [40.0]),
                                            ("BDF", None), ("RK45", [10.0, 40.0])])
def test_a_loss_setting_its_rates_on_an_object_reuses_the_steps(method, t_eval, recordings):
    model = Kinetics()

    def make_loss():
        return fitted(model, method, t_eval, rtol=1e-6 if method != "RK45" else 1e-3)
    loss = make_loss()
    g = adsim.grad(loss)
    g(P)
    first = recordings[0]
    q = P + 1e-4 * np.array([1.0, -1.0, 0.5])
    recordings[0] = 0
    got = results(loss, q)
    assert recordings[0] <= max(2, first // 4)
    assert_same(got, from_scratch(make_loss, q))


def test_clear_step_cache_drops_what_later_recordings_start_from(recordings):
    """After ``clear_step_cache`` a recording records its steps from
    scratch (as many as the first), with the same results."""
    model = Kinetics()
    loss = fitted(model, "Radau", [40.0])
    adsim.grad(loss)(P)
    first = recordings[0]
    q = P + 1e-4 * np.array([1.0, -1.0, 0.5])
    recordings[0] = 0
    reused = results(loss, q)
    assert recordings[0] <= max(2, first // 4)
    adsim.integrate.clear_step_cache()
    assert _step_reuse._kept == []
    recordings[0] = 0
    again = results(loss, q)
    assert recordings[0] >= first // 2
    assert_same(again, reused)


def test_changed_constants_are_not_reused(recordings):
    model = Kinetics()
    loss = fitted(model, "Radau")
    adsim.grad(loss)(P)
    model.scale = 1.5            # a constant of the steps
    recordings[0] = 0
    got = results(loss, P)
    assert recordings[0] > 2
    assert_same(got, from_scratch(lambda: fitted(model, "Radau"), P))
    # the rates scaled by 1.5 are the same model
    model.scale = 1.0
    (v, g), _ = results(fitted(Kinetics(1.0), "Radau"), P)
    assert not np.isclose(got[0][0], v)


def closed_over(width):
    def loss(p):
        def rhs(t, y):
            return -p * y * width[0]
        return np.sum(scipy.integrate.solve_ivp(rhs, (0.0, 2.0), [1.0, 2.0], method="Radau",
                                                rtol=1e-8).y)
    return loss


@pytest.mark.parametrize("change", [1.0, 1e-9])
def test_a_closure_read_by_fun_is_compared(change):
    """A small change keeps the recorded step sequence: steps reused would
    keep the old constant."""
    width = [1.0]
    loss = closed_over(width)
    p = np.array([0.7])
    adsim.grad(loss)(p)
    width[0] += change
    got = adsim.value_and_grad(loss)(p)
    adsim.integrate.clear_step_cache()
    want = adsim.value_and_grad(closed_over(width))(p)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])
    sol = scipy.integrate.solve_ivp(lambda t, y: -0.7 * width[0] * y, (0.0, 2.0), [1.0, 2.0],
                                    method="Radau", rtol=1e-8)
    assert got[0] == pytest.approx(np.sum(sol.y), rel=1e-7)


def test_other_tolerances_another_object_and_random_generators(recordings):
    adsim.grad(fitted(Kinetics(), "Radau"))(P)
    recordings[0] = 0
    got = results(fitted(Kinetics(), "Radau", rtol=1e-6 * (1 + 1e-9)), P)     # other settings
    assert recordings[0] > 2
    assert_same(got, from_scratch(lambda: fitted(Kinetics(), "Radau", rtol=1e-6 * (1 + 1e-9)), P))
    adsim.grad(fitted(Kinetics(), "Radau"))(P)
    recordings[0] = 0
    other = fitted(Kinetics(), "Radau")       # an equal object: reused, and the same results
    got = results(other, P)
    assert recordings[0] <= 2
    assert_same(got, from_scratch(lambda: fitted(Kinetics(), "Radau"), P))


def test_a_random_generator_or_a_memory_budget_keeps_nothing():
    rng = np.random.default_rng(0)

    def with_generator(t, y, k):
        assert rng is not None      # a generator in fun's environment: its state may change
        return -k * y

    def loss(k):
        return np.sum(scipy.integrate.solve_ivp(with_generator, (0.0, 1.0), np.ones(3),
                                                args=(k,), method="Radau").y)
    adsim.grad(loss)(0.5)
    assert _step_reuse._kept == []

    def budgeted(p):
        return np.sum(adsim.integrate.solve_ivp(lambda t, y: -p * y, (0.0, 1.0), np.ones(2),
                                                t_eval=[1.0], memory_limit=10 ** 7).y)
    adsim.grad(budgeted)(np.array([0.3]))
    assert _step_reuse._kept == []


def decay(t, y, rate, scale):
    return -rate * y * scale


def never(t, y, rate, scale):
    return 1.0


@pytest.mark.parametrize("options", [dict(), dict(t_eval=[0.5, 1.0]),
                                     dict(events=never), dict(dense_output=True)],
                         ids=["every step", "t_eval", "per interval", "dense"])
def test_loop_constants_differ_between_calls(options):
    """The end of the interval and a Python number among args are loop
    constants or inputs: calls that differ in them give their own results."""
    def make(t_end, scale):
        def loss(p):
            sol = scipy.integrate.solve_ivp(decay, (0.0, t_end), [1.0, 2.0], args=(p, scale),
                                            method="Radau", rtol=1e-8, **options)
            value = np.sum(sol.y[:, -1])
            return value + np.sum(sol.sol(0.4)) if options.get("dense_output") else value
        return loss
    p = np.array(0.7)
    adsim.grad(make(1.0, 1.0))(p)
    for t_end, scale in ((1.0, 1.5), (1.3, 1.0)):
        got = adsim.value_and_grad(make(t_end, scale))(p)
        adsim.integrate.clear_step_cache()
        want = adsim.value_and_grad(make(t_end, scale))(p)
        assert got[0] == want[0] and got[1] == want[1]
        last = options["t_eval"][-1] if "t_eval" in options else t_end
        exact = np.exp(-0.7 * scale * last) * 3.0
        assert got[0] == pytest.approx(exact + (np.exp(-0.7 * scale * 0.4) * 3.0
                                                if options.get("dense_output") else 0.0),
                                       rel=1e-6)
