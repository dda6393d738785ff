"""Tapes of solve_ivp in tape files, for every method: the parameters given
as ``args=tuple(rates)``, as a dict in ``args`` (a tape taking the dict), or
read from a closure. Saved, loaded and unpickled tapes replay bitwise like
the original (forward, gradient, jvp, vjp, hvp) at the recorded point and
near it; Radau's and BDF's dense Newton solves travel as built-in
primitives, their Jacobian as ordinary ops (small systems) or a nested
derivative of ``fun`` with the recorded variants of ``fun``, their sparse
Jacobian (by coloring) with its pattern and the sparse LU solves by it. A fresh process
replays them without the model's code."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import adsim as ad
from adsim.integrate import _implicit, solve_ivp
from paths import ROOT
from tapefile_replays import as_bytes, assert_same_replays, callback_kinds, copies, nearby

METHODS = ["RK45", "DOP853", "Radau", "BDF"]
Z0 = np.array([1.0, 0.5])
RATES = np.array([1.0, 0.4, 1.5, 0.75])
NAMES = ("a", "b", "c", "d")
OPTIONS = {"t_span": (0.0, 0.2), "t_eval": [0.1, 0.2], "rtol": 1e-4, "atol": 1e-6}


def lotka_volterra(t, z, a, b, c, d):
    x, y = z
    return [a * x - b * x * y, -c * y + d * x * y]


def with_dict(t, z, p):
    return lotka_volterra(t, z, *(p[k] for k in NAMES))


def by_tuple(method):
    def loss(z0, rates):
        sol = solve_ivp(lotka_volterra, y0=z0, method=method, args=tuple(rates), **OPTIONS)
        return np.sum(sol.y ** 2)
    return loss, (Z0, RATES)


def by_dict(method):
    def loss(z0, params):
        sol = solve_ivp(with_dict, y0=z0, method=method, args=(params,), **OPTIONS)
        return np.sum(sol.y ** 2)
    return loss, (Z0, dict(zip(NAMES, RATES)))


def by_closure(method):
    def loss(z0, rates):
        sol = solve_ivp(lambda t, z: lotka_volterra(t, z, *rates), y0=z0, method=method,
                        **OPTIONS)
        return np.sum(sol.y ** 2)
    return loss, (Z0, RATES)


@pytest.mark.parametrize("parameters", [by_tuple, by_dict, by_closure])
@pytest.mark.parametrize("method", METHODS)
def test_solve_ivp_tapes_replay_bitwise_after_saving_and_pickling(method, parameters, tmp_path):
    loss, args = parameters(method)
    tape = ad.record(loss, *args)
    if method in ("Radau", "BDF"):          # the dense Newton solves: built-in primitives
        assert "adsim.builtin_primitive" in callback_kinds(tape)
    near = tuple(nearby(a, np.random.default_rng(1), 1e-6) for a in args)
    assert_same_replays(tape, copies(tape, tmp_path), [args, near])


@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_a_jacobian_kept_as_a_nested_derivative_travels_too(method, tmp_path, monkeypatch):
    """Above TRANSCRIBED_MAX_SIZE equations the Jacobian of fun is one
    nested-derivative op (below it, ordinary ops of the step's tape): it
    travels as the recorded variants of fun."""
    monkeypatch.setattr(_implicit, "TRANSCRIBED_MAX_SIZE", 1)
    loss, args = by_tuple(method)
    tape = ad.record(loss, *args)
    assert "adsim.nested_derivative" in callback_kinds(tape)
    near = tuple(nearby(a, np.random.default_rng(1), 1e-6) for a in args)
    assert_same_replays(tape, copies(tape, tmp_path), [args, near])


def heat(t, u, k):
    """The 1-D heat equation, insulated ends (a tridiagonal Jacobian)."""
    left, right = np.concatenate([u[:1], u[:-1]]), np.concatenate([u[1:], u[-1:]])
    return k * (left - 2.0 * u + right)


def tridiagonal(n):
    return sp.diags_array([np.ones(n - 1), np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1])


@pytest.mark.parametrize("method,n,given", [("Radau", 8, True), ("BDF", 8, True),
                                            ("BDF", 100, False)])
def test_tapes_of_the_sparse_jacobian_replay_bitwise_after_saving(method, n, given):
    """Radau and BDF with jac_sparsity, or a large system whose detected
    pattern is sparse: the colored Jacobian and the sparse LU solves travel,
    and so do the Hessian-vector products through them (third derivatives
    of the saved variants of fun). The large system's output is its final
    state (``t_eval``): BDF's derivatives are those of a Radau solve at BDF's
    output times, and Radau with a loop per output time (many outputs of a
    large system) does not save."""
    loss, args = sparse_heat(method, n, given)
    tape = ad.record(loss, *args)
    assert {"adsim.sparse_jacobian", "adsim.builtin_primitive"} <= callback_kinds(tape)
    near = tuple(nearby(a, np.random.default_rng(2), 1e-6) for a in args)
    assert_same_replays(tape, copies(tape), [args, near])


def sparse_heat(method, n=8, given=True):
    """``heat`` with a sparse Jacobian: ``jac_sparsity``, or detected (n >= 100)."""
    options = {"jac_sparsity": tridiagonal(n)} if given else {"t_eval": [0.05]}

    def loss(u0, k):
        sol = solve_ivp(heat, (0.0, 0.05), u0, method=method, args=(k,), rtol=1e-4,
                        atol=1e-6, **options)
        return np.sum(sol.y[:, -1] ** 2)
    return loss, (np.sin(np.linspace(0.0, 3.0, n)) + 1.0, np.array(0.8 * n))


# the child's BLAS runs with the threads this process's runs with: a stiff
# gradient's LU solves differ in the last bit between one thread and two
BLAS_THREADS = {k: v for k, v in os.environ.items() if k.endswith("_NUM_THREADS")}

LOAD = """
import pickle, sys
tapes, points = pickle.loads(sys.stdin.buffer.read())
sys.stdout.write(pickle.dumps([(t.gradient(*p), t.hvp(p, p)) for t, p in zip(tapes, points)]).hex())
"""


def test_a_fresh_process_replays_stiff_solve_ivp_tapes_without_the_model():
    """The Jacobians and Newton solves of Radau and BDF, dense and sparse,
    and the Hessian-vector products through them, need none of the model's
    code."""
    cases = [by_tuple("Radau"), by_dict("BDF"), sparse_heat("Radau")]
    tapes = [ad.record(loss, *args) for loss, args in cases]
    points = [args for _, args in cases]
    run = subprocess.run([sys.executable, "-c", LOAD], input=pickle.dumps((tapes, points)),
                         capture_output=True, timeout=120, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "", **BLAS_THREADS})
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    got = pickle.loads(bytes.fromhex(run.stdout.decode()))
    want = [(t.gradient(*p), t.hvp(p, p)) for t, p in zip(tapes, points)]
    assert as_bytes(got) == as_bytes(want)
