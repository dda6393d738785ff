"""Ties of max and min: one rule in every mode. At a tie the whole
derivative goes to the element the value is taken from, as for every
recorded branch: the first maximal (minimal) element of a reduction, which
is NumPy's argmax (argmin), and the first argument of maximum, minimum,
fmax and fmin (docs/numpy.md). The property test draws inputs full of ties
and checks forward and reverse Jacobians, Hessian-vector products, replays
of a tape recorded elsewhere and the sparsity pattern against that rule."""
import numpy as np
from hypothesis import given, settings, strategies as st

import adsim


def _reduction(pick):
    """Selector of a whole-array reduction: the flat index NumPy's argmax/argmin gives."""
    return lambda x: [pick(x)]


def _pairs(first_wins):
    """Selector of an elementwise extremum of x[:3] and x[3:]: x[j] where it
    wins or ties (the first argument), else x[3 + j]."""
    return lambda x: [j if first_wins(x[j], x[3 + j]) else 3 + j for j in range(3)]


FUNCTIONS = {       # name: (f of x of length 6, the flat index of x each output is taken from)
    "max": (np.max, _reduction(np.argmax)),
    "min": (np.min, _reduction(np.argmin)),
    "amax": (np.amax, _reduction(np.argmax)),
    "amin": (np.amin, _reduction(np.argmin)),
    "method max": (lambda x: x.max(), _reduction(np.argmax)),
    "nanmax": (np.nanmax, _reduction(np.argmax)),
    "maximum.reduce": (lambda x: np.maximum.reduce(x), _reduction(np.argmax)),
    "max axis 0": (lambda x: np.max(x.reshape(2, 3), axis=0),
                   lambda x: [3 * int(np.argmax(x.reshape(2, 3)[:, j])) + j for j in range(3)]),
    "amin axis 1 keepdims": (lambda x: np.amin(x.reshape(2, 3), axis=1, keepdims=True),
                             lambda x: [3 * i + int(np.argmin(x.reshape(2, 3)[i]))
                                        for i in range(2)]),
    "min axis -1 of 3-d": (lambda x: np.min(x.reshape(3, 1, 2), axis=-1),
                           lambda x: [2 * i + int(np.argmin(x[2 * i:2 * i + 2]))
                                      for i in range(3)]),
    "maximum": (lambda x: np.maximum(x[:3], x[3:]), _pairs(lambda a, b: a >= b)),
    "minimum": (lambda x: np.minimum(x[:3], x[3:]), _pairs(lambda a, b: a <= b)),
    "fmax": (lambda x: np.fmax(x[:3], x[3:]), _pairs(lambda a, b: a >= b)),
    "fmin": (lambda x: np.fmin(x[:3], x[3:]), _pairs(lambda a, b: a <= b)),
}


def _expected_jacobian(name, x):
    f, select = FUNCTIONS[name]
    picked = select(x)
    J = np.zeros((len(picked), x.size))
    J[np.arange(len(picked)), picked] = 1.0
    return J


_TIED = st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=6, max_size=6).map(np.array)


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(FUNCTIONS)), x=_TIED, elsewhere=_TIED)
def test_every_mode_follows_the_tie_rule(name, x, elsewhere):
    f = FUNCTIONS[name][0]
    J = _expected_jacobian(name, x)
    m = J.shape[0]
    for mode in ("forward", "reverse"):
        got = adsim.jacobian(f, mode=mode)(x)
        np.testing.assert_array_equal(np.reshape(got, (m, x.size)), J, err_msg=mode)
    v = np.arange(1.0, 7.0)
    np.testing.assert_array_equal(np.ravel(adsim.jvp(f, (x,), (v,))[1]), J @ v)

    def half_square(z):                 # its Hessian is J^T J away from kinks and at ties
        return 0.5 * np.sum(f(z) ** 2)
    np.testing.assert_array_equal(adsim.hvp(half_square, x, v), J.T @ (J @ v))

    tape = adsim.record(f, elsewhere)   # a tape recorded elsewhere: the same rule, or
    try:                                # a replay that says it left the recorded path
        replayed = [tape.jacobian(x, mode=mode) for mode in ("forward", "reverse")]
    except adsim.BranchChanged:
        replayed = []
    for got in replayed:
        np.testing.assert_array_equal(np.reshape(got, (m, x.size)), J)

    pattern = adsim.jacobian_sparsity(f, x).toarray()
    assert not np.any((J != 0) & ~pattern), "the sparsity pattern misses a derivative"


def test_a_tie_in_a_loss_splits_nothing():
    """A hinge loss max(0, 1 - margin) at margin 1 exactly: the derivative of
    the side the value comes from (0, the first argument), in every mode."""
    def hinge(w):
        margin = w * np.array([1.0, 0.5, 2.0])
        return np.sum(np.maximum(0.0, 1.0 - margin))
    w = np.array([1.0, 1.0, 0.5])          # margins 1, 0.5, 1: two ties
    np.testing.assert_array_equal(adsim.grad(hinge)(w), [0.0, -0.5, 0.0])
    np.testing.assert_array_equal(adsim.jvp(hinge, (w,), (np.ones(3),))[1], -0.5)


def test_maximum_of_two_profiles_is_one_op_that_follows_the_side_at_replay():
    """A clipped-flux program takes np.maximum of two same-shape profiles
    (the fast recording path): one MAXIMUM op and no COMPARE, its result
    laid out as NumPy's (ravel(order="K") of Fortran-ordered operands); a replay where the sides change follows them
    (the first argument at a tie) in the gradient, the jvp and the hvp."""
    from adsim._opcodes import Opcode as Op

    def flux(z):
        upwind = np.sin(z) * z
        limiter = np.cos(z)
        return np.sum(np.maximum(upwind, limiter) ** 2 + np.minimum(upwind, 0.5 * limiter))

    x = np.linspace(0.1, 1.2, 6)
    tape = adsim.record(flux, x)
    codes = [int(c) for c in tape.op_codes()]
    assert codes.count(int(Op.MAXIMUM)) == 1 and codes.count(int(Op.MINIMUM)) == 1
    assert int(Op.COMPARE) not in codes

    def want(z):
        u, v = np.sin(z) * z, np.cos(z)
        du, dv = np.cos(z) * z + np.sin(z), -np.sin(z)
        big = np.where(u >= v, u, v)
        return 2 * big * np.where(u >= v, du, dv) + np.where(u <= 0.5 * v, du, 0.5 * dv)

    for z in (x, x[::-1].copy(), np.full(6, 0.8603335890193797)):   # sides swapped; a tie
        assert np.allclose(tape.gradient(z), want(z), rtol=1e-12, atol=1e-12)
        v = np.linspace(-1.0, 1.0, 6)
        assert np.isclose(tape.jvp(z, v)[1], want(z) @ v, rtol=1e-12, atol=1e-12)
        h = 1e-6
        hv = (tape.gradient(z + h * v) - tape.gradient(z - h * v)) / (2 * h)
        if not np.allclose(z, z[0]):          # no kink inside the differences' reach
            assert np.allclose(tape.hvp(z, v), hv, rtol=1e-5, atol=1e-7)

    def raveled(z):                  # Fortran-ordered operands: a Fortran-ordered result
        wide = np.maximum(np.asfortranarray(z), np.asfortranarray(np.sin(z) + 0.2))
        return wide.ravel(order="K") @ np.arange(6.0)
    square = np.linspace(0.1, 1.2, 6).reshape(3, 2)
    assert np.isclose(adsim.record(raveled, square).forward(square), raveled(square))
