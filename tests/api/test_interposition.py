"""The opt-out of interposition (adsim/_record/interpose.py): with it off, a
recording changes nothing in NumPy or SciPy, its own calls see them as they
are (also while another thread's recording has the changes in place), and
explicit calls still work; the three forms of the switch (environment,
``set_interposition``, ``interposition``) and when the setting is read."""
import contextlib
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.special

import adsim as ad
import adsim.scipy.special as asp
from adsim._record import interpose as _interpose
from fdcheck import assert_close
from paths import ROOT

X = np.array([0.3, -1.2, 2.0])
ZEROS = np.zeros                        # NumPy's own, bound before any recording
LSE_CODE = scipy.special.logsumexp.__code__


def _softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def _untouched():
    """NumPy's and SciPy's own objects, as in place now."""
    return np.zeros is ZEROS and scipy.special.logsumexp.__code__ is LSE_CODE


@pytest.fixture
def default_off():
    with _default(False):
        yield


def _the_adsim_error(info, cls):
    """adsim's error, raised as it is, or as the cause NumPy names when it
    turns an error of an element assignment into its own ValueError."""
    err = info.value
    return err if isinstance(err, cls) else err.__cause__


@contextlib.contextmanager
def _default(enabled):
    previous = ad.set_interposition(enabled)
    try:
        yield
    finally:
        ad.set_interposition(previous)


@pytest.mark.parametrize("off", [lambda: _default(False), lambda: ad.interposition(False)],
                         ids=["set_interposition", "interposition"])
def test_nothing_is_changed_and_a_plain_workspace_refuses_active_values(off):
    seen = {}

    def workspace(x):
        seen["untouched"] = _untouched()
        z = np.zeros(3)
        seen["type"] = type(z)
        z[0] = x
        return np.sum(z)

    def sliced(x):
        z = np.zeros(4)
        z[:3] = x
        return np.sum(z)
    with off():
        with pytest.raises((ad.ActiveValueLeak, ValueError)) as info:
            ad.grad(workspace)(0.5)
        assert seen == {"untouched": True, "type": np.ndarray}
        err = _the_adsim_error(info, ad.ActiveValueLeak)
        assert isinstance(err, ad.ActiveValueLeak), repr(info.value)
        assert "Interposition is off in this recording" in str(err)
        with pytest.raises(ad.ActiveValueLeak, match="assignment into a plain array"):
            ad.grad(sliced)(X)
    assert _untouched()


def test_a_scipy_function_refuses_active_arguments_and_explicit_calls_work(default_off):
    seen = {}

    def hooked(z):
        seen["untouched"] = _untouched()
        return scipy.special.logsumexp(z)

    with pytest.raises(ad.UnsupportedOperation, match="scipy.special.logsumexp"):
        ad.grad(hooked)(X)
    assert seen["untouched"]

    def explicit(z):
        seen["explicit"] = _untouched()
        workspace = np.zeros_like(z, shape=(4,))         # explicit forms of np.zeros, np.array
        workspace[1:] = z
        return asp.logsumexp(workspace[1:]) + np.sum(np.stack([z[0], 2.0 * z[1]]))
    assert_close(ad.grad(explicit)(X), _softmax(X) + np.array([1.0, 2.0, 0.0]), rtol=1e-14)
    assert seen["explicit"]
    assert _untouched()


def test_the_context_turns_it_on_inside_an_off_default(default_off):
    with ad.interposition(True):
        g = ad.grad(lambda z: scipy.special.logsumexp(np.array([z[0], z[1], z[2]])))(X)
    assert_close(g, _softmax(X), rtol=1e-14)
    assert _untouched()


def test_blocks_nest_and_restore():
    assert _interpose.enabled()
    with ad.interposition(False):
        assert not _interpose.enabled()
        with ad.interposition(True):
            assert _interpose.enabled()
        assert not _interpose.enabled()
    assert _interpose.enabled()
    with pytest.raises(TypeError, match="True or False"):
        ad.interposition("off")
    with pytest.raises(TypeError, match="True or False"):
        ad.set_interposition(0)
    assert ad.set_interposition(True) is True


def test_the_setting_is_read_when_a_recording_starts():
    """Turning it off inside a recorded function leaves that recording as it
    started; a recording started inside the block sees the change (and
    finds NumPy changed by the outer one, yet gets NumPy's results), and the
    outer one has its changes after it."""
    seen = {}

    def inner(z):                   # (the replay of outer's tape records it again)
        seen.setdefault("inner zeros", type(np.zeros(2)))
        seen.setdefault("inner untouched", _untouched())
        return np.sum(z * z)

    def outer(z):
        with ad.interposition(False):
            seen["outer zeros"] = type(np.zeros(2))
            g = ad.grad(inner)(np.ones(3))      # another recording, started with it off
        w = np.zeros(3)
        w[:] = g * z
        seen["outer after"] = type(w)
        return np.sum(w)
    assert_close(ad.grad(outer)(X), 2.0 * np.ones(3), rtol=1e-14)
    assert seen["outer zeros"] is not np.ndarray        # the outer recording's setting
    assert seen["inner zeros"] is np.ndarray            # the inner one's calls are NumPy's
    assert seen["inner untouched"] is False             # (changed: the outer one is on)
    assert seen["outer after"] is not np.ndarray
    assert _untouched()


