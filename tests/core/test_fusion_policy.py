"""When adsim fuses a tape on its own (adsim/_fuse/policy.py,
``adsim.set_fusion``): once its replays have done the work compiling costs,
per kind of replay, for plain tapes and for the step tapes of checkpointed
loops; never for tapes of small arrays; and always with the interpreter's
results to rounding, whatever happens while compiling."""
import warnings

import numpy as np
import pytest

import adsim as ad
import adsim.checkpoint.driver as driver
from adsim._fuse import codegen, policy

N = 3000
RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def fusion_settings(tmp_path_factory, monkeypatch):
    """Kernels go to a directory of the test session; each test starts in
    the default mode and leaves it so."""
    monkeypatch.setenv("ADSIM_KERNEL_CACHE", str(tmp_path_factory.getbasetemp() / "kernels"))
    previous = ad.set_fusion("auto")
    yield
    ad.set_fusion(previous)


def residual(u):
    """A reaction-diffusion-like residual: one run of elementwise ops."""
    lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
    r = 0.1 * lap + np.exp(-u[1:-1]) - np.tanh(u[1:-1])
    return np.sum(r * r)


def close(a, b, rtol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * np.max(np.abs(b)))


def work_of(tape):
    return tape._fusion_work()


def test_set_fusion_checks_its_mode_and_returns_the_previous():
    assert ad.set_fusion("never") == "auto"
    assert ad.set_fusion("always") == "never"
    with pytest.raises(ValueError, match="one of"):
        ad.set_fusion("sometimes")
    assert ad.set_fusion("auto") == "always"


def test_auto_fuses_once_the_replays_did_the_work_of_compiling(monkeypatch):
    x = RNG.uniform(-1.0, 1.0, N)
    tape, plain = ad.record(residual, x), ad.record(residual, x)
    plain.chunked = False                       # the interpreter, op by op
    monkeypatch.setattr(policy, "AUTO_WORK", 5 * work_of(tape))
    points = [x + 0.01 * i for i in range(8)]
    for i, p in enumerate(points):
        g = tape.gradient(p)
        fused = getattr(tape, "_fusion", None) is not None
        assert fused == (i >= 4), i             # the 5th replay fuses before it sweeps
        if fused:
            close(g, plain.gradient(p))
        else:
            assert np.array_equal(g, plain.gradient(p))
    assert set(tape._fusion.kinds) == {"values", "reverse", "gradient"}
    # another kind of replay counts on its own
    v = RNG.standard_normal(N)
    for p in points[:6]:
        close(tape.hvp(p, v), plain.hvp(p, v), rtol=1e-10)
    assert {"tangents", "reverse2", "second_order"} <= set(tape._fusion.kinds)


def test_never_and_always(monkeypatch):
    x = RNG.uniform(-1.0, 1.0, N)
    monkeypatch.setattr(policy, "AUTO_WORK", 1.0)
    ad.set_fusion("never")
    tape = ad.record(residual, x)
    for _ in range(5):
        tape.forward(x)
    assert getattr(tape, "_fusion", None) is None
    ad.set_fusion("always")
    tape.forward(x)                             # the mode applies from now on
    assert tape._fusion.kinds == ("values", "sum")
    other = ad.record(residual, x)
    other.jvp(x, np.ones(N))
    assert other._fusion.kinds == ("tangents",)


def test_small_tapes_never_ask_the_policy(monkeypatch):
    def refuse(tape, layout):
        raise AssertionError("the policy was asked about a tape of small arrays")
    monkeypatch.setattr(policy, "consider", refuse)
    ad.set_fusion("always")
    tape = ad.record(residual, RNG.uniform(-1.0, 1.0, 200))
    for _ in range(3):
        tape.gradient(RNG.uniform(-1.0, 1.0, 200))


def test_a_failing_compilation_warns_and_keeps_the_interpreter(monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("a defect")
    monkeypatch.setattr(codegen, "run_source", broken)
    ad.set_fusion("always")
    x = RNG.uniform(-1.0, 1.0, N)
    tape, plain = ad.record(residual, x), ad.record(residual, x)
    plain.chunked = False
    with pytest.warns(RuntimeWarning, match="stays with the interpreter"):
        g = tape.gradient(x)
    assert np.array_equal(g, plain.gradient(x))
    assert np.array_equal(tape.gradient(x), g)      # asked once per kind of replay


def test_without_a_compiler_auto_stays_quiet(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/adsim-test-cc")
    ad.set_fusion("always")
    x = RNG.uniform(-1.0, 1.0, N)
    tape, plain = ad.record(residual, x), ad.record(residual, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(tape.gradient(x), plain.gradient(x))


# -- checkpointed loops: their step tapes replay many times per call --------

def burgers_step(u, kappa, dt, dx):
    """One explicit Euler step of viscous Burgers on a periodic grid."""
    up, um = np.roll(u, -1), np.roll(u, 1)
    flux = -(up * up - um * um) / (4.0 * dx)
    diffusion = kappa * (up - 2.0 * u + um) / (dx * dx)
    return u + dt * (flux + diffusion)


def burgers_loss(kappa, u0, steps=60):
    dx = 1.0 / u0.size
    u = ad.checkpoint_loop(burgers_step, u0, steps, args=(kappa, 0.2 * dx * dx / 2e-3, dx),
                           snapshots=4)
    return 0.5 * np.sum(u * u) * dx


@pytest.mark.parametrize("mode", ["always", "auto"])
def test_a_loop_fuses_its_step_tape_before_the_sweep(mode, monkeypatch):
    n = 400
    s = np.arange(n) / n
    u0 = np.sin(2 * np.pi * s) + 0.5
    kappa = 2e-3 * (1.0 + 0.5 * np.cos(2 * np.pi * s))
    ad.set_fusion("never")
    g_plain = ad.grad(burgers_loss, argnums=(0, 1))(kappa, u0)
    h_plain = ad.hvp(lambda k: burgers_loss(k, u0), kappa, np.cos(s))
    ad.set_fusion(mode)
    monkeypatch.setattr(policy, "AUTO_WORK", 1.0)     # any loop pays
    seen = []
    expect = policy.expect

    def spy(tape, layout, replays):
        expect(tape, layout, replays)
        seen.append(getattr(tape, "_fusion", None) is not None)
    monkeypatch.setattr(driver, "expect", spy)
    g = ad.grad(burgers_loss, argnums=(0, 1))(kappa, u0)
    h = ad.hvp(lambda k: burgers_loss(k, u0), kappa, np.cos(s))
    assert seen and all(seen)
    for a, b in zip(g, g_plain):
        close(a, b, rtol=1e-11)
    close(h, h_plain, rtol=1e-10)
