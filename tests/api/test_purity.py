"""The functional API never returns a result computed from a stale recording.

Each case calls one transformed function in a loop while something it reads
changes -- a closure, a global, an object, a bound method's owner, a random
generator -- and compares every result with a fresh evaluation (a
``cache=False`` twin, which records on every call). Cases where reuse is
safe (an unread loop counter, an unchanged environment) check that the tape
is reused: ``tapes.recordings`` stays 1.
"""
import array
import functools
import random
import sys

import numpy as np
import pytest

import adsim
from adsim._tapecache import purity as _purity
from fdcheck import assert_close

X = np.array([0.5, -0.3, 0.2])


def assert_fresh(f, calls, change, argnums=0):
    """``adsim.grad(f)`` equals a fresh evaluation on each call after
    ``change(i)``; returns the caching transformed function."""
    cached = adsim.grad(f, argnums=argnums)
    fresh = adsim.grad(f, argnums=argnums, cache=False)
    for i in range(calls):
        change(i)
        args = (X * (1 + 0.1 * i),)
        got, want = cached(*args), fresh(*args)
        assert np.array_equal(got, want), f"call {i}: stale tape ({got} != {want})"
    return cached


# ----------------------------------------------------------- changing closures

SCALE = np.ones(3)
GAIN = 2.0


def uses_globals(z):
    return GAIN * np.sum(SCALE * z ** 2)


def test_rebound_and_mutated_global_arrays_and_scalars():
    global SCALE, GAIN

    def change(i):
        global SCALE, GAIN
        if i % 3 == 0:
            SCALE = np.full(3, float(i))        # rebound
        elif i % 3 == 1:
            SCALE[1] = -i                       # mutated in place
        else:
            GAIN = GAIN + 1.0                   # a float global
    try:
        g = assert_fresh(uses_globals, 9, change)
    finally:
        SCALE, GAIN = np.ones(3), 2.0
    assert g.tapes.recordings == 9


def test_closure_cells_rebound_mutated_and_changed_scalar():
    def make():
        weights, power = np.ones(3), 2

        def f(z):
            return np.sum(weights * z ** power)

        def change(i):
            nonlocal weights, power
            if i % 3 == 0:
                weights = weights * 2.0
            elif i % 3 == 1:
                weights[0] = float(i)
            else:
                power = 3 if power == 2 else 2
        return f, change
    f, change = make()
    assert_fresh(f, 9, change)


def test_unchanged_environment_reuses_one_tape():
    A = np.arange(3.0)
    g = adsim.grad(lambda z: np.sum(A * np.sin(z)))
    for i in range(20):
        assert_close(g(X + i), A * np.cos(X + i), 1e-15, 0)
    assert g.tapes.recordings == 1
    assert g.tapes.reuse_blocked_by is None


def test_nan_and_signed_zero_in_the_environment_are_compared_exactly():
    c = np.array([np.nan, 1.0, 2.0])
    s = [0.0]

    def f(z):
        return np.sum(np.nan_to_num(c) * z) + np.copysign(1.0, s[0]) * np.sum(z)
    g = adsim.grad(f)
    g(X)
    g(X)
    assert g.tapes.recordings == 1          # NaN equals itself here: no needless recording
    s[0] = -0.0                             # equal to 0.0 by ==, but copysign sees the sign
    assert_close(g(X), adsim.grad(f, cache=False)(X), 0, 0)
    assert g.tapes.recordings == 2


def test_mutated_object_in_a_closure():
    class Params:
        def __init__(self):
            self.w = np.ones(3)
            self.k = 2
            self.extra = {"shift": [1.0, 2.0]}
    p = Params()
    f = lambda z: p.k * np.sum(p.w * z) + p.extra["shift"][1] * np.sum(z ** 2)  # noqa: E731

    def change(i):
        if i % 3 == 0:
            p.k += 1
        elif i % 3 == 1:
            p.w[2] = -i
        else:
            p.extra["shift"][1] = float(i)
    assert_fresh(f, 9, change)


