"""Op by op, the values a derivative rule claims not to read are poisoned:
the tape reuses the slots of dead intermediates, and overwrites of a slot
some reverse rule reads are saved on the value stack. If an op's list of the
values its rules read (VALUE_USES in adsim/_ops/facts.pxi) left one out, its slot
would be overwritten by the poison below and a derivative would change."""
import numpy as np
import pytest

import adsim as ad
from adsim import _program, _tape, ops
from adsim._decoder import decode, refs

# NumPy expressions of the unary ops recorded with a scalar parameter
_WITH_PARAM = {
    "ADD_C": lambda t, c: t + c, "MUL_C": lambda t, c: t * c, "RSUB_C": lambda t, c: c - t,
    "RDIV_C": lambda t, c: c / t, "POW_C": lambda t, c: t ** c, "RPOW_C": lambda t, c: c ** t,
}
_UNARY = [s for s in ops.TABLE if s.family == "unary" and s.name != "STOP_GRADIENT"]
_BINARY = [s for s in ops.TABLE if s.family == "binary" and s.numpy]


def _unary_fn(spec):
    if spec.numpy:
        return spec.numpy[0]
    return lambda t: _WITH_PARAM[spec.name](t, spec.param)


def _poisoned(op, n_args, poison):
    """f(x) = sum(op(copies of x's parts) * w), with every intermediate slot
    overwritten after its last use when ``poison``."""
    def f(x):
        parts = [x[k] * 1.0 for k in range(n_args)]        # fresh slots, dead after op
        y = op(*parts)
        del parts
        s = y * 1.0
        del y
        if poison:                                          # reuse the dead slots
            junk = [x[0] * 0.0 - 7.5 for _ in range(n_args + 1)]
            s = s + 0.0 * sum(np.sum(j) for j in junk)
        return np.sum(s * np.array([1.0, -2.0, 0.5]))
    return f


def _reused_slots(tape, n_args):
    """Do the poison ops write into the slots of the op's operands and result?"""
    codes, decoded = decode(tape)
    k_op = next(k for k, c in enumerate(codes) if k >= n_args and c != codes[0])
    wanted = {decoded[k_op].result} | {ref for _, ref in refs(decoded[k_op])}
    written = {o.result for o in decoded[k_op + 2:]}
    return wanted <= written


def _point(spec, n_args, seed):
    lo, hi = spec.domain
    return np.random.default_rng(seed).uniform(lo, hi, (n_args, 3))


@pytest.mark.parametrize("spec", _UNARY + _BINARY, ids=lambda s: s.name)
def test_derivatives_survive_poisoned_dead_slots(spec):
    n_args = 1 if spec.family == "unary" else 2
    op = _unary_fn(spec) if n_args == 1 else spec.numpy[0]
    x = _point(spec, n_args, 1)
    v = np.random.default_rng(2).standard_normal(x.shape)
    clean, dirty = _poisoned(op, n_args, False), _poisoned(op, n_args, True)
    previous = _program.set_optimise(False)    # the optimisation would merge the poison ops
    try:
        tape = ad.record(dirty, x)
    finally:
        _program.set_optimise(previous)
    assert _reused_slots(tape, n_args), "the poison did not reach the dead slots"
    for tape in (tape, ad.record(dirty, x)):
        np.testing.assert_allclose(tape.forward(x), clean(x), rtol=1e-14)
        x2 = x * 1.05          # a replay at a new point on the same branches (abs, maximum)
        np.testing.assert_allclose(tape.gradient(x2), ad.grad(clean)(x2), rtol=1e-13,
                                   atol=1e-14)
        np.testing.assert_allclose(tape.hvp(x2, v), ad.hvp(clean, x2, v), rtol=1e-12,
                                   atol=1e-13)
        np.testing.assert_allclose(tape.jvp(x2, v)[1], ad.jvp(clean, x2, v)[1], rtol=1e-13,
                                   atol=1e-14)
