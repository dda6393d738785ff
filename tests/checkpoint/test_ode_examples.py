"""The ODE examples (examples/ode/*.py) run as tests, on small problems.

Each example checks itself (its ``main`` asserts); these tests run the quick
variants and check the measured numbers once more.
"""
import importlib.util
import pathlib

import numpy as np
import pytest

import adsim

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "ode"


def load(name):
    """Import examples/ode/<name>.py as a module."""
    spec = importlib.util.spec_from_file_location(f"ode_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lotka_volterra_fit(tmp_path, capsys):
    example = load("lotka_volterra_fit")
    figure = tmp_path / "fit.png"
    out = example.main(["--quick", "--figure", str(figure)])
    assert figure.stat().st_size > 10_000
    assert out["fd_error"] < 1e-7
    assert out["success"] and out["rate_error"] < 0.05 and out["start_error"] < 0.05
    assert out["forward_steps"] == adsim.Revolve(10, out["snapshots"]).forward_steps
    assert "L-BFGS-B" in capsys.readouterr().out


def test_dopri5_adjoint(capsys):
    example = load("dopri5_adjoint")
    out = example.main(["--quick"])
    assert out["rejected"] > 0 and out["accepted"] > 10
    assert out["fd_error"] < 1e-8
    assert out["sens_error"] < 200 * out["rtol"]
    assert out["loss_ad"] == pytest.approx(out["loss"], rel=1e-14)
    assert out["steps"] == out["accepted"] + out["rejected"]
    assert "discrete adjoint" in capsys.readouterr().out


def test_dopri5_adjoint_tracks_the_tolerance():
    """Tighter tolerance: the adjoint moves towards the continuous sensitivities."""
    example = load("dopri5_adjoint")
    loose = example.run(quick=True, rtol=1e-5, verbose=False)
    tight = example.run(quick=True, rtol=1e-8, verbose=False)
    assert tight["sens_error"] < loose["sens_error"] / 30
    assert tight["fd_error"] < 1e-7


def test_stiff_implicit_with_nested_and_analytic_jacobians(capsys):
    example = load("stiff_implicit")
    nested = example.main(["--quick"])
    analytic = example.main(["--quick", "--analytic-jacobian"])
    assert np.all(nested["fd_errors"] < 1e-5)
    assert nested["newton_residual"] < 1e-12
    np.testing.assert_allclose(nested["gradient"], analytic["gradient"], rtol=1e-12, atol=0)
    assert "adsim.jacobian (nested)" in capsys.readouterr().out


def test_burgers_adjoint_small_grid():
    example = load("burgers_adjoint")
    out = example.run(n_steps=300, points=64, memory_limit="40kB", check=True, verbose=False)
    assert out["fd_error"] < 1e-7
    assert 1 < out["snapshots"] < 300
    assert out["forward_steps"] == out["revolve_optimum"]
    assert out["taped_steps"] == 300
    assert out["g_kappa"].shape == (64,) and out["g_u0"].shape == (64,)
