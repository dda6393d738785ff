"""Forty-odd scientific programs as their authors write them (programs_s12.py),
differentiated with respect to their natural parameters without changing a
line: adsim.grad against central differences (a step relative to each
parameter), forward mode against reverse mode, the Hessian-vector product
against differences of the gradient where the program is smooth enough for
it, and the tape recorded at one point replayed at a second point (or, where
the program's path depends on the point, the replay refusing with
BranchChanged and a fresh recording right there). Programs that adsim
must refuse are kept as refusal checks (the typed error, and a message that
names the cause); each fix a program led to has its focused test below."""
import math
from math import sqrt

import numpy as np
import pytest
import scipy.linalg as sla

import adsim
import programs_s12 as prog
from program_checks import check_derivatives, program_tests

# name: (function, parameters, Hessian-vector product checked,
#        the path depends on the point)
PROGRAMS = {
    "seir solve_ivp args": (prog.seir_misfit, np.array([0.9, 0.3]), True, False),
    "projectile terminal event": (prog.impact_range, np.array([20.0, 0.02]), True, False),
    "drug dense_output": (prog.drug_auc, np.array([1.2, 0.3]), True, True),
    "cascade odeint tfirst": (prog.cascade_yield, np.array([1.5, 0.8]), True, False),
    "van der pol LSODA": (prog.vdp_amplitude, np.array([1.0, 1.5]), True, True),
    "ammonia fsolve fprime": (prog.ammonia_conversion, np.array([0.5, 1.5]), True, False),
    "cstr root dict": (prog.cstr_temperature, np.array([5e6, 6000.0]), True, False),
    "peng-robinson brentq class": (prog.pr_gas_volume, np.array([370.0, 0.15]), True, False),
    "harvest minimize_scalar bounded": (prog.best_yield, np.array([1.5, 2.0]), True, False),
    "bratu newton_krylov": (prog.bratu_norm, np.array([1.0, 0.1]), True, False),
    "debye quad args": (prog.debye_moment, np.array([2.5, 0.3]), True, False),
    "cubicspline slope and area": (prog.spline_features, np.array([1.0, 2.0]), True, False),
    "gray-scott views of a plain grid": (prog.gray_scott_mass, np.array([0.04, 0.06]), True,
                                         False),
    "kalman from numpy import": (prog.kalman_nll, np.array([0.1, 0.5]), True, False),
    "mixture em iterations": (prog.em_loglik, np.array([-0.5, 1.5]), True, False),
    "thin film complex snell": (prog.stack_reflectance, np.array([80.0, 110.0]), True, False),
    "sparse diags spsolve": (prog.rod_peak_temperature, np.array([1.0, 0.5]), True, True),
    "arrhenius math sum max": (prog.arrhenius_spread, np.array([50.0, 20.0]), True, True),
    "friction vectorize otypes": (prog.pipe_pressure_drop, np.array([1.0, 1.1]), True, True),
    "apply_along_axis robust scale": (prog.feature_scales, np.array([1.3, 0.4]), True, True),
    "dtype arguments": (prog.dtype_heavy_energy, np.array([1.0, 2.0, 3.0]), True, False),
    "errstate sinc where": (prog.slit_intensity, np.array([10.0, 0.5]), True, True),
    "einsum inertia": (prog.inertia_anisotropy, np.array([1.5, 0.8]), True, False),
    "mask stores clip": (prog.rectified_power, np.array([1.0, 0.15]), True, True),
    "sort order statistics": (prog.trimmed_statistics, np.array([0.3, 1.2]), True, True),
    "interp thermocouple": (prog.thermocouple_reading, np.array([1.1, 0.3]), True, True),
    "scipy.special mix": (prog.special_mix, np.array([2.0, 0.3]), True, False),
    "scipy.stats logpdfs": (prog.hierarchical_logpost, np.array([0.5, -0.2, 4.0]), True, False),
    "gp xp slogdet": (prog.gp_evidence, np.array([0.6, 0.8, 0.2]), True, False),
    "lennard-jones += forces": (prog.lj_virial, np.array([1.0, 0.9]), True, False),
    "covariance list inv": (prog.mahalanobis_sum, np.array([1.0, 0.7, 0.3]), True, False),
    "cumulative_trapezoid searchsorted": (prog.time_to_dose, np.array([2.0, 0.3]), True, True),
    "logistic map history": (prog.logistic_map_history, np.array([3.2, 0.3]), True, False),
    "coating complex arcsin of an active index": (prog.coating_reflectance,
                                                  np.array([1.45, 95.0]), True, False),
    "dataclass built inside": (prog.series_yield_from_array, np.array([0.7, 1.3]), True, False),
    "mie spherical_jn spherical_yn": (prog.mie_efficiency, np.array([2.0, 1.33]), True, False),
    "sparse L.data *= D implicit steps": (prog.implicit_diffusion, np.array([0.8, 1.5]), True,
                                          False),
    "kalman steady state dare lyapunov": (prog.steady_state_tracking_error, np.array([0.5, 0.8]),
                                          True, False),
    "reactor odeint math.exp": (prog.reactor_runaway, np.array([10.0, 30.0]), True, False),
    "diode lambertw": (prog.diode_power, np.array([-25.0, 0.5]), True, False),
    "truncnorm prior": (prog.growth_log_posterior, np.array([0.5, 2.5]), True, False),
    "pendulum agm from math import": (prog.pendulum_period, np.array([1.5, 60.0]), True, True),
}
ADAPTIVE = {"seir solve_ivp args", "projectile terminal event", "drug dense_output",
            "cascade odeint tfirst", "van der pol LSODA", "ammonia fsolve fprime",
            "cstr root dict", "peng-robinson brentq class", "harvest minimize_scalar bounded",
            "bratu newton_krylov", "debye quad args", "reactor odeint math.exp"}
