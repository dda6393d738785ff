"""``scipy.sparse.linalg`` functions of a sparse matrix of active values
(adsim/_scipy/sparse_active.py) other than its solves
(adsim/_scipy/sparse_active_solve.py): ``norm``, ``eigsh``, ``svds``,
``inv``, ``expm`` and ``expm_multiply``.

- ``norm``: the Frobenius norm sqrt(sum v^2) of the summed entries, the 1-
  and inf-norms the largest column and row sums of |A| (recorded
  operations on the values); a norm along an axis is that of A.toarray().
- ``eigsh`` of a symmetric A: SciPy's ARPACK run on the values, then one
  primitive of the values. For a simple eigenvalue w with unit eigenvector
  u, dw = u^T dA u, and du (with u^T du = 0) solves the bordered system
  [[A - w I, u], [u^T, 0]] [du; 0] = [-(dA - dw I) u; 0], nonsingular
  exactly when w is simple; the system is symmetric, so the adjoint
  solves it with [ubar; 0] for z and vbar_p = wbar u_i u_j - z_i u_j for
  the entry p at (i, j). Each eigenvector keeps the sign it had when
  recorded (ARPACK's sign is arbitrary), so replays are continuous.
  Without ``v0`` (and a random generator) ARPACK starts from a fixed
  vector (:func:`start`) rather than a random one, so replays are bitwise
  alike; svds (ARPACK) too.
- ``svds``: the singular triplets (u, s, vt) are eigenpairs (s, [u; v] /
  sqrt 2) of the symmetric [[0, A], [A^T, 0]], differentiated as above.
  Both are one BuiltinFamily: tape files keep the pattern, SciPy's options
  and the eigenvectors whose signs replays keep.
- ``expm(A)`` and ``expm_multiply(A, B)`` of a matrix of at most
  ``MAX_DENSE_EXPM`` rows: scipy.linalg.expm(A.toarray()) (times B),
  differentiated by expm's Fréchet derivative; larger ones are refused by
  name.
- ``inv(A)``: spsolve's primitive on the identity's columns (every entry
  of the inverse stored).
"""
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import SolverNotConverged, UndefinedDerivative, UnsupportedOperation
from ..primitives import BuiltinFamily, primitive
from . import sparse_active
from .arrays import now

MAX_DENSE_EXPM = 400


def norm(x, ord=None, axis=None):
    """SciPy's sparse ``norm`` of a matrix of active values."""
    if axis is not None:
        return np.linalg.norm(x.toarray(), ord=ord, axis=axis)
    if ord in (None, "fro", "f"):
        return np.sqrt(np.sum(abs(x._summed().values) ** 2))
    if ord in (1, -1, np.inf, -np.inf):
        sums = abs(x).sum(axis=0 if abs(ord) == 1 else 1)
        return np.max(sums) if ord > 0 else np.min(sums)
    raise UnsupportedOperation(f"adsim: scipy.sparse.linalg.norm with ord={ord!r} of a matrix "
                               f"of active values; SciPy's sparse norm takes None, 'fro', 1, "
                               f"-1, inf and -inf (for the 2-norm use eigsh or svds)")


def eigsh(A, k=6, M=None, sigma=None, which="LM", v0=None, ncv=None, maxiter=None, tol=0,
          return_eigenvectors=True, Minv=None, OPinv=None, mode="normal", rng=None):
    """Eigenvalues (and unit eigenvectors) of a symmetric matrix of active
    values, as SciPy's ``eigsh`` returns them."""
    if M is not None or Minv is not None or OPinv is not None:
        raise UnsupportedOperation("adsim: scipy.sparse.linalg.eigsh of a matrix of active "
                                   "values with M, Minv or OPinv (a generalised problem) is not "
                                   "supported")
    n = A.shape[0]
    if A.shape != (n, n):
        raise ValueError(f"adsim: eigsh: matrix of shape {A.shape} is not square")
    rows, cols = A.entries
    options = dict(k=k, sigma=sigma, which=which, v0=v0, ncv=ncv, maxiter=maxiter, tol=tol,
                   mode=mode)
    if rng is not None:                     # (SciPy's start from it, where v0 is None)
        options["rng"] = rng
    out = _make_eigen_pairs(kind="eigsh", rows=rows, cols=cols, n=n, k=int(k), m=n,
                            options=options, reference=None)(A.values)
    w, V = out[:k], out[k:].reshape(n, k)
    return (w, V) if return_eigenvectors else w