def test_bound_method_whose_object_changes():
    class Model:
        def __init__(self):
            self.scale = 1.0
            self.table = np.array([1.0, 2.0, 3.0])

        def loss(self, z):
            return self.scale * np.sum(self.table * z ** 3)
    m = Model()

    def change(i):
        if i % 2:
            m.scale = 1.5 * i
        else:
            m.table = m.table[::-1].copy()
    assert_fresh(m.loss, 6, change)


class Settings:
    factor = 1.0          # a class attribute the method reads


class Energy:
    def __call__(self, z):
        return Settings.factor * helper(z)


def helper(z):
    return np.sum(z ** 2) * HELPER_WEIGHT


HELPER_WEIGHT = 1.0


def test_class_attributes_and_globals_of_helpers_reached_through_calls():
    global HELPER_WEIGHT
    e = Energy()

    def change(i):
        global HELPER_WEIGHT
        if i % 2:
            Settings.factor = float(i)
        else:
            HELPER_WEIGHT = 0.5 * i
    try:
        assert_fresh(e, 6, change)
    finally:
        Settings.factor, HELPER_WEIGHT = 1.0, 1.0


def test_partial_and_default_arguments():
    def f(z, c=np.ones(3)):
        return np.sum(c * z ** 2)
    p = functools.partial(f, c=np.arange(3.0))
    assert_fresh(p, 3, lambda i: p.keywords["c"].__setitem__(0, i))
    assert_fresh(f, 3, lambda i: f.__defaults__[0].__setitem__(1, i))


# ---------------------------------------------------------------- random numbers

def test_generator_in_a_closure_draws_afresh_each_call():
    rng, twin = np.random.default_rng(7), np.random.default_rng(7)
    g = adsim.grad(lambda z: np.sum(z ** 2 * rng.standard_normal(3)))
    for _ in range(4):
        assert_close(g(X), 2 * X * twin.standard_normal(3), 0, 0)
    assert g.tapes.recordings == 4
    assert "random" in g.tapes.reuse_blocked_by and "Generator" in g.tapes.reuse_blocked_by


def test_numpy_global_random_state_draws_afresh_each_call():
    g = adsim.grad(lambda z: np.sum(z * np.random.standard_normal(3)) + np.sum(z ** 2)
                   * np.random.uniform())
    np.random.seed(11)
    got = [g(X) for _ in range(4)]
    np.random.seed(11)
    for value in got:
        noise = np.random.standard_normal(3)
        u = np.random.uniform()
        assert_close(value, noise + 2 * X * u, 1e-15, 0)
    assert "global random state" in g.tapes.reuse_blocked_by


def test_a_normal_served_from_numpy_s_cached_gaussian_is_detected():
    """Legacy normals come in pairs: the second one is cached and drawing it
    leaves the generator's words unchanged."""
    np.random.seed(3)
    np.random.standard_normal()             # leaves the second Gaussian cached
    g = adsim.grad(lambda z: np.sum(z) * np.random.standard_normal())
    first = g(X)
    second = g(X)
    assert not np.array_equal(first, second)
    assert g.tapes.recordings == 2


def test_python_random_module_draws_afresh_each_call():
    g = adsim.grad(lambda z: np.sum(z) * random.gauss(0.0, 1.0))
    random.seed(5)
    got = [g(X) for _ in range(3)]
    random.seed(5)
    for value in got:
        assert_close(value, np.full(3, random.gauss(0.0, 1.0)), 0, 0)


def test_new_generator_inside_the_function_is_impure():
    g = adsim.grad(lambda z: np.sum(z * np.random.default_rng().standard_normal(3)))
    g(X)
    g(X)
    assert g.tapes.recordings == 2
    assert "default_rng" in g.tapes.reuse_blocked_by


# ------------------------------------------------------------- static arguments

def test_int_and_float_static_arguments_are_different_keys():
    def f(z, p):
        return np.sum(z ** p) if isinstance(p, int) else np.sum(z * p)
    g = adsim.grad(f)
    assert_close(g(X, 2), 2 * X, 0, 0)
    assert_close(g(X, 2.0), np.full(3, 2.0), 0, 0)
    assert_close(g(X, 2), 2 * X, 0, 0)
    assert g.tapes.recordings == 2


