"""User mistakes raise the documented exception types with messages that
name the offending function, shape or value and the fix; NaN and inf
propagate through every sweep without crashing."""
import math
from math import exp

import numpy as np
import pytest

import adsim
from adsim.errors import AdsimError
from fdcheck import assert_close

X = np.array([0.5, 0.3, 0.2])


def test_error_classes_subclass_the_matching_builtins():
    assert issubclass(adsim.UnsupportedOperation, TypeError)
    assert issubclass(adsim.ActiveValueLeak, TypeError)
    assert issubclass(adsim.BranchChanged, RuntimeError)
    assert issubclass(adsim.MemoryBudgetError, MemoryError)
    for cls in (adsim.UnsupportedOperation, adsim.ActiveValueLeak, adsim.BranchChanged,
                adsim.MemoryBudgetError):
        assert issubclass(cls, AdsimError)
        assert "Fix" in cls.__doc__ or "fix" in cls.__doc__


# ---------------------------------------------------- unsupported functions

@pytest.mark.parametrize(("f", "name"), [
    (lambda z: np.sum(np.sort_complex(z).real), "numpy.sort_complex"),
    (lambda z: np.sum(np.nextafter(z, 2.0)), "numpy.nextafter"),
    (lambda z: np.sum(np.frexp(z)[0]), "numpy.frexp"),
    (lambda z: np.sum(np.subtract.accumulate(z)), "numpy.subtract.accumulate"),
])
def test_unsupported_function_is_named(f, name):
    with pytest.raises(adsim.UnsupportedOperation) as info:
        adsim.grad(f)(X)
    assert isinstance(info.value, TypeError)
    message = str(info.value)
    assert f"`{name}`" in message
    assert "adsim.primitive" in message and "adsim.value" in message


PLAIN = np.zeros(3)      # made outside the recording: stays a plain array


@pytest.mark.parametrize(("f", "words"), [
    (lambda z: np.sum(np.exp(z, where=np.array([True, False, True]))), "where"),
    (lambda z: np.sum(np.sin(z, out=PLAIN)), "out="),
    (lambda z: np.einsum("i->", z, dtype=np.float32), "dtype"),
    (lambda z: np.sum(np.linalg.svd(np.outer(z, z), hermitian=True)[1]), "hermitian"),
    (lambda z: np.sum(np.pad(z, 1, constant_values=(1.0, 2.0))), "constant_values"),
    (lambda z: np.median(z) + np.quantile(z, 0.5, method="nearest"), "method='linear'"),
    (lambda z: np.sum(np.cumsum(z, dtype=np.float32)), "dtype"),
])
def test_unsupported_arguments_explain_themselves(f, words):
    with pytest.raises(adsim.UnsupportedOperation, match=None) as info:
        adsim.grad(f)(X)
    assert words in str(info.value)


def test_dtype_changes_are_rejected():
    with pytest.raises(adsim.UnsupportedOperation, match="float64"):
        adsim.grad(lambda z: np.sum(z.astype(np.float32)))(X)
    with pytest.raises(adsim.UnsupportedOperation, match="float64"):
        adsim.grad(lambda z: np.sum(np.full_like(z, z[0], dtype=np.float32)))(X)


# ------------------------------------------------------------ shapes

def test_non_scalar_output_to_grad_names_the_shape():
    with pytest.raises(ValueError, match=r"scalar output.*\(3,\)") as info:
        adsim.grad(lambda z: z * 2.0)(X)
    assert "jacobian" in str(info.value)
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        adsim.value_and_grad(lambda z: np.outer(z[:2], z))(X)
    with pytest.raises(ValueError, match=r"\(3,\)"):
        adsim.hvp(lambda z: z * 2.0, X, X)
    with pytest.raises(ValueError, match=r"\(3,\)"):
        adsim.record(np.sin, X).gradient(X)


def test_wrong_shape_on_replay():
    tape = adsim.record(lambda z: np.sum(z ** 2), X)
    with pytest.raises(ValueError, match=r"shape \(4,\).*shape \(3,\)"):
        tape.forward(np.ones(4))
    with pytest.raises(ValueError, match=r"\(4,\)"):
        tape.gradient(np.ones(4))
    with pytest.raises(ValueError, match="has 2 inputs but 3 were given"):
        adsim.record(lambda a, b: np.sum(a * b), X, X).forward(X, X, X)


