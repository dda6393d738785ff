"""The stiff-ODE issue's acceptance criteria, where the other tests of
tests/integrate and tests/parallel/test_map_ode_kinds.py leave a gap, checked
as a user meets them: SciPy's names, parameters wherever a model keeps them.

(a) every method (and ``odeint``) with the parameters in ``args`` as a
    tuple, a vector, a dict, a dataclass, a namedtuple; on an object (a
    bound method, an object inside an object, ``__slots__``); in a global,
    a global dict, a default argument: gradients against central differences
    of a tight solve. Times SciPy accepts and the solvers never step over:
    an empty interval ``(t0, t0)`` with active ends, whose end state moves
    with them as the flow does (it was held: ``d y(tf) / d tf`` came out 0
    where it is ``f(t0, y0)``, and BDF and LSODA refused), and ``odeint``
    asked for a time twice (refused in solve_ivp's words) or only for
    ``t[0]`` (refused as a failed integration).
(b) Hessian-vector products through Radau and BDF with events, dense
    output, outputs at the steps and a memory bound, against differences
    of the gradient; LSODA with events and dense output against a tight
    solve.
(c) the solve_ivp tapes test_map_ode_kinds.py does not hold -- a user's
    ``jac``, ``jac_sparsity``, ``memory_limit``, complex states, BDF with
    events, events with dense output, an empty interval, ``odeint`` at
    repeated times or ``t0`` alone (a file held LSODA's ``fun`` with no
    tape when SciPy never called it, and could not be loaded) -- saved and
    loaded bitwise, and mapped bitwise on threads and spawned processes.
(d) Robertson's kinetics at SciPy's default tolerances read as outputs at
    the steps, from ``dense_output``, at an event, with respect to an
    initial concentration: within 1 % of the model's derivative
    (test_kinetics_at_default_tolerances.py holds ``t_eval``).
"""
import collections
import dataclasses
import io
import multiprocessing
import types
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.integrate import odeint, solve_ivp

import adsim
from adsim import parallel
from adsim.integrate import solve_ivp as adsim_solve_ivp
from fdcheck import assert_close

METHODS = ["RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA", "odeint"]

# ---- (a) where the parameters are ------------------------------------------------------

Y0 = np.array([1.0, 0.5])
P0 = np.array([1.0, 0.4, 1.5, 0.75])
T_OUT = [0.7, 1.5]


def lotka_volterra(t, z, a, b, c, d):
    x, y = z
    return [a * x - b * x * y, -c * y + d * x * y]


@dataclasses.dataclass
class Rates:
    a: object
    b: object
    c: object
    d: object


RatesTuple = collections.namedtuple("RatesTuple", "a b c d")


class Model:
    def __init__(self, p):
        self.a, self.b, self.c, self.d = p

    def rhs(self, t, z):
        return lotka_volterra(t, z, self.a, self.b, self.c, self.d)


class Study:
    """A model inside an object: ``self.rates.a``."""

    def __init__(self, p):
        self.rates = Rates(*p)

    def rhs(self, t, z):
        r = self.rates
        return lotka_volterra(t, z, r.a, r.b, r.c, r.d)


class Slotted:
    __slots__ = ("p",)

    def __init__(self, p):
        self.p = p

    def rhs(self, t, z):
        return lotka_volterra(t, z, *self.p)


_RATES = None
_RATE_TABLE = {}


def _with_global(t, z):
    return lotka_volterra(t, z, *_RATES)


def _with_global_dict(t, z):
    return lotka_volterra(t, z, *(_RATE_TABLE[k] for k in "abcd"))


def _by_name(t, z, p):
    return lotka_volterra(t, z, p["a"], p["b"], p["c"], p["d"])


def _by_attribute(t, z, p):
    return lotka_volterra(t, z, p.a, p.b, p.c, p.d)


def _by_index(t, z, p):
    return lotka_volterra(t, z, p[0], p[1], p[2], p[3])


FORMS = {
    "args_tuple": lambda p: (lotka_volterra, tuple(p)),
    "args_vector": lambda p: (_by_index, (p,)),
    "args_dict": lambda p: (_by_name, (dict(zip("abcd", p)),)),
    "args_dataclass": lambda p: (_by_attribute, (Rates(*p),)),
    "args_namedtuple": lambda p: (_by_attribute, (RatesTuple(*p),)),
    "args_namespace": lambda p: (_by_attribute, (types.SimpleNamespace(**dict(zip("abcd", p))),)),
    "bound_method": lambda p: (Model(p).rhs, ()),
    "object_in_object": lambda p: (Study(p).rhs, ()),
    "slots": lambda p: (Slotted(p).rhs, ()),
    "global": lambda p: (_with_global, ()),
    "global_dict": lambda p: (_with_global_dict, ()),
    "default_argument": lambda p: (lambda t, z, q=p: lotka_volterra(t, z, *q), ()),
}


