"""Discrete adjoint of an adaptive Dormand-Prince 5(4) integrator.

The Brusselator with a quadrature component,

    x' = A + x^2 y - (B + 1) x,    y' = B x - x^2 y,    q' = x^2,   q(0) = 0,

is integrated to t = T by the embedded Runge-Kutta pair of Dormand & Prince
(1980) with error control: each step estimates its local error from the
embedded 4th-order solution, accepts or rejects, and picks the next step
size h. The whole integrator state (t, y, h, step counts) is one tuple, and
accept/reject is ``np.where`` on a recorded comparison, so the step is plain
NumPy code that ``adsim.checkpoint_while`` records once and replays in C; a
step that takes the other branch (a rejection, a clipped step-size factor)
is recorded again and kept as a variant. The number of steps is known only
when the loop stops, so snapshots are placed by the online schedule.

The loss L = q(T) + (x(T)^2 + y(T)^2) / 2 is differentiated with respect to
the parameters p = (A, B) and the initial state (x0, y0). This is the exact
derivative of the discrete solution (derivatives through the step-size
control included). It is checked against

* central differences of the same adaptive solver (agreement to rounding and
  truncation of the differences), and
* the continuous forward sensitivities S = dy/d(p, y0), solved with
  ``scipy.integrate.solve_ivp`` (DOP853, rtol 1e-12) on the ODE augmented by
  S' = f_y S + f_p; the Jacobians f_y and f_p come from ``adsim.jacobian``.
  The two agree to the integrator's tolerance.

Run: ``python examples/ode/dopri5_adjoint.py [--quick] [--rtol 1e-8]``

References
----------
J. R. Dormand and P. J. Prince, "A family of embedded Runge-Kutta formulae",
J. Comput. Appl. Math. 6(1), 19-26, 1980.
E. Hairer, S. P. Norsett and G. Wanner, "Solving Ordinary Differential
Equations I", 2nd ed., Springer, 1993, sec. II.4 (step-size control).
"""
import argparse
import time

import numpy as np
from scipy.integrate import solve_ivp

import adsim as ad

# Dormand-Prince 5(4) tableau: nodes c, stage weights a, 5th-order weights b
# and the error weights e = b - b_hat (b_hat: embedded 4th-order solution).
C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
)
B = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84)
E = (71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40)

SAFETY, FAC_MIN, FAC_MAX = 0.9, 0.2, 5.0

P_TRUE = np.array([1.0, 3.0])        # A, B of the Brusselator
Y0 = np.array([1.5, 3.0])            # x0, y0


def rhs(u, p):
    """Brusselator with the quadrature q' = x^2 (u = (x, y, q))."""
    x, y = u[0], u[1]
    x2y = x * x * y
    return np.stack([p[0] + x2y - (p[1] + 1.0) * x, p[1] * x - x2y, x * x])


def combine(y, h, weights, ks):
    """y + h * sum(w_i k_i) over the nonzero weights."""
    total = None
    for w, k in zip(weights, ks):
        if w != 0.0:
            total = w * k if total is None else total + w * k
    return y + h * total


