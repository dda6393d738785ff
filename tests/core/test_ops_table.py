"""The op table (adsim/ops.py) against the compiled opcode enum and the
test specs: every opcode has one row, in its family's range, and a test
spec (tests/opcases.py) that the table-driven tests run."""
import numpy as np

import adsim
from adsim import ops
from adsim._opcodes import OPCODE_NAMES, Opcode
from opcases import BINARY, PROGRAMS, TESTED, UNARY, UNARY_CASES, sample

FAMILY_END = {"unary": Opcode.UNARY_END, "binary": Opcode.BINARY_END, "branch": Opcode.BRANCH_END,
              "structural": Opcode.STRUCTURAL_END, "linalg": Opcode.LINALG_END,
              "callback": Opcode.CALLBACK_END}
OPCODES = [op.name for op in Opcode if not op.name.endswith("_END")]


def test_compiled_declarations_are_generated_from_the_table():
    for path, text in ops.generated_files().items():
        assert path.read_text() == text, f"{path} is stale: run `python -m adsim.ops`"


def test_the_compiled_enum_has_the_table_numbers():
    for spec in ops.TABLE:
        assert int(Opcode[spec.name]) == spec.code, spec.name
    for family, end in ops.FAMILY_END.items():
        assert int(Opcode[family.upper() + "_END"]) == end


def test_every_opcode_has_a_table_row_and_a_test_spec():
    assert [n for n in OPCODES if n not in ops.BY_NAME] == [], "opcodes without a row in adsim/ops.py"
    assert [n for n in OPCODES if n not in TESTED] == [], "opcodes without a spec in tests/opcases.py"
    assert [n for n in OPCODES if n in UNARY_CASES and not UNARY_CASES[n]] == []
    assert sorted(OPCODE_NAMES.values()) == sorted(OPCODES)


def test_every_table_row_has_an_opcode_in_its_family_range():
    assert len(ops.BY_NAME) == len(ops.TABLE) == len(OPCODES)
    ends = sorted(FAMILY_END.values())
    for spec in ops.TABLE:
        code = Opcode[spec.name]
        end = FAMILY_END[spec.family]
        start = max([e for e in ends if e < end], default=0)
        assert start < code < end, spec.name
        assert spec.code == int(code)
        assert ops.BY_CODE[int(code)] is spec
        assert spec.hessian in (ops.ZERO, ops.LINEAR, ops.BILINEAR, ops.NONLINEAR)
        lo, hi = spec.domain
        assert lo < hi
        if spec.name.endswith("_C"):
            assert spec.param is not None, spec.name


def test_ufunc_tables_follow_the_rows():
    for f, code in ops.UNARY_UFUNCS.items():
        assert f in ops.BY_CODE[code].numpy and ops.BY_CODE[code].family == "unary"
    for f, code in ops.BINARY_UFUNCS.items():
        assert f in ops.BY_CODE[code].numpy and ops.BY_CODE[code].family == "binary"
    assert np.absolute not in ops.UNARY_UFUNCS        # recorded with its branch record


def test_numpy_callables_record_their_opcode():
    """Every NumPy callable listed in a unary/binary row records that row's op."""
    rng = np.random.default_rng(22)
    for spec in UNARY + BINARY:
        for f in spec.numpy:
            xs = sample(rng, spec, [(3,)] * (1 if spec.family == "unary" else 2))
            tape = adsim.record(f, *xs)
            assert spec.code in tape.op_codes(), (spec.name, f.__name__)


def test_programs_record_their_opcode():
    rng = np.random.default_rng(23)
    for name, (f, shape, (lo, hi)) in PROGRAMS.items():
        tape = adsim.record(f, rng.uniform(lo, hi, size=shape))
        assert Opcode[name] in tape.op_codes(), name


def test_hessian_class_matches_second_derivatives():
    """LINEAR and ZERO unary ops have H v = 0 everywhere; NONLINEAR ones do not."""
    rng = np.random.default_rng(21)
    for name, cases in UNARY_CASES.items():
        spec = ops.BY_NAME[name]
        (x,) = sample(rng, spec, [(4,)])
        for label, f in cases:
            hv = adsim.hvp(lambda z: np.sum(f(z)), x, np.ones(4))
            if spec.hessian in (ops.LINEAR, ops.ZERO):
                assert np.all(hv == 0.0), (name, label)
            elif label not in ("x**1", "x**0"):      # POW_C with exponent 0 or 1 is linear
                assert np.any(hv != 0.0), (name, label)
