"""``scipy.linalg``'s Lyapunov and Riccati solvers on real active matrices,
called unchanged (see hooks.py): primitives whose values are SciPy's and
whose rules call the primitives again, so second derivatives are exact too
(as adsim/_scipy/matfuncs.py does for ``solve_sylvester``).

Each solution X is an implicit function of the coefficients; differentiating
its equation gives a linear matrix equation in dX, solved by the same
solvers, and the adjoint Y of that linear equation gives the gradients
(<M, N> = trace(M^T N) below):

- ``solve_continuous_lyapunov(a, q)``: A X + X A^T = Q. The tangent solves
  A dX + dX A^T = dQ - dA X - X dA^T; the adjoint A^T Y + Y A = Xbar, and
  Qbar = Y, Abar = -(Y X^T + Y^T X).
- ``solve_discrete_lyapunov(a, q)``: X = A X A^T + Q. The tangent solves
  dX = A dX A^T + dQ + dA X A^T + A X dA^T; the adjoint Y = A^T Y A + Xbar,
  and Qbar = Y, Abar = Y A X^T + Y^T A X.
- ``solve_continuous_are(a, b, q, r)``: A^T X + X A - X G X + Q = 0 with
  G = B R^-1 B^T. With the closed loop Acl = A - G X, the tangent solves
  Acl^T dX + dX Acl = -(dA^T X + X dA - X dG X + dQ); the adjoint
  Acl Y + Y Acl^T = Xbar, and Qbar = -Y, Abar = -(X Y^T + X^T Y),
  Gbar = X^T Y X^T, passed to B and R through G.
- ``solve_discrete_are(a, b, q, r)``: X = A^T X A - A^T X B S^-1 B^T X A + Q
  with S = R + B^T X B. With K = S^-1 B^T X A and Acl = A - B K (the
  derivative in K vanishes at the optimum), the tangent solves
  dX = Acl^T dX Acl + dA^T X Acl + Acl^T X dA - Acl^T X dB K - K^T dB^T X Acl
  + K^T dR K + dQ; the adjoint Y = Acl Y Acl^T + Xbar, and Qbar = Y,
  Abar = X Acl Y^T + X^T Acl Y, Bbar = -(X^T Acl Y K^T + X Acl Y^T K^T),
  Rbar = K Y K^T.

The generalised Riccati forms (``e=``, ``s=``) are refused by name.
"""
import numpy as np
import scipy.linalg

from ..errors import UnsupportedOperation
from ..primitives import primitive
from .arrays import array


def _zero_or(term, like):
    return np.zeros(np.shape(like)) if term is None else term


def _sum(*terms):
    present = [t for t in terms if t is not None]
    return sum(present[1:], present[0]) if present else None


# ---- continuous Lyapunov: A X + X A^T = Q ----------------------------------

def _clyap_jvp(args, X, tangents):
    A, _ = args
    dA, dQ = tangents
    rhs = _sum(dQ, None if dA is None else -(dA @ X + X @ dA.T))
    return _clyap(A, _zero_or(rhs, X))


def _clyap_vjp(args, X, w):
    A, _ = args
    Y = _clyap(A.T, w)
    return (-(Y @ X.T + Y.T @ X), Y)


_clyap = primitive(lambda a, q: scipy.linalg.solve_continuous_lyapunov(a, q),
                   jvp=_clyap_jvp, vjp=_clyap_vjp,
                   name="scipy.linalg.solve_continuous_lyapunov")


# ---- discrete Lyapunov (Stein): X = A X A^T + Q ----------------------------

def _dlyap_value(a, q):
    return scipy.linalg.solve_discrete_lyapunov(a, q)


def _dlyap_jvp(args, X, tangents):
    A, _ = args
    dA, dQ = tangents
    rhs = _sum(dQ, None if dA is None else dA @ X @ A.T + A @ X @ dA.T)
    return _dlyap(A, _zero_or(rhs, X))


def _dlyap_vjp(args, X, w):
    A, _ = args
    Y = _dlyap(A.T, w)
    return (Y @ A @ X.T + Y.T @ A @ X, Y)


_dlyap = primitive(_dlyap_value, jvp=_dlyap_jvp, vjp=_dlyap_vjp,
                   name="scipy.linalg.solve_discrete_lyapunov")


# ---- continuous algebraic Riccati --------------------------------------------

def _gain_matrix(B, R):
    """G = B R^-1 B^T."""
    return B @ np.linalg.solve(R, B.T)


def _dgain(B, R, dB, dR):
    """dG of G = B R^-1 B^T."""
    Rinv_Bt = np.linalg.solve(R, B.T)
    terms = []
    if dB is not None:
        terms += [dB @ Rinv_Bt, Rinv_Bt.T @ dB.T]
    if dR is not None:
        terms.append(-(Rinv_Bt.T @ dR @ Rinv_Bt))
    return _sum(*terms)


