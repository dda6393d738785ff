"""The pieces of the sparse Newton iterations on their own: the Jacobian by
row coloring (values and derivatives against adsim's dense nested Jacobian)
and the Newton solves by sparse and by dense LU (values against NumPy's
solves, derivatives against central differences, tangent and adjoint rules
against each other, and the adjoint's transposed solve with the forward's
factorisation)."""
import numpy as np
import pytest
import scipy.sparse as sp

import adsim
from adsim.integrate._sparse_jacobian import ColoredJacobian
from adsim.integrate._dense_solve import DenseLinear
from adsim.integrate._sparse_solve import SparseLinear
from adsim.integrate._newton_solve import FORM_NAMES
from adsim.primitives import Application

RNG = np.random.default_rng(11)
N = 9


def reaction_diffusion(y, t, k):
    """Tridiagonal Jacobian depending on y, t and both rates."""
    padded = np.concatenate([np.zeros(1), y, np.zeros(1)])
    return k[0] * (padded[2:] - 2 * y + padded[:-2]) + np.sin(t) * k[1] * y ** 2 * padded[2:]


Y = RNG.uniform(0.5, 1.5, N)
T = np.array(0.7)
K = np.array([2.0, 0.5])


def test_colored_jacobian_values_and_derivatives_are_the_dense_ones_on_the_pattern():
    """On the detected pattern, and on one that misses entries and adds
    others: the values are the exact Jacobian's there (zero elsewhere in the
    pattern), and their tangents and adjoints are those of that projection."""
    colored = ColoredJacobian(reaction_diffusion, "test Jacobian")
    detected = colored.detect(Y, T, K)
    assert detected.nnz == 3 * N - 2
    partial = sp.csc_matrix(sp.eye(N) + sp.eye(N, k=2), dtype=bool)   # misses one band
    dense_jacobian = adsim.jacobian(reaction_diffusion)
    for P in (detected, partial):
        colored.use_pattern(P)
        Pc = sp.csc_matrix(P)
        Pc.sort_indices()
        rows = Pc.indices
        cols = np.repeat(np.arange(N), np.diff(Pc.indptr))
        np.testing.assert_allclose(colored(Y, T, K), dense_jacobian(Y, T, K)[rows, cols],
                                   rtol=1e-14, atol=0)
        w = RNG.standard_normal(rows.size)
        W = np.zeros((N, N))
        W[rows, cols] = w

        def sparse_loss(y, t, k):
            return np.sum(w * colored(y, t, k))

        def dense_loss(y, t, k):
            return np.sum(W * dense_jacobian(y, t, k))
        g_sparse = adsim.grad(sparse_loss, argnums=(0, 1, 2))(Y, T, K)
        g_dense = adsim.grad(dense_loss, argnums=(0, 1, 2))(Y, T, K)
        for a, b in zip(g_sparse, g_dense):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        v = (RNG.standard_normal(N), np.array(0.3), RNG.standard_normal(2))
        _, t_sparse = adsim.jvp(sparse_loss, (Y, T, K), v)
        _, t_dense = adsim.jvp(dense_loss, (Y, T, K), v)
        assert t_sparse == pytest.approx(t_dense, rel=1e-12)


# ---- Newton solves: sparse LU, and dense LU (LAPACK) ------------------------------------

PATTERN = sp.csc_matrix(sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 2], shape=(N, N)))
DATA = RNG.standard_normal(PATTERN.nnz)
J = SparseLinear(PATTERN).matrix(DATA).toarray()
B = RNG.standard_normal(N)
B2 = RNG.standard_normal(N)
C = 2.5
ALPHA, BETA = 3.0, -1.5
W_OUT = RNG.standard_normal(2 * N)

# each storage with the Jacobian as it holds it: values on the pattern, or the array
STORAGES = {"sparse": (lambda: SparseLinear(PATTERN), DATA), "dense": (lambda: DenseLinear(N), J)}


def losses(linear):
    def shifted(data, c, b, b2):
        return np.dot(W_OUT[:N], linear.shifted(data, c[0], b)) ** 2

    def identity_minus(data, c, b, b2):
        return np.dot(W_OUT[:N], linear.identity_minus(data, c[0], b)) ** 2

    def shifted_complex(data, coefficients, b, b2):
        x_re, x_im = linear.shifted_complex(data, coefficients[0], coefficients[1], b, b2)
        return np.dot(W_OUT, np.concatenate([x_re, x_im])) ** 2
    return {"shifted": (shifted, [C]), "identity_minus": (identity_minus, [0.1]),
            "shifted_complex": (shifted_complex, [ALPHA, BETA])}