def test_a_thread_recording_with_it_off_sees_numpy_and_scipy_as_they_are():
    """While thread A records with interposition on (NumPy and SciPy
    changed), thread B records with it off: B's np.zeros is plain, its
    logsumexp of an active value raises; A's work as with interposition on."""
    a_inside, b_done = threading.Event(), threading.Event()
    seen, errors = {}, []

    def a_function(z):
        a_inside.set()
        b_done.wait(10.0)
        seen["a zeros"] = type(np.zeros(2))
        return scipy.special.logsumexp(z)

    def b_function(z):
        seen["b installed"] = not _untouched()
        seen["b zeros"] = type(np.zeros(2))
        return scipy.special.logsumexp(z)

    def thread_a():
        seen["a"] = ad.grad(a_function)(X)

    def thread_b():
        a_inside.wait(10.0)
        try:
            with ad.interposition(False):
                ad.grad(b_function)(X)
        except ad.UnsupportedOperation as err:
            errors.append(err)
        finally:
            b_done.set()
    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["b installed"] and seen["b zeros"] is np.ndarray
    assert len(errors) == 1 and "scipy.special.logsumexp" in str(errors[0])
    assert seen["a zeros"] is not np.ndarray
    assert_close(seen["a"], _softmax(X), rtol=1e-14)
    assert _untouched()


def test_another_thread_keeps_the_default():
    seen = {}

    def other():
        seen["enabled"] = _interpose.enabled()
    with ad.interposition(False):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen["enabled"] is True


def _run(code, value):
    env = {k: v for k, v in os.environ.items() if k != "ADSIM_INTERPOSE"}
    env["ADSIM_INTERPOSE"] = value
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env)


def test_the_environment_variable_sets_the_default():
    code = ("import numpy as np, adsim as ad\n"
            "zeros = np.zeros\n"
            "def f(x):\n"
            "    assert np.zeros is zeros\n"
            "    return np.sum(np.stack([x[0], x[1]]) ** 2)\n"
            "print(ad.grad(f)(np.array([1.0, 2.0])), ad.set_interposition(True))\n")
    run = _run(code, "0")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["[2.", "4.]", "False"]
    run = _run("import adsim", "maybe")
    assert run.returncode != 0 and "ADSIM_INTERPOSE='maybe'" in run.stderr


def test_isscalar_of_a_zero_d_active_value_answers_as_for_the_numpy_scalar():
    # x[0] of a plain 1-d array is an np.float64, for which np.isscalar is True:
    # code branching on it must take the same path on active values
    def vapour_pressure(T, A=16.3872, B=3885.7, C=-42.98):
        scalar = np.isscalar(T)
        T = np.atleast_1d(T)
        p = np.exp(A - B / (C + T))
        return p[0] if scalar else p

    def f(x):
        assert np.isscalar(x[0]) and not np.isscalar(x)
        return vapour_pressure(x[0]) * x[1]
    x = np.array([350.0, 2.0])
    value, g = ad.value_and_grad(f)(x)
    assert value == f(x)
    h = np.array([1e-3, 1e-6])
    want = [(f(x + e) - f(x - e)) / (2 * e @ np.ones(2)) for e in np.diag(h)]
    assert_close(g, want, rtol=1e-7, what="gradient")
    with ad.interposition(False):            # NumPy's own answer there
        ad.grad(lambda x: x[0] * (not np.isscalar(x[0])))(x)


def test_a_scipy_module_first_imported_inside_the_function():
    """``import scipy.ndimage`` inside the recorded function: the module did
    not exist when the recording changed SciPy's functions, so its call was
    refused; adsim records once more, now with it hooked, and the first call
    gives the derivative (as the second always did), for grad and record."""
    code = ("import sys, numpy as np, adsim as ad\n"
            "assert 'scipy.ndimage' not in sys.modules\n"
            "def f(x):\n"
            "    import scipy.ndimage\n"
            "    return np.sum(scipy.ndimage.gaussian_filter1d(x, 1.0) ** 2)\n"
            "def g(x):\n"
            "    import scipy.signal\n"
            "    return np.sum(scipy.signal.lfilter([1.0, 0.5], [1.0], x) ** 2)\n"
            "x = np.linspace(0.0, 1.0, 8)\n"
            "h = 1e-6\n"
            "fd = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(8)])\n"
            "assert np.allclose(ad.grad(f)(x), fd, rtol=1e-6, atol=1e-8)\n"
            "print('scipy.signal' in sys.modules)\n"
            "tape = ad.record(g, x)\n"
            "assert np.allclose(tape.gradient(x), ad.grad(g)(x), rtol=1e-14)\n"
            "print('ok')\n")
    result = _run(code, "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == "ok", result.stdout
