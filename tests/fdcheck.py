"""Reference derivatives for the tests: finite differences, the complex step,
and one battery that checks every sweep of a recorded tape against them.

Finite differences use the fourth-order central stencil

    f'(x) v ~ (8 (f(x + h v) - f(x - h v)) - (f(x + 2 h v) - f(x - 2 h v))) / (12 h)

whose truncation error is O(h^4): with h = 1e-3 both truncation and rounding
stay near 1e-12 for the smooth functions of order one used here.
"""
import numpy as np

import adsim

H = 1e-3          # finite-difference step
RTOL = 1e-7       # tolerance of derivatives against finite differences
ATOL = 1e-8
DOT_RTOL = 1e-12  # forward against reverse mode: equal up to rounding


def as_list(xs):
    return [np.asarray(x, dtype=float) for x in xs]


def flat(arrays):
    """Concatenate the ravelled arrays (one direction over several inputs)."""
    return np.concatenate([np.ravel(a) for a in arrays]) if arrays else np.zeros(0)


def unflat(vector, like):
    """Split a flat vector into arrays shaped like ``like``."""
    out, start = [], 0
    for x in like:
        out.append(np.asarray(vector[start:start + x.size], dtype=float).reshape(x.shape))
        start += x.size
    return out


def central(f, xs, vs, h=H):
    """Directional derivative of ``f(*xs)`` along ``vs`` (one array per input),
    at points laid out in memory as the inputs are (NumPy's results may
    depend on the layout: ravel(order="K"), which reshapes are views)."""
    def at(t):
        return np.asarray(f(*[np.add(x, t * v, out=np.empty_like(x)) for x, v in zip(xs, vs)]),
                          dtype=float)
    return (8.0 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12.0 * h)


def differences(f, x, step=1e-3):
    """Central differences of ``f`` at ``x`` (a number or a 1-d array), the
    step ``step`` relative to each parameter (at least ``step`` / 10)."""
    g = (lambda y: f(float(y[0]))) if np.ndim(x) == 0 else f
    x = np.atleast_1d(np.asarray(x, dtype=float))
    steps = step * np.maximum(np.abs(x), 0.1)
    return np.array([central(g, [x], [e * h], 1.0) / h for e, h in zip(np.eye(x.size), steps)])


def fd_jacobian(f, xs, h=H):
    """Dense Jacobian of ``f(*xs)`` by columns of central differences, shaped
    (output size, total input size)."""
    xs = as_list(xs)
    n = sum(x.size for x in xs)
    cols = []
    for j in range(n):
        e = np.zeros(n)
        e[j] = 1.0
        cols.append(np.ravel(central(f, xs, unflat(e, xs), h)))
    m = np.asarray(f(*xs)).size
    return np.stack(cols, axis=1) if cols else np.zeros((m, 0))


def complex_step(f, xs, vs, h=1e-20):
    """J v from Im f(x + i h v) / h (Squire & Trapp 1998): exact to rounding
    for holomorphic f, no subtractive cancellation."""
    return np.imag(f(*[x + 1j * h * v for x, v in zip(xs, vs)])) / h


def assert_close(got, want, rtol=RTOL, atol=ATOL, what="value"):
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def assert_dot_equal(a, b, what):
    """Two inner products that must agree up to rounding."""
    scale = max(abs(a), abs(b), 1e-300)
    assert abs(a - b) <= DOT_RTOL * scale + 1e-13, f"{what}: {a!r} != {b!r}"


def per_input(result, n_inputs):
    """A tape result for one input is an array, for several a tuple: make it a list."""
    return [result] if n_inputs == 1 else list(result)


def replayed_gradient(f, x, x2, value_rtol, reference=None):
    """The gradient of ``f`` at ``x2`` from its tape recorded at ``x``, and
    whether that replay held. The tape's gradient at ``x`` must be
    adsim.grad's; where the replay at ``x2`` holds, its value must be
    ``reference(x2)`` (``f``'s by default) to ``value_rtol``; where it raises
    BranchChanged (another number of steps or events), adsim.grad records
    ``f`` again at ``x2``."""
    tape = adsim.record(f, x)
    assert_close(tape.gradient(x), adsim.grad(f)(x), rtol=1e-12, atol=0.0, what="tape at x")
    try:
        got = tape.gradient(x2)
    except adsim.BranchChanged:
        return adsim.grad(f)(x2), False
    assert_close(tape.forward(x2), (reference or f)(x2), rtol=value_rtol, atol=0.0,
                 what="replayed value")
    return got, True