STEPS = {"peng-robinson brentq class": 1e-5}


(test_gradient_against_differences_and_the_other_mode,
 test_the_tape_replayed_at_a_new_point) = program_tests(PROGRAMS, ADAPTIVE, STEPS)


def test_float_of_a_parameter_is_refused_with_a_clear_error():
    with pytest.raises(adsim.ActiveValueLeak, match="float"):
        adsim.grad(prog.float_misuse)(np.array([1.0, 2.0]))


def test_a_dataclass_handed_to_grad_is_refused_naming_what_to_pass():
    """It said `has dtype object; pass a float64 array`."""
    with pytest.raises(adsim.InvalidInput, match="Kinetics object.*dataclasses.asdict"):
        adsim.grad(prog.series_yield)(prog.Kinetics(0.7, 1.3))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_the_data_of_a_sparse_matrix_written_in_place(fmt):
    """A.data *= p made a SciPy matrix holding active data, which SciPy's own
    sparse sums refused (`sp.eye(n) - A`, naming scipy.sparse's __sub__); A
    becomes the active sparse matrix of its pattern, and A.data reads and
    writes its values in SciPy's storage order."""
    import scipy.sparse as sparse
    from scipy.sparse.linalg import spsolve
    n = 6
    laplacian = sparse.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr")

    def f(p):
        A = laplacian.asformat(fmt).copy()
        A.data *= p[0]
        A.data += 0.1 * p[1]
        u = spsolve((sparse.eye(n) - A).tocsc(), np.ones(n))
        return u.sum() + (A @ np.ones(n)).sum() + A.data[0] + A.data.sum()
    x = np.array([0.8, 0.3])
    assert adsim.record(f, x).forward(x) == pytest.approx(f(x), rel=1e-13)
    check_derivatives(fmt, f, x, check_hvp=True)


def test_a_float32_grid_updated_in_place_is_refused_naming_its_dtype():
    """u += ... into a view of a float32 grid: the refusal named views (as if
    a float64 grid would have been refused too) and proposed np.zeros(n),
    which the program had called; the cause is the dtype."""
    with pytest.raises(adsim.UnsupportedOperation, match="dtype float32.*float64") as info:
        adsim.grad(prog.gray_scott_float32)(np.array([0.04, 0.06]))
    assert "view" not in str(info.value)

    def store(p):
        U = np.zeros(4, dtype=np.float32)
        U[1:3] = p[0]
        return U.sum()
    with pytest.raises(adsim.ActiveValueLeak, match="dtype float32: adsim records float64"):
        adsim.grad(store)(np.array([1.0]))


