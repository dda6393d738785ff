"""The Helmholtz equilibrium example runs and passes its own checks."""

import numpy as np

import adsim as ad


def test_example_solves_and_checks_itself(load_example, capsys):
    example = load_example("helmholtz_equilibrium")
    r = example.main(["--n", "8", "--seed", "1"])
    A, b, E, e, x0 = example.make_mixture(8, 3, seed=1)
    np.testing.assert_allclose(E @ r["x"], e, rtol=1e-9, atol=0)
    assert r["f"] < r["f0"]
    assert max(r["gradient_error"]) < 1e-6
    assert "mass balance residual" in capsys.readouterr().out


def test_example_gradient_is_the_derivative_of_f(load_example):
    example = load_example("helmholtz_equilibrium")
    A, b, E, e, x0 = example.make_mixture(5, 2, seed=2)
    f = lambda x: example.helmholtz(x, A, b)
    g_err, hv_err = example.check_derivatives(ad.grad(f), ad.hessp(f), f, x0)
    assert g_err < 1e-6 and hv_err < 1e-5