@pytest.mark.parametrize("storage", sorted(STORAGES))
def test_solves_are_numpys(storage):
    make, data = STORAGES[storage]
    linear, eye = make(), np.eye(N)
    np.testing.assert_allclose(linear.shifted(data, C, B), np.linalg.solve(C * eye - J, B),
                               rtol=1e-12)
    np.testing.assert_allclose(linear.identity_minus(data, C, B),
                               np.linalg.solve(eye - C * J, B), rtol=1e-12)
    x = np.linalg.solve((ALPHA + 1j * BETA) * eye - J, B + 1j * B2)
    x_re, x_im = linear.shifted_complex(data, ALPHA, BETA, B, B2)
    np.testing.assert_allclose(x_re + 1j * x_im, x, rtol=1e-12)


@pytest.mark.parametrize("storage", sorted(STORAGES))
@pytest.mark.parametrize("name", ["shifted", "identity_minus", "shifted_complex"])
def test_solve_derivatives_in_every_mode(storage, name):
    """Gradient against central differences; tangent against gradient;
    the Hessian-vector product (the recorded adjoint rule, with its
    transposed solves) against differences of the gradient."""
    make, data = STORAGES[storage]
    f, scalars = losses(make())[name]
    point = (data, np.array(scalars), B, B2)
    g = adsim.grad(f, argnums=(0, 1, 2, 3))(*point)
    eps = 1e-6
    direction = tuple(RNG.standard_normal(np.shape(p)) for p in point)

    def moved(s):
        return tuple(p + s * eps * d for p, d in zip(point, direction))
    fd = (f(*moved(1)) - f(*moved(-1))) / (2 * eps)
    along = sum(np.sum(a * d) for a, d in zip(g, direction))
    assert along == pytest.approx(fd, rel=1e-7)
    _, tangent = adsim.jvp(f, point, direction)
    assert tangent == pytest.approx(along, rel=1e-12)
    # a replay of the recorded solve at another point: its value and adjoint
    # on the op's flat arrays, as a recording there gives them
    tape, elsewhere = adsim.record(f, *point), moved(100)
    for got, want in zip(tape.gradient(*elsewhere),
                         adsim.grad(f, argnums=(0, 1, 2, 3), cache=False)(*elsewhere)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)

    sizes = np.cumsum([np.size(p) for p in point])[:-1]

    def flat(z):
        return f(*(piece.reshape(np.shape(p)) for piece, p in zip(np.split(z, sizes), point)))
    z = np.concatenate([np.ravel(p) for p in point])
    v = np.concatenate([np.ravel(d) for d in direction])
    hv = adsim.hvp(flat, z, v)
    grad = adsim.grad(flat)
    np.testing.assert_allclose(hv, (grad(z + eps * v) - grad(z - eps * v)) / (2 * eps),
                               rtol=1e-5, atol=1e-6 * np.max(np.abs(hv)))


@pytest.mark.parametrize("storage", sorted(STORAGES))
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("name", ["shifted", "identity_minus", "shifted_complex"])
def test_second_order_adjoints_of_solves_are_those_of_the_recorded_adjoint_rule(
        storage, transposed, name):
    """The direct second-order rule of every solve (by solves with the same
    factors) against the generic one of a primitive (its vjp rule recorded,
    the tangent of that tape swept), in two directions at once, some
    arguments without a tangent."""
    make, data = STORAGES[storage]
    linear = make()
    form = FORM_NAMES[name]
    prim = linear._solves[form, transposed]
    scalars = {"shifted": [C], "identity_minus": [0.1], "shifted_complex": [ALPHA, BETA]}[name]
    b = np.concatenate([B, B2]) if form.complex else B
    args = [np.ravel(data)] + [np.array([c]) for c in scalars] + [b]
    in_shapes = [np.shape(data)] + [()] * len(scalars) + [b.shape]
    result = prim.value(data, *scalars, b)
    app = prim.applied(in_shapes, result.shape, None)
    p = 2
    for missing in (None, 0, len(args) - 1):
        tangents = [None if k == missing else RNG.standard_normal((p, a.size))
                    for k, a in enumerate(args)]
        adjoint, adjoint_tangents = RNG.standard_normal(b.size), RNG.standard_normal((p, b.size))
        direct = app.soadjoint(args, result, tangents, adjoint, adjoint_tangents)
        generic = Application.soadjoint(app, args, result, tangents, adjoint, adjoint_tangents)
        for got, want in zip(direct[0] + direct[1], generic[0] + generic[1]):
            np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12 * np.abs(want).max())