def test_wrong_direction_and_weight_shapes():
    with pytest.raises(ValueError, match=r"tangent 0 has shape \(4,\)"):
        adsim.jvp(np.sin, X, np.ones(4))
    with pytest.raises(ValueError, match=r"adjoint weight has shape \(4,\)"):
        adsim.vjp(np.sin, X, np.ones(4))
    tape = adsim.record(lambda a, b: a * b, X, X)
    with pytest.raises(ValueError, match="same number of directions"):
        tape.jvp((X, X), (np.ones((3, 2)), np.ones((3, 3))))
    with pytest.raises(ValueError, match="one direction per input"):
        tape.jvp((X, X), (np.ones(3),) * 3)
    with pytest.raises(ValueError, match="output weight"):
        tape.hvp((X, X), (X, X), w=np.ones(4))


def test_shape_errors_inside_the_function():
    with pytest.raises(ValueError, match="not aligned"):
        adsim.grad(lambda z: np.sum(np.ones((2, 2)) @ z))(X)
    with pytest.raises(ValueError, match="reshape"):
        adsim.grad(lambda z: np.sum(z.reshape(2, 2)))(X)
    with pytest.raises(ValueError):
        adsim.grad(lambda z: np.sum(z + np.ones(2)))(X)
    with pytest.raises(IndexError):
        adsim.grad(lambda z: z[5])(X)


def test_argument_errors_of_the_api():
    with pytest.raises(ValueError, match="argnums=2"):
        adsim.grad(lambda z: np.sum(z), argnums=2)(X)
    with pytest.raises(ValueError, match="sideways"):
        adsim.jacobian(lambda z: z, mode="sideways")(X)
    with pytest.raises(ValueError, match="one argnum"):
        adsim.hessian(lambda a, b: np.sum(a * b), argnums=(0, 1))
    with pytest.raises(TypeError, match="returned a tuple"):
        adsim.record(lambda z: (z, z), X)


# ------------------------------------------------------------- dtypes

def test_integer_and_boolean_inputs_convert():
    g = adsim.grad(lambda z: np.sum(z ** 2))
    for x in (np.array([1, 2, 3]), np.array([1, 2, 3], dtype=np.int8), np.array([True, False])):
        assert np.array_equal(g(x), 2.0 * x.astype(float))
        assert g(x).dtype == np.float64


@pytest.mark.parametrize("x", [np.array([1j, 2.0]), np.array([1.0 + 0j])])
def test_complex_input_is_a_type_error(x):
    with pytest.raises(TypeError, match="complex") as info:
        adsim.grad(lambda z: np.sum(z ** 2))(x)
    assert not isinstance(info.value, adsim.ActiveValueLeak)
    with pytest.raises(TypeError, match="complex"):
        adsim.record(np.sin, x)


def test_complex_and_object_constants_are_type_errors():
    with pytest.raises(TypeError, match="complex"):
        adsim.grad(lambda z: np.sum(z * np.array([1 + 2j, 1, 1])))(X)
    with pytest.raises(TypeError, match="dtype object"):
        adsim.grad(lambda z: np.sum(z))(np.array([1.0, None]))
    with pytest.raises(TypeError, match="dtype <U3"):
        adsim.grad(lambda z: z)("abc")


# ---------------------------------------------------------------- leaks

@pytest.mark.parametrize(("f", "what"), [
    (lambda z: float(z[0]) * np.sum(z), "float()"),
    (lambda z: complex(z[0]).real + np.sum(z), "complex()"),
    (lambda z: np.sum(z.__array__()), "np.asarray"),
    (lambda z: z[0].item() + np.sum(z), ".item()"),
    (lambda z: np.sum(z.tolist()), ".tolist()"),
])
def test_active_value_leak(f, what):
    with pytest.raises(adsim.ActiveValueLeak) as info:
        adsim.grad(f)(X)
    message = str(info.value)
    assert what in message
    assert "adsim.value(x)" in message and "np.where" in message


def _math_exp(z):
    return math.exp(z[0]) * np.sum(z)


def _exp_by_its_own_name(z):
    return exp(z[0]) + math.hypot(z[0], z[1])


def _generator_lognormal(z):
    rng = np.random.default_rng(0)
    return np.sum(rng.lognormal(z[0], 0.2, size=3))


