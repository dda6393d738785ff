"""The checks every user program of programs_s8.py to programs_s11.py
goes through (tests/numpy/test_user_programs_s8.py to _s11.py): the gradient
against central differences (a step relative to each parameter), forward
mode against reverse mode, the Hessian-vector product against
differences of the gradient, and the tape recorded at one point replayed
at a second point (or, where the program's path depends on the point, the
replay refusing with BranchChanged and a fresh recording right there).

``adaptive``: the program's result comes from an adaptive solver or an
optimiser, whose derivatives agree with differences of its results to
about its tolerance only (and whose replays re-solve to that tolerance)."""
import numpy as np
import pytest

import adsim
from fdcheck import assert_close, central, differences, replayed_gradient


def moved(x):
    return x * (1.0 + 0.01 * np.random.default_rng(2).standard_normal(np.shape(x)))


def _flat(a):
    return np.atleast_1d(np.asarray(a, dtype=float))


def check_derivatives(name, f, x, check_hvp, adaptive=False, step=1e-3):
    g = _flat(adsim.grad(f)(x))
    rtol = 1e-5 if adaptive else 1e-6
    assert_close(g, differences(f, x, step), rtol=rtol, atol=1e-9 * np.max(np.abs(g)), what=name)
    v = 1e-3 * np.maximum(np.abs(x), 0.1) * np.random.default_rng(1).standard_normal(np.shape(x))
    _, jv = adsim.jvp(f, (x,), (v,))
    assert_close(jv, g @ _flat(v), rtol=1e-9, atol=1e-15 * np.abs(g) @ np.abs(_flat(v)),
                 what="jvp vs grad")
    if check_hvp:
        hv = _flat(adsim.hvp(f, x, v))
        want = _flat(central(adsim.grad(f), [np.asarray(x, dtype=float)], [np.asarray(v)], 1e-3))
        assert_close(hv, want, rtol=1e-5, atol=1e-7 * np.max(np.abs(want)), what="hvp")


def check_replay_at_a_new_point(f, x, path_depends_on_point, adaptive=False, step=1e-3):
    x2 = moved(x)
    want = differences(f, x2, step)
    got, held = replayed_gradient(f, x, x2, 1e-8 if adaptive else 1e-13)
    assert held or path_depends_on_point, "the path was not expected to change"
    rtol = 1e-5 if adaptive else 1e-6
    assert_close(_flat(got), want, rtol=rtol, atol=1e-9 * np.max(np.abs(want)),
                 what="at a new point")


def check_jvp_and_replay(f, x, g):
    """Forward mode along a fixed direction against the gradient ``g`` at
    ``x``, and the tape recorded at ``x`` replayed at a moved point against
    a recording there (a replay whose path changed raises BranchChanged:
    the functional API records afresh there, which is what it is compared
    with)."""
    v = np.array([0.3, -0.2])
    _, jv = adsim.jvp(f, (x,), (v,))
    assert_close(jv, g @ v, rtol=1e-9, atol=1e-15, what="jvp vs grad")
    x2 = moved(x)
    try:
        g2 = adsim.record(f, x).gradient(x2)
    except adsim.BranchChanged:
        return
    assert_close(g2, adsim.grad(f)(x2), rtol=1e-8, atol=1e-15, what="replayed at a new point")


def program_tests(programs, adaptive, steps=None):
    """The two tests of a batch of programs ({name: (f, x, check_hvp,
    path_depends_on_point)}), parametrized by name, for the test module to
    bind: the derivatives, and the replay at a new point. ``adaptive``:
    the names of programs with adaptive solvers; ``steps``: difference
    steps other than 1e-3, by name."""
    steps = steps or {}

    @pytest.mark.parametrize("name", sorted(programs))
    def test_gradient_against_differences_and_the_other_mode(name):
        f, x, check_hvp, _ = programs[name]
        check_derivatives(name, f, x, check_hvp, name in adaptive, steps.get(name, 1e-3))

    @pytest.mark.parametrize("name", sorted(programs))
    def test_the_tape_replayed_at_a_new_point(name):
        f, x, _, path_depends_on_point = programs[name]
        check_replay_at_a_new_point(f, x, path_depends_on_point, name in adaptive,
                                    steps.get(name, 1e-3))
    return test_gradient_against_differences_and_the_other_mode, \
        test_the_tape_replayed_at_a_new_point
