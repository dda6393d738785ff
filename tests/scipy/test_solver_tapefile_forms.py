"""The forms of SciPy solver calls tape files once refused, as users write
them: Newton-type derivatives of x and a vector (``hessp=``,
``fhess_p=``, a NonlinearConstraint's ``hess(x, v)``), saved as tapes of
``(x, vector, *parameters)``; a constrained objective returning its
gradient too (``jac=True``), saved as the tapes of each; limits and
constraint matrices that are active (parameters, or arrays of constants
made inside the recorded function), saved as parameters of the solve;
sparse constraint matrices (CSR, CSC, COO), saved in their own form, and
those of other formats and dtypes as float64 CSR of the same values;
callbacks, left out of the file (a callback cannot shape a result adsim
differentiates: one that stops the solver makes it SolverNotConverged);
bounds of an unconstrained solve that move with the parameters, given to
SciPy and checked at each solve's own values (brackets too). Each tape
saved and loaded replays bitwise like the original (values, gradients,
Hessian-vector products), its gradient agrees with central differences,
and an altered file is refused by name."""
import functools
import json

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sps
from scipy.optimize import Bounds, LinearConstraint, NonlinearConstraint

import adsim
from adsim import tapefile
from adsim.errors import SolverNotConverged
from fdcheck import assert_close, central
from tapefile_bytes import replace_section, section
from tapefile_replays import assert_same_replays, callback_kinds, copies

FIRST_ORDER = ["forward", "gradient", "jvp", "vjp"]

# trust-constr's quasi-Newton Hessian of a linear constraint
pytestmark = pytest.mark.filterwarnings("ignore:delta_grad == 0.0")


def assert_saved_like_original(f, p, points, tmp_path, kind, step=1e-4, rtol=1e-6, atol=1e-8):
    """The tape of ``f`` at ``p`` holds a solution of ``kind`` and replays,
    saved and loaded (and pickled), bitwise like itself at ``points``
    (an hvp at the last); the loaded tape's gradient at ``p`` matches central
    differences."""
    tape = adsim.record(f, p)
    assert kind in callback_kinds(tape)
    copied = copies(tape, tmp_path)
    assert_same_replays(tape, copied, [(q,) for q in points], methods=FIRST_ORDER)
    assert_same_replays(tape, copied, [(points[-1],)], methods=["hvp"])   # (seconds each)
    loaded = tapefile.load(tmp_path / "saved.adtape")
    for v in np.eye(p.size):
        assert_close(loaded.gradient(p) @ v, central(f, [p], [v], h=step), rtol, atol,
                     "loaded gradient . v")
    return tape


@functools.lru_cache(maxsize=None)
def _file(f, p):
    return tapefile.dumps(adsim.record(f, np.array(p)))


def altered(f, p, kind, change):
    """The file of the tape of ``f`` at ``p`` with ``change`` applied to the
    description of its first ``kind`` solution."""
    calls, state = described(_file(f, tuple(p)), kind)
    change(state)
    return replace_section(_file(f, tuple(p)), "CALL", json.dumps(calls).encode())


def described(data, kind):
    """The CALL section of a file and the description of its first ``kind`` solution."""
    _, count, at = section(data, "CALL")
    calls = json.loads(data[at:at + count])
    return calls, [c["state"] for c in calls if c["kind"] == kind][0]


def _renamed(arguments, old, new):
    arguments[new] = arguments.pop(old)


# ---- derivatives of x and a vector ---------------------------------------------------

FEATURES = np.array([[1.0, 0.3, -1.2], [1.0, -0.7, 0.4], [1.0, 1.5, 0.9], [1.0, -1.1, -0.5],
                     [1.0, 0.2, 1.7], [1.0, 0.8, -0.9]])
LABELS = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])