def svds(A, k=6, ncv=None, tol=0, which="LM", v0=None, maxiter=None,
         return_singular_vectors=True, solver="arpack", rng=None, options=None, *,
         random_state=None):
    """Singular triplets of a matrix of active values, as SciPy's ``svds``
    returns them: (u, s, vt) are eigenpairs (s, [u; v] / sqrt 2) of the
    symmetric H = [[0, A], [A^T, 0]], differentiated as eigsh's."""
    if return_singular_vectors not in (True, False):
        raise UnsupportedOperation(f"adsim: scipy.sparse.linalg.svds of a matrix of active "
                                   f"values with return_singular_vectors="
                                   f"{return_singular_vectors!r}; pass True or False")
    m, n = A.shape
    rows, cols = A.entries
    settings = dict(k=k, ncv=ncv, tol=tol, which=which, v0=v0, maxiter=maxiter, solver=solver,
                    options=options)
    if rng is not None or random_state is not None:      # SciPy takes one of the two
        settings["rng" if rng is not None else "random_state"] = \
            rng if rng is not None else random_state

    values = A.values
    out = _make_eigen_pairs(kind="svds", rows=np.concatenate([rows, m + cols]),
                            cols=np.concatenate([m + cols, rows]), n=m + n, k=int(k), m=m,
                            options=settings, reference=None)(np.concatenate([values, values]))
    s, W = out[:k], out[k:].reshape(m + n, k) * np.sqrt(2.0)
    return (W[:m], s, W[m:].T) if return_singular_vectors else s


def start(size):
    """ARPACK's start vector where a call gives neither ``v0`` nor a random
    generator: SciPy's own is random, so without it a replay (or a loaded
    tape) would run ARPACK from another start than the recording, and its
    eigenvectors would agree only to the solver's tolerance. A fixed
    sequence with no structure (the fractional parts of i times the golden
    ratio, as a random start is, orthogonal to no eigenvector in practice)."""
    return np.modf(np.arange(1, size + 1) * 0.6180339887498949)[0] - 0.5


def _started(options, size):
    if options.get("v0") is not None or options.get("rng") is not None or \
            options.get("random_state") is not None or options.get("solver", "arpack") != "arpack":
        return options
    return dict(options, v0=start(size))


def _spectrum(kind, m, options):
    """The function giving (w, V) of the symmetric matrix of the values:
    eigsh's, or svds' triplets of its block A = H[:m, m:] as eigenpairs."""
    if kind == "eigsh":
        return lambda M: spla.eigsh(M, return_eigenvectors=True, **_started(options, M.shape[0]))

    def triplets(H):
        A = H[:m, m:]
        u, s, vt = spla.svds(A, return_singular_vectors=True, **_started(options, min(A.shape)))
        if np.any(s <= 0.0):
            raise UndefinedDerivative("adsim: scipy.sparse.linalg.svds: a singular value is 0, "
                                      "where its vectors (and |s|) have no derivative")
        return s, np.concatenate([u, vt.T]) / np.sqrt(2.0)
    return triplets


# what a tape file may give of each kind's options
_OPTIONS = {"eigsh": {"k", "sigma", "which", "v0", "ncv", "maxiter", "tol", "mode", "rng"},
            "svds": {"k", "ncv", "tol", "which", "v0", "maxiter", "solver", "options", "rng",
                     "random_state"}}


def _make_eigen_pairs(kind, rows, cols, n, k, m, options, reference):
    """The primitive values -> [w (k), V (n x k) flattened] of ``kind``
    ("eigsh", "svds") of the symmetric n x n matrix with the values at
    (rows, cols); ``reference``: the eigenvectors whose signs replays keep
    (None: those of the first value). Checks parameters as a file's."""
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    if kind not in _OPTIONS or not isinstance(options, dict) or \
            not set(options) <= _OPTIONS[kind] or type(n) is not int or type(k) is not int or \
            type(m) is not int or not 0 < k < n or not 0 < m <= n or rows.shape != cols.shape \
            or rows.ndim != 1 or (rows.size and (min(rows.min(), cols.min()) < 0
                                                 or max(rows.max(), cols.max()) >= n)):
        raise ValueError(f"not the parameters of {kind} of a symmetric matrix of active values")
    if options.get("v0") is not None:       # a start: its value, never differentiated
        options = dict(options, v0=np.array(now(options["v0"]), dtype=float))
    parameters = dict(kind=kind, rows=rows, cols=cols, n=n, k=k, m=m, options=options,
                      reference=None if reference is None else
                      np.asarray(reference, dtype=float))
    if parameters["reference"] is not None and parameters["reference"].shape != (n, k):
        raise ValueError(f"the eigenvectors of reference of {kind} have shape "
                         f"{parameters['reference'].shape}, not {(n, k)}")
    made = {}
    prim = _eigen_pairs(rows, cols, n, k, kind, _spectrum(kind, m, options), made)
    made["prim"] = _EIGEN_PAIRS.adopt(prim, **parameters)
    return prim