def dopri5_step(state, p, t_end, rtol, atol):
    """One attempted step: accepted (t, y advance) or rejected (h shrinks).

    Seven right-hand side evaluations: the last stage is not reused as the
    next step's first (FSAL), which would need it in the state.
    """
    t, y, h, counts = state
    ks = [rhs(y, p)]
    for row in A[1:]:
        ks.append(rhs(combine(y, h, row, ks), p))
    y5 = combine(y, h, B, ks)
    ks.append(rhs(y5, p))
    err_vec = h * sum(e * k for e, k in zip(E, ks) if e != 0.0)
    scale = atol + rtol * np.maximum(np.abs(y), np.abs(y5))
    err = np.sqrt(np.mean((err_vec / scale) ** 2))
    accept = err <= 1.0
    factor = np.clip(SAFETY * np.maximum(err, 1e-10) ** -0.2, FAC_MIN, FAC_MAX)
    factor = np.where(accept, factor, np.minimum(factor, 1.0))   # no growth after a rejection
    t_next = np.where(accept, t + h, t)
    y_next = np.where(accept, y5, y)
    h_next = np.minimum(h * factor, t_end - t_next)               # land on t_end exactly
    counts = counts + np.where(accept, np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    return (t_next, y_next, h_next, counts)


def not_finished(state, p, t_end, rtol, atol):
    return state[0] < t_end * (1.0 - 1e-12)


def integrate(p, y0, t_end, rtol, atol, h0, snapshots=20, stats=None):
    """Final (t, u, h, counts) of the adaptive integration; u = (x, y, q)."""
    u0 = np.concatenate([y0, np.zeros(1)])
    state = (np.array(0.0), u0, np.array(h0), np.zeros(2))
    return ad.checkpoint_while(not_finished, dopri5_step, state, args=(p, t_end, rtol, atol),
                               snapshots=snapshots, stats=stats, max_steps=10 ** 6)


def loss_of(u):
    return u[2] + 0.5 * (u[0] ** 2 + u[1] ** 2)


def make_loss(t_end, rtol, atol, h0, snapshots=20, stats=None):
    def loss(p, y0):
        return loss_of(integrate(p, y0, t_end, rtol, atol, h0, snapshots, stats)[1])
    return loss


# ------------------------------------------------------------- references

def central_differences(loss, p, y0, eps=1e-6):
    """dL/dp and dL/dy0 by central differences with relative steps."""
    theta = np.concatenate([p, y0])
    g = np.zeros(theta.size)
    for i in range(theta.size):
        d = np.zeros(theta.size)
        d[i] = eps * max(1.0, abs(theta[i]))
        plus, minus = theta + d, theta - d
        g[i] = (loss(plus[:2], plus[2:]) - loss(minus[:2], minus[2:])) / (2 * d[i])
    return g


def forward_sensitivities(p, y0, t_end, rtol=1e-12, atol=1e-14):
    """dL/d(p, y0) from the continuous sensitivity equations, with SciPy.

    Augmented state (u, S) with S = du/d(p, y0) of shape (3, 4):
    S' = f_u S + [f_p, 0], S(0) = [0, I; 0, 0].
    """
    jac = ad.jacobian(rhs, argnums=(0, 1))

    def augmented(t, w):
        u, S = w[:3], w[3:].reshape(3, 4)
        f_u, f_p = jac(u, p)
        dS = f_u @ S
        dS[:, :2] += f_p
        return np.concatenate([rhs(u, p), dS.reshape(-1)])
    S0 = np.zeros((3, 4))
    S0[0, 2] = S0[1, 3] = 1.0
    w0 = np.concatenate([y0, [0.0], S0.reshape(-1)])
    sol = solve_ivp(augmented, (0.0, t_end), w0, method="DOP853", rtol=rtol, atol=atol)
    assert sol.success, sol.message
    u, S = sol.y[:3, -1], sol.y[3:, -1].reshape(3, 4)
    dL_du = np.array([u[0], u[1], 1.0])
    return loss_of(u), dL_du @ S, sol.nfev


# ------------------------------------------------------------- the study

def run(quick=False, rtol=None, verbose=True):
    t_end = 5.0 if quick else 20.0
    rtol = rtol if rtol is not None else (1e-6 if quick else 1e-8)
    atol = rtol
    h0 = 0.5                           # deliberately too large: the first attempts are rejected
    stats = {}
    loss = make_loss(t_end, rtol, atol, h0, stats=stats)
    p, y0 = P_TRUE, Y0

    t0 = time.perf_counter()
    final = integrate(p, y0, t_end, rtol, atol, h0)
    t_plain = time.perf_counter() - t0
    value = loss_of(final[1])
    accepted, rejected = (int(c) for c in final[3])

    value_and_grad = ad.value_and_grad(loss, argnums=(0, 1))
    t0 = time.perf_counter()
    value_ad, (g_p, g_y0) = value_and_grad(p, y0)
    t_grad = time.perf_counter() - t0
    t0 = time.perf_counter()
    value_and_grad(p, y0)
    t_grad_replay = time.perf_counter() - t0
    gradient = np.concatenate([g_p, g_y0])

    g_fd = central_differences(loss, p, y0)
    fd_error = np.max(np.abs(gradient - g_fd)) / np.max(np.abs(g_fd))
    t0 = time.perf_counter()
    value_ref, g_ref, nfev = forward_sensitivities(p, y0, t_end)
    t_sens = time.perf_counter() - t0
    sens_error = np.max(np.abs(gradient - g_ref)) / np.max(np.abs(g_ref))
    value_error = abs(value - value_ref) / abs(value_ref)

    sweep = []
    if not quick:                      # the difference shrinks with the tolerance
        for tol in (1e-6, 1e-8, 1e-10):
            g = np.concatenate(ad.grad(make_loss(t_end, tol, tol, h0), argnums=(0, 1))(p, y0))
            sweep.append((tol, np.max(np.abs(g - g_ref)) / np.max(np.abs(g_ref))))

    out = dict(t_end=t_end, rtol=rtol, steps=stats["n_steps"], accepted=accepted,
               rejected=rejected, loss=value, loss_ad=float(value_ad), gradient=gradient,
               fd_error=fd_error, sens_error=sens_error, value_error=value_error,
               t_plain=t_plain, t_grad=t_grad, t_grad_replay=t_grad_replay, t_sens=t_sens,
               forward_steps=stats["forward_steps"], snapshots=stats["snapshots"], nfev=nfev,
               sweep=sweep)
    if verbose:
        print(f"Brusselator on [0, {t_end:g}], Dormand-Prince 5(4), rtol = atol = {rtol:g}: "
              f"{accepted} accepted and {rejected} rejected steps")
        print(f"  plain integration {1e3 * t_plain:.0f} ms; loss and gradient "
              f"{1e3 * t_grad:.0f} ms (first call, records), {1e3 * t_grad_replay:.0f} ms (replay)")
        print(f"  online checkpointing: {stats['snapshots']} snapshots, {stats['forward_steps']} "
              f"plain step replays for {stats['n_steps']} steps")
        print("  dL/d(A, B, x0, y0):")
        print(f"    discrete adjoint     {np.array2string(gradient, precision=10)}")
        print(f"    central differences  {np.array2string(g_fd, precision=10)}  "
              f"(relative difference {fd_error:.1e})")
        print(f"    solve_ivp forward sensitivities (DOP853, rtol 1e-12, {nfev} evaluations, "
              f"{t_sens:.2f} s)")
        print(f"                         {np.array2string(g_ref, precision=10)}  "
              f"(relative difference {sens_error:.1e}; loss differs by {value_error:.1e})")
        for tol, err in sweep:
            print(f"    rtol = atol = {tol:.0e}: adjoint vs forward sensitivities {err:.1e}")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a shorter, looser run, for tests")
    parser.add_argument("--rtol", type=float, default=None, help="tolerance of the integrator")
    args = parser.parse_args(argv)
    out = run(quick=args.quick, rtol=args.rtol)
    assert out["rejected"] > 0, "no rejected step: the accept/reject branch was not exercised"
    assert out["fd_error"] < 1e-6, "adjoint disagrees with central differences"
    assert out["sens_error"] < 200 * out["rtol"], "adjoint disagrees with forward sensitivities"
    errors = [err for _, err in out["sweep"]]
    assert all(b < a / 30 for a, b in zip(errors, errors[1:])), \
        "the difference to the forward sensitivities does not shrink with the tolerance"
    return out


if __name__ == "__main__":
    main()