def logistic_fit(p):
    """A ridge-regularised logistic regression fitted by Newton-CG (and by
    fmin_ncg) from its gradient and Hessian-vector product, the ridge
    weight p[0] and the weight of the last sample p[1] the parameters: the
    fitted coefficients' predicted log-odds at a new point."""
    ridge, weights = p[0], np.concatenate([np.ones(5), p[1:2]])

    def loss(b):
        z = FEATURES @ b
        return np.sum(weights * (np.log1p(np.exp(z)) - LABELS * z)) + 0.5 * ridge * b @ b

    def gradient(b):
        s = 1.0 / (1.0 + np.exp(-(FEATURES @ b)))
        return FEATURES.T @ (weights * (s - LABELS)) + ridge * b

    def hessp(b, v):
        s = 1.0 / (1.0 + np.exp(-(FEATURES @ b)))
        return FEATURES.T @ (weights * s * (1.0 - s) * (FEATURES @ v)) + ridge * v

    b = so.minimize(loss, np.zeros(3), jac=gradient, hessp=hessp, method="Newton-CG",
                    options={"xtol": 1e-13}).x
    c = so.fmin_ncg(loss, np.zeros(3), gradient, fhess_p=hessp, avextol=1e-13, disp=0)
    return b @ [1.0, 0.5, -0.3] + c @ [0.2, 1.0, 1.0]


def test_newton_cg_fits_given_hessp_save_and_replay_bitwise(tmp_path):
    p = np.array([0.4, 1.3])
    assert_saved_like_original(logistic_fit, p, [p, np.array([0.45, 1.2])],
                               tmp_path, "adsim.implicit_solution")
    _, state = described(tapefile.dumps(adsim.record(logistic_fit, p)),
                         "adsim.implicit_solution")
    assert [name for name, _ in state["derivatives"]] in (["jac", "hessp"],
                                                           ["fprime", "fhess_p"])


MU = np.array([0.10, 0.07, 0.04])
SIGMA = np.array([[0.040, 0.006, 0.002], [0.006, 0.020, 0.001], [0.002, 0.001, 0.005]])
INVESTED, NO_SHORTS = LinearConstraint(np.ones((1, 3)), 1.0, 1.0), Bounds(np.zeros(3), np.ones(3))


def portfolio(p):
    """Mean-variance with a risk budget (trust-constr): maximise the expected
    return tilted by p[1], less a concentration penalty p[0], with the
    variance at most 0.11**2, fully invested, no short sales; the
    objective's hessp and the risk constraint's hess(w, v) given."""
    tau, mu = p[0], MU + p[1] * np.array([-1.0, 0.5, 1.0])
    risk = NonlinearConstraint(lambda w: w @ SIGMA @ w, -np.inf, 0.11 ** 2,
                               jac=lambda w: (2.0 * SIGMA @ w)[None, :],
                               hess=lambda w, v: 2.0 * v[0] * SIGMA)
    r = so.minimize(lambda w: -mu @ w + 0.5 * tau * np.sum(w ** 2), [1 / 3, 1 / 3, 1 / 3],
                    method="trust-constr", jac=lambda w: -mu + tau * w,
                    hessp=lambda w, v: tau * v, constraints=[risk, INVESTED], bounds=NO_SHORTS,
                    options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 3000,
                             "initial_barrier_parameter": 1e-10,
                             "initial_barrier_tolerance": 1e-10})
    return r.x @ MU


def test_portfolios_given_hessp_and_a_constraint_hess_save_and_replay_bitwise(tmp_path):
    p = np.array([0.05, 0.02])
    tape = assert_saved_like_original(portfolio, p, [p, np.array([0.06, 0.01])],
                                      tmp_path, "adsim.constrained_solution", rtol=1e-4)
    # the risk budget holds the solution: its hess was called
    assert tape.forward(p) == pytest.approx(portfolio(p), rel=1e-9)


def test_a_constraint_hess_that_cannot_be_recorded_is_refused_by_name(tmp_path):
    """A hess returning a sparse matrix of active values cannot be recorded
    as a tape; the refusal names the function."""
    def f(p):
        disk = NonlinearConstraint(lambda z: z @ z, 0.0, 1.0, jac=lambda z: 2.0 * z[None, :],
                                   hess=lambda z, v: sps.csr_matrix(2.0 * v[0] * np.eye(2)))
        return so.minimize(lambda z: np.sum((z - p) ** 2), [0.5, 0.5], method="trust-constr",
                           constraints=disk, options={"gtol": 1e-10}).x @ [1.0, 2.0]
    tape = adsim.record(f, np.array([1.5, 0.7]))
    with pytest.raises(adsim.TapeCopyError,
                       match=r"could not be recorded \(derivative 2, a NonlinearConstraint's hess\)"):
        tape.save(tmp_path / "solve.adtape")


