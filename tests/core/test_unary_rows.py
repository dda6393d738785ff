"""The value, slope and curvature expressions of the unary rows in
adsim/ops.py: right by differences, read only declared values, and equal to
what every compiled sweep computes (values, tangents, second order) and to
the higher-order transcription, so the row is the one statement of each
op's calculus."""
import numpy as np
import pytest

import adsim as ad
from adsim import ops
from adsim._nesting.transcribe import _UNARY_SLOPES
from opcases import UNARY_CASES

ROWS = [s for s in ops.TABLE if isinstance(s.rule, ops.UnaryRule)]


def _point(spec, n=9, seed=3):
    lo, hi = spec.domain
    return np.random.default_rng(seed).uniform(lo, hi, n)


def _case(spec):
    if spec.name == "STOP_GRADIENT":
        return ad.stop_gradient
    return UNARY_CASES[spec.name][0][1]


def _param(spec):
    return spec.param if spec.param is not None else 0.0


def test_every_unary_row_but_the_hand_written_ones_has_expressions():
    hand_written = {s.name for s in ops.TABLE if s.family == "unary" and s.rule is None}
    assert hand_written == {"ABS", "SIGN", "POW_C", "RPOW_C"}


@pytest.mark.parametrize("spec", ROWS, ids=lambda s: s.name)
def test_expressions_read_only_declared_values(spec):
    declared = {"y" if r == "result" else r for r in spec.reads}
    if spec.constant_slope:
        assert spec.rule.names() <= {"c"}, spec.name
    else:
        assert spec.rule.names() - {"c"} <= declared, spec.name


@pytest.mark.parametrize("spec", ROWS, ids=lambda s: s.name)
def test_expressions_agree_with_differences(spec):
    x, c = _point(spec), _param(spec)
    value, slope, curvature = (ops.numpy_rule(e) for e in
                               (spec.rule.value, spec.rule.slope, spec.rule.curvature))
    h = 1e-6
    f = lambda z: value(z, None, c)                              # noqa: E731
    d1 = lambda z: slope(z, f(z), c) + 0 * z                     # noqa: E731
    if spec.hessian != ops.ZERO:
        np.testing.assert_allclose(d1(x), (f(x + h) - f(x - h)) / (2 * h), rtol=1e-6, atol=1e-8)
    d2 = curvature(x, f(x), c) + 0 * x
    np.testing.assert_allclose(d2, (d1(x + h) - d1(x - h)) / (2 * h), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("spec", ROWS, ids=lambda s: s.name)
def test_compiled_sweeps_compute_the_row(spec):
    x, c = _point(spec), _param(spec)
    f = _case(spec)
    y = ops.numpy_rule(spec.rule.value)(x, None, c)
    slope = ops.numpy_rule(spec.rule.slope)(x, y, c) + 0 * x
    curvature = ops.numpy_rule(spec.rule.curvature)(x, y, c) + 0 * x
    tape = ad.record(f, x)
    assert spec.code in tape.op_codes()
    value, tangent = tape.jvp(x, np.ones_like(x))
    np.testing.assert_allclose(value, y, rtol=1e-15, atol=0)
    np.testing.assert_allclose(tangent, slope, rtol=1e-14, atol=1e-300)
    summed = ad.record(lambda z: np.sum(f(z)), x)
    np.testing.assert_allclose(summed.gradient(x), slope, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(summed.hvp(x, np.ones_like(x)), curvature, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("spec", [s for s in ROWS if s.code in _UNARY_SLOPES],
                         ids=lambda s: s.name)
def test_transcription_uses_the_row(spec):
    x, c = _point(spec), _param(spec)
    y = ops.numpy_rule(spec.rule.value)(x, None, c)
    got, _ = _UNARY_SLOPES[spec.code](x, y, c)
    np.testing.assert_array_equal(got + 0 * x, ops.numpy_rule(spec.rule.slope)(x, y, c) + 0 * x)