def test_a_0d_constant_of_a_complex_workspace_through_a_ufunc_without_a_complex_rule():
    """thetas = np.zeros(n) + 0j holds plain angles; np.arcsin of one element
    (a 0-d constant, no complex rule) runs on its value: __array__ of a 0-d
    constant made a NumPy scalar, which NumPy refuses (the thin-film program)."""
    def f(p):
        thetas = np.zeros(2) + 0j
        thetas[0] = 0.3
        thetas[1] = np.arcsin(np.sin(thetas[0]) * (1.0 + 0.1j))
        return p[0] * np.real(thetas[1] * np.conj(thetas[1])) + p[1]
    want = np.abs(np.arcsin(np.sin(0.3) * (1.0 + 0.1j))) ** 2
    np.testing.assert_allclose(adsim.grad(f)(np.array([2.0, 1.0])), [want, 1.0], rtol=1e-14)


# ---- math's functions of active numbers (the Arrhenius, friction and pendulum programs) -------

X2 = np.array([0.4, 0.7])
MATH_CASES = {
    "exp": lambda x: math.exp(x[0]) * x[1], "expm1": lambda x: math.expm1(x[0] - x[1]),
    "log": lambda x: math.log(x[0] * x[1]), "log base": lambda x: math.log(x[1], 3.0 + x[0]),
    "log2": lambda x: math.log2(x[0]), "log10": lambda x: math.log10(x[1]),
    "log1p": lambda x: math.log1p(x[0]), "sqrt": lambda x: math.sqrt(x[0] + x[1]),
    "cbrt": lambda x: math.cbrt(x[0]) if hasattr(math, "cbrt") else np.cbrt(x[0]),
    "pow": lambda x: math.pow(x[0], 1.7) + math.pow(2.0, x[1]) + math.pow(x[0], x[1]),
    "fabs": lambda x: math.fabs(x[0] - x[1]), "sin cos tan": lambda x: math.sin(x[0]) *
    math.cos(x[1]) + math.tan(x[0]), "asin acos atan": lambda x: math.asin(x[0]) +
    math.acos(x[1]) * math.atan(x[0]), "atan2": lambda x: math.atan2(x[0], x[1]),
    "hyperbolic": lambda x: math.sinh(x[0]) + math.cosh(x[1]) * math.tanh(x[0]),
    "inverse hyperbolic": lambda x: math.asinh(x[0]) + math.acosh(1 + x[1]) + math.atanh(x[0]),
    "hypot": lambda x: math.hypot(x[0], x[1], 0.5), "degrees radians": lambda x:
    math.degrees(x[0]) + math.radians(x[1] * 30), "erf erfc": lambda x: math.erf(x[0]) *
    math.erfc(x[1]), "gamma lgamma": lambda x: math.gamma(1 + x[0]) + math.lgamma(x[1]),
    "fsum prod": lambda x: math.fsum([x[0], x[1], 0.25]) * math.prod([x[0], 2.0, x[1]]),
    "dist": lambda x: math.dist([x[0], 0.0], [1.0, x[1]]),
    "of active arrays": lambda x: math.fsum(x ** 2) + math.prod(x) + math.dist(x, 2 * x ** 2)
    + math.hypot(*x),
    "copysign fmod": lambda x: math.copysign(x[0], -1.0) * math.fmod(x[1] + 1.0, x[0]),
    "predicates": lambda x: x[0] * (2.0 if math.isclose(x[1], 0.7) else 1.0) + x[1] * (
        math.isfinite(x[0]) + math.isnan(x[1]) + math.isinf(x[0])),
}


@pytest.mark.parametrize("name", sorted(MATH_CASES))
def test_math_functions_of_active_numbers_are_recorded(name):
    """math's functions given active numbers record NumPy's (or
    scipy.special's) function of the value: gradients against differences,
    the other mode and the hvp; the value is math's to rounding."""
    f = MATH_CASES[name]
    assert adsim.record(f, X2).forward(X2) == pytest.approx(f(X2), rel=1e-15)
    check_derivatives(name, f, X2, check_hvp=True)