@pytest.mark.parametrize("f,kind,change,message", [
    (logistic_fit, "adsim.implicit_solution",
     lambda st: st.update(derivatives=st["derivatives"][::-1]),
     r"a function of \[\(3,\), \(3,\), .*\(x, vector, parameters\)"),
    (logistic_fit, "adsim.implicit_solution",
     lambda st: st.update(derivatives=[["jac", 2]]), r"jac= of minimize takes \[\(3,\), \(3,\), \(\), \(6,\)\]; it is a function of \[\(3,\), \(\), \(6,\)\]"),
    (portfolio, "adsim.constrained_solution",
     lambda st: _renamed(st["arguments"]["dict"], "hessp", "hess"),
     r"function 3 of minimize maps \[\(3,\), \(3,\), \(3,\), \(\)\].*takes "
     r"\[\(3,\), \(3,\), \(\)\] \(x and the parameters\)"),
    (portfolio, "adsim.constrained_solution",
     lambda st: st["arguments"]["dict"].pop("hessp"), "functions, each with its tapes")])
def test_altered_files_of_derivatives_of_a_vector_are_refused(f, kind, change, message):
    p = (0.4, 1.3) if f is logistic_fit else (0.05, 0.02)
    with pytest.raises(adsim.TapeFileError, match=message):
        tapefile.loads(altered(f, p, kind, change))


# ---- a constrained objective returning its gradient too ------------------------------

# species H2, CO2, H2O, CO, CH4; rows: the elements C, H, O
ELEMENTS = np.array([[0.0, 1.0, 0.0, 1.0, 1.0], [2.0, 0.0, 2.0, 0.0, 4.0],
                     [0.0, 2.0, 1.0, 1.0, 0.0]])
ENTHALPY = np.array([0.0, -47.3, -29.1, -13.3, -9.0])     # of formation, / R (1000 K)
ENTROPY = np.array([15.7, 25.7, 22.6, 23.7, 22.4])        # / R


def methanation(p):
    """The equilibrium of a CO2 methanation feed (ideal gases at 1 bar):
    the Gibbs energy minimised by SLSQP under the element balances, the
    objective returning its value and gradient (jac=True), at the
    temperature p[0] (in 1000 K) and the hydrogen fed p[1]: the methane made."""
    g = ENTHALPY / p[0] - ENTROPY
    totals = ELEMENTS @ np.array([p[1], 1.0, 0.5, 0.0, 0.0])

    def gibbs(n):
        logs = np.log(n / np.sum(n))
        return n @ (g + logs), g + logs
    r = so.minimize(gibbs, np.full(5, 0.5), jac=True, method="SLSQP",
                    constraints={"type": "eq", "fun": lambda n: ELEMENTS @ n - totals},
                    bounds=[(1e-8, None)] * 5, options={"ftol": 1e-14, "maxiter": 500})
    return r.x[4]


def test_equilibria_of_an_objective_returning_its_gradient_save_and_replay_bitwise(tmp_path):
    p = np.array([1.0, 3.0])
    assert_saved_like_original(methanation, p, [p, np.array([0.95, 3.2])],
                               tmp_path, "adsim.constrained_solution", step=1e-3, rtol=1e-5)
    _, state = described(tapefile.dumps(adsim.record(methanation, p)),
                         "adsim.constrained_solution")
    assert len(state["variants"]) == 3          # the value, the constraint, the gradient


def test_an_altered_file_of_an_objective_returning_its_gradient_is_refused():
    def change(state):                 # the gradient's tapes then belong to no function
        state["arguments"]["dict"]["jac"] = False
    with pytest.raises(adsim.TapeFileError, match="has 2 functions, each with its tapes"):
        tapefile.loads(altered(methanation, (1.0, 3.0), "adsim.constrained_solution", change))


# ---- limits and constraint matrices that are active ----------------------------------

def budgeted_portfolio(p):
    """``portfolio`` as written inline: the risk budget p[1] a limit, the
    full-investment row, the bounds and the start arrays made inside the
    recorded function (active arrays of constants there)."""
    tau, mu = p[0], MU + 0.02 * np.array([-1.0, 0.5, 1.0])
    risk = NonlinearConstraint(lambda w: w @ SIGMA @ w, -np.inf, p[1] ** 2,
                               jac=lambda w: (2.0 * SIGMA @ w)[None, :],
                               hess=lambda w, v: 2.0 * v[0] * SIGMA)
    r = so.minimize(lambda w: -mu @ w + 0.5 * tau * np.sum(w ** 2), np.full(3, 1 / 3),
                    method="trust-constr", jac=lambda w: -mu + tau * w,
                    hessp=lambda w, v: tau * v,
                    constraints=[risk, LinearConstraint(np.ones((1, 3)), 1.0, 1.0)],
                    bounds=Bounds(np.zeros(3), np.ones(3)),
                    options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 3000,
                             "initial_barrier_parameter": 1e-10,
                             "initial_barrier_tolerance": 1e-10})
    return r.x @ MU


