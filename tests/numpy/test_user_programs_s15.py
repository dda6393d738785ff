"""Twenty-odd scientific programs with SciPy machinery inside the model
(programs_s15.py: cg on a kron of diags Laplacians, one splu reused over a
time loop and the solve factorized hands back, Newton with lu_factor,
brentq and newton with args= over lists, root(jac=True), an inner
minimize_scalar, quad with args= and an active limit, Pchip and spline
integrals and derivatives, np.interp and RegularGridInterpolator of active
tables, Jacobi sweeps and a cable object updated through views, shallow
water by np.roll, an HMM, EM, an RTS smoother, a GP predictive density,
Poisson regression over a list, expm, np.add.at assembly, lfilter, a
matrix-free LinearOperator, a leastsq fit's
error from cov_x), differentiated as they are: adsim.grad
against central differences, forward mode against reverse mode, the
Hessian-vector product against differences of the gradient, and the tape
recorded at one point replayed at a second point. One refusal must name
the cause and the fix."""
import numpy as np
import pytest

import adsim
import programs_s15 as prog
from fdcheck import assert_close, central
from program_checks import differences, moved, program_tests

# name: (function, parameters, Hessian-vector product checked,
#        the path depends on the point)
PROGRAMS = {
    "poisson kron diags cg": (prog.poisson_cg, np.array([0.05, 2.0]), True, False),
    "backward euler splu reused": (prog.implicit_heat_splu, np.array([0.3, 0.15]), True, False),
    "backward euler factorized": (prog.implicit_heat_factorized, np.array([0.2, 1.5]), True,
                                  False),
    "newton bvp lu_factor lu_solve": (prog.newton_bvp, np.array([1.2, 0.3]), True, False),
    "dispersion brentq args list": (prog.wavelengths, np.array([12.0, 9.81]), True, False),
    "quad args active limit": (prog.dust_flux, np.array([1.3, 1.7]), True, False),
    "pchip integrate spline derivative": (prog.profile_stats, np.array([18.0, 30.0]), True,
                                          False),
    "np.interp active samples and points": (prog.interp_lookup, np.array([0.12, 1.4]), True,
                                            False),
    "jacobi 2-d views": (prog.jacobi_plate, np.array([1.0, 3.0]), True, False),
    "cable object self.u[1:-1] +=": (prog.cable_uptake, np.array([1.0, 0.5]), True, False),
    "shallow water np.roll": (prog.shallow_water, np.array([9.81, 0.2]), True, False),
    "hmm forward logsumexp axis": (prog.hmm_loglik, np.array([0.8, 2.0]), True, False),
    "em mixture dataclass settings": (prog.em_mixture, np.array([0.2, 1.1]), True, False),
    "kalman rts smoother arrays": (prog.rts_smoother, np.array([0.1, 0.5]), True, False),
    "gp cho_factor solve_triangular": (prog.gp_predictive, np.array([0.0, 0.0]), True, False),
    "poisson regression gammaln list": (prog.poisson_loglik, np.array([0.8, 0.9]), True, False),
    "ctmc expm": (prog.ctmc_loglik, np.array([0.3, 0.4]), True, False),
    "fem np.add.at": (prog.fem_add_at, np.array([2.0, 1.5]), True, False),
    "ar1 lfilter": (prog.ar1_loglik, np.array([0.4, 0.5]), True, False),
    "equilibria root jac=True": (prog.equilibria, np.array([2.0, 0.7]), True, False),
    "kepler newton fprime args": (prog.orbit_radius, np.array([0.3, 3.2]), True, False),
    "RegularGridInterpolator table": (prog.table_lookup, np.array([2.0, 1.5]), True, False),
    "matrix-free LinearOperator steps": (prog.operator_steps, np.array([1.0, 1.0]), True, False),
    # (refused until the solution of an operator reading active values was
    # differentiated by the implicit function theorem, adsim/_scipy/operator_implicit.py)
    "cg LinearOperator of active values": (prog.operator_cg, np.array([0.7, 1.3]), True, False),
}
ADAPTIVE = {"poisson kron diags cg", "quad args active limit", "dispersion brentq args list",
            "equilibria root jac=True", "kepler newton fprime args",
            "cg LinearOperator of active values"}

(test_gradient_against_differences_and_the_other_mode,
 test_the_tape_replayed_at_a_new_point) = program_tests(PROGRAMS, ADAPTIVE)


@pytest.mark.parametrize("f, x", [(prog.bilevel_rate, np.array([0.8, 0.1])),
                                  (prog.decay_fit_error, np.array([1.0, 0.05])),
                                  (prog.thermistor, np.array([1.0, 10.0])),
                                  (prog.shadow_price, np.array([2.0, 4.0])),
                                  (prog.shadow_price_trust_constr, np.array([2.0, 4.0]))])
def test_solvers_accurate_to_the_root_of_the_precision(f, x):
    """Brent's bounded method finds the inner minimum from function values,
    to about sqrt(eps) relative whatever xatol says; leastsq's MINPACK
    with its difference Jacobian about as well, curve_fit at its default
    tolerances, and SLSQP and trust-constr (a shadow price from their
    multipliers). The derivatives by the
    implicit function theorem at those points agree with differences to
    about 1e-7, and a replay (which runs SciPy on the recorded functions,
    equal to the Python ones to rounding) lands within the same tolerance
    of the first solve. So the checks of the other programs, made for
    solutions to 1e-12, are too strict here: differences take a larger
    step and the replay at the same point agrees to 1e-8."""
    g = adsim.grad(f)(x)
    assert_close(g, differences(f, x, 1e-2), rtol=1e-5, atol=1e-9, what="gradient")
    _, jv = adsim.jvp(f, (x,), (np.array([0.3, -0.2]),))
    assert_close(jv, g @ np.array([0.3, -0.2]), rtol=1e-9, atol=1e-15, what="jvp vs grad")
    v = np.array([1.0, 0.5])
    want = central(adsim.grad(f), [x], [v], 1e-2)
    assert_close(adsim.hvp(f, x, v), want, rtol=1e-4, atol=1e-6 * np.max(np.abs(want)),
                 what="hvp")
    tape = adsim.record(f, x)
    assert_close(tape.gradient(x), g, rtol=1e-8, atol=1e-12, what="replay")
    x2 = moved(x)
    assert_close(tape.forward(x2), f(x2), rtol=1e-8, atol=1e-12, what="replayed value")
    assert_close(tape.gradient(x2), differences(f, x2, 1e-2), rtol=1e-5, atol=1e-9,
                 what="at a new point")


@pytest.mark.parametrize("f, spelled", [
    (prog.damped_cosine_transform, r"weight= are not differentiated.*integrate the weighted"),
])
def test_refusals_name_the_cause_and_the_fix(f, spelled):
    """quad's weighted forms: refused before any SciPy code converts an
    active value, naming what to write instead; the program runs on plain
    numbers."""
    x = np.array([0.7, 1.3])
    with pytest.raises(adsim.UnsupportedOperation, match=spelled):
        adsim.grad(f)(x)
    assert np.isfinite(f(x))
