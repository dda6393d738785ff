"""Text of active values: a format spec (``f"{loss:.4f}"``, ``str.format``,
``%``-formatting, ``format()``) shows the recorded value exactly as NumPy's
float64 would, display only, as ``str()`` does: the text says nothing to
replays (no guard, nothing printed again) and derivatives are unchanged."""
import re

import numpy as np
import pytest
import scipy.integrate

import adsim

X = np.array([0.3, -1.2, 2.5])
V = np.array([1.0, 0.5, -2.0])

# display specs: every float presentation type, with width, sign, grouping
SPECS = (".4f", ".3e", ".3E", "F", "g", ".12G", ".1%", "n", "+.2f", "12.5f", "<14.3e",
         ",.2f", "_.3f", " .2g", "#.0f", "010.3f", ".17g", ".4", "12", "+")


def loss_of(p):
    return np.sum(np.sin(p) * p ** 2) * 123.456


def _loss_value(p):
    return np.float64(np.sum(np.sin(p) * p ** 2) * 123.456)


@pytest.mark.parametrize("spec", SPECS)
def test_every_way_of_formatting_gives_numpys_text(spec):
    shown = []

    def f(p):
        loss = loss_of(p)
        shown.append((f"{loss:{spec}}", "{:{}}".format(loss, spec), format(loss, spec),
                      format(p[1], spec), f"{p[()][2]:{spec}}"))
        return loss
    g = adsim.grad(f)(X)
    want = format(_loss_value(X), spec)
    assert shown[0][:3] == (want, want, want)
    assert shown[0][3:] == (format(np.float64(X[1]), spec), format(np.float64(X[2]), spec))
    np.testing.assert_allclose(g, adsim.grad(loss_of)(X), rtol=0, atol=0)


@pytest.mark.parametrize("spec", ["%.4f", "%.3e", "%10.2E", "%g", "%+.5G", "%s", "%r", "%d",
                                  "%i", "%5.1F"])
def test_percent_formatting_gives_numpys_text(spec):
    shown = []

    def f(p):
        loss = loss_of(p)
        if spec in ("%s", "%r"):
            shown.append(spec % (loss,) == (str(loss) if spec == "%s" else repr(loss)))
        else:
            shown.append(spec % loss)
            text = "loss "
            text += "%s %.2f" % ("at", p[0])          # a tuple of operands
            text %= ()                                 # %= with nothing to format
            shown.append(text)
        return loss
    g = adsim.grad(f)(X)
    if spec in ("%s", "%r"):
        assert shown == [True]
    else:
        assert shown == [spec % _loss_value(X), "loss at %.2f" % X[0]]
    np.testing.assert_allclose(g, adsim.grad(loss_of)(X), rtol=0, atol=0)


def test_percent_formatting_in_place():
    shown = []

    def f(p):
        text = "%.3f"
        text %= p[0] * 2
        shown.append(text)
        return np.sum(p)
    adsim.grad(f)(X)
    assert shown == ["%.3f" % (2 * X[0])]


def test_integer_presentation_types_keep_numpys_errors():
    """d, x, b, o, c on a float64 are NumPy's own errors, with or without a
    derivative; "%x" refuses as it does for NumPy's float64."""
    for spec in ("d", "x", "b", "o", "c", "5d"):
        with pytest.raises(ValueError) as numpys:
            format(np.float64(X[0]), spec)
        with pytest.raises(ValueError) as ours:
            adsim.grad(lambda p: np.sum(p) if format(p[0], spec) else 0.0)(X)
        assert str(ours.value) == str(numpys.value)
    for spec in ("%x", "%o", "%c", "%X"):
        with pytest.raises(TypeError, match=f"%{spec[1]} format|%x format|%c requires"):
            adsim.grad(lambda p: np.sum(p) if spec % p[0] else 0.0)(X)


def test_arrays_format_as_numpys_arrays_do():
    """A 1-element or longer array is refused a spec by NumPy's own error,
    takes the empty one (its str()) and %s; 0-d arrays format as numbers."""
    def f(p):
        for a in (p[:1], p):
            with pytest.raises(TypeError, match="unsupported format string"):
                format(a, ".2f")
            plain = X[:adsim.value(a).size]
            with pytest.raises((TypeError, DeprecationWarning)) as numpys:   # (2.3 warns for
                "%.2f" % (plain,)                                            # one element)
            with pytest.raises(numpys.type, match=re.escape(str(numpys.value)[:40])):
                "%.2f" % (a,)
            assert f"{a}" == str(a) and "%s" % (a,) == str(a)
        assert f"{p.reshape(3, 1)[1, 0]:.2f}" == f"{X[1]:.2f}"
        assert f"{np.asarray(p[0]):.2f}" == f"{X[0]:.2f}"
        return np.sum(p)
    adsim.grad(f)(X)


def test_numpy_scalars_mixed_with_active_values():
    def f(p):
        s = np.float64(1.5)
        total = np.sum(p) + s
        assert f"{s:.2f} {total:.6f}" == f"1.50 {np.float64(np.sum(X) + 1.5):.6f}"
        return total
    adsim.grad(f)(X)