SHARES = np.array([0.5, 0.3, 0.2])
P_CAPPED = np.array([1.5, 0.7])


def consumption(p):
    """A consumer maximising Cobb-Douglas utility (SLSQP) under a budget
    whose prices (the constraint's matrix) and income (its limit) move
    with p: the spending on each good is its share of the income, so the
    utility of the choice is known in closed form (``consumption_exact``)."""
    prices = np.array([1.0 + p[0], 2.0, 0.5 * p[0]])
    income = 10.0 * p[1]
    x = so.minimize(lambda q: -SHARES @ np.log(q), np.ones(3), method="SLSQP",
                    constraints=LinearConstraint(prices[None, :], -np.inf, income),
                    bounds=[(1e-6, None)] * 3, options={"ftol": 1e-15, "maxiter": 500}).x
    return SHARES @ np.log(x)


def consumption_gradient(p):
    """d/dp of SHARES @ log(SHARES * income / prices), the exact choice."""
    return np.array([-SHARES[0] / (1.0 + p[0]) - SHARES[2] / p[0], 1.0 / p[1]])


def capped(p):
    """L-BFGS-B with bound pairs from the parameters, both upper bounds
    holding the solution: x = p, gradient (1, 2)."""
    x = so.minimize(lambda z: np.sum((z - 2.0) ** 2), [0.0, 0.0], method="L-BFGS-B",
                    bounds=[(-1.0, p[0]), (-1.0, p[1])]).x
    return x @ [1.0, 2.0]


def test_limits_and_matrices_that_are_active_save_and_replay_bitwise(tmp_path):
    p = np.array([0.05, 0.11])
    tape = assert_saved_like_original(budgeted_portfolio, p,
                                      [p, np.array([0.06, 0.1])], tmp_path,
                                      "adsim.constrained_solution", rtol=1e-4)
    assert tape.forward(p) == pytest.approx(portfolio(np.array([0.05, 0.02])), rel=1e-9)
    q = np.array([1.2, 0.9])
    tape = assert_saved_like_original(consumption, q, [q, q * 1.1], tmp_path,
                                      "adsim.constrained_solution")
    loaded = tapefile.loads(tapefile.dumps(tape))
    for point in (q, q * 1.1):
        assert_close(loaded.gradient(point), consumption_gradient(point), 1e-7, 1e-9,
                     "gradient of the consumer's utility")
    _, state = described(tapefile.dumps(tape), "adsim.constrained_solution")
    assert state["data_parameters"][:3] != [None, None, None]     # A, lb, ub
    tape = assert_saved_like_original(capped, P_CAPPED, [P_CAPPED, P_CAPPED * 1.1], tmp_path,
                                      "adsim.constrained_solution")
    np.testing.assert_array_equal(tapefile.loads(tapefile.dumps(tape)).gradient(P_CAPPED),
                                  [1.0, 2.0])


@pytest.mark.parametrize("change", [
    lambda st: st.update(data_parameters=st["data_parameters"][:-1]),
    lambda st: st.update(data_parameters=[0 if k is None else k
                                          for k in st["data_parameters"]]),
    lambda st: st.update(data_parameters=[99 if k is not None else k
                                          for k in st["data_parameters"]]),
    lambda st: st.update(data_parameters="all")])
def test_altered_parameters_of_limits_are_refused(change):
    with pytest.raises(adsim.TapeFileError, match="limits and matrices of minimize are"):
        tapefile.loads(altered(consumption, (1.2, 0.9), "adsim.constrained_solution", change))


# ---- sparse constraint matrices --------------------------------------------------------

# a network of 4 nodes and 5 edges (0->1, 0->2, 1->2, 1->3, 2->3): flow out
# minus flow in at nodes 0, 1, 2 (node 3 takes what is left)
INCIDENCE = sps.csr_matrix(np.array([[1.0, 1.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 1.0, 1.0, 0.0],
                                     [0.0, -1.0, -1.0, 0.0, 1.0]]))


