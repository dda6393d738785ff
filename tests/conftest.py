"""Fixtures shared by the test directories."""
import importlib.util
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load_example(name):
    """Import examples/<name>.py (``name`` may name a subdirectory, as in
    "ode/robertson_fit") as a module of its own. Its directory is on
    ``sys.path`` while it loads, as for a script run by Python, so that it
    can import the modules beside it."""
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location("example_" + name.replace("/", "_"), path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


@pytest.fixture
def load_example():
    """``load_example("ode/robertson_fit")``: an example script as a module."""
    return _load_example


@pytest.fixture(scope="module")
def kernel_cache(tmp_path_factory):
    """Compiled kernels go to a directory of the test module, not the user's
    cache (modules that fuse tapes use it: pytestmark)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ADSIM_KERNEL_CACHE", str(tmp_path_factory.mktemp("kernels")))
    yield
    mp.undo()


# The longest tests (each a minute or more of one worker, most of it child
# processes) run first: started last, one of them would keep its worker busy
# after the other has finished everything else (with -n auto the suite's
# wall time is its busier worker's).
LONGEST_FIRST = ("tests/project/test_benchmarks_smoke.py",
                 "tests/checkpoint/test_budget_bound.py",
                 "tests/core/test_fused_runs.py::test_random_programs",
                 "tests/integrate/test_solve_ivp_memory.py::test_stated_minimum",
                 "tests/project/test_docs.py",
                 "tests/project/test_examples_ode.py")


def pytest_collection_modifyitems(items):
    def rank(item):
        return next((k for k, prefix in enumerate(LONGEST_FIRST)
                     if item.nodeid.startswith(prefix)), len(LONGEST_FIRST))
    items.sort(key=rank)          # stable: the rest keep their order
