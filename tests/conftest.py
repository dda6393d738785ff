"""Fixtures shared by the test directories."""
import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load_example(name):
    """Import examples/<name>.py (``name`` may name a subdirectory, as in
    "ode/dopri5_adjoint") as a module of its own."""
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location("example_" + name.replace("/", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def load_example():
    """``load_example("ode/dopri5_adjoint")``: an example script as a module."""
    return _load_example