def flows(p):
    """The least-cost flows of a network (quadratic costs, edge 0's weight
    p[0]) carrying p[1] from node 0 and 0.5 out of node 2 to node 3, under
    the conservation constraint of its sparse incidence matrix: trust-constr
    given it in CSR form, SLSQP in COO form. The flows are linear in the
    supply: ``flows_exact``."""
    weights = np.array([p[0], 1.0, 2.0, 1.5, 1.0])
    supply = np.array([p[1], 0.0, -0.5])

    def cost(x):
        return 0.5 * np.sum(weights * x ** 2)
    x = so.minimize(cost, np.zeros(5), method="trust-constr",
                    constraints=LinearConstraint(INCIDENCE, supply, supply),
                    options={"gtol": 1e-13, "xtol": 1e-15}).x
    y = so.minimize(cost, np.zeros(5), method="SLSQP",
                    constraints=LinearConstraint(INCIDENCE.tocoo(), supply, supply),
                    options={"ftol": 1e-15}).x
    return x @ [1.0, 2.0, 3.0, 4.0, 5.0] + y @ [1.0, -1.0, 1.0, 2.0, 0.5]


def flows_exact(p):
    """The same flows in closed form: x = W^-1 B^T (B W^-1 B^T)^-1 s."""
    inverse = 1.0 / np.array([p[0], 1.0, 2.0, 1.5, 1.0])
    B = INCIDENCE.toarray()
    x = inverse * (B.T @ np.linalg.solve((B * inverse) @ B.T, [p[1], 0.0, -0.5]))
    return x @ [1.0, 2.0, 3.0, 4.0, 5.0] + x @ [1.0, -1.0, 1.0, 2.0, 0.5]


def test_sparse_constraint_matrices_save_and_replay_bitwise(tmp_path):
    p = np.array([0.8, 1.5])
    # (differences of trust-constr's solutions are good to about 1e-4; the
    # closed form below checks the gradient to 1e-6)
    tape = assert_saved_like_original(flows, p, [p, np.array([1.1, 1.2])],
                                      tmp_path, "adsim.constrained_solution", step=1e-3,
                                      rtol=1e-4)
    loaded = tapefile.loads(tapefile.dumps(tape))
    for q in (p, np.array([1.1, 1.2])):
        assert loaded.forward(q) == pytest.approx(flows_exact(q), rel=1e-8)
        assert_close(loaded.gradient(q), [central(flows_exact, [q], [e])[()] for e in np.eye(2)],
                     1e-6, 1e-8, "gradient of the flows")
    _, state = described(tapefile.dumps(tape), "adsim.constrained_solution")
    matrix = state["arguments"]["dict"]["constraints"]["LinearConstraint"]["A"]["sparse"]
    assert matrix["type"] == "csr_matrix" and matrix["shape"] == [3, 5]


def _sparse_matrix(state):
    return state["arguments"]["dict"]["constraints"]["LinearConstraint"]["A"]["sparse"]


@pytest.mark.parametrize("change,message", [
    (lambda m: m.update(type="dia_matrix"), "a sparse matrix is one of"),
    (lambda m: m.update(shape=[3]), "its shape"),
    (lambda m: m.update(indices=[0.5] * len(m["indices"])), "integer arrays"),
    (lambda m: m.update(indices=[9] * len(m["indices"])), "do not fit its shape"),
    (lambda m: m.update(indptr=m["indptr"][::-1]), "do not fit its shape"),
    (lambda m: m.pop("data"), "beside its data")])
def test_altered_sparse_matrices_are_refused(change, message):
    with pytest.raises(adsim.TapeFileError, match=message):
        tapefile.loads(altered(flows, (0.8, 1.5), "adsim.constrained_solution",
                               lambda state: change(_sparse_matrix(state))))


def _flows_given(form, method):
    """``flows``'s trust-constr or SLSQP solve alone, its matrix given as ``form``."""
    matrix = form(INCIDENCE)

    def f(p):
        weights = np.array([p[0], 1.0, 2.0, 1.5, 1.0])
        supply = np.array([p[1], 0.0, -0.5])
        options = {"ftol": 1e-15} if method == "SLSQP" else {"gtol": 1e-13, "xtol": 1e-15}
        x = so.minimize(lambda x: 0.5 * np.sum(weights * x ** 2), np.zeros(5), method=method,
                        constraints=LinearConstraint(matrix, supply, supply),
                        options=options).x
        return x @ [1.0, 2.0, 3.0, 4.0, 5.0]
    return f