@pytest.mark.parametrize("transposed", [False, True])
def test_sparse_products_with_the_jacobian_plain_and_recorded(transposed):
    """``J v`` on the pattern's values: a sum over the entries on plain
    arrays, a product with the matrix of the values when recorded (higher
    orders); both NumPy's product, the recorded one differentiated."""
    linear = SparseLinear(PATTERN)
    Jt = J.T if transposed else J
    np.testing.assert_allclose(linear.times(DATA, B, transposed), Jt @ B, rtol=1e-14, atol=1e-14)
    g_data, g_b = adsim.grad(lambda d, b: np.dot(W_OUT[:N], linear.times(d, b, transposed)),
                             argnums=(0, 1))(DATA, B)
    np.testing.assert_allclose(g_b, Jt.T @ W_OUT[:N], rtol=1e-14, atol=1e-14)
    rows, cols = linear.rows, linear.cols
    w_at, b_at = (cols, rows) if transposed else (rows, cols)
    np.testing.assert_allclose(g_data, W_OUT[:N][w_at] * B[b_at], rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("storage", sorted(STORAGES))
def test_adjoint_solves_with_the_forward_factorisation(storage):
    """One matrix, one factorisation: the forward solve and the transposed
    solve of its adjoint find the same factors."""
    make, data = STORAGES[storage]
    linear = make()
    adsim.grad(lambda data: np.sum(linear.shifted(data, C, B) ** 2))(data)
    assert linear.kept_factorisations() == 1
    adsim.grad(lambda data: np.sum(linear.shifted(data, C + 1.0, B) ** 2))(data)
    assert linear.kept_factorisations() == 2


def test_a_singular_matrix_gives_nan_not_an_error():
    """As SciPy's dense LU: the Newton iteration sees non-finite values and
    fails, and the method takes a smaller step."""
    for linear, data in ((SparseLinear(sp.eye(3, format="csc")), np.ones(3)),
                         (DenseLinear(3), np.eye(3))):
        assert np.all(np.isnan(linear.shifted(data, 1.0, np.ones(3))))
        assert np.all(np.isnan(linear.shifted(data, np.inf, np.ones(3))))
        x_re, x_im = linear.shifted_complex(data, 1.0, 0.0, np.ones(3), np.ones(3))
        assert np.all(np.isnan(x_re)) and np.all(np.isnan(x_im))


# ---- the sparse storage's ordering and kept solutions ---------------------------------

def periodic_reaction_diffusion_pattern(m):
    """Two species on an m x m periodic grid (5-point Laplacian each, coupled
    on the diagonal blocks), with the diagonal of the second species left
    out, as a ``jac_sparsity`` may: the Newton matrices still have it."""
    ring = sp.diags([1.0, 1.0, 1.0, 1.0, 1.0], [-(m - 1), -1, 0, 1, m - 1], shape=(m, m))
    lap = sp.kron(ring, sp.eye(m)) + sp.kron(sp.eye(m), ring)
    k = m * m
    no_diagonal = lap - sp.diags(lap.diagonal())
    return sp.csc_matrix(sp.bmat([[lap, sp.eye(k)], [sp.eye(k), no_diagonal]]) != 0)


def test_sparse_newton_matrices_are_scipys_entries_in_a_fill_reducing_order():
    """The permuted matrix holds, entry for entry, what SciPy's sparse
    arithmetic forms (bitwise), its factors fill less than SciPy's default
    ordering does, and solves with them, plain and transposed, are NumPy's."""
    from scipy.sparse.linalg import splu
    from adsim.integrate._newton_solve import FORM_NAMES
    P = periodic_reaction_diffusion_pattern(6)
    n = P.shape[0]
    linear = SparseLinear(P)
    # a stiff Jacobian: its diagonal (where the pattern has it) outweighs the
    # rest of its column, so that LU pivots on the diagonal, as on the
    # Newton matrices of a discretised PDE
    data = RNG.uniform(0.5, 1.5, P.nnz)
    rows, cols = linear.rows, linear.cols
    on_diagonal = rows == cols
    data[on_diagonal] = -1.0 - np.bincount(cols, weights=data * ~on_diagonal, minlength=n)[
        cols[on_diagonal]]
    Js = linear.matrix(data)
    J_dense, eye = Js.toarray(), np.eye(n)
    q = linear.ordered.q
    cases = {"shifted": ((0.7,), 0.7 * eye - J_dense),
             "identity_minus": ((0.05,), eye - 0.05 * J_dense),
             "shifted_complex": ((ALPHA, BETA), (ALPHA + 1j * BETA) * eye - J_dense)}
    for name, (scalars, A_dense) in cases.items():
        form = FORM_NAMES[name]
        ordered = linear.newton_matrix(form, data, scalars)
        scipys = sp.csc_matrix(form.matrix(Js, linear.identity(), *scalars))
        assert np.array_equal(ordered.toarray(), scipys.toarray()[q][:, q])
        assert ordered.nnz == P.nnz + np.count_nonzero(P.diagonal() == 0)
        lu = linear.factorised(ordered, form.complex)
        assert lu.L.nnz + lu.U.nnz < 0.8 * sum(
            m.nnz for m in (splu(sp.csc_matrix(A_dense)).L, splu(sp.csc_matrix(A_dense)).U))
        b = RNG.standard_normal(2 * n if form.complex else n)
        rhs = b[:n] + 1j * b[n:] if form.complex else b
        for transposed, matrix in ((False, A_dense), (True, A_dense.conj().T)):
            x = linear._solve(form, data, scalars, b, transposed)
            x = x[:n] + 1j * x[n:] if form.complex else x
            np.testing.assert_allclose(x, np.linalg.solve(matrix, rhs), rtol=1e-11, atol=1e-13)


def test_a_repeated_sparse_solve_is_looked_up_and_stays_the_solve():
    """A replay that asks again for a solution gets the same numbers, as a
    new array (changing it changes nothing kept); another matrix or
    right-hand side is solved."""
    linear = SparseLinear(PATTERN)
    first = linear.shifted(DATA, C, B)
    calls = []
    solve_with = linear._solve_with
    linear._solve_with = lambda *a: calls.append(1) or solve_with(*a)
    again = linear.shifted(DATA, C, B)
    assert np.array_equal(first, again) and calls == []
    again[:] = 0.0
    assert np.array_equal(linear.shifted(DATA, C, B), first) and calls == []
    np.testing.assert_allclose(linear.shifted(DATA, C, B2), np.linalg.solve(C * np.eye(N) - J, B2),
                               rtol=1e-12)
    np.testing.assert_allclose(linear.shifted(DATA, C + 1.0, B),
                               np.linalg.solve((C + 1.0) * np.eye(N) - J, B), rtol=1e-12)
    np.testing.assert_allclose(linear.shifted(2 * DATA, C, B),
                               np.linalg.solve(C * np.eye(N) - 2 * J, B), rtol=1e-12)
    assert len(calls) == 3


def test_a_kept_solution_needs_no_factors_and_a_changed_matrix_is_solved():
    """A solution is kept by its matrix (form, coefficients, J's values) and
    right-hand side: asked again after its factors were given up, it is
    looked up without factoring; J's values equal to the last ones but
    another array, or changed in place, name the matrix they hold."""
    linear = SparseLinear(PATTERN)
    first = linear.shifted(DATA, C, B)
    linear._factors = linear.kept_factors()                # the factors given up
    factored = []
    factorised = linear.factorised
    linear.factorised = lambda *a: factored.append(1) or factorised(*a)
    assert np.array_equal(linear.shifted(DATA.copy(), C, B), first) and factored == []
    data = DATA.copy()
    data[0] *= 3.0                                         # another matrix
    np.testing.assert_allclose(linear.shifted(data, C, B),
                               np.linalg.solve(C * np.eye(N) - linear.matrix(data).toarray(), B),
                               rtol=1e-12)
    assert factored == [1]
    data[0] = DATA[0]                                      # back, in place
    assert np.array_equal(linear.shifted(data, C, B), first) and factored == [1]
    x_re, x_im = linear.shifted_complex(DATA, C, 0.5, B, B2)
    x = np.linalg.solve(complex(C, 0.5) * np.eye(N) - J, B + 1j * B2)
    np.testing.assert_allclose(x_re + 1j * x_im, x, rtol=1e-12)
    assert factored == [1, 1]


def test_sparse_factors_weigh_their_arithmetic():
    """Real factors weigh 12 bytes per entry, complex ones 20: the budget
    counts what SuperLU holds."""
    from adsim.integrate._sparse_solve import _factor_bytes
    lu = SparseLinear(PATTERN)
    lu.shifted(DATA, C, B)
    lu.shifted_complex(DATA, C, 0.5, B, B2)
    weights = sorted(_factor_bytes(key, f) for key, f in lu._factors._values.items())
    nnz = next(iter(lu._factors._values.values())).nnz
    assert weights == [12 * nnz, 20 * nnz]


def test_sparse_factorisations_are_kept_within_a_byte_budget():
    """Eight at least, more while their factors fit the budget, the least
    recently used given up first: a reverse sweep finds the forward's."""
    from adsim.integrate._kept import Kept
    kept = Kept(2, budget=10, weigh=lambda key, value: len(value))
    for key in "abcde":
        kept.put(key, "xxx")                    # 3 bytes each: three fit in 10
    assert [k for k in "abcde" if kept.get(k) is not None] == ["c", "d", "e"]
    kept.get("c")
    kept.put("f", "x" * 9)                      # the two most recent stay, whatever they weigh
    assert [k for k in "cdef" if kept.get(k) is not None] == ["c", "f"]
    linear = SparseLinear(PATTERN)
    for c in range(1, 21):
        linear.shifted(DATA, float(c), B)
    assert linear.kept_factorisations() == 20   # small factors: all fit
