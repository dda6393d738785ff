"""``scipy.sparse.linalg`` solves with an active right-hand side: ``spsolve``,
``splu``/``spilu`` objects (``.solve(b, trans=...)``), ``factorized``,
``spsolve_triangular`` and the Krylov solvers ``cg``, ``gmres``,
``bicgstab``, ``minres``, ``lgmres``; called unchanged (see hooks.py).
``splu`` and ``factorized`` of a matrix of active values solve through
spsolve's primitive for such matrices (ActiveFactor).

For a constant matrix A, x = A^-1 b is linear in b: its tangent is
A^-1 db and its adjoint A^-T xbar. Each solve is one primitive (a CALLBACK
op, adsim/primitives.py) holding the solver of its matrix: a direct solve
keeps its factorisation, and the adjoint solves with its transpose
(SuperLU's ``solve(trans='T')``, a triangular solve with the other
triangle); a Krylov solve runs the same method on A^T (A for the symmetric
methods cg and minres) with the forward solve's tolerances, and a solve that
does not converge raises :class:`adsim.errors.SolverNotConverged`. The
primitives are of a :class:`BuiltinFamily`: a tape file keeps the matrix
and the solver's options, and the reader factorises again.

Matrices assembled from active values are adsim/_scipy/sparse_active.py's;
a solve with one goes there.
"""
import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .._active import Active
from .._np.integers import plain_if_constant
from .._record.creation import current_tape
from .._validate import given
from ..errors import UnsupportedAttribute, UnsupportedOperation
from ..primitives import BuiltinFamily, primitive
from .arrays import array
from . import sparse_active, sparse_active_linalg, sparse_active_solve
from .operator_implicit import operator_solve
from .operator_solve import operator_pair, solve_rules, taped_operator
from .krylov import KRYLOV as _KRYLOV, Krylov as _Krylov, LEAST_SQUARES, LeastSquares
from .superlu import FACTORISATIONS as _FACTORS, adsim_factorising, factorise as _factorise
from .sparse_matrices import OPERATOR_HOOKS



def _is_transposed(trans):
    if trans not in ("N", "T", "H"):
        raise ValueError(f"adsim: trans={trans!r}; SuperLU.solve takes 'N', 'T' or 'H'")
    return trans != "N"                # 'H' is 'T' for real matrices


# ---- the solvers of one matrix, in both directions ----------------------------------

class _Factored:
    """A^-1 and A^-T through one SuperLU factorisation (splu or spilu)."""

    def __init__(self, factor):
        self.factor = factor

    def solve(self, b, transposed, derivative=False):
        return self.factor.solve(np.asarray(b, dtype=float), trans="T" if transposed else "N")


class _Triangular:
    """A^-1 and A^-T of a triangular matrix: A^T is triangular the other way."""

    def __init__(self, matrix, lower, unit_diagonal):
        self.matrix, self.lower, self.unit = sp.csr_matrix(matrix), lower, unit_diagonal
        self.transpose = self.matrix.T.tocsr()

    def solve(self, b, transposed, derivative=False):
        A, lower = (self.transpose, not self.lower) if transposed else (self.matrix, self.lower)
        return spla.spsolve_triangular(A, np.asarray(b, dtype=float), lower=lower,
                                       unit_diagonal=self.unit)


# ---- primitives of one solver: x = A^-1 b and x = A^-T b ---------------------------

def _pair(solver, name, parameters):
    """The two primitives b -> A^-1 b and b -> A^-T b of ``solver``, each
    the other's adjoint; returns {False: A^-1, True: A^-T}. Saved by the
    family's ``parameters`` (None: a LinearOperator of Python code that
    could not be recorded; operator_solve.operator_pair makes those that
    could)."""
    prims = {}
    for transposed in (False, True):
        value, jvp, vjp = solve_rules(solver, prims, transposed)
        prim = primitive(value, jvp=jvp, vjp=vjp, name=name, linear=True)
        if parameters is None:          # a LinearOperator of Python code
            prim.not_saved = ("a Krylov solve with a LinearOperator of Python code that could "
                              "not be recorded")
            prims[transposed] = prim
        else:
            prims[transposed] = _SOLVE.adopt(prim, **parameters, transposed=transposed)
    return prims