def test_math_fsum_of_active_values_keeps_what_cancels():
    """fsum([1e16 a, b, -1e16 a]) is b, not the 0 of a plain sum."""
    f = lambda x: math.fsum([1e16 * x[0], x[1], -1e16 * x[0]])        # noqa: E731
    assert adsim.record(f, np.array([1.0, 1.0])).forward(np.array([1.0, 1.0])) == 1.0
    np.testing.assert_array_equal(adsim.grad(f)(np.array([1.0, 1.0])), [0.0, 1.0])


def test_math_predicates_are_recorded_tests():
    """math.isclose of an active number is a recorded comparison: a replay
    where it changes records again."""
    f = MATH_CASES["predicates"]
    tape = adsim.record(f, X2)
    assert tape.forward(X2) == f(X2) == 2 * 0.4 + 0.7
    with pytest.raises(adsim.BranchChanged):
        tape.forward(X2 * 1.1)
    assert adsim.grad(f)(X2 * 1.1) == pytest.approx([1.0, 1.0])


def test_math_raises_where_math_raises_and_names_numpy_for_arrays():
    with pytest.raises(ValueError, match="math domain error"):
        adsim.grad(lambda x: math.sqrt(x[0] - x[1]))(X2)
    with pytest.raises(OverflowError):
        adsim.grad(lambda x: math.exp(3000 * x[0]))(X2)
    with pytest.raises(TypeError, match=r"math.exp takes a number.*shape \(2,\).*np\.exp"):
        adsim.grad(lambda x: math.exp(x))(X2)


def test_math_is_restored_after_a_recording_and_imported_names_too():
    builtin = math.exp
    adsim.grad(lambda x: math.exp(x[0]) + sqrt(x[1]))(X2)
    assert math.exp is builtin and type(math.exp).__name__ == "builtin_function_or_method"
    assert sqrt is math.sqrt and type(sqrt).__name__ == "builtin_function_or_method"


# ---- complex inverse circular and hyperbolic functions (the coating program) ------------------

INVERSE = ("arcsin", "arccos", "arctan", "arcsinh", "arctanh", "log10", "log2", "exp2")
POINTS = np.array([[0.3, 0.2], [-0.7, 0.4], [1.5, -0.3], [-2.0, -1.0], [2e-7, -1e-7],
                   [40.0, 25.0], [2.0, 1e-9], [-2.0, -1e-9], [1e-9, 2.0], [0.5, 0.0],
                   [0.0, -0.5]])


def _real_of(name):
    def f(p):
        w = getattr(np, name)(p[0] + 1j * p[1])
        return np.real(w) + 2.0 * np.imag(w)
    return f


@pytest.mark.parametrize("name", INVERSE)
def test_complex_inverse_functions_are_numpys_and_differentiated(name):
    """NumPy's principal values in every quadrant, near the branch cuts on
    both sides, near 0 (relative accuracy) and far out; derivatives against
    differences, the other mode and the hvp."""
    f = _real_of(name)
    for x in POINTS:
        w = getattr(np, name)(x[0] + 1j * x[1])
        assert adsim.record(f, x).forward(x) == pytest.approx(w.real + 2 * w.imag, rel=1e-13)
    for x in POINTS[:4]:
        check_derivatives(name, f, x, check_hvp=True)


@pytest.mark.parametrize(("name", "z"), [("arcsin", (2.0, 0.0)), ("arccos", (-1.5, 0.0)),
                                         ("arctanh", (1.0, 0.0)), ("arctan", (0.0, 3.0)),
                                         ("arcsinh", (0.0, -1.2))])
def test_on_a_branch_cut_they_are_refused(name, z):
    with pytest.raises(adsim.UndefinedDerivative, match="branch cut") as info:
        adsim.grad(lambda p: np.real(getattr(np, name)(p[0] + 1j * p[1])))(np.array(z))
    assert ("np.emath." + name in str(info.value)) == (name in ("arcsin", "arccos", "arctanh"))


