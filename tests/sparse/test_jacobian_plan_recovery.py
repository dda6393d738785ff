"""A forward-mode sparse Jacobian plan reads the nonzeros out of its
compressed tangent sweep in the sweep (``Tape._tangent_gathered``) and builds
its ``csr_array`` from a template: the results must be the plain path's (the
tangents returned, then recovered), the dense Jacobian's and the finite
differences', interpreted and fused, at new points, with NaN and infinities,
and every result a matrix of its own."""
import numpy as np
import pytest
import scipy.sparse as sp

import adsim
from adsim.sparse.plan import sparse_jacobian_plan
from adsim.sparse.recovery import seed_matrix

pytestmark = pytest.mark.usefixtures("kernel_cache")   # plans fused here compile into it


@pytest.fixture(autouse=True)
def interpreted_unless_fused():
    """Fusion only where a test asks for it (tape.fuse())."""
    previous = adsim.set_fusion("never")
    yield
    adsim.set_fusion(previous)


# ---------------------------------------------------------------- programs
def bratu(u, lam):
    """2-D Bratu residual: 5-point Laplacian with zero boundary plus h^2 lam e^u."""
    k = int(round(np.sqrt(u.size)))
    U = u.reshape(k, k)
    P = np.pad(U, 1)
    lap = P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4.0 * U
    return (lap + lam / (k + 1) ** 2 * np.exp(U)).reshape(-1)


def brusselator(y, alpha):
    """Method of lines for the 1-D Brusselator: two species side by side."""
    n = y.size // 2
    u, v = y[:n], y[n:]
    lap_u = np.diff(np.concatenate([[1.0], u, [1.0]]), 2)
    lap_v = np.diff(np.concatenate([[3.0], v, [3.0]]), 2)
    du = 1.0 + u * u * v - 4.0 * u + alpha * (n + 1) ** 2 * lap_u
    dv = 3.0 * u - u * u * v + alpha * (n + 1) ** 2 * lap_v
    return np.concatenate([du, dv])


def flame(T, q):
    """A steady flame front: diffusion, tanh ignition, Arrhenius source."""
    flux = np.diff(T)
    return np.concatenate([[T[0] - 1.0], np.diff(flux) + q * np.tanh(4.0 * T[1:-1]) *
                           np.exp(-2.0 / (T[1:-1] + 0.5)), [T[-1]]])


RNG = np.random.default_rng(5)
CASES = [
    (bratu, RNG.uniform(0.0, 0.3, 24 * 24), 6.0),
    (brusselator, np.concatenate([RNG.uniform(0.5, 1.5, 300), RNG.uniform(2.5, 3.5, 300)]), 0.02),
    (flame, np.linspace(1.0, 0.0, 400) + RNG.uniform(0.0, 0.05, 400), 3.0),
]
IDS = [case[0].__name__ for case in CASES]


def plain_path(plan, x, parameter):
    """The Jacobian by the general path: every tangent returned, then recovered."""
    tape = plan.tape
    xs = tape._inputs((x, parameter))
    y, tangents = tape._tangent(xs, [plan._V, None])
    return y, plan.recovery(tangents.T)


def dense(F, x, parameter):
    return adsim.jacobian(F)(x, parameter)


def assert_same_matrix(J, reference):
    assert J.shape == reference.shape
    np.testing.assert_array_equal(J.indptr, reference.indptr)
    np.testing.assert_array_equal(J.indices, reference.indices)
    np.testing.assert_array_equal(J.data, reference.data)


# (the Brusselator's many runs take seconds to compile: interpreted only)
PATHS = [pytest.param(*case, fused, id=f"{name}-{'fused' if fused else 'interpreted'}")
         for case, name in zip(CASES, IDS) for fused in (False, True)
         if not (fused and name == "brusselator")]