def _outputs(fun, args, method, rtol):
    if method == "odeint":
        return odeint(lambda z, t, *a: fun(t, z, *a), Y0, [0.0] + T_OUT, args=args, rtol=rtol,
                      atol=1e-2 * rtol)[1:]
    return solve_ivp(fun, (0.0, T_OUT[-1]), Y0, method=method, t_eval=T_OUT, args=args,
                     rtol=rtol, atol=1e-2 * rtol).y


def _form_loss(form, method):
    def loss(p):
        global _RATES
        _RATES = p
        _RATE_TABLE.update(zip("abcd", p))
        try:
            fun, args = FORMS[form](p)
            return np.sum(np.asarray(_outputs(fun, args, method, 1e-9)) ** 2)
        finally:
            _RATES = None
            _RATE_TABLE.clear()
    return loss


@pytest.fixture(scope="module")
def tight_gradient():
    """Central differences of SciPy's DOP853 at rtol 1e-13."""
    def loss(p):
        return np.sum(_outputs(lotka_volterra, tuple(p), "DOP853", 1e-13) ** 2)
    h = 1e-6
    return np.array([(loss(P0 + h * e) - loss(P0 - h * e)) / (2 * h) for e in np.eye(4)])


# test_ivp_outer_parameters.py holds bound methods and globals with every method
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("form", [f for f in FORMS if f not in ("args_tuple", "bound_method",
                                                                "global")])
def test_parameters_wherever_the_model_keeps_them(form, method, tight_gradient):
    value, g = adsim.value_and_grad(_form_loss(form, method))(P0)
    assert value == pytest.approx(_form_loss("args_tuple", method)(P0), rel=1e-12)
    assert_close(g, tight_gradient, rtol=1e-6, atol=0.0, what=f"{form}, {method}")


SOLVE_METHODS = [m for m in METHODS if m != "odeint"]


def forced(t, y, k):
    return [-k * y[0] * (1.0 + t), y[0]]


@pytest.mark.parametrize("method", SOLVE_METHODS)
def test_an_empty_interval_moves_with_its_ends(method):
    """``t_span = (t0, t0)``: the end state is ``y0`` (SciPy's), its
    derivatives in the ends those of the flow: ``+-f`` and ``y''``."""
    def end(t0, tf):
        return solve_ivp(forced, (t0, tf), [1.0, 2.0], method=method, args=(2.0,)).y[0, -1]
    t0 = np.array(0.5)
    assert end(t0, t0) == 1.0
    g0, gf = adsim.grad(end, argnums=(0, 1))(t0, t0)
    assert (g0, gf) == pytest.approx((3.0, -3.0), rel=1e-14)       # f = -k y (1 + t)
    second = adsim.hvp(lambda tf: end(0.5, tf), t0, np.array(1.0))
    assert second == pytest.approx((2.0 * 1.5) ** 2 - 2.0, rel=1e-12)   # y'' = (k (1+t))^2 y - k y
    # nothing else moves it: the parameters' derivative is zero, y0's one
    assert adsim.grad(lambda k: solve_ivp(forced, (0.5, 0.5), [1.0, 2.0], method=method,
                                          args=(k,)).y[0, -1])(np.array(2.0)) == 0.0


