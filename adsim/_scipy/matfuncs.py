"""``scipy.linalg.solve_sylvester`` and the matrix functions ``expm``,
``logm``, ``sqrtm``, ``cosm``, ``sinm``, ``tanm``, ``coshm``, ``sinhm``,
``tanhm`` on single real active matrices, called unchanged (see hooks.py): primitives whose values
are SciPy's and whose rules call the primitives again, so second
derivatives (recorded rules) are exact too.

- Sylvester: X solves A X + X B = Q. Differentiating,
  A dX + dX B = dQ - dA X - X dB; the adjoint Y of the solution solves
  A^T Y + Y B^T = Xbar, and Qbar = Y, Abar = -Y X^T, Bbar = -X^T Y
  (the Bartels-Stewart adjoint).
- sqrtm: X^2 = A gives X dX + dX X = dA (a Sylvester equation in dX, with
  the adjoint X^T Y + Y X^T = Xbar, Abar = Y); defined where the square
  root is real and X, -X share no eigenvalue.
- expm, logm and the trigonometric and hyperbolic functions: the Fréchet
  derivative L(A, E) of a primary matrix function f is the upper-right
  block of f([[A, E], [0, A]]) (N. J. Higham, *Functions of Matrices*,
  SIAM 2008, eq. (3.16); Al-Mohy & Higham, SIAM J. Matrix Anal. Appl. 30,
  2009), and its adjoint is L(A^T, .).

Results SciPy computes as complex (negative real eigenvalues) are refused:
adsim differentiates real functions.
"""
import numpy as np
import scipy.linalg

from ..errors import UnsupportedOperation
from ..primitives import primitive
from .arrays import array


def _square(name, a):
    shape = np.shape(a)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise UnsupportedOperation(f"adsim: scipy.linalg.{name} of shape {shape}: only single "
                                   f"square matrices are recorded (loop over a batch)")


def _real(name, value):
    value = np.asarray(value)
    if value.dtype.kind == "c":
        raise UnsupportedOperation(
            f"adsim: scipy.linalg.{name} of this matrix is complex (it has negative real "
            f"eigenvalues); adsim differentiates real results only")
    return value


def _sylvester_value(a, b, q):
    return scipy.linalg.solve_sylvester(a, b, q)


def _sylvester_jvp(args, X, tangents):
    A, B, _ = args
    dA, dB, dQ = tangents
    rhs = np.zeros(np.shape(X)) if dQ is None else dQ
    if dA is not None:
        rhs = rhs - dA @ X
    if dB is not None:
        rhs = rhs - X @ dB
    return _sylvester(A, B, rhs)


def _sylvester_vjp(args, X, w):
    A, B, _ = args
    Y = _sylvester(A.T, B.T, w)
    return (-(Y @ X.T), -(X.T @ Y), Y)


_sylvester = primitive(_sylvester_value, jvp=_sylvester_jvp, vjp=_sylvester_vjp,
                       name="scipy.linalg.solve_sylvester")


def solve_sylvester(a, b, q):
    name = "scipy.linalg.solve_sylvester"
    a, b, q = array(a, name), array(b, name), array(q, name)
    _square("solve_sylvester", a)
    _square("solve_sylvester", b)
    if np.shape(q) != (np.shape(a)[0], np.shape(b)[0]):
        raise ValueError(f"adsim: scipy.linalg.solve_sylvester: q of shape {np.shape(q)} does "
                         f"not match a {np.shape(a)} and b {np.shape(b)}")
    return _sylvester(a, b, q)


_sqrtm = primitive(lambda a: _real("sqrtm", scipy.linalg.sqrtm(a)), name="scipy.linalg.sqrtm",
                   jvp=lambda args, X, tangents: _sylvester(X, X, tangents[0]),
                   vjp=lambda args, X, w: (_sylvester(X.T, X.T, w),))


def _no_error_estimate(name, disp):
    if disp is False:
        raise UnsupportedOperation(f"adsim: scipy.linalg.{name}(..., disp=False) returns an "
                                   f"error estimate, which is not recorded; leave disp out")


def sqrtm(A, disp=None, blocksize=None):
    """The principal square root (``blocksize`` changes only how SciPy
    computes it)."""
    _no_error_estimate("sqrtm", disp)
    A = array(A, "scipy.linalg.sqrtm")
    _square("sqrtm", A)
    return _sqrtm(A)


def _primary(name):
    """scipy.linalg.``name`` (a primary matrix function f) as a primitive:
    L_f(A, E) is the upper-right block of f([[A, E], [0, A]]), and its
    adjoint L_f(A^T, .)."""
    def value(a):             # SciPy's function looked up by name (tape files identify it)
        return _real(name, getattr(scipy.linalg, name)(a))

    def frechet(A, E):
        n = np.shape(A)[0]
        block = np.concatenate([np.concatenate([A, E], axis=1),
                                np.concatenate([np.zeros((n, n)), A], axis=1)], axis=0)
        return prim(block)[:n, n:]
    prim = primitive(value, name=f"scipy.linalg.{name}",
                     jvp=lambda args, out, tangents: frechet(args[0], tangents[0]),
                     vjp=lambda args, out, w: (frechet(args[0].T, w),))

    def rule(A):
        A = array(A, f"scipy.linalg.{name}")
        _square(name, A)
        return prim(A)
    rule.__name__ = name
    return rule


_PRIMARY = {name: _primary(name) for name in
            ("expm", "logm", "cosm", "sinm", "tanm", "coshm", "sinhm", "tanhm")}


def logm(A, disp=None):
    _no_error_estimate("logm", disp)
    return _PRIMARY["logm"](A)


HOOKS = {**{("scipy.linalg", name): rule for name, rule in _PRIMARY.items()},
         **{("scipy.linalg", f.__name__): f for f in (solve_sylvester, sqrtm, logm)}}
