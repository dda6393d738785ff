"""adsim/_np/ is layered as its __init__ docstring lists: each module imports,
at module level and nowhere else, only modules of lower layers."""
import ast
import pathlib
import re

import adsim._np

NP = pathlib.Path(adsim._np.__file__).parent


def _layers():
    layer = {}
    for line in adsim._np.__doc__.splitlines():
        m = re.match(r"(\d+)\. ([\w, ]+?) --", line)
        if m:
            for name in m.group(2).split(","):
                layer[name.strip()] = int(m.group(1))
    return layer


def _imports(tree):
    """(module-level, name of an _np module) for each import of one."""
    top = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
            for name in names:
                yield id(node) in top, name


def test_every_module_has_a_layer():
    modules = {p.stem for p in NP.glob("*.py")} - {"__init__"}
    assert modules == set(_layers())


def test_imports_go_down_at_module_level():
    layer = _layers()
    for name, n in layer.items():
        tree = ast.parse((NP / f"{name}.py").read_text(encoding="utf-8"))
        for at_top, imported in _imports(tree):
            assert at_top, f"{name} imports {imported} inside a function"
            assert layer[imported] < n, f"{name} (layer {n}) imports {imported} " \
                                        f"(layer {layer[imported]})"
