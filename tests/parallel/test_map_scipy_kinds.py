"""Tapes holding ops that own recorded tapes of the program's Python
functions (a quad's integrand, a root finder's equations, a minimiser's
objective, a constrained minimiser's objective and constraints, a
LinearOperator's products) and adsim's eigsh family map on
spawned processes bitwise like serial replays: the processes load them
from tape files, with none of the program's code."""
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import adsim
from adsim import parallel
from paths import TESTS

sys.path.insert(0, str(TESTS / "scipy"))
import test_constrained_tapefiles as constrained      # noqa: E402
import test_implicit_tapefiles as implicit            # noqa: E402
import test_operator_solve_tapefiles as operator      # noqa: E402
import test_quadrature_tapefiles as quadrature        # noqa: E402
import test_sparse_eigen_tapefiles as eigen           # noqa: E402

KINDS = {"quad": (quadrature.program, quadrature.NEAR),
         # one chunk: a solve starts from the previous solution, so its last bits
         # depend on the points solved before, in a process as in this one
         "solves": (implicit.program, [p for (p,) in implicit.POINTS[:2]]),
         "constrained": (constrained.slsqp, [p for (p,) in constrained.POINTS[:2]]),
         "eigsh": (eigen.spectrum, [eigen.P, eigen.P * 1.3 + 0.1]),
         "operator": (operator.solved, [operator.B0, operator.B0 * 1.3 - 0.2])}


def test_scipy_kinds_map_on_spawned_processes():
    tapes = {name: adsim.record(f, points[0]) for name, (f, points) in KINDS.items()}
    want = {name: [tapes[name].gradient(p).tobytes() for p in KINDS[name][1]] for name in KINDS}
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        for name, tape in tapes.items():
            # a fresh copy per map: serial replays moved the solves' warm starts
            fresh = adsim.record(KINDS[name][0], KINDS[name][1][0])
            got = parallel.map("gradient", fresh, KINDS[name][1], executor=pool,
                               chunk_size=2)
            assert [np.asarray(g).tobytes() for g in got] == want[name], name