def _legacy_poisson(z):
    np.random.seed(0)
    return np.sum(np.random.poisson(z[0], size=3))


def _generator_gamma(z):
    rng = np.random.default_rng(0)
    return rng.gamma(z[0])


def _numpy_scalar(z):
    return np.float64(z[0]) * 2.0


@pytest.mark.parametrize(("f", "words"), [
    (_math_exp, ["`math.exp`", "Use np.exp"]),
    (_exp_by_its_own_name, ["`math.exp`", "Use np.exp"]),
    (_generator_lognormal, ["`numpy.random.Generator.lognormal`",
                            "np.exp(mean + sigma * rng.standard_normal(size))"]),
    (_legacy_poisson, ["`numpy.random.RandomState.poisson`", "no pathwise derivative"]),
    (_generator_gamma, ["`numpy.random.Generator.gamma`", "active shape"]),
    (_numpy_scalar, ["`numpy.float64(x)`", "a 0-d active array works where a number does"]),
], ids=["math.exp", "from math import exp", "Generator.lognormal", "RandomState.poisson",
        "Generator.gamma", "np.float64"])
def test_leaks_through_compiled_calls_name_the_call(f, words):
    """math's functions (with interposition off: on, adsim records them),
    NumPy's random draws and NumPy's scalar types convert active arguments
    where no protocol of NumPy sees the call: the error names the call on
    the user's line and what adsim records instead."""
    with adsim.interposition(f not in (_math_exp, _exp_by_its_own_name)), \
            pytest.raises(adsim.ActiveValueLeak) as info:
        adsim.grad(f)(X)
    for w in words:
        assert w in str(info.value)


@pytest.mark.parametrize("draw", [
    lambda rng, z: rng.normal(z[0], 0.2, size=3),             # adsim's pathwise rule
    lambda rng, z: z[0] + 0.2 * rng.standard_normal(size=3),  # the transform written out
], ids=["rng.normal", "transform"])
def test_draws_with_active_parameters_are_differentiated(draw):
    """Generator.normal with an active location, and the transform its
    message proposes with interposition off: the same draws, and the
    pathwise derivative (d/dmu = 1 for each draw)."""
    def mean_draw(z):
        rng = np.random.default_rng(0)
        return np.mean(draw(rng, z))
    want = np.mean(np.random.default_rng(0).normal(X[0], 0.2, size=3))
    value, g = adsim.value_and_grad(mean_draw)(X)
    assert value == want
    assert np.array_equal(g, np.eye(X.size)[0])


def test_assigning_into_arrays_made_inside_the_function():
    def boundary(u):                      # np.zeros inside a recording: active
        P = np.zeros(u.size + 2)
        P[1:-1] = u
        return np.sum(P ** 2)
    assert np.array_equal(adsim.grad(boundary)(X), 2.0 * X)

    def outside(u):                       # a plain array from outside cannot take it
        PLAIN[1:] = u[1:]
        return np.sum(PLAIN)
    with pytest.raises(adsim.ActiveValueLeak) as info:
        adsim.grad(outside)(X)
    assert "np.zeros_like(u, shape=(n,)); P[1:-1] = u" in str(info.value)


def test_active_array_as_index():
    with pytest.raises(TypeError, match="cannot be used as an index"):
        adsim.grad(lambda z: np.sum(z[z[:1]]))(X)
    with pytest.raises(TypeError, match="boolean condition"):
        adsim.grad(lambda z: np.sum(np.where(z, z, 2 * z)))(X)


# --------------------------------------------------------- recordings

def test_mixing_two_recordings_is_an_error():
    stored = []

    def keep(z):
        stored.append(z * 2.0)
        return np.sum(z)
    adsim.grad(keep)(X)
    with pytest.raises(ValueError, match="kept from an earlier recording"):
        adsim.grad(lambda z: np.sum(z * stored[0]))(X)
    with pytest.raises(RuntimeError, match="finished recording"):
        stored[0] * np.ones(3)
    with pytest.raises(RuntimeError, match="finished recording"):
        np.sin(stored[0])


# A refused use of an active array from a finished recording must not grow
# that tape (no slot or constant is taken before the refusal).
def test_refused_use_of_a_finished_recording_leaves_the_tape_unchanged():
    stored = []

    def keep(z):
        stored.append(z * 2.0)
        return np.sum(z)
    tape = adsim.record(keep, X)
    before = tape.stats()
    for f in (np.sin, np.negative, lambda a: a + 1.0):
        with pytest.raises(RuntimeError, match="finished recording"):
            f(stored[0])
    assert tape.stats() == before


