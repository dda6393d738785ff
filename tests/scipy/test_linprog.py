"""scipy.optimize.linprog with active costs, constraint matrices, limits
and bounds, differentiated through SciPy's optimal basis
(adsim/_scipy/linprog.py): a production plan, a transport problem and one
with equality constraints and bounds, each in every sweep against central
differences (the solution is linear in the parameters near a nondegenerate
vertex); replays at new points with the same basis, and a refusal where
the basis changes; tape files; and the typed errors at a degenerate
vertex, an optimal face, and infeasible, unbounded and mixed-integer
problems."""
import numpy as np
import pytest
import scipy.optimize as so

import adsim as ad
from adsim import tapefile
from adsim.errors import BranchChanged, UndefinedDerivative, UnsupportedOperation
from fdcheck import assert_close, check_tape, fd_jacobian


def production(p):
    """Three products sharing machine hours, labour and material (p: unit
    profits, two entries of the hours matrix, the three resources)."""
    profit, a, resources = p[:3], p[3:5], p[5:8]
    A_ub = np.array([[2.0, 1.0, 1.0], [1.0, 2.0, 3.0], [2.0, 2.0, 1.0]]) * 1.0
    A_ub = A_ub + np.outer([1.0, 0.0, 0.0], [a[0], a[1], 0.0])
    res = so.linprog(-profit, A_ub=A_ub, b_ub=resources, bounds=[(0, None), (0, 30.0), (0, None)])
    return np.concatenate([res.x, [res.fun]])


PRODUCTION = np.array([3.0, 2.0, 4.0, 0.3, -0.2, 100.0, 120.0, 110.0])


def transport(p):
    """Two depots (supplies p[6:8]) serve three shops (demands p[8:11]) at
    unit costs p[:6]: demands met exactly, supplies not exceeded."""
    cost, supply, demand = p[:6], p[6:8], p[8:11]
    A_supply = np.kron(np.eye(2), np.ones((1, 3)))
    A_demand = np.kron(np.ones((1, 2)), np.eye(3))
    res = so.linprog(cost, A_ub=A_supply, b_ub=supply, A_eq=A_demand, b_eq=demand)
    return np.concatenate([res.x, [res.fun]])


TRANSPORT = np.array([4.0, 6.0, 9.0, 5.0, 3.0, 7.0, 50.0, 45.0, 30.0, 35.0, 25.0])


def blend(p):
    """A blend of three ingredients summing to a batch size p[0], with
    bounds p[1:4] (lower) and p[4:7] (upper) and costs p[7:10]."""
    lower, upper = p[1:4], p[4:7]
    res = so.linprog(p[7:10], A_eq=np.ones((1, 3)), b_eq=p[:1],
                     bounds=[(lower[i], upper[i]) for i in range(3)], method="highs-ds")
    return np.concatenate([res.x, [res.fun]])


BLEND = np.array([10.0, 1.0, 2.0, 0.5, 6.0, 5.0, 8.0, 2.0, 3.0, 1.5])

CASES = {"production": (production, PRODUCTION), "transport": (transport, TRANSPORT),
         "blend": (blend, BLEND)}


@pytest.mark.parametrize("name", CASES)
def test_every_first_order_sweep_agrees_with_differences(name):
    f, p = CASES[name]
    check_tape(f, [p], order=1, value_rtol=1e-10, value_atol=1e-10)


def test_hessian_vector_products_agree_with_differences_of_the_gradient():
    """x* = J_A^{-1} b_A is bilinear in the matrix and the limits: the
    second derivatives through the KKT system are not zero."""
    def f(p):
        return production(np.concatenate([PRODUCTION[:3], p, PRODUCTION[5:]]))[:-1]
    p = PRODUCTION[3:5]
    tape = ad.record(f, p)
    w, v = np.array([1.0, -2.0, 0.5]), np.array([0.3, -0.7])
    _, hv = tape.gradient_and_hvp([p], [v], w)
    h = 1e-4
    want = (tape.vjp([p + h * v], w)[1] - tape.vjp([p - h * v], w)[1]) / (2 * h)
    assert np.max(np.abs(want)) > 1e-3
    assert_close(hv, want, 1e-6, 1e-8, "H v")


@pytest.mark.parametrize("name", CASES)
def test_the_derivative_is_that_of_the_basis(name):
    """x* does not move with the costs; fun = c.x* moves with them by x*."""
    f, p = CASES[name]
    J = ad.jacobian(f)(p)
    costs = {"production": slice(0, 3), "transport": slice(0, 6), "blend": slice(7, 10)}[name]
    assert np.all(J[:-1, costs] == 0.0)
    sign = -1.0 if name == "production" else 1.0
    assert_close(J[-1, costs], sign * f(p)[:-1], 1e-12, 1e-12, "d fun / d c = x*")


@pytest.mark.parametrize("name", CASES)
def test_replays_at_new_points_with_the_same_basis_and_tape_files(name, tmp_path):
    f, p = CASES[name]

    def g(q):
        return f(q)[-1] + 0.1 * np.sum(f(q)[:-1] ** 2)
    tape = ad.record(g, p)
    q = p * (1.0 + 0.002 * np.cos(np.arange(p.size)))          # same basis
    assert tape.forward(q) == pytest.approx(g(q), rel=1e-10)
    assert_close(tape.gradient(q), fd_jacobian(g, [q]).ravel(), 1e-6, 1e-7, "gradient at q")
    path = tmp_path / "lp.adsim"
    tape.save(path)
    loaded = tapefile.load(path)
    for z in (p, q):
        assert loaded.gradient(z).tobytes() == tape.gradient(z).tobytes()


