"""The ODE examples (examples/ode/*.py) run as tests, on small problems.

Each example checks itself (its ``main`` asserts); these tests run the quick
variants and check the measured numbers once more.
"""

import numpy as np
import pytest

import adsim


def test_lotka_volterra_fit(load_example, tmp_path, capsys):
    example = load_example("ode/lotka_volterra_fit")
    figure = tmp_path / "fit.png"
    out = example.main(["--quick", "--figure", str(figure)])
    assert figure.stat().st_size > 10_000
    assert out["fd_error"] < 1e-7
    assert out["success"] and out["rate_error"] < 0.05 and out["start_error"] < 0.05
    assert out["forward_steps"] == adsim.Revolve(10, out["snapshots"]).forward_steps
    assert "L-BFGS-B" in capsys.readouterr().out


def test_dopri5_adjoint(load_example, capsys):
    example = load_example("ode/dopri5_adjoint")
    out = example.main(["--quick"])
    assert out["rejected"] > 0 and out["accepted"] > 10
    assert out["fd_error"] < 1e-8
    assert out["sens_error"] < 200 * out["rtol"]
    assert out["loss_ad"] == pytest.approx(out["loss"], rel=1e-14)
    assert out["steps"] == out["accepted"] + out["rejected"]
    assert "discrete adjoint" in capsys.readouterr().out


def test_dopri5_adjoint_tracks_the_tolerance(load_example):
    """Tighter tolerance: the adjoint moves towards the continuous sensitivities."""
    example = load_example("ode/dopri5_adjoint")
    loose = example.run(quick=True, rtol=1e-5, verbose=False)
    tight = example.run(quick=True, rtol=1e-8, verbose=False)
    assert tight["sens_error"] < loose["sens_error"] / 30
    assert tight["fd_error"] < 1e-7


def test_stiff_implicit_with_nested_and_analytic_jacobians(load_example, capsys):
    example = load_example("ode/stiff_implicit")
    nested = example.main(["--quick"])
    analytic = example.main(["--quick", "--analytic-jacobian"])
    assert np.all(nested["fd_errors"] < 1e-5)
    assert nested["newton_residual"] < 1e-12
    np.testing.assert_allclose(nested["gradient"], analytic["gradient"], rtol=1e-12, atol=0)
    assert "adsim.jacobian (nested)" in capsys.readouterr().out


def test_burgers_adjoint_small_grid(load_example):
    example = load_example("ode/burgers_adjoint")
    out = example.run(n_steps=300, points=64, memory_limit="60kB", check=True, verbose=False)
    assert out["fd_error"] < 1e-7
    assert 1 < out["snapshots"] < 300
    assert out["forward_steps"] == out["revolve_optimum"]
    assert out["taped_steps"] == 300
    assert out["g_kappa"].shape == (64,) and out["g_u0"].shape == (64,)