def _matrix_parameters(matrix):
    """A sparse matrix as tape-file parameters (a CSC copy: later changes to
    the user's matrix do not reach the tape)."""
    csc = sp.csc_matrix(matrix, dtype=float, copy=True)
    return {"indptr": csc.indptr, "indices": csc.indices, "data": csc.data,
            "shape": list(csc.shape)}


def _csc(indptr, indices, data, shape):
    return sp.csc_matrix((np.asarray(data, dtype=float), np.asarray(indices, dtype=np.int64),
                          np.asarray(indptr, dtype=np.int64)), shape=tuple(shape))


def _make(indptr, indices, data, shape, method, options, transposed):
    """The family's primitive from its parameters (a tape file's)."""
    A = _csc(indptr, indices, data, shape)
    if method in _FACTORS:
        solver = _Factored(_factorise(method, A, options))
    elif method == "triangular":
        solver = _Triangular(A, **options)
    elif method in _KRYLOV:
        solver = _Krylov(A, method, options)
    elif method in LEAST_SQUARES:
        solver = LeastSquares(A.tocsr(), method, options)
    else:
        raise ValueError(f"unknown sparse solver {method!r}")
    params = {"indptr": indptr, "indices": indices, "data": data, "shape": shape,
              "method": method, "options": options}
    return _pair(solver, _name(method), params)[bool(transposed)]


def _name(method):
    return f"scipy.sparse.linalg.{'spsolve_triangular' if method == 'triangular' else method}"


_SOLVE = BuiltinFamily("scipy.sparse.linalg.solve", 1, _make)


def _solve_with(solver, method, matrix_params, options, b, transposed=False):
    """The solve of ``b`` as a primitive; ``matrix_params`` None: of an
    operator tape files cannot keep."""
    parameters = None if matrix_params is None else \
        {**matrix_params, "method": method, "options": options}
    return _pair(solver, _name(method), parameters)[transposed](b)


# ---- the hooked functions ---------------------------------------------------------

# why the solvers that reach _constant_matrix with a matrix of active values
# refuse it, and what to call instead (the others differentiate through it)
_ACTIVE_MATRIX_REFUSED = {
    "spilu": "an incomplete factorisation's solve is not A^-1, whose derivative adsim "
             "knows; solve with scipy.sparse.linalg.splu(A).solve, spsolve(A, b) or a Krylov "
             "method (cg, gmres, bicgstab, minres, lgmres)",
    **{method: "its solve differentiates through b only; for a matrix of active values solve "
               "the normal equations, spsolve((A.T @ A).tocsc(), A.T @ b) (with damp: plus "
               "damp**2 * sp.eye(n))" for method in ("lsqr", "lsmr")},
}


def _constant_matrix(A, name):
    """A constant matrix argument as a SciPy sparse matrix: a sparse matrix,
    a LinearOperator of one, or a plain 2-D array (as SciPy converts it;
    also one made in the recorded function, a constant)."""
    A = plain_if_constant(A)
    if sparse_active.is_active_matrix(A) or (isinstance(A, Active) and
                                             name in _ACTIVE_MATRIX_REFUSED):
        raise UnsupportedOperation(
            f"adsim: scipy.sparse.linalg.{name} with a matrix of active values ({given(A)}) "
            f"is not supported: {_ACTIVE_MATRIX_REFUSED[name]}")
    from .._np.sparse_products import unpacked
    if isinstance(A, spla.LinearOperator):
        matrix, transposed = unpacked(A)
        return matrix.T if transposed else matrix
    if sp.issparse(A):
        return A
    if isinstance(A, Active):
        raise UnsupportedOperation(
            f"adsim: scipy.sparse.linalg.{name} with a dense matrix of active values "
            f"({given(A)}): its solves differentiate through a sparse matrix, whose values may "
            f"be active: pass scipy.sparse.csc_matrix(A), or solve the dense system with "
            f"np.linalg.solve")
    try:
        matrix = None if _is_recorded(A) else np.asarray(A)
    except (TypeError, ValueError):          # a ragged sequence
        matrix = None
    if matrix is not None and matrix.ndim == 2 and matrix.dtype.kind in "biuf":
        return sp.csc_matrix(matrix)
    raise UnsupportedOperation(
        f"adsim: scipy.sparse.linalg.{name}: the matrix A is {given(A)}; pass a scipy.sparse "
        f"matrix (its values may be active), a 2-D array of numbers or a LinearOperator of a "
        f"sparse matrix")