def test_unused_loop_counter_reuses_one_tape():
    """autograd's optimizers call grad(objective)(params, iter)."""
    def objective(params, iter):
        return np.sum(params ** 2)
    g = adsim.grad(objective)
    for i in range(200):
        assert_close(g(X, i), 2 * X, 0, 0)
    assert g.tapes.recordings == 1
    h = adsim.grad(lambda params, iter: np.sum(params ** 3))
    for i in range(20):
        h(X, float(i))
    assert h.tapes.recordings == 1


def test_used_loop_counter_records_per_value():
    batches = np.arange(12.0).reshape(4, 3)

    def objective(params, iter):
        return np.sum(params * batches[iter % 4])
    g = adsim.grad(objective)
    for i in range(8):
        assert_close(g(X, i), batches[i % 4], 0, 0)
    assert g.tapes.recordings == 8


@pytest.mark.parametrize("reads", [
    "def f(x, i):\n    return np.sum(x) * len(locals())",
    "def f(x, *rest):\n    return np.sum(x)",
    "def f(x, i):\n    g = lambda: i\n    return np.sum(x) * g()",
    "def f(x, i):\n    return np.sum(x) * eval('i')",
])
def test_parameters_read_indirectly_are_not_exempt(reads):
    namespace = {"np": np}
    exec(reads, namespace)
    f = namespace["f"]
    g = adsim.grad(f)
    g(X, 1)
    g(X, 2)
    assert g.tapes.recordings == 2


def test_keyword_arguments_and_containers_as_static_arguments():
    def f(z, opts=None, scale=1.0):
        return scale * np.sum(z ** opts["p"])
    g = adsim.grad(f)
    assert_close(g(X, opts={"p": 2}), 2 * X, 1e-15, 0)
    assert_close(g(X, opts={"p": 3}), 3 * X ** 2, 1e-15, 0)
    assert_close(g(X, opts={"p": 2}, scale=2), 4 * X, 1e-15, 0)
    assert g.tapes.recordings == 3
    g(X, opts={"p": 3})
    assert g.tapes.recordings == 3


def test_object_static_argument_is_compared_by_contents():
    class Data:
        def __init__(self, y):
            self.y = y
    f = lambda z, data: np.sum((z - data.y) ** 2)  # noqa: E731
    g = adsim.grad(f)
    d = Data(np.zeros(3))
    for i in range(3):
        d.y = d.y + 1.0
        assert_close(g(X, d), 2 * (X - d.y), 1e-15, 0)
    assert g.tapes.recordings == 3
    assert_close(g(X, Data(d.y.copy())), 2 * (X - d.y), 1e-15, 0)
    assert g.tapes.recordings == 3          # an equal object: the same tape


# ------------------------------------------------- what the walk cannot see

def test_unverifiable_environment_records_every_call_and_says_why():
    counter = iter(range(100))
    f = lambda z: np.sum(z) * next(counter)  # noqa: E731
    g = adsim.grad(f)
    assert_close(g(X), np.zeros(3), 0, 0)
    assert_close(g(X), np.ones(3), 0, 0)
    assert g.tapes.recordings == 2
    assert "range_iterator" in g.tapes.reuse_blocked_by


def test_a_closure_cell_held_as_a_value_counts_by_its_contents():
    """A cell object held apart (as adsim's own wrappers of lifted closures
    keep them): its contents are walked, so an unchanged cell reuses the
    tape and a changed one records again."""
    def make(k):
        return (lambda: k).__closure__[0]
    holder = {"cell": make(np.array([1.0, 2.0, 3.0]))}

    def change(i):
        if i % 2:
            holder["cell"] = make(np.array([1.0, 2.0, 3.0]) * i)
    g = assert_fresh(lambda z: np.sum(holder["cell"].cell_contents * z ** 2), 6, change)
    # (the change at i = 1 holds equal values: 1 + 2 recordings)
    assert g.tapes.reuse_blocked_by is None and g.tapes.recordings == 3