def test_replays_where_the_basis_changes_raise_and_the_functional_api_records_again():
    tape = ad.record(lambda p: production(p)[-1], PRODUCTION)
    other = PRODUCTION.copy()
    other[:3] = [1.0, 6.0, 1.0]                  # another product mix is optimal
    with pytest.raises(BranchChanged, match="active constraints"):
        tape.gradient(other)
    X = np.stack([PRODUCTION, PRODUCTION * 1.001])
    G = tape.batched.gradient(X)
    assert all(np.array_equal(G[b], tape.gradient(X[b])) for b in range(2))
    with pytest.raises(BranchChanged, match="batch member 1.*active constraints"):
        tape.batched.gradient(np.stack([PRODUCTION, other]))
    got = ad.grad(lambda p: production(p)[-1])(other)
    assert_close(got, fd_jacobian(lambda p: production(p)[-1:], [other]).ravel(), 1e-6, 1e-7,
                 "gradient after recording again")


def test_a_degenerate_vertex_is_refused():
    def f(b):          # three constraints meet at (2/3, 2/3)
        return so.linprog([-1.0, -1.0], A_ub=[[1.0, 2.0], [2.0, 1.0], [1.0, 1.0]], b_ub=b).fun
    with pytest.raises(UndefinedDerivative, match="degenerate vertex: 3 constraints are active "
                                                  "for 2 unknowns"):
        ad.grad(f)(np.array([2.0, 2.0, 4.0 / 3.0]))
    g = ad.grad(f)(np.array([2.0, 2.0, 1.5]))     # the third one slack: a derivative
    assert_close(g, [-1.0 / 3.0, -1.0 / 3.0, 0.0], 1e-12, 1e-12, "gradient")


def test_an_optimal_face_is_refused():
    def f(c):          # every point of x + y = 1 is optimal for c = (-1, -1)
        return so.linprog(c, A_ub=[[1.0, 1.0]], b_ub=[1.0]).fun
    with pytest.raises(UndefinedDerivative, match="zero multiplier|not a vertex"):
        ad.grad(f)(np.array([-1.0, -1.0]))


@pytest.mark.parametrize("b,word", [(-1.0, "infeasible"), (None, "unbounded")])
def test_infeasible_and_unbounded_problems_are_refused(b, word):
    def f(c):
        if b is None:
            return so.linprog(c, A_ub=[[1.0, -1.0]], b_ub=[1.0]).fun
        return so.linprog(c, A_ub=[[1.0, 1.0]], b_ub=[b]).fun
    with pytest.raises(UndefinedDerivative, match=f"problem {word}"):
        ad.grad(f)(np.array([-1.0, -2.0]) if b is None else np.array([1.0, 1.0]))


def test_a_mixed_integer_problem_is_refused():
    with pytest.raises(UnsupportedOperation, match="integrality"):
        ad.grad(lambda c: so.linprog(c, A_ub=[[1.0, 1.0]], b_ub=[1.5], bounds=(0, 1),
                                     integrality=[1, 1]).fun)(np.array([-1.0, -2.0]))


def test_active_bounds_given_as_one_pair_and_as_an_array():
    def f(p):
        one = so.linprog([1.0, 2.0], A_ub=[[-1.0, -1.0]], b_ub=[-3.0], bounds=(p[0], p[1])).x
        many = so.linprog([1.0, -2.0], bounds=np.stack([p[:2], p[2:]])).x
        return np.concatenate([one, many])
    p = np.array([0.5, 2.0, 1.0, 4.0])
    assert_close(ad.jacobian(f)(p), fd_jacobian(f, [p]), 1e-7, 1e-9, "Jacobian")


def test_random_programs_give_the_differences_derivative_or_a_typed_refusal():
    """Random small LPs (some degenerate by construction: a repeated row):
    every derivative adsim returns agrees with one-sided differences on both
    sides (where those two agree, i.e. the basis holds around the point);
    elsewhere adsim refuses with UndefinedDerivative."""
    rng = np.random.default_rng(2024)
    returned = refused = 0
    for trial in range(24):
        A = rng.uniform(0.2, 2.0, (4, 3))
        if trial % 6 == 0:
            A[3] = A[2]                      # a duplicated constraint
        c, b = -rng.uniform(0.5, 2.0, 3), rng.uniform(1.0, 3.0, 4)
        if trial % 6 == 0:
            b[3] = b[2]                      # and its limit: degenerate where active
        p = np.concatenate([c, b])

        def f(q):
            res = so.linprog(q[:3], A_ub=A, b_ub=q[3:7])
            return np.append(res.x, res.fun)
        try:
            J = ad.jacobian(f)(p)
        except UndefinedDerivative:
            refused += 1
            continue
        returned += 1
        h = 1e-6
        for i in range(p.size):
            e = np.zeros(p.size)
            e[i] = h
            ahead, behind = (f(p + e) - f(p)) / h, (f(p) - f(p - e)) / h
            if np.allclose(ahead, behind, rtol=1e-5, atol=1e-6):
                assert_close(J[:, i], ahead, 1e-5, 1e-6, f"column {i} of trial {trial}")
            else:                            # a kink here: adsim must not have answered
                pytest.fail(f"trial {trial}: a derivative at a kink of parameter {i}")
    assert returned >= 12 and refused >= 1