OTHER_FORMS = {"bsr": sps.bsr_matrix, "dia": sps.dia_matrix, "lil": sps.lil_matrix,
               "dok": sps.dok_matrix, "bsr array": sps.bsr_array,
               "int64 csr": lambda m: sps.csr_matrix(m.astype(np.int64)),
               "int8 lil": lambda m: sps.lil_matrix(m.astype(np.int8)),
               "float32 coo array": lambda m: sps.coo_array(m.astype(np.float32)),
               "bool csc": lambda m: sps.csc_matrix(abs(m).astype(bool))}


@pytest.mark.parametrize("method", ["SLSQP", "trust-constr"])
@pytest.mark.parametrize("form", sorted(OTHER_FORMS))
def test_sparse_matrices_of_other_forms_and_dtypes_save_as_their_values(form, method):
    # converted to a float64 CSR (or COO, CSC) of the same values, in the
    # recording process too: both processes multiply with the same arrays
    f = _flows_given(OTHER_FORMS[form], method)
    p, q = np.array([0.8, 1.5]), np.array([1.1, 1.2])
    tape = adsim.record(f, p)
    assert_same_replays(tape, copies(tape), [(p,), (q,)], methods=FIRST_ORDER)
    want = 1.0 * (OTHER_FORMS[form](INCIDENCE).toarray() != 0) if form == "bool csc" else \
        INCIDENCE.toarray()
    _, state = described(tapefile.dumps(tape), "adsim.constrained_solution")
    kept = tapefile_sparse(_sparse_matrix(state))
    assert kept.dtype == np.float64 and np.array_equal(kept.toarray(), want)
    loaded = tapefile.loads(tapefile.dumps(tape))
    def exact(p):                 # the solve in closed form, as flows_exact
        inverse = 1.0 / np.array([p[0], 1.0, 2.0, 1.5, 1.0])
        x = inverse * (want.T @ np.linalg.solve((want * inverse) @ want.T, [p[1], 0.0, -0.5]))
        return x @ [1.0, 2.0, 3.0, 4.0, 5.0]
    assert_close(loaded.gradient(q), [central(exact, [q], [e])[()] for e in np.eye(2)],
                 1e-6, 1e-8, "loaded gradient")


def tapefile_sparse(fields):
    from adsim._scipy.call_data import decoded
    return decoded({"sparse": fields})


def test_sparse_matrices_whose_values_float64_cannot_hold_are_refused_by_name(tmp_path):
    def f(p):
        A = sps.csr_matrix(np.array([[2 ** 53 + 1, 0], [0, 1]], dtype=np.int64))
        return np.sum(so.minimize(lambda z: np.sum((z - p) ** 2), np.zeros(2), method="SLSQP",
                                  constraints=LinearConstraint(A, -np.inf, 1.0)).x)
    tape = adsim.record(f, np.array([-1.5, 0.7]))
    with pytest.raises(adsim.TapeCopyError, match=r"sparse csr_matrix of int64 whose values"):
        tape.save(tmp_path / "solve.adtape")


# ---- callbacks --------------------------------------------------------------------------

DOSES = np.array([0.5, 1.0, 2.0, 4.0, 8.0])
RESPONSES = np.array([0.11, 0.22, 0.39, 0.58, 0.74])
LOG = []


def dose_response(p):
    """A dose-response curve fitted by BFGS, and capped by SLSQP and
    trust-constr, each logging its progress through a callback (the
    trust-constr one of (x, state)): the fitted EC50 and slope, the
    response at the dose p[1] weighted by p[0]."""
    def loss(q):
        model = 1.0 / (1.0 + (q[0] / DOSES) ** q[1])
        return np.sum((p[0] * model - RESPONSES) ** 2)
    fit = so.minimize(loss, [2.0, 1.0], method="BFGS", callback=lambda intermediate_result: LOG.append(float(intermediate_result.fun)),
                      options={"gtol": 1e-9}).x
    capped = so.minimize(loss, [2.0, 1.0], method="SLSQP", callback=LOG.append,
                         constraints={"type": "ineq", "fun": lambda q: p[1] - q[0]},
                         options={"ftol": 1e-15}).x
    tr = so.minimize(loss, [2.0, 1.0], method="trust-constr",
                     callback=lambda q, state: LOG.append(state.nit) and False,
                     constraints=NonlinearConstraint(lambda q: q[0], -np.inf, p[1]),
                     options={"gtol": 1e-12, "xtol": 1e-14, "initial_barrier_parameter": 1e-10,
                              "initial_barrier_tolerance": 1e-10}).x
    return fit @ [1.0, 2.0] + capped @ [1.0, -1.0] + tr @ [0.5, 0.5]