def test_function_changing_its_own_environment_records_every_call():
    state = {"k": 0}

    def f(z):
        state["k"] += 1
        return state["k"] * np.sum(z)
    g = adsim.grad(f)
    for k in range(1, 4):
        assert_close(g(X), np.full(3, float(k)), 0, 0)
    assert "changed its own environment" in g.tapes.reuse_blocked_by


def test_too_large_environment_is_unverifiable():
    big = [(k, "point") for k in range(_purity.MAX_VALUES)]      # a long list of numbers is
    g = adsim.grad(lambda z: np.sum(z) * big[-1][0])               # one value; these are not
    g(X)
    assert "more than" in g.tapes.reuse_blocked_by
    assert g.tapes.recordings == 1
    g(X)
    assert g.tapes.recordings == 2


def test_cache_false_records_every_call():
    g = adsim.grad(lambda z: np.sum(z ** 2), cache=False)
    g(X)
    g(X)
    assert g.tapes.recordings == 2
    assert "cache=False" in g.tapes.reuse_blocked_by


# ------------------------------------------------- one-shot functions and nesting

def test_one_shot_functions_see_changed_closures():
    c = np.ones(3)
    f = lambda z: np.sum(c * z ** 3)  # noqa: E731
    v = np.array([1.0, 0.5, -1.0])
    hessp, hessian, laplacian = adsim.hessp(f), adsim.hessian(f), adsim.laplacian(f)
    for k in range(3):
        c[:] = k + 1.0
        H = np.diag(6 * c * X)
        assert_close(adsim.hvp(f, X, v), H @ v, 1e-14, 0)
        assert_close(hessp(X, v), H @ v, 1e-14, 0)
        assert_close(hessian(X), H, 1e-14, 0)
        assert_close(laplacian(X), np.trace(H), 1e-14, 0)
        assert_close(adsim.jvp(lambda z: c * z, X, v)[1], c * v, 0, 0)
        assert_close(adsim.vjp(lambda z: c * z, X, v)[1], c * v, 0, 0)
        assert_close(adsim.hvp_operator(f, X) @ v, H @ v, 1e-14, 0)
    assert adsim.api.tapes_of(f).recordings == 3          # once per change, shared by hvp & co


def test_transformed_function_in_the_environment_is_followed():
    c = np.ones(3)
    inner = adsim.grad(lambda z: np.sum(c * z ** 2))
    outer = adsim.grad(lambda z: np.sum(inner(X) * z))      # inner's value is a constant
    for k in range(3):
        c[:] = k
        assert_close(outer(X), 2 * c * X, 0, 0)


def test_explicit_tape_freezes_the_environment():
    """adsim.record is the fast path: everything but the inputs is frozen."""
    c = np.ones(3)
    tape = adsim.record(lambda z: np.sum(c * z), X)
    c[:] = 5.0
    assert_close(tape.gradient(X), np.ones(3), 0, 0)


