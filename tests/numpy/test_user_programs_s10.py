"""Thirty-seven scientific programs as their authors write them
(programs_s10.py), differentiated with respect to their natural parameters
without changing a line: adsim.grad against central differences (a step
relative to each parameter), forward mode against reverse mode, the
Hessian-vector product against differences of the gradient where the
program is smooth enough for it, and the tape recorded at one point
replayed at a second point (or, where the program's path depends on the
point, the replay refusing with BranchChanged and a fresh recording right
there). One more program calls float() on its parameter and must be
refused with a message that says where the value came from.

Programs: a 2-D Poisson plate by kron of sparse diags; steam reforming
equilibrium by fsolve; Redlich-Kwong by root; Colebrook by newton; a
Huber regression's penalty tuned through BFGS; Debye heat capacities by
quad; interp1d and CubicSpline of active data at active points; odeint of
a bound method and of a function reading globals; the wave equation in a
preallocated history array; a dataclass and a namedtuple of parameters;
np.apply_along_axis, np.vectorize, np.piecewise; polyfit; np.unwrap;
np.kron of matrix stacks; Cole-Cole and np.e ** (1j x); max/min ties;
lists of active values to std/var/append/r_/c_/mean/sum; a list of
log-densities; a weighted histogram; np.roots; np.gradient and simpson;
lu_factor; lstsq; np.split; np.atleast_2d of a list; an unscented update
with Pxz += in a zeros array; momentum removed in place; a
``from numpy import *`` module; a Raman band by savgol_filter; two sources
blurred by ndimage.gaussian_filter; a Chebyshev fit integrated."""
import numpy as np
import pytest

import adsim
import programs_s10 as prog
from program_checks import program_tests

# name: (function, parameters, Hessian-vector product checked,
#        the path depends on the point)
ADAPTIVE = {"huber bfgs", "cstr odeint bound method", "sis odeint globals"}
PROGRAMS = {
    "poisson kron diags": (prog.poisson_energy, np.array([1.0, 2.0, 0.2]), True, False),
    "reforming fsolve": (prog.hydrogen_yield, np.array([0.5, 0.3]), True, False),
    "redlich-kwong root": (prog.rk_compressibility, np.array([320.0, 40e5]), True, False),
    "colebrook newton": (prog.pressure_drop, np.array([2.0, 0.1]), True, False),
    "huber bfgs": (prog.huber_validation_error, -2.0, False, True),
    "debye quad": (prog.debye_misfit, np.array([340.0, 1.0]), True, False),
    "interp1d cubic": (prog.thermocline_temperature,
                       np.array([0.1, 24.0, 23.0, 19.0, 14.0, 11.0, 9.0]), True, True),
    "cubicspline integrate": (prog.daily_load,
                              np.array([17.5, 3.0, 2.5, 4.0, 6.0, 7.0, 6.5, 8.0, 5.0, 3.0]),
                              True, True),
    "cstr odeint bound method": (prog.tank_b_output, np.array([1.5, 0.7]), False, True),
    "sis odeint globals": (prog.sis_prevalence, np.array([0.4, 0.15]), False, True),
    "wave history array": (prog.string_energy_at_end, np.array([1.0, 0.5]), True, False),
    "fishery dataclass": (prog.fishery_misfit, np.array([0.7, 110.0, 0.012]), True, False),
    "oscillator namedtuple": (prog.overshoot_fit, np.array([1.8, 0.35, 1.1]), True, False),
    "apply_along_axis": (prog.peak_areas, np.array([480.0, 550.0, 620.0, 30.0]), True, False),
    "vectorize with if": (prog.total_tax, np.array([20.0, 0.3]), True, True),
    "piecewise lambdas": (prog.settling_drag, np.array([1.3, 0.44]), True, True),
    "polyfit polyder": (prog.calibration_peak, np.array([0.2, 0.7]), True, False),
    "unwrap group delay": (prog.group_delay_spread, np.array([0.3, 3.0, 0.2]), True, True),
    "kron of stacks": (prog.mean_zz, np.array([0.3, 1.1, 2.0, 0.7]), True, False),
    "cole-cole power": (prog.cole_cole_misfit, np.array([5.5, 38.0, np.log(1.2e-6), 0.25]),
                        True, False),
    "e ** 1j x": (prog.fourier_signal_power, np.array([3.0, 0.4]), True, False),
    "max min ties": (prog.twin_peak_height, np.array([1.0, 0.8, 0.4]), True, True),
    "lists to std var append r_ c_": (prog.estimator_spread, np.array([0.5, 1.3]), True, True),
    "list of logpdf": (prog.gaussian_loglik, np.array([1.1, -0.4]), True, False),
    "weighted histogram": (prog.reweighted_histogram_chi2, 0.3, True, False),
    "roots conjugate tie": (prog.slowest_decay, np.array([1.25, 2.0]), True, True),
    "gradient simpson": (prog.channel_flow, np.array([1.5, 0.6]), True, False),
    "lu_factor steps": (prog.implicit_decay, np.array([0.8, 0.5]), True, False),
    "lstsq": (prog.lstsq_decay_rate, np.array([2.0, 0.7, 0.1]), True, False),
    "orbit split": (prog.orbit_radius, np.array([1.0, 1.1]), True, False),
    "atleast_2d of a list": (prog.sensor_information, np.array([0.3, 1.4]), True, False),
    "ukf zeros +=": (prog.ukf_update_variance, np.array([1.0, 0.5, 0.8]), True, False),
    "momentum removed in place": (prog.md_kinetic_energy, np.array([2.0, 0.3]), True, False),
    "raman savgol_filter": (prog.smoothed_band_height, np.array([0.8, 12.0, 1.5]), True,
                            False),
    "blurred sources gaussian_filter": (prog.blurred_misfit,
                                        np.array([5.2, 6.1, 10.3, 8.8, 1.9]), True, False),
    "chebyshev fit integ": (prog.enthalpy_from_fit, np.array([25.0, 8.0, -3.0]), True, False),
    "from numpy import *": (prog.two_source_spectrum, np.array([1500.0, 800.0, 0.6]), True,
                            True),
}


(test_gradient_against_differences_and_the_other_mode,
 test_the_tape_replayed_at_a_new_point) = program_tests(PROGRAMS, ADAPTIVE)


def test_float_of_a_parameter_is_refused_saying_where_and_what_to_do():
    with pytest.raises(adsim.errors.ActiveValueLeak) as info:
        adsim.grad(prog.scheduled_rate)(np.array([0.8, 0.1]))
    message = str(info.value)
    assert "float() of an active value" in message
    assert "element [0] of input 0" in message                  # where the value came from
    assert "programs_s10.py" in message and "in scheduled_rate" in message   # the line
    assert "rate = float(params[0])" in message
    assert "adsim.value(x)" in message                          # what to do


def test_a_list_of_active_values_minus_a_plain_array_is_refused_naming_the_operator():
    # NumPy turns the list into a plain array before any override is asked
    with pytest.raises(adsim.errors.UnsupportedOperation, match="the operator `-`"):
        adsim.grad(prog.gaussian_loglik_list_minus_data)(np.array([1.1, -0.4]))


def test_the_statistics_module_on_parameters_is_refused_naming_numpys_functions():
    with pytest.raises(adsim.errors.ActiveValueLeak) as info:
        adsim.grad(prog.replicate_spread)(np.array([1.2, 0.7]))
    message = str(info.value)
    assert "statistics" in message and "np.std(x, ddof=1)" in message
    assert "programs_s10.py" in message and "in replicate_spread" in message