def test_solves_with_callbacks_save_without_them_and_replay_bitwise(tmp_path):
    p = np.array([1.1, 2.2])
    tape = assert_saved_like_original(dose_response, p, [p, np.array([1.05, 2.1])], tmp_path,
                                      "adsim.implicit_solution", step=1e-3, rtol=1e-4)
    loaded = tapefile.loads(tapefile.dumps(tape))
    LOG.clear()
    value = tape.forward(p * 1.01)
    assert {type(entry) for entry in LOG} == {float, np.ndarray, int}
    LOG.clear()
    assert loaded.forward(p * 1.01) == value
    assert LOG == []                    # a loaded tape calls no Python


def _halted(q):
    raise StopIteration


@pytest.mark.parametrize("solve", [
    lambda p: so.fmin_bfgs(lambda z: np.sum((z - p) ** 2 + z ** 4), [0.0, 0.0], callback=_halted,
                           disp=0),
    lambda p: so.fmin(lambda z: np.sum((z - p) ** 2 + z ** 4), [0.0, 0.0], callback=_halted,
                      disp=0),
    lambda p: so.fmin_tnc(lambda z: np.sum((z - p) ** 2 + z ** 4), [0.0, 0.0],
                          approx_grad=True, callback=_halted, disp=0)[0],
    lambda p: so.minimize(lambda z: np.sum((z - p) ** 2 + z ** 4), [0.0, 0.0], method="COBYQA",
                          constraints=LinearConstraint([[1.0, 1.0]], -np.inf, 1.0),
                          callback=_halted).x,
    lambda p: so.fmin_cobyla(lambda z: np.sum((z - p) ** 2 + z ** 4), [0.0, 0.0],
                             cons=[lambda z: 1.0 - z[0] - z[1]], callback=_halted, disp=0)])
def test_a_callback_stopping_the_solver_is_no_solution(solve):
    """SciPy returns the point these stopped at as a converged one; adsim
    refuses to differentiate it, recorded or not, instead of a derivative
    of a point that is no minimum."""
    p = np.array([1.5, 0.7])
    with pytest.raises(SolverNotConverged, match="callback .* stopped it"):
        adsim.grad(lambda q: np.sum(solve(q)))(p)


def test_a_callback_cannot_move_the_iterates():
    """fmin_cobyla shows its callback the iterate itself; adsim shows a copy."""
    p = np.array([1.5, 0.7])

    def solve(q, callback=None):
        return so.fmin_cobyla(lambda z: np.sum((z - q) ** 2), [0.0, 0.0],
                              cons=[lambda z: 1.0 - z[0] - z[1]], callback=callback,
                              rhoend=1e-12, catol=1e-12, disp=0)

    def scribble(z):
        z[:] = 0.0
    tape = adsim.record(lambda q: solve(q, scribble) @ [1.0, 3.0], p)
    assert tape.forward(p) == solve(p) @ [1.0, 3.0]
    # the projection onto z0 + z1 <= 1: f = -p0 + p1 + 2
    np.testing.assert_allclose(tapefile.loads(tapefile.dumps(tape)).gradient(p), [-1.0, 1.0],
                               atol=1e-8)


# ---- bounds of unconstrained solves that move with the parameters ----------------------

TIMES = np.array([0.0, 0.5, 1.0, 2.0, 3.0])
COUNTS = np.array([10.1, 6.2, 3.6, 1.4, 0.5])


def decay_fit(p):
    """A decay ``a exp(-k t)`` fitted by least_squares (and curve_fit), and
    its half-life by minimize_scalar, within bounds set by the parameters
    (the largest rate p[1], the search interval from p[0]): the solutions lie inside,
    so they do not move with the bounds, until a bound reaches them."""
    fit = so.least_squares(lambda q: p[0] * q[0] * np.exp(-q[1] * TIMES) - COUNTS, [5.0, 0.5],
                           bounds=([0.0, 0.0], [np.inf, p[1]]), xtol=1e-15, ftol=1e-15,
                           gtol=1e-15).x
    half = so.minimize_scalar(lambda t: (np.exp(-fit[1] * t) - 0.5) ** 2,
                              bounds=(0.0, 3.0 * p[0]), method="bounded",
                              options={"xatol": 1e-12}).x
    curve, _ = so.curve_fit(lambda t, a, k: p[0] * a * np.exp(-k * t), TIMES, COUNTS,
                            p0=[5.0, 0.5], bounds=([0.0, 0.0], [np.inf, p[1]]), xtol=1e-15,
                            ftol=1e-15, gtol=1e-15)
    return fit @ [1.0, 2.0] + half + curve @ [0.5, 1.0]