def test_attributes_of_a_user_module_count_by_value(tmp_path, monkeypatch):
    (tmp_path / "user_physics_params.py").write_text(
        "import numpy as np\nEPS = 1.0\nTABLE = np.array([1.0, 2.0])\n"
        "def energy(r):\n    return EPS * np.sum(TABLE * r ** 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import user_physics_params as physics
    x = np.array([1.0, 2.0])
    g = adsim.grad(lambda r: physics.energy(r) + physics.EPS * r[0])
    np.testing.assert_allclose(g(x), [3.0, 8.0])
    physics.EPS = 3.0                       # a parameter set in the module
    np.testing.assert_allclose(g(x), [9.0, 24.0])
    physics.TABLE[1] = 5.0                  # an array of the module changed in place
    np.testing.assert_allclose(g(x), [9.0, 60.0])
    np.testing.assert_allclose(g(x), [9.0, 60.0])
    assert g.tapes.recordings == 3          # unchanged module: the tape is reused


@pytest.mark.parametrize("body", [
    "import cfgpkg.settings\n    return cfgpkg.settings.K * r[0] ** 2 + r[1]",
    "import cfgpkg.settings as s\n    return s.K * r[0] ** 2 + r[1]",
    "from cfgpkg.settings import K\n    return K * r[0] ** 2 + r[1]",
    "from . import settings\n    return settings.K * r[0] ** 2 + r[1]",
    "from .settings import K\n    return K * r[0] ** 2 + r[1]",
    "return cfgpkg.settings.K * r[0] ** 2 + r[1]",
    "return getattr(cfgpkg.settings, 'K') * r[0] ** 2 + r[1]",
    "return vars(cfgpkg.settings)['K'] * r[0] ** 2 + r[1]",
    "return cfgpkg.settings.__dict__['K'] * r[0] ** 2 + r[1]",
])
def test_a_user_module_imported_in_the_function_or_read_by_another_name(
        body, tmp_path, monkeypatch):
    """A setting of a project's module changed between calls, the module
    imported inside the model (``import cfgpkg.settings``, relative or
    ``from ... import K``), reached through its package
    (``cfgpkg.settings.K``) or read by a computed name (``getattr``,
    ``vars``, ``__dict__``): the tape recorded with the old setting is not
    reused (it was, silently: the old value and derivative)."""
    pkg = tmp_path / "cfgpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "settings.py").write_text("K = 1.0\n")
    (pkg / "model.py").write_text(f"import cfgpkg.settings\n\ndef f(r):\n    {body}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import cfgpkg.model
    import cfgpkg.settings
    try:
        x = np.array([0.7, 1.3])
        g = adsim.value_and_grad(cfgpkg.model.f)
        for k in (1.0, 2.5, 2.5, 4.0):
            cfgpkg.settings.K = k
            value, grad = g(x)
            assert_close(value, k * 0.49 + 1.3, 1e-15, 0)
            assert_close(grad, [1.4 * k, 1.0], 1e-15, 0)
        assert g.tapes.recordings == 3          # reused while the setting stayed
    finally:
        for name in ("cfgpkg.model", "cfgpkg.settings", "cfgpkg"):
            sys.modules.pop(name, None)


def test_a_module_imported_through_dunder_import_is_not_trusted(tmp_path, monkeypatch):
    """__import__("settings") names its module by a computed string: the
    function is recorded on every call (a changed setting reused the old
    tape, silently)."""
    (tmp_path / "dunder_settings.py").write_text("K = 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import dunder_settings
    try:
        f = lambda z: __import__("dunder_settings").K * np.sum(z ** 2)     # noqa: E731

        def change(i):
            dunder_settings.K = 1.0 + i
        g = assert_fresh(f, 3, change)
        assert "__import__" in g.tapes.reuse_blocked_by
    finally:
        sys.modules.pop("dunder_settings", None)


class _Weights(array.array):
    pass


@pytest.mark.parametrize("make", [lambda: array.array("d", [1.0, 2.0, 3.0]),
                                  lambda: _Weights("d", [1.0, 2.0, 3.0])])
def test_an_extension_object_whose_items_python_cannot_see_is_not_trusted(make):
    """array.array is a heap type made in C (PyType_FromSpec), as Python
    classes are heap types: its items are C fields the walk cannot see, so
    the function is recorded on every call (the tape recorded with the old
    items was reused, silently)."""
    w = make()

    def change(i):
        w[1] = 2.0 + i
    g = assert_fresh(lambda z: np.sum(np.array(w) * z ** 2), 3, change)
    assert "whose state adsim cannot see" in g.tapes.reuse_blocked_by


def test_a_stats_container_does_not_force_recording_again():
    """stats= is written by the sweeps, not read by the recording: after the
    first calls the tape is reused, and the counts still follow each sweep."""
    stats = {}

    def loss(x):
        return np.sum(adsim.checkpoint_loop(lambda u: 0.9 * u + 0.01 * u ** 2, x, 10, stats=stats))
    g = adsim.value_and_grad(loss)
    for k in range(5):
        g(np.full(3, 1.0 + 0.1 * k))
        assert stats["taped_steps"] == 10
    assert g.tapes.recordings <= 2
