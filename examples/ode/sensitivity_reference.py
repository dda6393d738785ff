"""Reference derivatives for the ODE examples: forward sensitivities with SciPy.

For ``y' = fun(t, y, p)``, ``y(t0) = y0``, where ``(y0, p) = problem(theta)``,
the sensitivities ``S = dy/dtheta`` (shape ``(n, m)``) solve

    S' = f_y S + f_p dp/dtheta,      S(t0) = dy0/dtheta,

an ODE that runs alongside ``y``. Integrated together by
``scipy.integrate.solve_ivp`` at a tight tolerance, they give the
derivative of the *exact* ODE solution; adsim's discrete adjoint is the
derivative of the *computed* solution, and the two meet as ``rtol``
shrinks. The Jacobians ``f_y``, ``f_p``, ``dy0/dtheta`` and ``dp/dtheta``
come from ``adsim.jacobian``. Stiff problems need an implicit method and the
Jacobian of the augmented system, which holds second derivatives of ``fun``
(the derivative of ``f_y S`` with respect to ``y``): that is
``adsim.jacobian`` of the augmented right-hand side, a nested derivative.
Without it SciPy's Radau and BDF iterate with a poor matrix and take tens of
times more steps.

The augmented system has ``n (m + 1)`` unknowns and each evaluation forms
the dense ``f_y``: this is a reference for small systems.
"""
import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim

IMPLICIT = ("Radau", "BDF")


def forward_sensitivities(fun, t_span, problem, theta, t_eval, method="DOP853", rtol=1e-12,
                          atol=1e-12):
    """States ``y`` (shape ``(n, k)``) and sensitivities ``S = dy/dtheta``
    (shape ``(n, m, k)``) at the ``k`` times ``t_eval``.

    ``fun(t, y, p)`` takes one parameter array ``p``; ``problem(theta)``
    returns ``(y0, p)``. ``atol`` (a number or one per component of ``y``)
    also bounds the absolute error of each row of ``S``: with ``theta`` in
    log space, a row of ``S`` has the scale of its component of ``y``.
    """
    theta = np.asarray(theta, dtype=float)
    y0, p = (np.asarray(a, dtype=float) for a in problem(theta))
    n, m = y0.size, theta.size
    dy0 = adsim.jacobian(lambda th: problem(th)[0])(theta).reshape(n, m)
    dp = adsim.jacobian(lambda th: problem(th)[1])(theta).reshape(p.size, m)
    # time as a 0-d array: a plain float would be a constant of the tape,
    # recorded again at every new time
    fun_jacobian = adsim.jacobian(lambda y, p, t: np.array(fun(t, y, p)), argnums=(0, 1))

    def augmented(w, p, t):
        y, S = w[:n], w[n:].reshape(n, m)
        f_y, f_p = fun_jacobian(y, p, t)
        return np.concatenate([np.array(fun(t, y, p)), (f_y @ S + f_p @ dp).ravel()])

    options = {}
    if method in IMPLICIT:
        augmented_jacobian = adsim.jacobian(augmented)
        options["jac"] = lambda t, w: augmented_jacobian(w, p, np.array(t))
    atol = np.broadcast_to(np.asarray(atol, dtype=float), (n,))
    sol = scipy_solve_ivp(lambda t, w: augmented(w, p, np.array(t)), t_span,
                          np.concatenate([y0, dy0.ravel()]), method=method, t_eval=t_eval,
                          rtol=rtol, atol=np.concatenate([atol, np.repeat(atol, m)]), **options)
    if not sol.success:
        raise RuntimeError(f"the sensitivity reference failed: {sol.message}")
    return sol.y[:n], sol.y[n:].reshape(n, m, -1)


def chain(loss_of_outputs, y, S):
    """d loss / d theta for ``loss_of_outputs(y)`` of the outputs ``y`` (shape
    ``(n, k)``) with sensitivities ``S``: the sum of ``dL/dy[i, j] S[i, :, j]``,
    ``dL/dy`` by adsim."""
    return np.einsum("ij,imj->m", adsim.grad(loss_of_outputs)(y), S)


def relative_error(gradient, reference):
    """Largest deviation relative to the largest reference component: the
    components of a gradient have different scales, and one of them near
    zero would make a componentwise ratio meaningless."""
    return float(np.max(np.abs(gradient - reference)) / np.max(np.abs(reference)))


def central_differences(f, theta, eps=1e-6):
    """Central differences of ``f`` in each component of ``theta``, with steps
    relative to the component."""
    g = np.zeros(theta.size)
    for i in range(theta.size):
        d = np.zeros(theta.size)
        d[i] = eps * max(1.0, abs(theta[i]))
        g[i] = (f(theta + d) - f(theta - d)) / (2 * d[i])
    return g