def _eigen_pairs(rows, cols, n, k, name, spectrum, made):
    """values -> [w (k), V (n x k) flattened] as one primitive; ``spectrum``
    gives (w, V) of the symmetric matrix of the values; ``made["prim"]``:
    the primitive, whose family parameters' ``reference`` (the eigenvectors
    whose signs replays keep) the first value sets where a file did not."""

    def matrix(values):
        return sp.csc_matrix((np.asarray(values, dtype=float), (rows, cols)), shape=(n, n))

    def value(values):
        try:
            w, V = spectrum(matrix(values))
        except spla.ArpackNoConvergence as exc:
            raise SolverNotConverged(f"adsim: scipy.sparse.linalg.{name} did not converge "
                                     f"({exc}); raise maxiter or ncv, or loosen tol") from None
        parameters = made["prim"].saved_as[1]
        if parameters["reference"] is None:           # the signs of the recording
            parameters["reference"] = V
        reference = parameters["reference"]
        V = V * np.where(np.sum(V * reference, axis=0) < 0, -1.0, 1.0)
        return np.concatenate([w, V.ravel()])

    def bordered(A, w, u):
        B = sp.bmat([[A - w * sp.eye(n), sp.csc_matrix(u.reshape(-1, 1))],
                     [sp.csc_matrix(u.reshape(1, -1)), None]], format="csc")
        try:
            return spla.splu(B)
        except RuntimeError:
            raise UndefinedDerivative(f"adsim: scipy.sparse.linalg.{name}: the eigenvalue "
                                      f"{w:.6g} is repeated, so its eigenvector has no "
                                      f"derivative") from None

    def jvp(args, out, tangents):
        (dv,) = tangents
        values = args[0]
        A = matrix(values)
        w, V = out[:k], out[k:].reshape(n, k)
        dA = matrix(dv)
        dw = np.einsum("ik,ik->k", V, dA @ V)
        dV = np.empty_like(V)
        for t in range(k):
            rhs = np.concatenate([-(dA @ V[:, t] - dw[t] * V[:, t]), [0.0]])
            dV[:, t] = bordered(A, w[t], V[:, t]).solve(rhs)[:n]
        return np.concatenate([dw, dV.ravel()])

    def vjp(args, out, adjoint):
        values = args[0]
        A = matrix(values)
        w, V = out[:k], out[k:].reshape(n, k)
        wbar, Vbar = adjoint[:k], adjoint[k:].reshape(n, k)
        vbar = np.zeros(rows.size)
        for t in range(k):
            u = V[:, t]
            vbar += wbar[t] * u[rows] * u[cols]
            if np.any(Vbar[:, t]):
                z = bordered(A, w[t], u).solve(np.concatenate([Vbar[:, t], [0.0]]))[:n]
                vbar -= z[rows] * u[cols]
        return (vbar,)

    return primitive(value, jvp=jvp, vjp=vjp, name=f"scipy.sparse.linalg.{name}")


_EIGEN_PAIRS = BuiltinFamily("scipy.sparse.linalg.eigen_pairs", 1, _make_eigen_pairs)


def inv(A):
    """A^-1 of a matrix of active values: spsolve's primitive with the
    identity's columns, every entry stored."""
    from .sparse_active_solve import spsolve
    n = A.shape[0]
    return _dense_as_sparse(A, spsolve(A, np.eye(n)))


def expm(A):
    """exp(A) of a matrix of active values (dense: expm's rule)."""
    import scipy.linalg
    _dense_size_checked(A, "expm")
    return _dense_as_sparse(A, scipy.linalg.expm(A.toarray()))


def _dense_as_sparse(like, X):
    rows, cols = np.nonzero(np.ones(np.shape(X), dtype=bool))
    return like._like(rows, cols, X.reshape(-1), np.shape(X))


def _dense_size_checked(A, name):
    if A.shape[0] > MAX_DENSE_EXPM:
        raise UnsupportedOperation(
            f"adsim: scipy.sparse.linalg.{name} of a matrix of active values is "
            f"differentiated through the dense expm, up to {MAX_DENSE_EXPM} rows, not "
            f"{A.shape[0]}; for a linear ODE u' = A u use scipy.integrate.solve_ivp")


def expm_multiply(A, B, start=None, stop=None, num=None, endpoint=None, traceA=None):
    """exp(A) B for a matrix of active values (dense: expm's rule); with
    ``start``, ``stop``, ``num``, ``endpoint``, exp(t A) B at each t of
    SciPy's ``np.linspace`` of them (its defaults), stacked on a first axis."""
    import scipy.linalg
    _dense_size_checked(A, "expm_multiply")
    dense = A.toarray()
    if all(v is None for v in (start, stop, num, endpoint)):
        return scipy.linalg.expm(dense) @ B
    spacing = {} if num is None else {"num": num}
    if endpoint is not None:
        spacing["endpoint"] = endpoint
    times = np.linspace(start, stop, **spacing)
    return np.stack([scipy.linalg.expm(t * dense) @ B for t in times])


for _rule in (norm, eigsh, svds, expm_multiply, inv, expm):
    _rule.routes_when = sparse_active.involves_active_matrix

HOOKS = {("scipy.sparse.linalg", f.__name__): f
         for f in (norm, eigsh, svds, expm_multiply, inv, expm)}