def test_a_replay_that_moves_a_real_argument_onto_the_cut_records_again():
    def f(p):
        th = np.arcsin(np.array([p[0], 0.2]) * (1.0 + 0j))
        return np.sum(np.abs(np.cos(th)) ** 2)
    tape = adsim.record(f, np.array([0.5]))
    assert tape.gradient(np.array([0.6])) == pytest.approx(-2 * 0.6)
    with pytest.raises(adsim.BranchChanged):
        tape.gradient(np.array([1.5]))
    with pytest.raises(adsim.UndefinedDerivative, match="branch cut"):
        adsim.grad(f)(np.array([1.5]))


# ---- spherical Bessel functions of an active argument (the Mie program) ----------------------

@pytest.mark.parametrize("kind", ["jn", "yn", "in", "kn"])
@pytest.mark.parametrize("derivative", [False, True])
def test_spherical_bessel_functions_of_an_active_argument(kind, derivative):
    """SciPy's values (its private ufuncs, and its reflection at z < 0 but for
    kn); derivatives by the order recurrences, the hvp too."""
    from scipy import special as sc
    fn = getattr(sc, f"spherical_{kind}")
    signs = np.array([1.0, 1.0, 1.0]) if kind == "kn" else np.array([-1.0, 1.0, -1.0])

    def f(p):
        return np.sum(fn(np.array([0, 1, 3]), p[0] * signs * np.array([0.5, 1.0, 2.0]),
                         derivative=derivative) * np.array([1.0, 2.0, 3.0])) * p[1]
    x = np.array([1.3, 0.7])
    assert adsim.record(f, x).forward(x) == pytest.approx(f(x), rel=1e-15)
    check_derivatives(kind, f, x, check_hvp=True)


def test_spherical_bessel_refusals_name_the_cause():
    from scipy import special as sc
    with pytest.raises(adsim.UnsupportedOperation, match="order n"):
        adsim.grad(lambda p: sc.spherical_jn(p[0], 1.0))(np.array([1.0]))
    with pytest.raises(adsim.UnsupportedOperation, match="spherical_kn at z < 0"):
        adsim.grad(lambda p: sc.spherical_kn(1, -p[0]))(np.array([1.0]))


# ---- Lyapunov and Riccati solvers (the steady-state Kalman program) ---------------------------

def _coefficients(p):
    return np.array([[p[0], 0.3, 0.0], [-0.2, p[1] - 1.0, 0.4], [0.1, 0.0, -0.8 * p[2]]])


WEIGHTS = np.arange(1.0, 10.0).reshape(3, 3)
MATRIX_EQUATIONS = {
    "continuous lyapunov": lambda p: np.sum(WEIGHTS * sla.solve_continuous_lyapunov(
        _coefficients(p) - 2 * np.eye(3), -np.diag([p[1], 1.0, p[2]]) - 0.1)),
    "discrete lyapunov": lambda p: np.sum(WEIGHTS * sla.solve_discrete_lyapunov(
        0.4 * _coefficients(p), np.diag([p[1], 1.0, p[2]]) + 0.1 * p[0])),
    "continuous riccati": lambda p: np.sum(WEIGHTS * sla.solve_continuous_are(
        _coefficients(p), np.array([[1.0], [p[2]], [0.5]]), np.diag([p[1], 1.0, 2.0]) + 0.1,
        np.array([[p[0] ** 2 + 0.5]]))),
    "discrete riccati": lambda p: np.sum(WEIGHTS * sla.solve_discrete_are(
        0.7 * _coefficients(p), np.array([[1.0, 0.0], [p[2], 1.0], [0.5, p[0]]]),
        np.diag([p[1], 1.0, 2.0]), np.array([[1.0 + p[0] ** 2, 0.2], [0.2, 2.0]]))),
}


@pytest.mark.parametrize("name", sorted(MATRIX_EQUATIONS))
def test_lyapunov_and_riccati_solutions_are_differentiated(name):
    """SciPy's values; every coefficient active (B with two inputs for the
    DARE); gradients, the other mode and the hvp (rules recorded)."""
    f = MATRIX_EQUATIONS[name]
    x = np.array([0.6, 1.1, 0.9])
    assert adsim.record(f, x).forward(x) == f(x)
    check_derivatives(name, f, x, check_hvp=True)


