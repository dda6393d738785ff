"""Twenty-odd scientific programs as their authors write them
(programs_s14.py: finite-difference loops on grids made by np.linspace,
np.ones and a float np.arange, Kalman filters with from-imports and dicts,
a mixture on a dataclass, an equation of state by Newton steps, thin-film
optics, RK4 into a zeros trajectory, SIR histories in lists, a sparse
Laplacian read back through its csc copy's data, solve_banded, Planck on a
geomspace grid, a while-loop shooting, a Gaussian process, eigh, Arrhenius,
reaction-diffusion through named views, a leapfrog wave), differentiated
with respect to their natural parameters without changing a line:
adsim.grad against central differences, forward mode against reverse mode,
the Hessian-vector product against differences of the gradient, and the
tape recorded at one point replayed at a second point (or refusing with
BranchChanged where the path depends on the point). Two programs hand a
list of active values to a ufunc or an operator with a plain array, which
NumPy converts before adsim is asked: their refusal must name the cause
and the fix."""
import numpy as np
import pytest

import adsim
from adsim.testing import check_grads
import programs_s14 as prog
from program_checks import program_tests

# name: (function, parameters, Hessian-vector product checked,
#        the path depends on the point)
PROGRAMS = {
    "diffusion np.ones u.copy scalar writes": (prog.diffusion_steps, np.array([0.3, 2.0]), True,
                                               False),
    "matrix diffusion float arange loop": (prog.matrix_diffusion, np.array([0.02, 0.15]), True,
                                           False),
    "burgers from numpy import linspace, ones": (prog.burgers_upwind, np.array([1.0, 0.05]),
                                                 True, False),
    "kalman dict of noise levels": (prog.kalman_loglik, np.array([0.1, 0.5]), True, False),
    "kalman zeros eye dot += -=": (prog.kalman_inplace, np.array([0.1, 0.5]), True, False),
    "mixture on a dataclass, list of logpdfs": (prog.mixture_loglik, np.array([0.4, 2.5]), True,
                                                False),
    "van der waals newton steps": (prog.vdw_fugacity, np.array([3.6, 0.043]), True, False),
    "antireflection stack complex matrices": (prog.stack_reflectance, np.array([100.0, 60.0]),
                                              True, False),
    "rk4 into a zeros trajectory, object": (prog.rk4_trajectory, np.array([1.1, 0.4]), True,
                                            False),
    "advection-diffusion 2-d boundaries": (prog.advection_2d, np.array([1.0, 0.1]), True, False),
    "sir history lists np.max np.array": (prog.sir_history, np.array([0.6, 0.2]), True, False),
    "spring chain newton loops": (prog.spring_chain, np.array([2.0, 0.5]), True, False),
    "sparse L.data *= D, tocsc().data": (prog.sparse_implicit, np.array([0.5, 0.3]), True, False),
    "crank-nicolson solve_banded": (prog.crank_nicolson_rod, np.array([1.0, 0.5]), True, False),
    "planck geomspace trapezoid": (prog.band_power, np.array([3000.0, 0.9]), True, False),
    "lane-emden while shooting": (prog.lane_emden_radius, np.array([1.5, 1.0]), True, True),
    "gaussian process evidence": (prog.gp_evidence, np.array([0.0, -1.5]), True, False),
    "particle in a box eigh": (prog.box_levels, np.array([5.0, 1.0]), True, False),
    "arrhenius linspace temperatures": (prog.arrhenius_fit, np.array([-3.0, 60.0]), True, False),
    "reaction-diffusion named views": (prog.reaction_diffusion, np.array([0.04, 0.06]), True,
                                       False),
    "leapfrog wave swapped arrays": (prog.leapfrog_wave, np.array([1.0, 0.5]), True, False),
    "method of lines over a linspace grid": (prog.method_of_lines, np.array([0.3, 1.0]), True,
                                             False),
    "gaussian beam meshgrid trapezoid": (prog.beam_power, np.array([0.3, 0.8]), True, False),
    "fem bar csr from lists": (prog.fem_bar, np.array([2.0, 5.0]), True, False),
    "mean-field sweeps into np.full": (prog.mean_field_magnet, np.array([0.4, 0.1]), True, False),
    "beam rows from stencil lists": (prog.beam_deflection, np.array([2.0, 1.0]), True, True),
    "etalon complex round trips": (prog.etalon_transmission, np.array([10.0, 0.6]), True, False),
}
ADAPTIVE = {"method of lines over a linspace grid"}
# the crossing is found by linear interpolation over the last step: the
# result has kinks where the number of steps changes, 1e-3 apart in params
# the etalon's phase is about 300 rad: a step of 1e-3 in the thickness is 0.3
# rad, too coarse for central differences
STEPS = {"lane-emden while shooting": 1e-5, "etalon complex round trips": 1e-5}


(test_gradient_against_differences_and_the_other_mode,
 test_the_tape_replayed_at_a_new_point) = program_tests(PROGRAMS, ADAPTIVE, STEPS)


def test_a_list_of_active_values_given_to_a_ufunc_is_the_array_of_them():
    """np.square(list): adsim's stand-in of numpy's ufunc converts the list
    before NumPy would."""
    check_grads(prog.band_fit, np.array([0.7, 0.35]), order=2)


def test_a_list_of_active_values_and_a_plain_array_in_an_operator_is_refused_by_name():
    """list - ndarray: NumPy converts the list inside the plain array's
    operator before any override is asked, so adsim refuses, naming the
    operator and the fix; the program still runs on plain numbers."""
    x = np.array([0.5, 0.48])
    with pytest.raises(adsim.UnsupportedOperation,
                       match=r"operator `-`.*np.array\(\[\.\.\.\]\)"):
        adsim.grad(prog.calibration_misfit)(x)
    assert np.isfinite(prog.calibration_misfit(x))