def _care_jvp(args, X, tangents):
    A, B, Q, R = args
    dA, dB, dQ, dR = tangents
    Acl = A - _gain_matrix(B, R) @ X
    dG = _dgain(B, R, dB, dR)
    rhs = _sum(dQ, None if dA is None else dA.T @ X + X @ dA,
               None if dG is None else -(X @ dG @ X))
    return _clyap(Acl.T, -_zero_or(rhs, X))


def _care_vjp(args, X, w):
    A, B, Q, R = args
    Acl = A - _gain_matrix(B, R) @ X
    Y = _clyap(Acl, w)
    Gbar = X.T @ Y @ X.T
    Rinv_Bt, RinvT_Bt = np.linalg.solve(R, B.T), np.linalg.solve(R.T, B.T)
    Bbar = Gbar @ Rinv_Bt.T + Gbar.T @ RinvT_Bt.T
    Rbar = -(RinvT_Bt @ Gbar @ Rinv_Bt.T)
    return (-(X @ Y.T + X.T @ Y), Bbar, -Y, Rbar)


_care = primitive(lambda a, b, q, r: scipy.linalg.solve_continuous_are(a, b, q, r),
                  jvp=_care_jvp, vjp=_care_vjp, name="scipy.linalg.solve_continuous_are")


# ---- discrete algebraic Riccati ----------------------------------------------

def _dare_closed_loop(A, B, R, X):
    K = np.linalg.solve(R + B.T @ X @ B, B.T @ X @ A)
    return K, A - B @ K


def _dare_jvp(args, X, tangents):
    A, B, Q, R = args
    dA, dB, dQ, dR = tangents
    K, Acl = _dare_closed_loop(A, B, R, X)
    terms = [dQ]
    if dA is not None:
        terms.append(dA.T @ X @ Acl + Acl.T @ X @ dA)
    if dB is not None:
        terms.append(-(Acl.T @ X @ dB @ K + K.T @ dB.T @ X @ Acl))
    if dR is not None:
        terms.append(K.T @ dR @ K)
    return _dlyap(Acl.T, _zero_or(_sum(*terms), X))


def _dare_vjp(args, X, w):
    A, B, Q, R = args
    K, Acl = _dare_closed_loop(A, B, R, X)
    Y = _dlyap(Acl, w)
    Abar = X @ Acl @ Y.T + X.T @ Acl @ Y
    Bbar = -(X.T @ Acl @ Y @ K.T + X @ Acl @ Y.T @ K.T)
    return (Abar, Bbar, Y, K @ Y @ K.T)


_dare = primitive(lambda a, b, q, r: scipy.linalg.solve_discrete_are(a, b, q, r),
                  jvp=_dare_jvp, vjp=_dare_vjp, name="scipy.linalg.solve_discrete_are")


# ---- the hooked functions ------------------------------------------------------

def _square(name, *matrices):
    for m in matrices:
        shape = np.shape(m)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise UnsupportedOperation(f"adsim: scipy.linalg.{name} of shape {shape}: only "
                                       f"single square matrices are recorded")


def solve_continuous_lyapunov(a, q):
    name = "scipy.linalg.solve_continuous_lyapunov"
    a, q = array(a, name), array(q, name)
    _square("solve_continuous_lyapunov", a, q)
    return _clyap(a, q)


def solve_discrete_lyapunov(a, q, method=None):
    """(``method`` changes only how SciPy computes it.)"""
    name = "scipy.linalg.solve_discrete_lyapunov"
    a, q = array(a, name), array(q, name)
    _square("solve_discrete_lyapunov", a, q)
    return _dlyap(a, q)


def _riccati(name, solve, a, b, q, r, e, s):
    if e is not None or s is not None:
        raise UnsupportedOperation(
            f"adsim: scipy.linalg.{name} with e= or s= (the generalised equation) is not "
            f"differentiated; pass the standard form (e=None, s=None), or plain values")
    full = f"scipy.linalg.{name}"
    a, b, q, r = (array(m, full) for m in (a, b, q, r))
    _square(name, a, q, r)
    return solve(a, b, q, r)


def solve_continuous_are(a, b, q, r, e=None, s=None, balanced=True):
    """(``balanced`` changes only how SciPy computes it.)"""
    return _riccati("solve_continuous_are", _care, a, b, q, r, e, s)


def solve_discrete_are(a, b, q, r, e=None, s=None, balanced=True):
    """(``balanced`` changes only how SciPy computes it.)"""
    return _riccati("solve_discrete_are", _dare, a, b, q, r, e, s)


HOOKS = {("scipy.linalg", f.__name__): f for f in (
    solve_continuous_lyapunov, solve_discrete_lyapunov, solve_continuous_are,
    solve_discrete_are)}
