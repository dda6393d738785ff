"""Sparse Newton solves of the implicit methods: SciPy's sparse LU, and the
transposed solves of their adjoints with the same factors.

The Newton matrices are formed from the Jacobian's values on a fixed
pattern exactly as SciPy forms them from a sparse Jacobian (CSC,
``scipy.sparse`` arithmetic) and factored by ``scipy.sparse.linalg.splu``:

    shifted            A = c I - J                   (Radau, real system)
    shifted_complex    A = (alpha + i beta) I - J    (Radau, complex system)
    identity_minus     A = I - c J                   (BDF)

A factorisation is kept, keyed by the exact matrix (its coefficients and
the Jacobian's values), so the Newton iterations of a step, its error
estimate, and the tangent and adjoint rules of all those solves share one
factorisation, as SciPy reuses its factors while the step size and the
Jacobian stay.

Inside a recording each solve ``x = A^{-1} b`` is one op (a primitive):

    tangent:  dx = A^{-1} (db - dA x)
    adjoint:  u = A^{-T} x_bar (A^{-H} for the complex system) is b's adjoint,
              and every coefficient p of A gets  -Re(u^H (dA/dp) x)

The transposed solve ``y = A^{-T} w`` is a primitive with the mirrored rules
(its adjoint solves with A; its coefficient adjoints are
``-Re(y^H (dA/dp) w_bar)``), and the adjoint rules are written with these
primitives and NumPy operations, so they can be recorded: second-order
sweeps differentiate them.
"""
import weakref

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from .._filefields import pattern_field
from ..primitives import BuiltinFamily, Primitive
from ._kept import Kept

__all__ = ["SparseLinear"]

KEPT_FACTORS = 8
"""Factorisations kept per problem: a Radau step uses two (real and
complex), BDF one; a few more cover the retried steps of a reverse sweep."""


class _Shifted:
    """``A = c I - J``; coefficients ``(c,)``."""

    name = "shifted"
    complex = False

    @staticmethod
    def matrix(J, I, c):
        return c * I - J

    @staticmethod
    def derivative(J, J_dot, I, scalars, scalar_dots):
        (dc,) = scalar_dots
        return dc * I - J_dot

    @staticmethod
    def adjoints(data, scalars, u, v, rows, cols):
        """(data adjoint, c adjoint) of ``-u^T A(data, c) v``."""
        return u[rows] * v[cols], -np.dot(u, v)


class _IdentityMinus:
    """``A = I - c J``; coefficients ``(c,)``."""

    name = "identity_minus"
    complex = False

    @staticmethod
    def matrix(J, I, c):
        return I - c * J

    @staticmethod
    def derivative(J, J_dot, I, scalars, scalar_dots):
        (c,), (dc,) = scalars, scalar_dots
        return -dc * J - c * J_dot

    @staticmethod
    def adjoints(data, scalars, u, v, rows, cols):
        (c,) = scalars
        uv = u[rows] * v[cols]
        return c * uv, np.dot(uv, data)


class _ShiftedComplex:
    """``A = (alpha + i beta) I - J``; coefficients ``(alpha, beta)``; right-hand
    sides and solutions are stacked ``[real part, imaginary part]``."""

    name = "shifted_complex"
    complex = True

    @staticmethod
    def matrix(J, I, alpha, beta):
        return complex(alpha, beta) * I - J

    @staticmethod
    def derivative(J, J_dot, I, scalars, scalar_dots):
        d_alpha, d_beta = scalar_dots
        return complex(d_alpha, d_beta) * I - J_dot

    @staticmethod
    def adjoints(data, scalars, u, v, rows, cols):
        n = u.shape[0] // 2
        ur, ui, vr, vi = u[:n], u[n:], v[:n], v[n:]
        return (ur[rows] * vr[cols] + ui[rows] * vi[cols], -(np.dot(ur, vr) + np.dot(ui, vi)),
                np.dot(ur, vi) - np.dot(ui, vr))


FORMS = (_Shifted, _IdentityMinus, _ShiftedComplex)


SINGULAR = "singular"
"""The factorisation of a matrix that is singular or not finite."""


def _factorised(A):
    """``splu(A)``, or :data:`SINGULAR` for a matrix that is singular or not
    finite (a step size that underflowed, a Jacobian with NaNs): solutions
    with it are NaN, which the methods treat as a failed Newton iteration,
    as SciPy's dense solvers do with the NaNs of a singular LU."""
    if not np.all(np.isfinite(A.data)):
        return SINGULAR
    try:
        return splu(A)
    except RuntimeError:           # "Factor is exactly singular"
        return SINGULAR


