"""What every test of a differentiated solver checks: the gradient against
central differences of the whole function (the solve included), forward
against reverse mode, Hessian-vector products against differences of the
gradient, and a replay of the recorded tape at new parameters (the solver
runs again there) against differences at that point."""
import numpy as np

import adsim
from fdcheck import assert_close, central


def check_solution_derivatives(f, p, v, *, rtol=1e-6, atol=1e-8, second_order=True,
                               moved=0.05, value_rtol=1e-9):
    """All of the above for ``f`` (a scalar function of the parameters ``p``
    that solves inside) along ``v``; ``moved`` sets the replay point
    ``p + moved``. Differences of a solution are as accurate as the solver
    (``rtol``); a replay solves from the previous solution, so its value
    agrees with a fresh solve to the solver's tolerance (``value_rtol``)."""
    p, v = np.asarray(p, dtype=float), np.asarray(v, dtype=float)
    g = adsim.grad(f)(p)
    assert_close(g @ v, central(f, [p], [v], h=1e-4), rtol, atol, "gradient . v")
    _, tangent = adsim.jvp(f, p, v)
    assert_close(tangent, g @ v, 1e-10, 1e-12, "jvp against grad . v")
    if second_order:
        grad_f = adsim.grad(f)
        want = central(grad_f, [p], [v], h=1e-4)
        assert_close(adsim.hvp(f, p, v), want, 100 * rtol, 100 * atol, "hvp")
    tape = adsim.record(f, p)
    q = p + moved
    assert_close(tape.forward(q), f(q), value_rtol, 1e-2 * value_rtol, "replayed value")
    assert_close(tape.gradient(q) @ v, central(f, [q], [v], h=1e-4), rtol, atol,
                 "replayed gradient . v")
    return g