def test_generalised_riccati_equations_are_refused_by_name():
    with pytest.raises(adsim.UnsupportedOperation, match="e= or s="):
        adsim.grad(lambda p: np.sum(sla.solve_continuous_are(
            -np.eye(2) * p[0], np.ones((2, 1)), np.eye(2), np.eye(1), e=2 * np.eye(2))))(
            np.array([1.0]))


# ---- scipy.special.lambertw on its real branches (the diode program) --------------------------

def test_lambertw_on_its_real_branches():
    from scipy import special as sc

    def f(p):
        return np.sum(sc.lambertw(p[0] * np.array([-0.2, 0.0, 1.5, 30.0])).real) + \
            np.sum(sc.lambertw(-p[1] * np.array([0.1, 0.3]), -1).real)
    x = np.array([1.1, 0.7])
    assert adsim.record(f, x).forward(x) == f(x)
    check_derivatives("lambertw", f, x, check_hvp=True)
    with pytest.raises(adsim.UndefinedDerivative, match="z > -1/e"):
        adsim.grad(lambda p: sc.lambertw(-p[0]).real)(np.array([1.0]))
    with pytest.raises(adsim.UnsupportedOperation, match="not k = 1"):
        adsim.grad(lambda p: sc.lambertw(p[0], 1).real)(np.array([1.0]))


# ---- scipy.stats.truncnorm (the growth posterior) ----------------------------------------------

@pytest.mark.parametrize("bounds", [(-1.0, 2.0), (0.5, 3.0), (-4.0, -0.5), (2.0, 6.0),
                                    (-1.0, np.inf), (-np.inf, 0.3)])
def test_truncnorm_in_every_position_of_its_bounds(bounds):
    """SciPy's values inside and outside the bounds, in either tail (the
    mass in log space); derivatives in loc, scale and the bounds."""
    from scipy import stats
    a0, b0 = bounds
    xs = np.array([-0.45, 0.2, 1.4, 2.5, 3.5])
    for method in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"):
        def f(p, method=method):
            a = a0 - 0.1 * p[2] if np.isfinite(a0) else a0
            return np.sum(getattr(stats.truncnorm, method)(xs, a, b0, loc=p[0], scale=p[1])
                          * np.arange(1.0, 6.0))
        x = np.array([0.3, 0.8, 0.5])
        got, want = adsim.record(f, x).forward(x), f(x)
        assert got == pytest.approx(want, rel=1e-12) or got == want
        if np.isfinite(want):
            check_derivatives(method, f, x, check_hvp=True)


# ---- complex workspaces: an element updated in place, products (transfer-matrix codes) --------

def test_an_element_of_a_complex_workspace_updated_in_place():
    """s[1] *= c wrote into the 0-d element, a NumPy scalar (TypeError); as
    in NumPy, the product is stored back into s[1]."""
    def f(p):
        s = np.zeros(3, dtype=complex)
        s += np.exp(1j * p[0] * np.arange(1.0, 4.0))
        s[1] *= 1j * p[1]
        s[2] += p[0]
        return np.sum(np.abs(s) ** 2)
    x = np.array([0.4, 1.3])
    assert adsim.record(f, x).forward(x) == pytest.approx(f(x), rel=1e-14)
    check_derivatives("complex element in place", f, x, check_hvp=True)


def test_complex_products_multi_dot_and_prod():
    def f(p):
        z = np.exp(1j * p[0] * np.arange(1.0, 7.0).reshape(2, 3)) * (1 + p[1])
        v = np.array([1.0 + 1j, 2.0]) * p[1]
        m = np.linalg.multi_dot([v, z[:, :2], np.ones((2, 2)) * p[0], v])
        return np.abs(np.prod(z)) + np.sum(np.real(np.prod(z, axis=0))) + \
            np.sum(np.imag(np.prod(z, axis=1))) + np.real(m)
    x = np.array([0.3, 0.7])
    assert adsim.record(f, x).forward(x) == pytest.approx(f(x), rel=1e-13)
    check_derivatives("complex products", f, x, check_hvp=True)
