"""SciPy's constraint objects holding parameters, and COBYQA: ``Bounds``,
``NonlinearConstraint`` and ``LinearConstraint`` whose limits or matrix are
active values are differentiated through the KKT conditions (a bound or
limit that holds the solution moves it); what cannot be differentiated is
refused by name. Projections onto simple sets have closed forms to check
against; every case is also replayed at new parameters."""
import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, NonlinearConstraint

import adsim
from adsim.errors import UnsupportedOperation
from fdcheck import assert_close

TARGET = np.array([0.2, 0.7, -0.3])
COBYQA_TIGHT = {"final_tr_radius": 1e-10}


def _rtol(method):
    """trust-constr's interior point method ends with a barrier parameter:
    a limit holding the solution keeps a slack of about it."""
    return 1e-4 if method == "trust-constr" else 1e-6


def _nearest(z0, method, **given):
    """The point nearest TARGET in the set ``given`` describes."""
    options = {"COBYQA": COBYQA_TIGHT, "SLSQP": {"ftol": 1e-12},
               "trust-constr": {"gtol": 1e-12, "xtol": 1e-12, "barrier_tol": 1e-12}}
    jac = None if method == "COBYQA" else (lambda z: 2.0 * (z - TARGET))
    res = so.minimize(lambda z: np.sum((z - TARGET) ** 2), z0, method=method, jac=jac,
                      options=options.get(method, {}), **given)
    return res.x


@pytest.mark.parametrize("method", ["L-BFGS-B", "SLSQP", "trust-constr", "COBYQA"])
def test_a_bounds_object_whose_limits_are_parameters(method):
    """TARGET clipped to the box: coordinate 0 held by its lower bound,
    coordinate 1 by its upper bound, coordinate 2 free."""
    def clipped(p):
        lower = np.array([p[0], -2.0, -2.0])
        return _nearest(np.zeros(3), method, bounds=Bounds(lower, [2.0, p[1], 2.0]))
    p = np.array([0.5, 0.3])
    slope = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    assert_close(adsim.jacobian(clipped)(p), slope, _rtol(method), 1e-7, "dz / dlimits")
    weights = np.array([1.0, 2.0, 3.0])
    tape = adsim.record(lambda p: weights @ clipped(p), p)
    q = np.array([0.6, 0.25])
    assert_close(tape.forward(q), weights @ np.clip(TARGET, [0.6, -2, -2], [2, 0.25, 2]),
                 _rtol(method), 1e-7, "replayed value")
    assert_close(tape.gradient(q), weights @ slope, _rtol(method), 1e-7, "replayed gradient")


def _onto_ball(center, radius):
    return radius * center / np.linalg.norm(center)


@pytest.mark.filterwarnings("ignore:delta_grad == 0.0")   # trust-constr's constraint Hessian
@pytest.mark.parametrize("method", ["SLSQP", "trust-constr", "COBYQA"])
def test_a_nonlinear_constraint_whose_limit_is_a_parameter(method):
    """The point of the ball |z| <= r nearest TARGET (outside it); r is the
    constraint's upper limit, the lower one a parameter that never binds."""
    def f(p):
        ball = NonlinearConstraint(lambda z: z @ z, np.array([p[1]]), np.array([p[0] ** 2]))
        z = _nearest(np.full(3, 0.1), method, constraints=[ball])
        return z @ np.array([1.0, -2.0, 0.5])
    p = np.array([0.5, -1.0])
    want = np.array([1.0, -2.0, 0.5]) @ TARGET / np.linalg.norm(TARGET)
    assert_close(adsim.grad(f)(p), [want, 0.0], _rtol(method), 1e-7, "d / dlimits")
    tape = adsim.record(f, p)
    assert_close(tape.gradient(np.array([0.45, -0.5])), [want, 0.0], _rtol(method), 1e-7,
                 "replayed gradient")


@pytest.mark.parametrize("method", ["SLSQP", "trust-constr", "COBYQA"])
def test_a_linear_constraint_whose_matrix_and_limit_are_parameters(method):
    """The projection onto the half-space a . z >= b: z = TARGET + (b - a .
    TARGET) a / |a|^2 where the constraint holds TARGET back."""
    def projection(a, b):
        return TARGET + (b - a @ TARGET) * a / (a @ a)

    def f(p):
        a = np.array([1.0, p[0], 1.0])
        z = _nearest(np.full(3, 0.5), method, constraints=[LinearConstraint(a[None, :], p[1])])
        return z @ np.array([1.0, 2.0, 3.0])

    def exact(p):
        return projection(np.array([1.0, p[0], 1.0]), p[1]) @ np.array([1.0, 2.0, 3.0])

    def exact_gradient(p, h=1e-6):
        return np.array([(exact(p + h * e) - exact(p - h * e)) / (2 * h) for e in np.eye(2)])
    p = np.array([0.3, 0.8])
    assert_close(adsim.grad(f)(p), exact_gradient(p), _rtol(method), 1e-7, "gradient")
    tape = adsim.record(f, p)
    q = np.array([0.4, 0.9])
    assert_close(tape.gradient(q), exact_gradient(q), _rtol(method), 1e-7, "replayed gradient")


def test_cobyqa_with_a_parameter_in_the_objective_only():
    """Unconstrained COBYQA: the minimiser's first-order conditions."""
    def f(p):
        res = so.minimize(lambda z: np.sum((z - p[0] * TARGET) ** 2) + p[1] * z[0] ** 4,
                          np.zeros(3), method="COBYQA", options=COBYQA_TIGHT)
        return np.sum(res.x)
    p = np.array([0.5, 0.0])
    assert_close(adsim.grad(f)(p), [np.sum(TARGET), -2.0 * (0.5 * TARGET[0]) ** 3], 1e-6,
                 1e-8, "gradient")


def test_a_linear_constraint_of_a_sparse_matrix_of_active_values_is_refused_by_name():
    def f(p):
        A = sp.csr_matrix((np.array([1.0, p[0], 1.0]), ([0, 0, 0], [0, 1, 2])), shape=(1, 3))
        return np.sum(_nearest(np.full(3, 0.5), "SLSQP",
                               constraints=[LinearConstraint(A, p[1])]))
    with pytest.raises(UnsupportedOperation, match=r"A\.toarray\(\)"):
        adsim.grad(f)(np.array([0.3, 0.8]))


def test_a_bounded_scalar_minimum_held_by_its_bound_is_refused():
    """The bounded method stops up to about xatol inside a bound holding
    the minimum: not a zero of the derivative, so it is refused, whether
    the bound alone or the objective too reads the parameters; a minimum
    inside the bounds has a derivative (zero with respect to the bounds)."""
    def held(p):                        # the minimum at 2 lies beyond the upper bound
        return so.minimize_scalar(lambda t: (t - 2.0) ** 2, bounds=(p[0], p[1] + 1.0),
                                  method="bounded").x

    def held_too(p):
        return so.minimize_scalar(lambda t: (t - 2.0 * p[0] - 1.0) ** 2,
                                  bounds=(0.0, p[1] + 1.0), method="bounded").x

    def inside(p):
        return so.minimize_scalar(lambda t: (t - p[0]) ** 2, bounds=(-1.0, p[1] + 1.0),
                                  method="bounded", options={"xatol": 1e-10}).x
    p = np.array([0.5, 0.3])
    for f in (held, held_too):
        with pytest.raises(UnsupportedOperation, match="lies on its bounds"):
            adsim.grad(f)(p)
    assert_close(adsim.grad(inside)(p), [1.0, 0.0], 1e-8, 1e-8, "gradient inside")
