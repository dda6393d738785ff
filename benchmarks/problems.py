"""The benchmark problems: one registry shared by every benchmark script.

Each problem is a plain NumPy function ``f(x, *params, xp=numpy)`` of one
float64 array ``x`` (the variable differentiated) and constant parameters,
with a seeded generator of inputs. ``xp`` is the array namespace: NumPy for
adsim (active arrays go through NumPy's override protocols) and plain runs,
``autograd.numpy`` or ``jax.numpy`` when a peer tool is timed on the same
code. Problems that other benchmarks need in a special form (the step of a
time loop for checkpointing, a sparsity pattern for coloring) carry it in
``extras``.

Adding a problem: write ``f`` and ``make(n, rng) -> (x, params)``, then
``register(Problem(...))`` at the bottom of this file (or from a benchmark
script, before use).

References
----------
.. [1] A. G. Baydin, B. A. Pearlmutter, A. A. Radul, J. M. Siskind,
   "Automatic differentiation in machine learning: a survey", JMLR 18(153),
   2018, Section 4 (Table 4, Figure 5: the Helmholtz free energy).
.. [2] H. H. Rosenbrock, "An automatic method for finding the greatest or
   least value of a function", Comput. J. 3(3), 1960; the extended (chained)
   form as in J. J. Moré, B. S. Garbow, K. E. Hillstrom, ACM TOMS 7(1), 1981.
.. [3] E. N. Lorenz, "Predictability: a problem partly solved", Proc.
   Seminar on Predictability, ECMWF, 1996 (the Lorenz-96 system).
.. [4] G. Bratu, "Sur les équations intégrales non linéaires", Bull. Soc.
   Math. France 42, 1914; the discretised problem as in the MINPACK-2 test
   collection (B. M. Averick et al., 1991).
"""
import math
from dataclasses import dataclass, field

import numpy as np

SQRT2 = math.sqrt(2.0)
SQRT8 = math.sqrt(8.0)


@dataclass(frozen=True)
class Problem:
    """A benchmark problem: ``f(x, *params, xp=np)`` and how to make inputs."""

    name: str
    title: str
    f: object                       # f(x, *params, xp=np) -> scalar or 1-D array
    make: object                    # make(n, rng) -> (x, params tuple)
    sizes: tuple                    # sizes of a full run
    quick_sizes: tuple              # sizes of a --quick run
    output: str = "scalar"          # "scalar" or "vector"
    tags: frozenset = frozenset()   # "array", "scalar", "loop", "sparse-jacobian", ...
    data: str = ""                  # how the inputs are generated (for the docs)
    extras: dict = field(default_factory=dict)

    def instance(self, n, seed=0):
        """Inputs of size ``n`` from ``np.random.default_rng(seed)``."""
        x, params = self.make(n, np.random.default_rng(seed))
        return Instance(self, n, np.ascontiguousarray(x, dtype=np.float64), tuple(params))


@dataclass(frozen=True)
class Instance:
    """A problem at one size: the point ``x`` and the constant parameters."""

    problem: Problem
    n: int
    x: np.ndarray
    params: tuple

    def __call__(self, x, xp=np):
        return self.problem.f(x, *self.params, xp=xp)

    def function(self, xp=np):
        """``f`` of ``x`` alone, the parameters closed over (recorded as constants)."""
        f, params = self.problem.f, self.params

        def f_of_x(x):
            return f(x, *params, xp=xp)
        f_of_x.__name__ = self.problem.name
        return f_of_x


REGISTRY = {}


def register(problem):
    """Add ``problem`` to the registry (names are unique)."""
    if problem.name in REGISTRY:
        raise ValueError(f"benchmark problem {problem.name!r} is already registered")
    REGISTRY[problem.name] = problem
    return problem


def get(name):
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no benchmark problem {name!r}; known: {', '.join(REGISTRY)}") from None


def tagged(tag):
    """Problems carrying ``tag``, in registration order."""
    return [p for p in REGISTRY.values() if tag in p.tags]


# ---- Helmholtz free energy [1] ------------------------------------------------

def helmholtz(x, A, b, R=1.0, T=1.0, xp=np):
    """f(x) = R T sum x_i log(x_i / (1 - b'x))
    - x'Ax / (sqrt(8) b'x) log((1 + (1 + sqrt 2) b'x) / (1 + (1 - sqrt 2) b'x))."""
    bx = b @ x
    mix = R * T * xp.sum(x * xp.log(x / (1.0 - bx)))
    attraction = (x @ (A @ x)) / (SQRT8 * bx)
    return mix - attraction * xp.log((1.0 + (1.0 + SQRT2) * bx) / (1.0 + (1.0 - SQRT2) * bx))


