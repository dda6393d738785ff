"""Fixtures of the core tests."""
import pytest


@pytest.fixture(scope="module")
def kernel_cache(tmp_path_factory):
    """Compiled kernels go to a directory of the test module, not the user's
    cache (modules that fuse tapes use it: pytestmark)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ADSIM_KERNEL_CACHE", str(tmp_path_factory.mktemp("kernels")))
    yield
    mp.undo()