def spsolve(A, b, permc_spec=None, use_umfpack=True):
    """x with A x = b; a column b of shape (n, 1) gives a vector, as SciPy's."""
    if sp.issparse(b) or sparse_active.is_active_matrix(b):
        # (SciPy returns a sparse solution then, which adsim does not make)
        raise UnsupportedOperation(
            "adsim: scipy.sparse.linalg.spsolve with active values and a sparse right-hand "
            "side b is not supported; pass b.toarray() (the solution is then a dense array, "
            "x.toarray() of SciPy's)")
    b = array(b, "scipy.sparse.linalg.spsolve")
    if sparse_active.is_active_matrix(A):
        x = sparse_active_solve.spsolve(A, b, permc_spec)
    else:
        matrix = _constant_matrix(A, "spsolve")
        if not (sp.issparse(A) and A.format in ("csc", "csr")):
            warnings.warn("spsolve requires A be CSC or CSR matrix format",   # SciPy's words
                          sp.SparseEfficiencyWarning, stacklevel=4)
        options = {} if permc_spec is None else {"permc_spec": permc_spec}
        factor = _factorise("splu", sp.csc_matrix(matrix, dtype=float), options)
        x = _solve_with(_Factored(factor), "splu", _matrix_parameters(matrix), options, b)
    return x.reshape(-1) if np.ndim(b) == 2 and np.shape(b)[1] == 1 else x


def _names_an_active_matrix(args, kwargs):
    return any(sparse_active.is_active_matrix(a) for a in (*args, *kwargs.values()))


spsolve.routes_also = _names_an_active_matrix


class RecordedFactor:
    """What ``splu``/``spilu`` return while recording: SciPy's SuperLU object
    (every attribute is its), whose ``solve`` records a solve when its
    right-hand side is active."""

    def __init__(self, factor, method, matrix_params, options):
        self._factor, self._method = factor, method
        self._matrix_params, self._options = matrix_params, options

    def __getattr__(self, name):
        return getattr(self._factor, name)

    def __repr__(self):
        return repr(self._factor)

    def solve(self, rhs, trans="N"):
        transposed = _is_transposed(trans)
        if not _is_recorded(rhs):
            return self._factor.solve(rhs, trans=trans)
        b = array(rhs, f"scipy.sparse.linalg.{self._method}(A).solve")
        return _solve_with(_Factored(self._factor), self._method, self._matrix_params,
                           self._options, b, transposed)


def _is_recorded(value):
    from .._np.core import active_leaves
    return bool(active_leaves(value))


def _recording(args, kwargs):
    """A factorisation made while this thread records (not by adsim itself)
    returns a RecordedFactor, whose solves take active right-hand sides."""
    return current_tape() is not None and not adsim_factorising()


class ActiveFactor:
    """What ``splu`` returns for a matrix of active values: its solves
    (``trans`` 'N', 'T' or 'H') are spsolve's primitive, which factorises
    the matrix once per point and differentiates through the values too
    (x = A^-1 b: dx = A^-1 (db - dA x)). The factors themselves (L, U,
    perm_r, ...) are not differentiated, so they are refused. A singular
    matrix raises SciPy's error at the first solve (SciPy's splu raises it
    at once)."""

    def __init__(self, A, permc_spec):
        if A.shape[0] != A.shape[1]:
            raise ValueError("can only factor square matrices")      # SciPy's words
        self._A, self._permc_spec = A, permc_spec
        self.shape = A.shape

    def solve(self, rhs, trans="N"):
        b = array(rhs, "scipy.sparse.linalg.splu(A).solve")
        return sparse_active_solve.spsolve(self._A, b, self._permc_spec, _is_transposed(trans))

    def __getattr__(self, name):
        raise UnsupportedAttribute(
            f"adsim: `{name}` of splu(A) for a matrix A of active values: its factors are not "
            f"differentiated; use its solve(b, trans=...) or scipy.sparse.linalg.spsolve")