def test_odeint_at_repeated_times_and_at_t0_alone():
    """SciPy's odeint allows repeated times and ``t = [t0]``: each output's
    derivative in its own time is ``f`` there, whichever entry of ``t``
    holds it."""
    def f(y, t, k):
        return np.stack([-k * y[0] * (1.0 + t), y[0]])
    t = np.array([0.0, 1.0, 1.0, 2.0, 2.0])
    options = dict(args=(0.7,), rtol=1e-10, atol=1e-12)
    Y = odeint(f, [1.0, 2.0], t, **options)
    J = adsim.jacobian(lambda t: odeint(f, [1.0, 2.0], t, **options))(t)
    for j in range(1, 5):
        assert_close(J[j, :, j], f(Y[j], t[j], 0.7), rtol=1e-6, atol=0.0, what=f"d y(t{j}) / d t{j}")
        # another entry of t moves it by the interpolant's slope less f there, about rtol
        others = [i for i in range(1, 5) if i != j]
        assert np.max(np.abs(J[j][:, others])) < 1e-8
    # against a solve without the repeats
    g = adsim.grad(lambda k: np.sum(odeint(f, [1.0, 2.0], t, args=(k,), rtol=1e-10,
                                           atol=1e-12) ** 2))(np.array(0.7))
    want = adsim.grad(lambda k: np.sum(odeint(f, [1.0, 2.0], t[[0, 1, 3]], args=(k,),
                                              rtol=1e-10, atol=1e-12)[[0, 1, 1, 2, 2]] ** 2))
    assert g == pytest.approx(want(np.array(0.7)), rel=1e-12)
    # only t0: y0 itself, moved by nothing but y0
    J0 = adsim.jacobian(lambda y0: odeint(f, y0, [0.5], args=(0.7,)))(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(J0, np.eye(2)[None])
    Jt = adsim.jacobian(lambda t: odeint(f, [1.0, 2.0], t, args=(0.7,)))(np.array([0.5, 0.5]))
    assert_close(Jt[1, :, 1], f(np.array([1.0, 2.0]), 0.5, 0.7), rtol=1e-14, atol=0.0,
                 what="d y(t1) / d t1 at t1 = t0")


# ---- (b) second derivatives and LSODA ----------------------------------------------------

def robertson(t, y, k1, k2, k3):
    A, B, C = y
    return [-k1 * A + k3 * B * C, k1 * A - k2 * B ** 2 - k3 * B * C, k2 * B ** 2]


def c_level(t, y, k1, k2, k3):
    return y[2] - 5e-3


WEIGHTS = np.array([1.0, 1e4, 10.0])
LOG_K = np.log([0.04, 3e7, 1e4])


def stiff_loss(method, kind, rtol=1e-9):
    def loss(log_k):
        options = dict(method=method, args=tuple(np.exp(log_k)), rtol=rtol, atol=1e-4 * rtol)
        if kind == "steps":
            return np.sum(WEIGHTS @ solve_ivp(robertson, (0, 2.0), [1.0, 0, 0], **options).y[:, -1] ** 2)
        if kind == "event":
            sol = solve_ivp(robertson, (0, 2.0), [1.0, 0, 0], t_eval=[2.0], events=c_level,
                            **options)
            return sol.t_events[0][0] + np.sum(WEIGHTS @ sol.y ** 2)
        if kind == "dense":
            sol = solve_ivp(robertson, (0, 2.0), [1.0, 0, 0], dense_output=True, **options)
            return np.sum(WEIGHTS @ sol.sol(np.array([0.3, 1.5])) ** 2)
        if kind == "dense_event":
            sol = solve_ivp(robertson, (0, 2.0), [1.0, 0, 0], dense_output=True, events=c_level,
                            **options)
            return sol.t_events[0][0] + np.sum(WEIGHTS @ sol.sol(1.5) ** 2)
        assert kind == "memory"
        return np.sum(WEIGHTS @ adsim_solve_ivp(robertson, (0, 2.0), [1.0, 0, 0], t_eval=[1.0, 2.0],
                                                memory_limit="20MB", **options).y ** 2)
    return loss


# BDF's derivatives are a Radau solve's: BDF's cases run Radau's tapes too
@pytest.mark.parametrize("method, kind", [("BDF", k) for k in ("steps", "event", "dense", "memory")]
                         + [("Radau", "event"), ("Radau", "dense")])
def test_hvp_through_the_implicit_methods_against_differences_of_the_gradient(method, kind):
    loss = stiff_loss(method, kind)
    v = np.array([0.3, -0.5, 0.8])
    h = 1e-4
    gradient = adsim.grad(loss)
    differences = (gradient(LOG_K + h * v) - gradient(LOG_K - h * v)) / (2 * h)
    assert_close(adsim.hvp(loss, LOG_K, v), differences, rtol=1e-5,
                 atol=1e-6 * np.max(np.abs(differences)), what=f"{method}, {kind}")


def test_lsoda_with_events_and_dense_output_against_a_tight_solve():
    g = adsim.grad(stiff_loss("LSODA", "dense_event", rtol=1e-8))(LOG_K)
    reference = stiff_loss("LSODA", "dense_event", rtol=1e-12)
    h = 1e-5
    want = [(reference(LOG_K + h * e) - reference(LOG_K - h * e)) / (2 * h) for e in np.eye(3)]
    assert_close(g, want, rtol=1e-6, atol=1e-6 * np.max(np.abs(want)), what="LSODA")


# ---- (c) tapes of every kind: files, threads, processes ----------------------------------

POINTS = [(Y0 * s, P0 * s) for s in (1.0, 1.0 + 1e-7, 1.0 - 2e-7)]


def lotka_volterra_jacobian(t, z, a, b, c, d):
    x, y = z
    return np.array([[a - b * y, -b * x], [d * y, -c + d * x]])


def prey_peak(t, z, a, b, c, d):
    return z[0] - 1.2


prey_peak.terminal = True


def predators_low(t, z, a, b, c, d):
    return z[1] - 0.45


def with_jac(method):
    def loss(z0, rates):
        return np.sum(solve_ivp(lotka_volterra, (0.0, 0.5), z0, method=method, args=tuple(rates),
                                jac=lotka_volterra_jacobian, t_eval=[0.2, 0.5], rtol=1e-5).y ** 2)
    return loss


def with_sparsity(method):
    def loss(z0, rates):
        return np.sum(solve_ivp(lotka_volterra, (0.0, 0.5), z0, method=method, args=tuple(rates),
                                jac_sparsity=sp.csr_matrix(np.ones((2, 2))), t_eval=[0.2, 0.5],
                                rtol=1e-5).y ** 2)
    return loss


def with_memory_limit(method):
    def loss(z0, rates):
        return np.sum(adsim_solve_ivp(lotka_volterra, (0.0, 0.5), z0, method=method,
                                      args=tuple(rates), t_eval=[0.2, 0.5], rtol=1e-5,
                                      memory_limit="20MB", snapshots=3).y ** 2)
    return loss


def with_events(method, t_eval=None, dense=False):
    def loss(z0, rates):
        sol = solve_ivp(lotka_volterra, (0.0, 5.0), z0, method=method, args=tuple(rates),
                        events=[predators_low, prey_peak], t_eval=t_eval, dense_output=dense,
                        rtol=1e-5)
        out = sol.t_events[0][0] + sol.t_events[1][0] + np.sum(sol.y_events[1] ** 2)
        return out + np.sum(sol.sol(0.1) ** 2) if dense else out
    return loss


def complex_state(method, dense=False):
    def loss(z0, rates):
        H = np.array([[rates[0], rates[1]], [rates[1], -rates[2]]])
        sol = solve_ivp(lambda t, psi: -1j * (H @ psi), (0.0, 0.5), z0 * (1.0 + 0.5j),
                        method=method, t_eval=None if dense else [0.2, 0.5],
                        dense_output=dense, rtol=1e-6)
        if dense:
            return np.sum(sol.sol(0.3).real ** 2) + np.sum(sol.y[:, -1].imag)
        return np.sum(np.abs(sol.y) ** 2) + rates[3] * np.sum(sol.y.real)
    return loss


def empty_interval(method):
    def loss(z0, rates):
        sol = solve_ivp(lotka_volterra, (0.0, 0.0 * rates[0]), z0, method=method,
                        args=tuple(rates))
        return np.sum(sol.y ** 2)
    return loss


def odeint_at(times):
    def loss(z0, rates):
        return np.sum(odeint(lotka_volterra, z0, times, args=tuple(rates), tfirst=True) ** 2)
    return loss


KINDS = {**{f"{m}-jac": with_jac(m) for m in ("Radau", "BDF", "LSODA")},
         **{f"{m}-jac_sparsity": with_sparsity(m) for m in ("Radau", "BDF")},
         **{f"{m}-memory_limit": with_memory_limit(m) for m in ("RK45", "Radau", "BDF")},
         "BDF-events-steps": with_events("BDF"), "BDF-events-t_eval": with_events("BDF", [0.5, 1.0]),
         **{f"{m}-events-dense": with_events(m, dense=True) for m in ("RK23", "Radau", "LSODA")},
         "RK45-complex": complex_state("RK45"), "DOP853-complex-dense": complex_state("DOP853", True),
         **{f"{m}-empty-interval": empty_interval(m) for m in ("RK45", "BDF", "LSODA")},
         "odeint-repeated-times": odeint_at([0.0, 0.2, 0.2, 0.5]),
         "odeint-t0-only": odeint_at([0.0, 0.0])}


def bits(results):
    return [b"".join(np.asarray(a).tobytes() for a in r) for r in results]


@pytest.fixture(scope="module")
def tapes():
    """name -> (tape, serial gradients at POINTS)."""
    out = {}
    for name, loss in KINDS.items():
        tape = adsim.record(loss, *POINTS[0])
        out[name] = tape, bits([tape.gradient(*p) for p in POINTS])
    return out


@pytest.mark.parametrize("name", list(KINDS))
def test_saved_and_loaded_bitwise(name, tapes):
    tape, want = tapes[name]
    buffer = io.BytesIO()
    tape.save(buffer)
    buffer.seek(0)
    loaded = adsim.load_tape(buffer)
    assert bits([loaded.gradient(*p) for p in POINTS]) == want
    # the tape's gradient is the functional API's
    assert bits([adsim.grad(KINDS[name], argnums=(0, 1))(*POINTS[0])]) == want[:1]


def test_mapped_bitwise_on_threads_and_spawned_processes(tapes):
    with ThreadPoolExecutor(2) as pool:
        for name, (tape, want) in tapes.items():
            assert bits(parallel.map("gradient", tape, POINTS, executor=pool,
                                     chunk_size=1)) == want, name
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        for name, (tape, want) in tapes.items():
            assert bits(parallel.map("gradient", tape, POINTS, executor=pool,
                                     chunk_size=2)) == want, name


# ---- (d) Robertson's kinetics at SciPy's default tolerances -------------------------------

T_END = 4000.0
LOG_K_FIT = LOG_K + np.array([0.1, -0.2, 0.25])     # a fit under way


def half_converted(t, y, k1, k2, k3):
    return y[0] - 0.5


def kinetics(method, kind, **tolerances):
    """The concentrations a user reads (and an event time, scaled to the
    concentrations' size) as functions of ``x = (log k, A(0))``."""
    def outputs(x):
        c0 = np.concatenate([x[3:], 1.0 - x[3:], 0.0 * x[3:]])
        options = dict(method=method, args=tuple(np.exp(x[:3])), **tolerances)
        if kind == "steps":
            return solve_ivp(robertson, (0.0, T_END), c0, **options).y[:, -1]
        if kind == "dense":
            sol = solve_ivp(robertson, (0.0, T_END), c0, dense_output=True, **options)
            return sol.sol(np.array([0.4, 40.0, 1000.0])).ravel()
        sol = solve_ivp(robertson, (0.0, T_END), c0, events=half_converted, **options)
        return np.concatenate([sol.t_events[0][:1] / 100.0, sol.y[:, -1]])
    return outputs


@pytest.mark.parametrize("kind", ["steps", "dense", "event"])
def test_kinetics_at_default_tolerances_within_one_percent(kind):
    x = np.concatenate([LOG_K_FIT, [0.9]])
    tight = kinetics("LSODA", kind, rtol=1e-11, atol=1e-16)
    h = 1e-5
    want = np.stack([(tight(x + h * e) - tight(x - h * e)) / (2 * h) for e in np.eye(4)], axis=1)
    scale = np.max(np.abs(want), axis=1, keepdims=True)      # each output on its own scale
    for method in ("Radau", "BDF", "LSODA"):
        J = adsim.jacobian(kinetics(method, kind))(x)
        error = np.max(np.abs(J - want) / scale)
        assert error < 1e-2, f"{method}, {kind}: {error:.1e}"


class _CachingModel:
    """A fun that keeps an active value in ``self`` at its first call."""

    def __init__(self):
        self.k = None

    def rhs(self, t, y, p):
        if self.k is None:
            self.k = p * 2.0
        return -self.k * y


@pytest.mark.parametrize("method", ["RK45", "Radau", "BDF", "LSODA"])
def test_a_fun_keeping_an_active_value_between_calls_is_refused_saying_so(method):
    """BDF's Newton matrix is recorded on a tape of its own at the start:
    its refusal spoke of nested derivatives, and now says what fun did."""
    model = _CachingModel()
    with pytest.raises(adsim.AdsimError, match="finished recording|kept from an earlier call"):
        adsim.grad(lambda p: solve_ivp(model.rhs, (0, 1), [1.0], method=method,
                                       args=(p,)).y[0, -1])(np.array(0.5))
