"""The Python code blocks of the README and the docs run (each page in one namespace)."""
import linecache
import re

import pytest
from paths import ROOT

FENCE = re.compile(r"```python\n(.*?)```", re.S)
DOCS = [page for page in [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
        if FENCE.search(page.read_text())]


@pytest.mark.parametrize("page", DOCS, ids=[p.name for p in DOCS])
def test_code_blocks_run(page, tmp_path, monkeypatch):
    blocks = FENCE.findall(page.read_text())
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"docs_{page.stem}"}
    for k, block in enumerate(blocks):
        name = f"<{page.name} block {k}>"      # its source is found, as in a notebook
        linecache.cache[name] = (len(block), None, block.splitlines(True), name)
        exec(compile(block, name, "exec"), namespace)


def test_every_dispatched_function_is_documented():
    import numpy as np
    from adsim import _numpy_api, ops
    page = (ROOT / "docs" / "numpy.md").read_text()
    ufuncs = (set(ops.UNARY_UFUNCS) | set(_numpy_api._BINARY_UFUNCS) | set(_numpy_api._COMPARE_UFUNCS)
              | set(_numpy_api._COMPOSED_UFUNCS))
    names = {f.__name__ for f in _numpy_api.FUNCTIONS} | {u.__name__ for u in ufuncs}
    missing = sorted(n for n in names if not re.search(rf"\b{n}\b", page))
    assert not missing, f"docs/numpy.md does not name {missing}"