def test_bounds_that_move_with_the_parameters_save_and_replay_bitwise(tmp_path):
    p = np.array([1.0, 1.5])
    tape = assert_saved_like_original(decay_fit, p, [p, np.array([1.1, 1.4])], tmp_path,
                                      "adsim.implicit_solution", step=1e-4, rtol=1e-5)
    loaded = tapefile.loads(tapefile.dumps(tape))
    # a rate bound of 0.8 holds the fitted rate (about 1.05): the solution
    # is on it, which both refuse, instead of the solution within the
    # bound of the recording
    far = np.array([1.0, 0.8])
    for t in (tape, loaded):
        with pytest.raises(adsim.UnsupportedOperation, match="least_squares lies on its bounds"):
            t.forward(far)
    with pytest.raises(adsim.UnsupportedOperation, match="curve_fit lies on its bounds"):
        adsim.grad(lambda q: so.curve_fit(lambda t, a, k: a * np.exp(-k * t), TIMES, COUNTS,
                                          p0=[5.0, 0.5], bounds=([0.0, 0.0], [np.inf, q[1]]))
                   [0] @ q)(far)


def test_altered_parameters_of_bounds_are_refused():
    def change(state):
        state["arguments"]["encoded"]["dict"]["bounds"]["tuple"][1][1] = {"parameter": 7}
    with pytest.raises(adsim.TapeFileError, match=r"name parameters \[7\] of its 2"):
        tapefile.loads(altered(decay_fit, (1.0, 1.5), "adsim.implicit_solution", change))


def bracketed(p):
    """brentq, root_scalar and minimize_scalar (Brent) with a bracket
    ending at p[1]: a cubic with roots at p[0], 3 and -1, a cube root, a
    quartic well."""
    r = so.brentq(lambda t: (t - p[0]) * (t - 3.0) * (t + 1.0), 0.0, p[1], xtol=1e-14)
    s = so.root_scalar(lambda t: t ** 3 - p[0], bracket=[0.0, p[1]], xtol=1e-14).root
    m = so.minimize_scalar(lambda t: (t - p[0]) ** 2 + 0.1 * t ** 4, bracket=(0.0, p[1]),
                           tol=1e-12).x
    return r + 2.0 * s + 3.0 * m


def test_brackets_that_move_with_the_parameters_save_and_replay_bitwise(tmp_path):
    """Where the bracket of the recording still held a root, the program's
    own bracket (0, 3.5) holds the roots at 1 and 3, so brentq raises:
    so do the tape and the loaded one, instead of the root at 1."""
    p = np.array([1.0, 2.0])
    tape = assert_saved_like_original(bracketed, p, [p, np.array([1.2, 2.5])], tmp_path,
                                      "adsim.implicit_solution", step=1e-3, rtol=1e-5,
                                      atol=1e-6)
    assert tape.gradient(p)[1] == 0.0
    loaded = tapefile.loads(tapefile.dumps(tape))
    far = np.array([1.0, 3.5])
    with pytest.raises(ValueError, match="different signs"):
        bracketed(far)
    for t in (tape, loaded):
        with pytest.raises(ValueError, match="different signs"):
            t.forward(far)


def test_a_solve_whose_bounds_alone_move_solves_again_at_each_replay():
    """The solution (1) does not depend on the parameters, only its bound
    p[0] does: still an op, so a replay whose bound cuts the solution
    refuses it by name instead of replaying 1."""
    def f(p):
        return so.least_squares(lambda z: z - 1.0, [0.5], bounds=(0.0, p[0])).x[0] + p[1]
    p = np.array([2.0, 1.0])
    tape = adsim.record(f, p)
    np.testing.assert_array_equal(tape.gradient(p), [0.0, 1.0])
    loaded = tapefile.loads(tapefile.dumps(tape))
    assert loaded.forward(p * 1.1) == tape.forward(p * 1.1)
    for t in (tape, loaded):
        with pytest.raises(adsim.UnsupportedOperation, match="least_squares lies on its bounds"):
            t.forward(np.array([0.5, 1.0]))
