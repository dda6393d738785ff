"""The Newton–Krylov examples run in quick mode and pass their own checks."""

import numpy as np

import adsim as ad


def test_rosenbrock_example_quick(load_example, tmp_path, capsys):
    example = load_example("newton_krylov")
    figure = tmp_path / "newton_krylov.png"
    runs = example.main(["--quick", "--plot", str(figure)])
    assert figure.stat().st_size > 0
    assert {(r["method"], r["n"]) for r in runs} == {
        (m, n) for m in example.METHODS for n in example.QUICK_SIZES}
    for r in runs:
        assert r["success"] and r["x_error"] < example.X_TOL
        assert (r["hessp_calls"] > 0) == (r["method"] != "L-BFGS-B")
        assert len(r["history"]) == r["iterations"]
    out = capsys.readouterr().out
    assert "trust-krylov" in out and "L-BFGS-B" in out


def test_rosenbrock_example_derivatives(load_example):
    example = load_example("newton_krylov")
    g_err, hv_err = example.check_derivatives(n=12, seed=3)
    assert g_err < 1e-8 and hv_err < 1e-7
    x = np.random.default_rng(4).uniform(-2.0, 2.0, 8)
    H = ad.hessian(example.rosenbrock)(x)
    odd = x[0::2]
    assert np.allclose(np.diag(H)[0::2], 1200 * odd ** 2 - 400 * x[1::2] + 2, rtol=1e-14)
    assert np.all(np.diag(H, 1)[1::2] == 0.0)        # independent pairs


def test_bratu_example_quick(load_example, capsys):
    example = load_example("bratu_newton_krylov")
    out = example.main(["--quick"])
    (k,) = example.QUICK_GRIDS
    results = out[k]
    assert set(results) == {"adsim jvp + GMRES", "differences + GMRES", "scipy newton_krylov"}
    for r in results.values():
        assert r["residual_max"] <= example.F_TOL
    exact = results["adsim jvp + GMRES"]
    assert exact["krylov"] <= results["differences + GMRES"]["krylov"]
    assert "newton_krylov" in capsys.readouterr().out


def test_bratu_preconditioner_inverts_the_laplacian(load_example):
    example = load_example("bratu_newton_krylov")
    k = 6
    u = np.random.default_rng(5).standard_normal(k * k)
    # the residual without the exp term is the 5-point Laplacian
    lap = example.bratu(u, lam=0.0)
    assert np.allclose(example.poisson_preconditioner(k) @ lap, u, rtol=1e-12, atol=1e-12)
