"""np.hypot at the origin has the norm's zero subgradient in every mode.

hypot(a, b) = sqrt(a^2 + b^2) = norm([a, b]); its partials a / y and b / y
are 0 / 0 there. adsim takes them as 0, as the zero-times-infinity rule
gives the norm and sqrt(a * a + b * b) (docs/tape.md, "Zero times
infinity"), and the second partials as the norm's: infinite on the
diagonal, 0 across. Each case is checked against the same function written
with np.linalg.norm, in every mode: gradient, forward and reverse, several
directions at once, Hessian-vector products, a tape recorded elsewhere and
replayed at the origin, and a derivative taken inside a recording (its
rules written out as recorded ops). Away from the origin the rule is
hypot's own (the function table, tests/functable_cases.py).
"""
import numpy as np
import pytest

import adsim

# (hypot form, norm form, a point with a zero pair)
CASES = {
    "a pair at the origin": (lambda x: np.hypot(x[0], x[1]) + x[2],
                             lambda x: np.linalg.norm(x[:2]) + x[2], [0.0, 0.0, 1.0]),
    "elementwise with 0": (lambda x: np.sum(np.hypot(x, 0.0) * [1.0, 2.0, 3.0]),
                           lambda x: np.sum(np.sqrt(x * x) * [1.0, 2.0, 3.0]), [0.0, 1.0, -2.0]),
    "0 first": (lambda x: np.sum(np.hypot(0.0, x) * [1.0, 2.0, 3.0]),
                lambda x: np.sum(np.sqrt(x * x) * [1.0, 2.0, 3.0]), [0.0, 1.0, -2.0]),
    "of a vector's pairs, one at the origin": (
        lambda x: np.sum(np.hypot(x[:2], x[1:]) * [1.0, -1.5]),
        lambda x: np.sum(np.linalg.norm(np.stack([x[:2], x[1:]]), axis=0) * [1.0, -1.5]),
        [0.0, 0.0, 2.0]),
}
ELSEWHERE = np.array([0.7, -1.2, 0.4])
V = np.array([1.0, -2.0, 0.5])
DIRECTIONS = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.3, -0.4, 2.0]]).T     # (3, k)


def derivatives(f, x):
    """Every mode's derivatives of ``f`` at ``x``, by name."""
    tape = adsim.record(f, x)
    g = adsim.grad(f)
    return {
        "grad": g(x),
        "tape gradient": tape.gradient(x),
        "jvp": adsim.jvp(f, (x,), (V,))[1],
        "tape jvp": tape.jvp(x, V)[1],
        "jvps": tape.jvp(x, DIRECTIONS)[1],
        "forward Jacobian": adsim.jacobian(f, mode="forward")(x),
        "hvp": adsim.hvp(f, x, V),
        "tape hvps": tape.hvp(x, DIRECTIONS),
        # the gradient taken inside a recording, then differentiated: its
        # rules are written out as recorded ops (adsim/_nesting/transcribe.py)
        "gradient inside a recording": adsim.jvp(g, (x,), (np.zeros(3),))[0],
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_hypot_has_the_norms_derivatives_at_the_origin(name):
    with_hypot, with_norm, point = CASES[name]
    x = np.array(point)
    got, want = derivatives(with_hypot, x), derivatives(with_norm, x)
    for mode in want:
        np.testing.assert_allclose(got[mode], want[mode], rtol=1e-13, atol=0.0,
                                   err_msg=f"{name}: {mode}")
    assert np.all(np.isfinite(got["grad"])), got["grad"]
    # hypot's tape recorded away from the origin, replayed there (the norm
    # forms record a branch at 0 and are recorded again)
    moved = adsim.record(with_hypot, ELSEWHERE)
    np.testing.assert_allclose(moved.gradient(x), want["grad"], rtol=1e-13, atol=0.0)
    np.testing.assert_allclose(moved.hvp(x, DIRECTIONS), want["tape hvps"], rtol=1e-13, atol=0.0)