_PIVOTING_OPTIONS = {"permc_spec", "diag_pivot_thresh", "relax", "panel_size", "options"}


def _active_factor(A, options):
    """splu of a matrix of active values; the options other than permc_spec
    steer SuperLU's pivoting and memory, not the solution (equal to
    rounding), and are not passed on."""
    unknown = sorted(set(options) - _PIVOTING_OPTIONS)
    if unknown:
        raise TypeError(f"splu() got unexpected keyword arguments {unknown}")
    return ActiveFactor(A, options.get("permc_spec"))


def _factor_rule(method):
    def factor(A, **options):
        if isinstance(A, Active) and A.ndim == 2:       # dense, as SciPy takes it
            warnings.warn(f"{method} converted its input to CSC format",
                          sp.SparseEfficiencyWarning, stacklevel=4)   # the caller's line
            A = sp.csc_matrix(A)
        if method == "splu" and sparse_active.is_active_matrix(A):
            return _active_factor(A, options)
        matrix = sp.csc_matrix(_constant_matrix(A, method), dtype=float)
        return RecordedFactor(_factorise(method, matrix, options), method,
                              _matrix_parameters(matrix), options)
    factor.__name__ = factor.__qualname__ = method
    factor.routes_also = _recording
    return factor


splu = _factor_rule("splu")
spilu = _factor_rule("spilu")


def factorized(A):
    """The solve function of a factorisation (SciPy uses UMFPACK when it is
    installed, SuperLU otherwise: the same solution to rounding)."""
    return splu(A).solve


factorized.routes_also = _recording


def spsolve_triangular(A, b, lower=True, overwrite_A=False, overwrite_b=False,
                       unit_diagonal=False):
    """x with A x = b for a triangular A: a constant one (the adjoint solves
    with A^T), or one of active values (its triangle, with ones on the
    diagonal for ``unit_diagonal``, solved by spsolve's primitive)."""
    b = array(b, "scipy.sparse.linalg.spsolve_triangular")
    if sparse_active.is_active_matrix(A):
        strict = (-1 if lower else 1) if unit_diagonal else 0     # the diagonal left out
        triangle = (sparse_active.tril if lower else sparse_active.triu)(A, strict)
        if unit_diagonal:
            triangle = triangle + sp.eye(A.shape[0])
        return sparse_active_solve.spsolve(triangle, b)
    matrix = _constant_matrix(A, "spsolve_triangular")
    options = {"lower": bool(lower), "unit_diagonal": bool(unit_diagonal)}
    return _solve_with(_Triangular(matrix, **options), "triangular", _matrix_parameters(matrix),
                       options, b)


spsolve_triangular.routes_also = _names_an_active_matrix


def _is_code_operator(A):
    """A LinearOperator whose products are Python code (not one of a matrix)."""
    from .._np.sparse_products import is_sparse_operand
    return isinstance(A, spla.LinearOperator) and not is_sparse_operand(A) and \
        type(A).__name__ != "MatrixLinearOperator"


def _operator_reading_active_values(args, kwargs):
    """A solve while recording with an operator of Python code whose products
    read active values, b plain: SciPy's method would run on active products
    (adsim/_scipy/operator_implicit.py differentiates it instead)."""
    A = args[0] if args else kwargs.get("A")
    return current_tape() is not None and _is_code_operator(A) and \
        _is_recorded(A._matvec(np.ones(A.shape[1])))


def _vector_b(b, method):
    """The right-hand side of an iterative solve: one vector."""
    b = array(b, f"scipy.sparse.linalg.{method}")
    if np.ndim(b) != 1:
        raise ValueError(f"adsim: scipy.sparse.linalg.{method} takes a vector b, not an "
                         f"array of shape {np.shape(b)}")
    return b


