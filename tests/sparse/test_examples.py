"""The sparse-derivative examples run on small sizes and pass their own checks."""
from pathlib import Path

import pytest


def test_brusselator_bdf(load_example, capsys):
    example = load_example("sparse/brusselator_bdf")
    rows = example.run(grid=12, dense_grid=6, t_end=1.3)
    names = [row[2] for row in rows]
    assert names == ["adsim", "fd+sparsity", "fd dense", "adsim", "fd+sparsity"]
    assert rows[-1][1] == 2 * 12 * 12
    out = capsys.readouterr().out
    assert "checks passed" in out and "| grid |" in out


def test_bratu_newton(load_example, capsys):
    example = load_example("sparse/bratu_newton")
    rows, timings = example.run(grid=12, lambdas=(3.0, 6.0))
    assert [row[0] for row in rows] == [3.0, 6.0]
    assert all(row[2][-1] < 1e-9 for row in rows)
    assert set(timings) == {"residual replay", "adsim Jacobian", "fd + grouping"}
    assert "checks passed" in capsys.readouterr().out


def test_least_squares_fit(load_example, capsys):
    example = load_example("sparse/least_squares_fit")
    rows = example.run(points=300)
    assert [row[0] for row in rows] == ["adsim jac", "fd jac_sparsity"]
    assert rows[0][5] == pytest.approx(rows[1][5], rel=1e-6)
    assert "checks passed" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["brusselator_bdf", "bratu_newton", "least_squares_fit"])
def test_examples_have_a_quick_command_line(load_example, name):
    example = load_example("sparse/" + name)
    assert callable(example.main)
    assert "--quick" in Path(example.__file__).read_text()