@pytest.mark.parametrize("F, x, parameter, fused", PATHS)
def test_gathered_recovery_equals_the_plain_path_and_the_dense_jacobian(F, x, parameter, fused):
    plan = sparse_jacobian_plan(F, x, parameter)
    assert plan.mode == "forward" and plan._positions.dtype == np.int32
    if fused:
        assert plan.tape.fuse().fused > 0
    x2 = x + RNG.uniform(-0.05, 0.05, x.size)              # a replay at a new point
    for point, p in ((x, parameter), (x2, 1.1 * parameter)):
        y, J = plan.value_and_jacobian(point, p)
        y_plain, J_plain = plain_path(plan, point, p)
        np.testing.assert_array_equal(y, y_plain)
        assert_same_matrix(J, J_plain)
        np.testing.assert_allclose(y, F(point, p), rtol=1e-14, atol=1e-15)   # (vector exp)
        np.testing.assert_allclose(J.toarray(), dense(F, point, p), rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("F, x, parameter", CASES, ids=IDS)
def test_sparse_jacobian_against_finite_differences(F, x, parameter):
    J = sparse_jacobian_plan(F, x, parameter)(x, parameter).toarray()
    h = 1e-6
    rng = np.random.default_rng(2)
    for v in rng.standard_normal((3, x.size)):
        difference = (F(x + h * v, parameter) - F(x - h * v, parameter)) / (2 * h)
        np.testing.assert_allclose(J @ v, difference, rtol=1e-6, atol=1e-6 * np.abs(J @ v).max())


@pytest.mark.parametrize("fused", [False, True], ids=["interpreted", "fused"])
def test_nan_and_infinity_reach_the_jacobian_as_in_the_dense_one(fused):
    x = RNG.uniform(0.0, 0.3, 24 * 24)
    plan = sparse_jacobian_plan(bratu, x, 6.0)
    if fused:
        plan.tape.fuse()
    bad = x.copy()
    bad[[30, 31, 200]] = [np.nan, np.inf, -np.inf]
    with np.errstate(invalid="ignore", over="ignore"):
        y, J = plan.value_and_jacobian(bad, 6.0)
        y_plain, J_plain = plain_path(plan, bad, 6.0)
        reference = dense(bratu, bad, 6.0)
        expected_y = bratu(bad, 6.0)
    np.testing.assert_allclose(y, expected_y, rtol=1e-14, atol=1e-15)   # NaN where NumPy's is
    assert_same_matrix(J, J_plain)                             # NaN equal to NaN
    np.testing.assert_allclose(J.toarray(), reference, rtol=1e-14, atol=0.0)
    assert np.isnan(J[30, 30]) and J[31, 31] == np.inf and J[200, 200] == -4.0


def test_every_result_owns_its_arrays():
    """Results share no memory: changing one in place (SciPy's
    eliminate_zeros rewrites the index arrays) leaves the next intact."""
    x = RNG.uniform(0.0, 0.3, 24 * 24)
    plan = sparse_jacobian_plan(bratu, x, 6.0)
    first = plan(x, 6.0)
    first.data[::2] = 0.0
    first.eliminate_zeros()
    second = plan(x, 6.0)
    for a in (second.data, second.indices, second.indptr):
        for b in (first.data, first.indices, first.indptr, plan._structure.template.indices):
            assert not np.shares_memory(a, b)
    second.check_format(full_check=True)
    assert type(second) is sp.csr_array and second.has_canonical_format
    reference = sp.csr_array(dense(bratu, x, 6.0))
    assert (abs(second - reference) > 1e-13).nnz == 0
    np.testing.assert_array_equal((second @ np.ones(x.size)), reference @ np.ones(x.size))


def test_tangent_gathered_checks_its_arrays():
    x = RNG.uniform(0.0, 0.3, 24 * 24)
    plan = sparse_jacobian_plan(bratu, x, 6.0)
    tape = plan.tape
    xs = tape._inputs((x, 6.0))
    colors, p = plan._column_colors, plan.ncolors
    wide = plan._positions.astype(np.int64)
    data = np.empty(wide.size)

    def gathered(colors=colors, p=p, positions=wide, data=data, argnum=0):
        return tape._tangent_gathered(xs, argnum, colors, p, positions, data)
    gathered()                                               # int64 positions: the same
    np.testing.assert_array_equal(data, plan(x, 6.0).data)
    outside = wide.copy()
    outside[7] = p * x.size
    with pytest.raises(IndexError, match="outside"):
        gathered(positions=outside)
    outside[7] = -1
    with pytest.raises(IndexError, match="outside"):
        gathered(positions=outside)
    with pytest.raises(ValueError, match="float64"):
        gathered(data=np.empty(wide.size, dtype=np.float32))
    with pytest.raises(ValueError, match="elements"):
        gathered(data=np.empty(wide.size - 1))
    with pytest.raises(TypeError, match="int32 or int64"):
        gathered(positions=wide.astype(np.float64))
    bad = colors.copy()
    bad[3] = p
    with pytest.raises(ValueError, match="colors must be -1 or below"):
        gathered(colors=bad)
    bad[3] = -2
    with pytest.raises(ValueError, match="colors must be -1 or below"):
        gathered(colors=bad)
    with pytest.raises(ValueError, match="int64 array of input 0"):
        gathered(colors=colors[:-1])
    with pytest.raises(ValueError, match="input 2 of a tape of 2"):
        gathered(argnum=2)
    with pytest.raises(ValueError, match="0 directions"):
        gathered(p=0)
    gathered()                                               # the tape still replays
    np.testing.assert_array_equal(plan(x, 6.0).data, data)
    data[:] = np.nan                                         # plan(x) leaves F's value out
    assert tape._tangent_gathered(xs, 0, colors, p, wide, data, False) is None
    np.testing.assert_array_equal(plan(x, 6.0).data, data)


def test_seeds_from_colors_equal_the_seed_matrix():
    """Direction d is seeded at the elements of color d; color -1 (a column a
    bicoloring reads from reverse products) seeds none."""
    x = RNG.uniform(0.5, 1.5, 400)
    plan = sparse_jacobian_plan(flame, x, 3.0)
    tape = plan.tape
    xs = tape._inputs((x, 3.0))
    colors = RNG.integers(-1, 4, x.size)
    V = seed_matrix(colors, 4).T
    y, tangents = tape._tangent(xs, [V, None])
    everywhere = np.arange(tangents.size)
    data = np.empty(tangents.size)
    np.testing.assert_array_equal(tape._tangent_gathered(xs, 0, colors, 4, everywhere, data), y)
    np.testing.assert_array_equal(data, tangents.reshape(-1))
