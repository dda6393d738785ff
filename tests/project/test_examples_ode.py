"""The ODE examples (examples/ode/*.py) and the figures of docs/integrate.md
run on small problems.

Each example checks itself (its ``main`` asserts); these tests run the quick
variants and check the measured numbers once more, tighter where the small
problem allows.
"""
import importlib.util

import numpy as np

import adsim
from paths import ROOT



def test_sensitivity_reference_on_exponential_decay(load_example):
    """y' = -k y: y = y0 exp(-k t), dy/dy0 = exp(-k t), dy/dk = -t y; with
    theta = (log y0, log k), explicit and implicit (with the Jacobian of the
    augmented system from adsim)."""
    reference = load_example("ode/sensitivity_reference")
    times = np.array([0.5, 1.0, 2.0])
    theta = np.log([3.0, 0.7])

    def decay(t, y, k):
        return -k * y
    y_exact = 3.0 * np.exp(-0.7 * times)
    S_exact = np.stack([y_exact, -0.7 * times * y_exact])
    for method in ("DOP853", "Radau"):
        y, S = reference.forward_sensitivities(decay, (0.0, 2.0),
                                               lambda th: (np.exp(th[:1]), np.exp(th[1:])),
                                               theta, times, method=method, rtol=1e-11,
                                               atol=1e-12)
        np.testing.assert_allclose(y[0], y_exact, rtol=1e-9)
        np.testing.assert_allclose(S[0], S_exact, rtol=1e-8)
    g = reference.chain(lambda y: np.sum(y ** 2), y, S)
    np.testing.assert_allclose(g, 2 * S_exact @ y_exact, rtol=1e-8)


def test_lotka_volterra_fit(load_example, tmp_path, capsys):
    example = load_example("ode/lotka_volterra_fit")
    figure = tmp_path / "fit.png"
    out = example.main(["--quick", "--figure", str(figure)])
    assert figure.stat().st_size > 10_000
    assert out["sens_error"] < 1e-7 and out["fd_error"] < 1e-6
    assert out["success"] and out["parameter_error"] < 0.1
    # one tape serves every step count the fit meets (none: the misfit's code
    # was recorded by an earlier test, whose tape it replays)
    assert out["recordings"] <= 1
    assert "forward sensitivities" in capsys.readouterr().out


def test_brusselator_adjoint(load_example):
    example = load_example("ode/brusselator_adjoint")
    out = example.main(["--quick"])
    assert [r["method"] for r in out["results"]] == ["RK45", "DOP853"]
    for r in out["results"]:
        assert r["fd_error"] < 1e-6 and r["sens_error"] < 1e-5
    for errors in out["sweep"].values():       # rtol 1e-5 -> 1e-8
        assert errors[1] < errors[0] / 100


def test_van_der_pol_stiff(load_example):
    example = load_example("ode/van_der_pol_stiff")
    out = example.main(["--quick"])
    assert [r["method"] for r in out["results"]] == ["Radau", "BDF"]
    for r in out["results"]:
        assert np.all(r["errors"][:2] < 2e-5)        # step sizes followed
        assert np.all(r["held_errors"] < 1e-4)       # held: before the jump, v0 too
        assert r["counts"] == r["scipy_counts"] and r["output_error"] < 1e-8


def test_robertson_fit(load_example):
    """Gradients of both methods checked; the fit with Radau, whose tape is
    recorded once (a BDF fit records again when the order of the step at an
    output time changes, which makes it slower)."""
    example = load_example("ode/robertson_fit")
    out = example.main(["--quick", "--method", "Radau"])
    assert out["gradient_errors"]["BDF"] < 1e-5 and out["gradient_errors"]["Radau"] < 1e-5
    assert out["success"] and out["rate_error"] < 0.05 and out["recordings"] <= 1
    assert 0.5 < out["rms"] < 1.5


def test_burgers_method_of_lines(load_example):
    example = load_example("ode/burgers_method_of_lines")
    out = example.main(["--quick"])
    assert out["budget_difference"] == 0.0      # the schedule changes the work, not the numbers
    assert out["fd_error"] < 1e-5
    assert out["g_kappa"].shape == (64,) and out["g_u0"].shape == (64,)


def test_burgers_adjoint_small_grid(load_example):
    example = load_example("ode/burgers_adjoint")
    out = example.run(n_steps=300, points=64, memory_limit="120kB", check=True, verbose=False)
    assert out["fd_error"] < 1e-7
    assert 1 < out["snapshots"] < 300
    assert out["forward_steps"] == out["revolve_optimum"]
    assert out["taped_steps"] == 300
    assert out["g_kappa"].shape == (64,) and out["g_u0"].shape == (64,)


def test_integrate_figures(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "make_integrate_figures", ROOT / "docs" / "figures" / "make_integrate_figures.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = script.main(["--quick", "--out", str(tmp_path)])
    for name in ("integrate_gradient_error", "integrate_checkpoint_cost", "lotka_volterra_fit"):
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000
    for errors in out["errors"].values():       # rtol 1e-4, 1e-8
        assert errors[-1] < errors[0] / 100
    rows = out["rows"]
    assert [r["snapshots"] for r in rows] == [4, 16, 64]
    assert rows[0]["factor"] > rows[-1]["factor"] >= 1     # fewer snapshots, more replays
    # rtol 1e-6; differences of the solver also differentiate its step-size
    # control, which the adjoint holds fixed: they agree to about rtol
    assert all(r["peak"] > 0 for r in rows) and out["fd_error"] < 3e-5
    assert adsim.Online(4).forward_steps_for(rows[0]["steps"]) == \
        round(rows[0]["factor"] * rows[0]["steps"])