def make_helmholtz(n, rng):
    """A = (M + M')/2 and b with entries uniform on (0, 1); x uniform on (0, 1),
    then scaled so that b'x = 1/2 (inside the domain, where b'x < 1)."""
    M = rng.uniform(0.0, 1.0, (n, n))
    A = 0.5 * (M + M.T)
    b = rng.uniform(0.0, 1.0, n)
    x = rng.uniform(0.0, 1.0, n)
    x *= 0.5 / (b @ x)
    return x, (A, b)


register(Problem(
    "helmholtz", "Helmholtz free energy (mixed fluid, Peng–Robinson)", helmholtz, make_helmholtz,
    sizes=(1, 8, 15, 22, 29, 36, 43, 50, 200, 1000, 10000), quick_sizes=(1, 8),
    tags=frozenset({"array", "dense"}),
    data="`rng = np.random.default_rng(seed)`; `M = rng.uniform(0, 1, (n, n))`, "
         "`A = (M + M.T) / 2`, `b = rng.uniform(0, 1, n)`, `x = rng.uniform(0, 1, n)` "
         "scaled by `0.5 / (b @ x)` so that bᵀx = 1/2."))


# ---- extended Rosenbrock chain [2] ----------------------------------------------

def rosenbrock(x, xp=np):
    """sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2."""
    head, tail = x[:-1], x[1:]
    return xp.sum(100.0 * (tail - head ** 2) ** 2 + (1.0 - head) ** 2)


def make_rosenbrock(n, rng):
    """The classic start (-1.2, 1, -1.2, 1, ...) plus uniform noise of 0.1."""
    x = np.where(np.arange(n) % 2 == 0, -1.2, 1.0) + rng.uniform(-0.1, 0.1, n)
    return x, ()


register(Problem(
    "rosenbrock", "extended Rosenbrock chain", rosenbrock, make_rosenbrock,
    sizes=(10, 1000, 100000), quick_sizes=(10, 1000), tags=frozenset({"array"}),
    data="(-1.2, 1, -1.2, ...) plus `rng.uniform(-0.1, 0.1, n)`."))


# ---- RK4 steps of the Lorenz-96 system [3] --------------------------------------

def lorenz96(x, forcing=8.0, xp=np):
    """dx_i/dt = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F, indices cyclic."""
    return (xp.roll(x, -1) - xp.roll(x, 2)) * xp.roll(x, 1) - x + forcing


def rk4_step(x, dt, xp=np):
    """One classical Runge–Kutta step of the Lorenz-96 system."""
    k1 = lorenz96(x, xp=xp)
    k2 = lorenz96(x + (0.5 * dt) * k1, xp=xp)
    k3 = lorenz96(x + (0.5 * dt) * k2, xp=xp)
    k4 = lorenz96(x + dt * k3, xp=xp)
    return x + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def rk4(x, dt, n_steps, xp=np):
    """0.5 |x(T)|^2 / n after ``n_steps`` RK4 steps of Lorenz-96 from x."""
    for _ in range(n_steps):
        x = rk4_step(x, dt, xp=xp)
    return 0.5 * xp.sum(x * x) / x.shape[0]


def make_rk4(n, rng):
    """The rest state x = F = 8 plus uniform noise of 0.01; dt = 0.01, 50 steps."""
    return 8.0 + rng.uniform(-0.01, 0.01, n), (0.01, 50)


register(Problem(
    "rk4", "RK4 ODE step loop (Lorenz-96, 50 steps)", rk4, make_rk4,
    sizes=(40, 1000, 10000), quick_sizes=(40,), tags=frozenset({"array", "loop"}),
    data="x = 8 + `rng.uniform(-0.01, 0.01, n)`, dt = 0.01, 50 steps.",
    extras={"step": rk4_step, "step_params": lambda inst: (inst.params[0],),
            "n_steps": lambda inst: inst.params[1]}))


# ---- explicit 1-D heat equation -----------------------------------------------------

def heat_step(u, r, xp=np):
    """u + r (u_{i+1} - 2 u_i + u_{i-1}) with zero Dirichlet boundaries."""
    return u + r * xp.diff(xp.pad(u, 1, mode="constant"), 2)


def heat(u0, r, target, n_steps, xp=np):
    """0.5 |u(T) - target|^2 after ``n_steps`` explicit steps from u0."""
    u = u0
    for _ in range(n_steps):
        u = heat_step(u, r, xp=xp)
    d = u - target
    return 0.5 * xp.sum(d * d)


def make_heat(n, rng):
    """u0 = sin(pi s) plus noise of 0.01 on s in (0, 1); r = 0.4 (stable);
    the target is 0.5 sin(pi s); 100 steps."""
    s = np.arange(1, n + 1) / (n + 1)
    return np.sin(np.pi * s) + rng.uniform(-0.01, 0.01, n), (0.4, 0.5 * np.sin(np.pi * s), 100)


