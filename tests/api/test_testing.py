"""adsim.testing.check_grads: it passes on correct derivatives and fails,
naming the check, on deliberately wrong rules (testing the tester)."""
import numpy as np
import pytest

import adsim
from adsim.testing import check_grads

X = np.array([0.3, -0.7, 1.1, 0.4])


def _sine(jvp_scale=1.0, vjp_scale=1.0, vjp_uses_value=False):
    """sin as a primitive whose rules can be made wrong on purpose."""
    def jvp(args, out, tangents):
        return jvp_scale * np.cos(args[0]) * tangents[0]

    def vjp(args, out, w):
        x = adsim.value(args[0]) if vjp_uses_value else args[0]
        return (vjp_scale * np.cos(x) * w,)
    return adsim.primitive(np.sin, jvp=jvp, vjp=vjp, name="sine")


GOOD = [
    ("sin", np.sin),
    ("rosenbrock", lambda x: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)),
    ("matrix", lambda x: np.outer(x, x) @ np.tanh(x)),
    ("cumsum-exp", lambda x: np.exp(np.cumsum(x)) / np.sum(x ** 2)),
    ("primitive", lambda x: _sine()(x ** 2) * x),
]


@pytest.mark.parametrize("f", [f for _, f in GOOD], ids=[n for n, _ in GOOD])
def test_passes_on_correct_functions(f):
    assert check_grads(f, X, modes=("fwd", "rev"), order=2) is True
    assert check_grads(f, X.reshape(2, 2) if f is np.sin else X, modes=("fwd",), seed=3) is True


def test_complex_step_mode():
    f = lambda x: np.exp(np.sin(x) * x[::-1]) / (1.0 + x ** 2)  # noqa: E731
    assert check_grads(f, X, modes=("fwd", "rev", "cs")) is True
    assert check_grads(f, X, modes=("cs",)) is True


def test_fails_on_a_wrong_forward_rule():
    with pytest.raises(AssertionError, match="forward mode J v vs central differences"):
        check_grads(_sine(jvp_scale=1.001), X, modes=("fwd",))


def test_fails_on_a_wrong_reverse_rule():
    with pytest.raises(AssertionError, match="reverse mode"):
        check_grads(_sine(vjp_scale=1.001), X, modes=("rev",))


def test_dot_product_test_catches_inconsistent_modes():
    """Both rules off by 1e-7 relative: within the difference tolerance, but
    forward and reverse no longer agree to rounding."""
    f = _sine(jvp_scale=1.0 + 2e-7, vjp_scale=1.0 - 2e-7)
    with pytest.raises(AssertionError, match="dot-product test"):
        check_grads(f, X, modes=("fwd", "rev"))


def test_complex_step_catches_a_small_error():
    f = _sine(jvp_scale=1.0 + 1e-8)
    assert check_grads(f, X, modes=("fwd",)) is True          # below the difference tolerance
    with pytest.raises(AssertionError, match="complex step"):
        check_grads(f, X, modes=("cs",))


def test_fails_on_a_wrong_second_order_rule():
    """A vjp rule that freezes its argument gives right gradients but wrong
    Hessian-vector products."""
    f = _sine(vjp_uses_value=True)
    assert check_grads(f, X, modes=("fwd", "rev"), order=1) is True
    with pytest.raises(AssertionError, match="Hessian-vector product"):
        check_grads(lambda x: f(x) * 1.0, X, order=2)


def test_fails_on_a_wrong_value():
    """A primitive whose replayed value differs from the function's."""
    shifted = adsim.primitive(lambda x: np.sin(x) + 1e-6, jvp=lambda a, o, t: np.cos(a[0]) * t[0],
                              vjp=lambda a, o, w: (np.cos(a[0]) * w,))

    def f(x):
        return shifted(x) if isinstance(x, adsim.Active) else np.sin(x)
    with pytest.raises(AssertionError, match="value"):
        check_grads(f, X)


def test_tolerances_are_respected():
    f = _sine(jvp_scale=1.0 + 1e-4)
    with pytest.raises(AssertionError):
        check_grads(f, X, modes=("fwd",))
    assert check_grads(f, X, modes=("fwd",), rtol=1e-3) is True


def test_reverse_mode_alone_needs_no_forward_rule():
    right = adsim.primitive(lambda x: x ** 3, vjp=lambda a, out, g: (3 * a[0] ** 2 * g,))
    wrong = adsim.primitive(lambda x: x ** 3, vjp=lambda a, out, g: (2 * a[0] ** 2 * g,))
    x = np.array([1.0, 2.0])
    assert check_grads(lambda x: np.sum(right(x)), x, modes=("rev",))
    with pytest.raises(AssertionError, match="reverse mode"):
        check_grads(lambda x: np.sum(wrong(x)), x, modes=("rev",))