def test_exception_in_the_function_propagates_and_the_cache_recovers():
    calls = []

    def f(z):
        calls.append(1)
        if len(calls) == 1:
            raise KeyError("first call fails")
        return np.sum(z ** 2)
    g = adsim.grad(f)
    with pytest.raises(KeyError, match="first call fails"):
        g(X)
    assert np.array_equal(g(X), 2.0 * X)


# ---------------------------------------------------------- NaN and inf

def test_nan_and_inf_propagate_without_crashing():
    x = np.array([0.5, 0.3, 0.4])
    f = lambda z: np.sum(np.sqrt(z - 0.4) + 1.0 / (z - 0.4))  # noqa: E731
    with np.errstate(all="ignore"):
        value, g = adsim.value_and_grad(f)(x)
        _, jv = adsim.jvp(f, x, np.ones(3))
        hv = adsim.hvp(f, x, np.ones(3))
        J = adsim.jacobian(lambda z: np.log(z - 0.4), mode="reverse")(x)
    assert np.isnan(value)
    assert_close(g[0], 0.5 / np.sqrt(0.1) - 1.0 / 0.1 ** 2, 1e-12, 0)
    assert np.isnan(g[1]) and np.isnan(g[2])
    assert np.isnan(jv)
    assert np.isfinite(hv[0]) and np.isnan(hv[1])
    # log(z - 0.4): 1/(z - 0.4) is 10, -10 (at a NaN value) and inf
    assert_close(np.diag(J)[:2], [10.0, -10.0], 1e-12, 0)
    assert np.diag(J)[2] == np.inf


def test_nan_and_inf_inputs_on_replay():
    tape = adsim.record(lambda z: np.sum(z ** 2), X)
    g = tape.gradient(np.array([np.nan, 1.0, np.inf]))
    assert np.isnan(g[0]) and g[1] == 2.0 and g[2] == np.inf
    assert np.isnan(tape.forward(np.array([np.nan, 1.0, 1.0])))


def test_library_functions_that_convert_their_input_are_named():
    from scipy.linalg import companion, signm
    with pytest.raises(adsim.UnsupportedOperation, match="`scipy.linalg.companion`"):
        adsim.grad(lambda z: np.sum(companion(z)))(X)
    with pytest.raises(adsim.UnsupportedOperation, match="`scipy.linalg.signm`"):  # batching wrapper
        adsim.grad(lambda z: np.sum(signm(np.diag(z))))(X)


def test_slips_get_messages_that_name_the_fix():
    exp = np.exp                        # NumPy's ufunc, kept before the recording
    with pytest.raises(adsim.UnsupportedOperation, match="inside a Python list or tuple"):
        adsim.grad(lambda x: np.sum(exp([x[0] ** 2, x[1] - 1.0])))(X)

    class Solver:                       # a workspace cached on the object at first use
        def loss(self, x):
            if not hasattr(self, "work"):
                self.work = np.zeros(X.shape)
            self.work[:] = x
            return np.sum(self.work ** 2)
    solver = Solver()
    np.testing.assert_allclose(adsim.grad(solver.loss)(X), 2 * X)
    with pytest.raises(ValueError, match="kept from an earlier recording"):
        adsim.grad(solver.loss)(X + 1.0)


def test_hashing_an_active_value_says_why_not():
    """A scalar model function cached with functools.lru_cache, as library
    code caches them: an active value is no cache key (a cached result would
    hold another call's values), and the error says so; so for dict keys
    and complex values. Without the cache the derivative is taken."""
    import functools

    def rate(k):
        return k * np.exp(-k)
    cached = functools.lru_cache(rate)

    def loss(x, f):
        return f(x[0]) + x[1] ** 2
    x = np.array([0.5, 2.0])
    for f in (cached, lambda k: {k: 1.0}[k], lambda k: hash(1j * k)):
        with pytest.raises(adsim.UnsupportedOperation, match="cannot be hashed.*lru_cache") as err:
            adsim.grad(loss)(x, f)
        assert isinstance(err.value, TypeError)        # as Python's own unhashable error
    assert_close(adsim.grad(loss)(x, rate), [np.exp(-0.5) * 0.5, 4.0])