register(Problem(
    "heat", "1-D heat equation, explicit (100 steps)", heat, make_heat,
    sizes=(100, 1000, 10000), quick_sizes=(100,), tags=frozenset({"array", "loop"}),
    data="u0 = sin(πs) + `rng.uniform(-0.01, 0.01, n)`, r = 0.4, 100 steps, "
         "target 0.5 sin(πs).",
    extras={"step": heat_step, "step_params": lambda inst: (inst.params[0],),
            "n_steps": lambda inst: inst.params[2]}))


# ---- Bratu residuals [4] -------------------------------------------------------------

def bratu1d(u, lam, xp=np):
    """F_i = u_{i-1} - 2 u_i + u_{i+1} + h^2 lam exp(u_i), u_0 = u_{n+1} = 0:
    a tridiagonal Jacobian."""
    h = 1.0 / (u.shape[0] + 1)
    return xp.diff(xp.pad(u, 1, mode="constant"), 2) + (h * h * lam) * xp.exp(u)


def make_bratu1d(n, rng):
    s = np.arange(1, n + 1) / (n + 1)
    return s * (1.0 - s) + rng.uniform(0.0, 0.01, n), (1.0,)


register(Problem(
    "bratu1d", "tridiagonal Bratu residual", bratu1d, make_bratu1d,
    sizes=(100, 10000, 1000000), quick_sizes=(100,), output="vector",
    tags=frozenset({"array", "sparse-jacobian"}),
    data="u = s(1 - s) + `rng.uniform(0, 0.01, n)`, λ = 1.",
    extras={"bandwidth": 1}))


def bratu2d(u, lam, xp=np):
    """5-point Laplacian of u on a k x k grid (zero boundary) plus
    h^2 lam exp(u); u is flat of length k^2."""
    k = math.isqrt(u.shape[0])
    h = 1.0 / (k + 1)
    U = xp.reshape(u, (k, k))
    P = xp.pad(U, 1, mode="constant")
    lap = P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4.0 * U
    return xp.reshape(lap + (h * h * lam) * xp.exp(U), (k * k,))


def make_bratu2d(n, rng):
    k = math.isqrt(n)
    if k * k != n:
        raise ValueError(f"bratu2d needs a square number of grid points, not {n}")
    s = np.arange(1, k + 1) / (k + 1)
    bump = np.outer(s * (1 - s), s * (1 - s))
    return (bump + rng.uniform(0.0, 0.01, (k, k))).reshape(-1), (6.0,)


register(Problem(
    "bratu2d", "2-D Bratu residual (5-point stencil)", bratu2d, make_bratu2d,
    sizes=(100, 10000, 250000), quick_sizes=(100,), output="vector",
    tags=frozenset({"array", "sparse-jacobian"}),
    data="k × k grid, u = s(1-s)·t(1-t) + `rng.uniform(0, 0.01)`, λ = 6."))


# ---- a scalar-heavy function (per-op costs) -------------------------------------------

def scalar_heavy(x, rounds, xp=np):
    """Scalar code: ``rounds`` sweeps of a nonlinear recurrence over the
    entries of x, one Python operation per recorded op (11 per entry and round:
    mul, sin, mul by a constant, add, tanh, mul by a constant, mul, add a
    constant, div, mul by a constant, add), then the sum of the entries."""
    xs = [x[i] for i in range(x.shape[0])]
    for _ in range(rounds):
        for i in range(len(xs)):
            a, b = xs[i], xs[i - 1]
            xs[i] = xp.tanh(a * b + 0.5 * xp.sin(a)) * 0.9 + 0.1 * b / (1.0 + a * a)
    s = xs[0]
    for v in xs[1:]:
        s = s + v
    return s


def make_scalar_heavy(n, rng):
    return rng.uniform(-1.0, 1.0, n), (4,)


register(Problem(
    "scalar_heavy", "scalar-heavy recurrence (per-op costs)", scalar_heavy, make_scalar_heavy,
    sizes=(5000,), quick_sizes=(100,), tags=frozenset({"scalar"}),
    data="x = `rng.uniform(-1, 1, n)`, 4 rounds: about 46 recorded ops per entry."))


def small(x, xp=np):
    """A five-op function: sum(x^2) log(sum(x)), for per-call overheads."""
    return xp.sum(x ** 2) * xp.log(xp.sum(x))


def make_small(n, rng):
    return rng.uniform(0.5, 1.5, n), ()


register(Problem(
    "small", "five-op tape (call overhead)", small, make_small, sizes=(3,), quick_sizes=(3,),
    tags=frozenset({"scalar"}), data="x = `rng.uniform(0.5, 1.5, 3)`."))