def check_tape(f, xs, seed=0, order=2, k=3, h=H, rtol=RTOL, atol=ATOL, value_rtol=1e-13,
               value_atol=1e-300):
    """Record ``f(*xs)`` and check every sweep of the tape.

    * zero-order replay against ``f`` run on plain NumPy arrays;
    * tangents (one and ``k`` directions) and the dense Jacobian (forward
      and reverse) against central differences (``atol`` is relative to
      the largest Jacobian entry);
    * adjoints (one and ``k`` weights, and the gradient for a scalar
      output) against the same differences, and the dot-product test
      <w, J v> = <J^T w, v>;
    * with ``order=2``: H v of w.f against central differences of the
      gradient, and k directions at once against k single products.

    Returns the tape.
    """
    rng = np.random.default_rng(seed)
    xs = as_list(xs)
    tape = adsim.record(f, *xs)
    want = np.asarray(f(*xs), dtype=float)
    assert tuple(tape.output_shape) == want.shape
    assert_close(tape.forward(*xs), want, rtol=value_rtol, atol=value_atol, what="replayed value")
    n_in = len(xs)
    J = fd_jacobian(f, xs, h)
    m = J.shape[0]
    atol = atol * max(1.0, np.max(np.abs(J), initial=0.0))   # errors scale with the derivatives

    vs = [rng.standard_normal(x.shape) for x in xs]
    y, jv = tape.jvp(xs, vs)
    assert_close(y, want, rtol=value_rtol, atol=value_atol, what="value of the tangent sweep")
    assert_close(np.ravel(jv), J @ flat(vs), rtol, atol, "J v (tangent sweep)")

    Vs = [rng.standard_normal(x.shape + (k,)) for x in xs]
    _, JV = tape.jvp(xs, Vs)
    assert JV.shape == want.shape + (k,)
    V = np.concatenate([v.reshape(-1, k) for v in Vs], axis=0)
    assert_close(JV.reshape(m, k), J @ V, rtol, atol, "J V (vector tangent sweep)")

    w = rng.standard_normal(want.shape)
    y, g = tape.vjp(xs, w)
    g = per_input(g, n_in)
    assert_close(y, want, rtol=value_rtol, atol=value_atol, what="value of the adjoint sweep")
    assert_close(flat(g), J.T @ np.ravel(w), rtol, atol, "J^T w (adjoint sweep)")
    assert_dot_equal(float(np.dot(np.ravel(w), np.ravel(jv))), float(np.dot(flat(g), flat(vs))),
                     "dot-product test <w, J v> = <J^T w, v>")

    if m == 1:       # a scalar output: the gradient (adjoint seeded with 1)
        value, grads = tape.value_and_gradient(*xs)
        assert_close(value, want.reshape(()), rtol=value_rtol, atol=value_atol, what="value")
        assert_close(flat(per_input(grads, n_in)), J[0], rtol, atol, "gradient")

    W = rng.standard_normal(want.shape + (k,))
    _, G = tape.vjp(xs, W)
    G = per_input(G, n_in)
    Gflat = np.concatenate([a.reshape(-1, k) for a in G], axis=0)
    assert_close(Gflat, J.T @ W.reshape(m, k), rtol, atol, "J^T W (vector adjoint sweep)")
    for j in range(k):
        _, gj = tape.vjp(xs, W[..., j])
        assert_close(flat(per_input(gj, n_in)), Gflat[:, j], 1e-12, 1e-14,
                     "one column of the vector adjoint sweep")

    for mode in ("forward", "reverse"):
        Jt = per_input(tape.jacobian(*xs, mode=mode), n_in)
        for jt, x in zip(Jt, xs):
            assert jt.shape == want.shape + x.shape
        # sizes spelled out: -1 cannot be inferred for a size-0 output
        assert_close(np.concatenate([jt.reshape(m, x.size) for jt, x in zip(Jt, xs)], axis=1), J,
                     rtol, atol, f"dense Jacobian ({mode})")

    if order >= 2:
        check_hvp(tape, xs, w, rng, k, h, rtol, atol)
    return tape


def check_hvp(tape, xs, w, rng, k=3, h=H, rtol=RTOL, atol=ATOL):
    """H v of w.f (second-order adjoint sweep) against central differences of
    the gradient of w.f, plus vector mode against single directions."""
    n_in = len(xs)

    def gradient(*z):
        return flat(per_input(tape.vjp(list(z), w)[1], n_in))

    vs = [rng.standard_normal(x.shape) for x in xs]
    g, hv = tape.gradient_and_hvp(xs, vs, w)
    assert_close(flat(per_input(g, n_in)), gradient(*xs), 1e-12, 1e-14,
                 "gradient of the second-order sweep vs the adjoint sweep")
    want = central(gradient, xs, vs, h)
    scale = max(1.0, np.max(np.abs(want), initial=0.0))
    assert_close(flat(per_input(hv, n_in)), want, rtol, atol * scale, "H v (second-order adjoint sweep)")
    Vs = [rng.standard_normal(x.shape + (k,)) for x in xs]
    HV = per_input(tape.hvp(xs, Vs, w), n_in)
    for j in range(k):
        hj = per_input(tape.hvp(xs, [v[..., j] for v in Vs], w), n_in)
        assert_close(flat([a[..., j] for a in HV]), flat(hj), 1e-12, 1e-14,
                     "one direction of the vector second-order sweep")


def distinct(rng, shape, lo=-2.0, hi=2.0):
    """Random values at least 0.08 apart and 0.04 away from every multiple of
    0.5 (the kinks of abs, max, clip at 0 and +-0.5, ...), so that central
    differences with step 1e-3 never cross a kink or change an argmax."""
    grid = np.arange(lo + 0.05, hi, 0.1)
    grid = grid[np.abs(grid - 0.5 * np.round(grid / 0.5)) > 0.04]
    n = int(np.prod(shape))
    if n > grid.size:
        raise ValueError("distinct: too many values for the interval")
    values = rng.choice(grid, size=n, replace=False) + rng.uniform(-0.01, 0.01, size=n)
    return values.reshape(shape)


def assert_same_to_rounding(a, b, rtol):
    """Equal to ``rtol`` of b's largest finite element, with NaN and
    infinities in the same places (fused against interpreted sweeps, which
    add some sums in other orders)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.array_equal(np.isinf(a), np.isinf(b))
    assert np.array_equal(a[np.isinf(a)], b[np.isinf(b)])
    finite = np.isfinite(a)
    scale = max(np.max(np.abs(b[finite]), initial=0.0), 1e-300)
    assert np.max(np.abs(a[finite] - b[finite]), initial=0.0) <= rtol * scale