def test_array_text_functions_show_the_recorded_values():
    def f(p):
        q = p * 2.0
        assert np.array2string(q, precision=3) == np.array2string(2.0 * X, precision=3)
        assert np.array_str(q) == np.array_str(2.0 * X)
        assert np.array_repr(q) == np.array_repr(2.0 * X)
        return np.sum(q)
    np.testing.assert_allclose(adsim.grad(f)(X), 2.0 * np.ones(3))


def test_text_says_nothing_to_replays(capsys):
    """As str(): a held gradient replays at a new point without printing
    again, gives the new point's derivative and is never refused because
    the text would differ."""
    def f(p):
        loss = loss_of(p)
        print(f"{loss:.6f} {'%.3e' % p[0]} {format(loss, 'g')}")
        return loss
    g = adsim.grad(f)
    for x in (X, X + 0.37, 2.0 * X):
        np.testing.assert_allclose(g(x), _grad_by_hand(x), rtol=1e-13)
    want = f"{_loss_value(X):.6f} {'%.3e' % X[0]} {format(_loss_value(X), 'g')}\n"
    assert capsys.readouterr().out == want
    tape = adsim.record(f, X)
    np.testing.assert_allclose(tape.gradient(X + 1.0), _grad_by_hand(X + 1.0), rtol=1e-13)


def _grad_by_hand(p):
    return 123.456 * (np.cos(p) * p ** 2 + 2 * p * np.sin(p))


def test_forward_modes_and_hvp_are_unchanged_by_printing():
    shown = []

    def f(p):
        loss = loss_of(p)
        shown.append(f"{loss:.3f}")
        shown.append("%.3f" % loss)
        return loss
    _, tangent = adsim.jvp(f, X, V)
    np.testing.assert_allclose(tangent, _grad_by_hand(X) @ V, rtol=1e-13)
    np.testing.assert_allclose(adsim.hvp(f, X, V), adsim.hvp(loss_of, X, V), rtol=0, atol=0)
    assert set(shown) == {f"{_loss_value(X):.3f}"}


def test_printing_inside_a_checkpointed_loop():
    shown = []

    def step(u, k):
        u = u + 0.01 * (-k * u ** 3)
        shown.append(f"{np.sum(u):.5f}")
        return u

    def f(k):
        return np.sum(adsim.checkpoint_loop(step, X, 40, args=(k,), snapshots=4) ** 2)
    g = adsim.grad(f)(np.array(0.7))
    h = 1e-6
    fd = (f(np.array(0.7 + h)) - f(np.array(0.7 - h))) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-7)
    assert shown and all(len(s.split(".")[1]) == 5 for s in shown)


def test_printing_inside_a_solve_ivp_right_hand_side():
    shown = []

    def fun(t, y, k):
        shown.append(f"t={t:.3f} y0={y[0]:+.4e} {'%.2f' % k}")
        return -k * y

    def f(k):
        sol = scipy.integrate.solve_ivp(fun, (0.0, 1.0), np.array([1.0, 2.0]), args=(k,),
                                        rtol=1e-10, atol=1e-12)
        return np.sum(sol.y[:, -1])
    k = 0.8
    g = adsim.grad(f)(k)
    np.testing.assert_allclose(g, -3.0 * np.exp(-k), rtol=1e-7)
    assert shown and all(s.startswith("t=") for s in shown)


def test_no_spec_is_str():
    def f(p):
        loss = loss_of(p)
        assert f"{loss}" == str(loss) == format(loss) == "{}".format(loss)
        assert str(loss).startswith("Active(")
        return loss
    adsim.grad(f)(X)


def test_a_number_parsed_back_from_the_text_is_float_of_the_value():
    """``float(f"{x:.6f}")`` (a rounding written as text) is ``float(x)``:
    refused for a value with a derivative (the number would drop it, and a
    replay would return the recorded number at every point), a guarded
    constant for one without (a replay at another value records again)."""
    def parsed(x):
        return x * float(f"{x:.6f}")

    with pytest.raises(adsim.errors.ActiveValueLeak, match="float"):
        adsim.grad(parsed)(np.array(0.123456789))
    with pytest.raises(adsim.errors.ActiveValueLeak, match="int"):
        adsim.grad(lambda x: x * int(f"{x:.0f}"))(np.array(2.4))

    def of_value(x):
        return x * float(f"{adsim.value(x):.2f}")
    tape = adsim.record(of_value, np.array(0.123))
    assert tape.gradient(np.array(0.123)) == pytest.approx(0.12)
    with pytest.raises(adsim.errors.BranchChanged):
        tape.gradient(np.array(0.5))
    assert adsim.grad(of_value)(np.array(0.5)) == pytest.approx(0.5)
    assert adsim.grad(of_value)(np.array(0.123)) == pytest.approx(0.12)


def test_text_of_an_active_value_is_plain_text_once_changed_or_pickled():
    import pickle
    kept = []

    def f(x):
        text = f"{x:.3f}"
        kept.append((text, text + " s", text.strip(), pickle.loads(pickle.dumps(text))))
        return x * 2.0
    adsim.grad(f)(np.array(0.25))
    text, joined, stripped, unpickled = kept[0]
    assert text == "0.250" and isinstance(text, str)
    assert type(joined) is str and type(stripped) is str and type(unpickled) is str
    assert unpickled == "0.250"
