"""Every transformation written in Python has a rule (or an explicit None)
for every op of the table, and the decoder has a layout for every op: a new
row in adsim/ops.py without its rules fails here, naming the op."""
import numpy as np
import pytest

import adsim
from adsim import ops
from adsim._decoder import LAYOUTS, decode, decode_op, refs
from adsim._rules import REGISTRIES, RuleTable
from adsim._opcodes import Opcode
import adsim._nesting.transcribe  # noqa: F401  (makes its tables)
import adsim.sparse.pattern  # noqa: F401


@pytest.mark.parametrize("table", REGISTRIES, ids=lambda t: t.transformation)
def test_every_op_has_a_rule_or_an_explicit_none(table):
    assert table.missing == [], f"ops without a {table.transformation} rule"


def test_the_transformations_are_all_registered():
    names = {t.transformation for t in REGISTRIES}
    assert {"Jacobian sparsity", "Hessian liveness", "Hessian interactions",
            "transcription (forward)", "transcription (adjoint)"} <= names


def test_a_missing_rule_is_an_error_naming_the_op():
    table = RuleTable("test transformation", "nowhere", [("COPY", "copy")])
    REGISTRIES.remove(table)
    assert "SELECT" in table.missing
    with pytest.raises(NotImplementedError, match="test transformation rule for op SELECT"):
        table.rule(int(Opcode.SELECT))
    with pytest.raises(ValueError, match="not an op"):
        RuleTable("test", "nowhere", [("NO_SUCH_OP", None)])


def test_linear_ops_add_no_hessian_interactions_and_nonlinear_ones_do():
    """The interaction table agrees with each row's Hessian class, so a
    nonlinear op can never be skipped by the Hessian sparsity sweep."""
    table = adsim.sparse.pattern.INTERACTION_RULES
    for spec in ops.TABLE:
        has_rule = table.rule(spec.code) is not None
        assert has_rule == (spec.hessian in (ops.NONLINEAR, ops.BILINEAR)), spec.name


def test_ops_with_a_derivative_pass_liveness_to_their_value_operands():
    """Liveness (Hessian sparsity) has a rule for every op whose result has
    a derivative in some operand: None there would drop interactions."""
    table = adsim.sparse.pattern.LIVENESS_RULES
    for spec in ops.TABLE:
        if spec.has_derivative:
            assert table.rule(spec.code) is not None, spec.name


def test_every_opcode_has_a_layout_naming_its_operands():
    for op in Opcode:
        if op.name.endswith("_END"):
            continue
        layout = LAYOUTS[int(op)]
        assert layout._fields[0] == "result"
        assert layout.spec.name == op.name
        assert len(set(layout._fields)) == len(layout._fields), op.name
        for name in layout.spec.reads:
            if name != "result":
                layout.spec.position(name)          # a read names an operand


def test_decoded_programs_name_the_operands_of_every_op():
    def f(x, i):
        y = np.sin(x) * x[::-1]
        z = y[np.argmax(y)] + np.where(x > 0, x, 2 * x).sum()
        return z + np.sum(x[i.astype(int)] ** 2) + x @ y

    tape = adsim.record(f, np.linspace(-1, 1, 5), np.array([0.0, 3.0]))
    codes, decoded = decode(tape)
    assert len(codes) == len(decoded) == len(tape)
    for k, (code, o) in enumerate(zip(codes, decoded)):
        assert o.spec.code == code
        assert list(o) == tape.op_operands(k)        # positions as the flat operands
        for name, ref in refs(o):
            assert tape.slot_size_of(ref) >= 1, (k, name)     # a slot or constant of the tape
    assert {"GATHER", "GATHER_AT", "SELECT", "ARGEXT_AT", "MATMUL", "COMPARE"} <= \
        {o.spec.name for o in decoded}
    with pytest.raises(ValueError, match="MATMUL op with 3 operands"):
        decode_op(int(Opcode.MATMUL), [0, 1, 2])
