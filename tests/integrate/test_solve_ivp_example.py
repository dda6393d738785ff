"""examples/ode/lotka_volterra_solve_ivp.py runs and checks itself (quick variant)."""


def test_lotka_volterra_fit_with_solve_ivp(load_example, capsys):
    example = load_example("ode/lotka_volterra_solve_ivp")
    out = example.main(["--quick"])
    assert out["sens_error"] < 1e-6 and out["fd_error"] < 1e-8
    assert out["success"] and out["parameter_error"] < 0.1
    assert out["recordings"] == 1          # one tape serves every step count the fit meets
    assert "forward sensitivities" in capsys.readouterr().out