class SparseLinear:
    """The Newton solves of one problem for a Jacobian given by its values
    on ``pattern`` (an n-by-n sparse matrix or array; its stored entries, in
    CSC order, are the positions of the values)."""

    def __init__(self, pattern):
        P = sp.csc_matrix(pattern)
        P.sort_indices()
        self.n = P.shape[0]
        self.nnz = P.nnz
        self.indices = P.indices.copy()
        self.indptr = P.indptr.copy()
        self.rows = P.indices.astype(np.intp)
        self.cols = np.repeat(np.arange(self.n, dtype=np.intp), np.diff(P.indptr))
        self.identity = sp.eye(self.n, format="csc")
        self._factors = Kept(KEPT_FACTORS)
        self._solves = {}
        for form in FORMS:
            for transposed in (False, True):
                kind = "transposed " if transposed else ""
                self._solves[form, transposed] = _SOLVES.adopt(Primitive(
                    self._value(form, transposed), jvp=self._jvp(form, transposed),
                    vjp=self._vjp(form, transposed),
                    name=f"solve_ivp's sparse {kind}Newton solve ({form.name})"),
                    n=self.n, indptr=self.indptr, indices=self.indices, form=form.name,
                    transposed=transposed)

    # ---- the solves the methods call ------------------------------------------
    def shifted(self, data, c, b):
        """``(c I - J)^{-1} b``."""
        return self._solves[_Shifted, False](data, c, b)

    def identity_minus(self, data, c, b):
        """``(I - c J)^{-1} b``."""
        return self._solves[_IdentityMinus, False](data, c, b)

    def shifted_complex(self, data, alpha, beta, b_re, b_im):
        """Real and imaginary parts of ``((alpha + i beta) I - J)^{-1} (b_re + i b_im)``."""
        x = self._solves[_ShiftedComplex, False](data, alpha, beta,
                                                 np.concatenate([b_re, b_im]))
        return x[:self.n], x[self.n:]

    # ---- matrices and factors ---------------------------------------------------
    def matrix(self, data):
        """J as SciPy holds a sparse Jacobian (``csc_matrix``)."""
        return sp.csc_matrix((np.asarray(data, dtype=float), self.indices, self.indptr),
                             shape=(self.n, self.n))

    def _factor(self, form, data, scalars):
        data = np.ascontiguousarray(data, dtype=float)
        scalars = tuple(float(s) for s in scalars)
        with np.errstate(all="ignore"):
            return self._factor_of(form, data, scalars)

    def _factor_of(self, form, data, scalars):
        key = (form.name, scalars, data.tobytes())
        lu = self._factors.get(key)
        if lu is None:
            lu = self._factors.put(key, _factorised(
                form.matrix(self.matrix(data), self.identity, *scalars)))
        return lu

    def _solve_with(self, form, lu, b, transposed):
        """``A^{-1} b`` (``A^{-T} b``, ``A^{-H} b`` for the complex form)."""
        trans = ("H" if form.complex else "T") if transposed else "N"
        if lu is SINGULAR:
            return np.full(np.shape(b), np.nan)
        if form.complex:
            x = lu.solve(self._complex(b), trans=trans)
            return np.concatenate([x.real, x.imag])
        return lu.solve(np.asarray(b, dtype=float), trans=trans)

    def _complex(self, v):
        v = np.asarray(v, dtype=float)
        return v[:self.n] + 1j * v[self.n:]

    # ---- rules ------------------------------------------------------------------
    def _value(self, form, transposed):
        def value(data, *rest):
            scalars, b = rest[:-1], rest[-1]
            return self._solve_with(form, self._factor(form, data, scalars), b, transposed)
        return value

    def _jvp(self, form, transposed):
        def jvp(args, out, tangents):
            data, scalars = args[0], args[1:-1]
            d_data, d_scalars, d_b = tangents[0], tangents[1:-1], tangents[-1]
            J = self.matrix(data)
            J_dot = self.matrix(np.zeros(self.nnz) if d_data is None else d_data)
            x = self._complex(out) if form.complex else out
            with np.errstate(all="ignore"):          # NaNs of a singular matrix pass on
                dA = form.derivative(J, J_dot, self.identity, [float(s) for s in scalars],
                                     [0.0 if d is None else float(d) for d in d_scalars])
                dA_x = (dA.conj().T if transposed else dA) @ x
            r = -dA_x if d_b is None else (self._complex(d_b) if form.complex else d_b) - dA_x
            if form.complex:
                r = np.concatenate([r.real, r.imag])
            return self._solve_with(form, self._factor(form, data, scalars), r, transposed)
        return jvp

    def _vjp(self, form, transposed):
        def vjp(args, out, out_adjoint):
            data, scalars = args[0], args[1:-1]
            u = self._solves[form, not transposed](data, *scalars, out_adjoint)
            # -Re(u^H dA v) with u the left and v the right vector of the bilinear form
            left, right = (out, u) if transposed else (u, out)
            adjoints = form.adjoints(data, scalars, left, right, self.rows, self.cols)
            return tuple(adjoints) + (u,)
        return vjp


# ---- tape files -----------------------------------------------------------------------

_LOADED = weakref.WeakValueDictionary()     # pattern -> SparseLinear of the tapes loaded


def _solve_of(n, indptr, indices, form, transposed):
    """A Newton solve of a tape file, on the pattern (n, indptr, indices)
    in CSC form; the solves of one pattern share one SparseLinear, and so
    its factorisations, as in the recording."""
    forms = {f.name: f for f in FORMS}
    if form not in forms or type(transposed) is not bool:
        raise ValueError(f"a sparse Newton solve of form {form!r}, transposed={transposed!r}")
    pattern = pattern_field(n, indptr, indices)
    key = (n, pattern.indptr.tobytes(), pattern.indices.tobytes())
    linear = _LOADED.get(key)
    if linear is None:
        linear = _LOADED.setdefault(key, SparseLinear(pattern))
    return linear._solves[forms[form], transposed]


_SOLVES = BuiltinFamily("solve_ivp.sparse_newton_solve", 1, _solve_of)
