"""Tapes that call adsim's SciPy primitives (the matrix functions and
solve_sylvester, the convolution and lfilter, the skew-normal cdf,
scipy.special.kv) load in a fresh process
that never recorded with them: a tape file naming such a primitive imports
the module that makes it."""
import pickle
import subprocess
import sys

import numpy as np
import scipy.linalg as sla
import scipy.signal as sig
import scipy.special as sc
import scipy.stats as st

import adsim as ad
from paths import ROOT

LOAD = """
import pickle, sys
import numpy as np
tape = pickle.loads(sys.stdin.buffer.read())
sys.stdout.write(np.asarray(tape.gradient(np.array([0.3, 0.7, 1.1, 0.5]))).tobytes().hex())
"""


def f(x):
    A = x.reshape(2, 2) * 0.1 + np.eye(2)
    return (np.sum(sla.expm(A)) + np.sum(sla.cosm(A)) + np.sum(sla.sqrtm(A))
            + np.sum(sla.solve_sylvester(A, A.T, np.eye(2))) + np.sum(sig.convolve(x, [1.0, -0.5]))
            + np.sum(sig.lfilter([1.0, 0.5], [1.0, -0.3], x))
            + np.sum(st.skewnorm.cdf(x, 1.5)) + np.sum(sc.kv(1.5, x)))


def test_a_fresh_process_loads_tapes_of_adsims_scipy_primitives():
    x = np.array([0.3, 0.7, 1.1, 0.5])
    tape = ad.record(f, x)
    run = subprocess.run([sys.executable, "-c", LOAD], input=pickle.dumps(tape),
                         capture_output=True, timeout=120, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1",
                              "PATH": ""})
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    assert bytes.fromhex(run.stdout.decode()) == tape.gradient(x).tobytes()
