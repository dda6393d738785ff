"""docs/adding-an-op.md lists every place an op touches: each file it names
exists, and it names every file the rule tables and the generator point to
(a new transformation or generated file must be added to the page)."""
import re

from adsim import ops
from adsim._rules import REGISTRIES
import adsim._nesting.transcribe  # noqa: F401  (makes its tables)
import adsim.sparse.pattern  # noqa: F401
from paths import ROOT

PAGE = (ROOT / "docs" / "adding-an-op.md").read_text()


def test_every_named_file_exists():
    named = set(re.findall(r"`((?:adsim|tests)/[\w/.]+\.(?:py|pyx|pxd|pxi))`", PAGE))
    assert named, "the page names no files"
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"docs/adding-an-op.md names files that do not exist: {missing}"


def test_every_rule_table_and_generated_file_is_named():
    for table in REGISTRIES:
        path = table.where.split()[0]
        assert f"`{path}`" in PAGE, f"{table.transformation}: {path} is not on the page"
    for path in ops.generated_files():
        rel = path.relative_to(ROOT).as_posix()
        assert f"`{rel}`" in PAGE, f"generated {rel} is not on the page"


def test_every_operand_role_is_explained():
    for role in (ops.VALUE, ops.INDEX, ops.MASK, ops.INTS, ops.BRANCHES, ops.PARAM,
                 ops.CALLBACK, ops.COUNT):
        assert f"`{role}`" in PAGE, role