def _krylov_rule(method):
    def solve(A, b, x0=None, *, M=None, callback=None, **options):
        if _is_recorded(x0) or _is_recorded(options) or _is_recorded(M):
            raise UnsupportedOperation(f"adsim: scipy.sparse.linalg.{method} with an active "
                                       f"initial guess x0, option or preconditioner; pass "
                                       f"plain values (adsim.value)")
        b = _vector_b(b, method)
        x0 = None if x0 is None else np.asarray(x0, dtype=float)
        if sparse_active.is_active_matrix(A):
            return sparse_active_solve.krylov_solve(A, b, method, options, x0=x0,
                                                    callback=callback, M=M), 0
        if _is_code_operator(A):
            n = np.shape(b)[0]
            if _is_recorded(A._matvec(np.ones(n))):     # its matrix depends on the inputs
                return operator_solve(A, b, method, options, x0=x0, callback=callback, M=M)
            taped = taped_operator(A, n)
            solver = _Krylov(A if taped is None else taped, method, options, x0=x0,
                             callback=callback, M=M)
            if taped is None:
                return _solve_with(solver, method, None, options, b), 0
            return operator_pair(solver, taped, method, options)[
                False](b), 0
        csr = sp.csr_matrix(_constant_matrix(A, method), dtype=float)
        solver = _Krylov(csr, method, options, x0=x0, callback=callback, M=M)
        return _solve_with(solver, method, _matrix_parameters(csr), options, b), 0
    solve.__name__ = solve.__qualname__ = method
    solve.routes_also = lambda args, kwargs: _names_an_active_matrix(args, kwargs) or \
        _operator_reading_active_values(args, kwargs)
    return solve


def _least_squares_rule(method):
    """lsqr and lsmr with a constant A and an active b: x is the primitive
    of LeastSquares; the statistics that depend on b are recomputed from it
    (recorded); arnorm/normar, zero at the solution for every b, and those
    of A alone are SciPy's plain values."""
    limit = "iter_lim" if method == "lsqr" else "maxiter"

    def solve(A, b, damp=0.0, atol=1e-6, btol=1e-6, conlim=1e8, show=False, x0=None,
              **more):
        options = {"damp": damp, "atol": atol, "btol": btol, "conlim": conlim,
                   limit: more.pop(limit, None)}
        calc_var = more.pop("calc_var", False) if method == "lsqr" else False
        if more:
            raise TypeError(f"{method}() got unexpected keyword arguments {sorted(more)}")
        if _is_recorded(x0) or _is_recorded(options):
            raise UnsupportedOperation(f"adsim: scipy.sparse.linalg.{method} with an active "
                                       f"x0, damp or tolerance; pass plain values")
        if _is_code_operator(A):
            raise UnsupportedOperation(f"adsim: scipy.sparse.linalg.{method} with a "
                                       f"LinearOperator of Python code and an active b; pass "
                                       f"a sparse matrix")
        b = _vector_b(b, method)
        csr = sp.csr_matrix(_constant_matrix(A, method), dtype=float)
        if calc_var:
            options["calc_var"] = True
        solver = LeastSquares(csr, method, options,
                              x0=None if x0 is None else np.asarray(x0, dtype=float))
        x = _solve_with(solver, method, _matrix_parameters(csr), options, b)
        out = solver.last
        residual = np.linalg.norm(b - csr @ x)
        augmented = np.sqrt(residual ** 2 + damp ** 2 * np.sum(x ** 2)) if damp else residual
        if method == "lsqr":        # x, istop, itn, r1norm, r2norm, anorm, acond, arnorm, xnorm, var
            return (x, out[1], out[2], residual, augmented, out[5], out[6], out[7],
                    np.linalg.norm(x), out[9])
        return (x, out[1], out[2], augmented, out[4], out[5], out[6], np.linalg.norm(x))
    solve.__name__ = solve.__qualname__ = method
    solve.routes_also = _names_an_active_matrix
    return solve


HOOKS = {
    **{("scipy.sparse.linalg", name): _least_squares_rule(name) for name in LEAST_SQUARES},
    **{("scipy.sparse.linalg", f.__name__): f
       for f in (spsolve, splu, spilu, factorized, spsolve_triangular)},
    **{("scipy.sparse.linalg", name): _krylov_rule(name) for name in _KRYLOV},
    **OPERATOR_HOOKS,
    **sparse_active_linalg.HOOKS,
}


def covers(obj):
    """No module-level objects of scipy.sparse.linalg take rules of their own."""
    return False
