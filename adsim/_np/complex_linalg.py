"""Linear algebra of complex matrices as (real, imaginary) pairs of real
arrays, and np.linalg.solve, inv, det and slogdet where an operand is complex (a complex
intermediate, adsim/_np/complex.py, or complex data beside active values).

A complex system m y = b is the real system of twice the size

    [[Re m, -Im m], [Im m, Re m]] [Re y; Im y] = [Re b; Im b],

solved by adsim's real solve, whose rules then give every derivative
(second order included). Values are NumPy's to rounding (NumPy calls
LAPACK's complex solver). The pair functions take plain or active parts;
an imaginary part None is 0.
"""
import operator

import numpy as np

from .._active import Active
from ..errors import UndefinedDerivative
from ..primitives import primitive
from . import complex as complex_
from . import linalg
from .core import shape_of
from .integers import current
from .stacks import over_stack, square


def plus(a, b):
    return b if a is None else a if b is None else a + b


def matmul(a, b):
    (ar, ai), (br, bi) = a, b
    re = ar @ br if ai is None or bi is None else ar @ br - ai @ bi
    return re, plus(None if bi is None else ar @ bi, None if ai is None else ai @ br)


def times(a, b):
    """Elementwise product (broadcasting)."""
    (ar, ai), (br, bi) = a, b
    re = ar * br if ai is None or bi is None else ar * br - ai * bi
    return re, plus(None if bi is None else ar * bi, None if ai is None else ai * br)


def adjoint(a):
    """The conjugate transpose."""
    re, im = a
    return np.transpose(re), None if im is None else -np.transpose(im)


def conj(a):
    return a[0], None if a[1] is None else -a[1]


def solve_pairs(m, b):
    """m^{-1} b: real solves for a real m; for a complex one, the real system
    of twice the size when recorded, LAPACK's complex solve on plain values."""
    (mr, mi), (br, bi) = m, b
    if mi is None:
        return np.linalg.solve(mr, br), None if bi is None else np.linalg.solve(mr, bi)
    if not any(isinstance(v, Active) for v in (mr, mi, br, bi)):
        y = np.linalg.solve(mr + 1j * mi, br if bi is None else br + 1j * bi)
        return np.ascontiguousarray(y.real), np.ascontiguousarray(y.imag)
    n = shape_of(mr)[0]
    big = np.concatenate([np.concatenate([mr, -mi], axis=1), np.concatenate([mi, mr], axis=1)])
    rhs = np.concatenate([br, np.zeros(shape_of(br)) if bi is None else bi])
    y = np.linalg.solve(big, rhs)
    return y[:n], y[n:]


# ---- NumPy's functions with a complex operand -----------------------------------

def _pair(v):
    re, im = complex_.parts(v)
    return re, None if type(im) is float and im == 0.0 else im


def _complex(pair):
    re, im = pair
    return complex_.make(re, np.zeros(shape_of(re)) if im is None else im, shape_of(re))


def solve(a, b):
    """np.linalg.solve (NumPy 2's rule for b, batch axes broadcast); complex
    when an operand is."""
    if not (complex_.is_complex(a) or complex_.is_complex(b)):
        return linalg.solve(a, b)
    square("solve", a)
    vector = len(shape_of(b)) == 1
    return over_stack(lambda m, r: _complex(solve_pairs(_pair(m), _pair(r))),
                      np.linalg.solve, [a, b], core=(2, 1 if vector else 2))


def inv(a):
    if not complex_.is_complex(a):
        return linalg.inv(a)
    square("inv", a)
    return over_stack(lambda m: _complex(solve_pairs(_pair(m), (np.eye(shape_of(m)[-1]), None))),
                      np.linalg.inv, [a])


# ---- determinants: d det = tr(adj(M) dM), and the adjoint of the pair is
# adj(M)^H ybar (Giles 2008, with conjugate transposes for a complex map)

def _plain(v):
    return current(v) if isinstance(v, Active) else np.asarray(v, dtype=float)


def _adjugate(args, out):
    """adj(M), with M adj(M) = det(M) I: through the SVD M = U S V^H on plain
    values, adj(M) = det(U) det(V^H) V diag(prod_{j != i} s_j) U^H, so that it
    exists at singular matrices too; as det(M) M^{-1} when recorded (second
    derivatives), which needs M regular."""
    re, im = args
    if not any(isinstance(v, Active) for v in (re, im, out)):
        U, s, Vh = np.linalg.svd(re + 1j * im)
        others = np.array([np.prod(np.delete(s, i)) for i in range(s.size)])
        adj = np.linalg.det(U) * np.linalg.det(Vh) * (Vh.conj().T * others) @ U.conj().T
        return adj.real, adj.imag
    try:
        if linalg.singular_within_rounding(_plain(re) + 1j * _plain(im)):
            raise np.linalg.LinAlgError("singular within rounding")     # det M^{-1}: noise
        inverse = solve_pairs((re, im), (np.eye(shape_of(re)[0]), None))
    except np.linalg.LinAlgError as err:
        raise UndefinedDerivative("adsim: second derivatives of np.linalg.det at a singular "
                                  "complex matrix are not supported; move the point") from err
    return times((out[0], out[1]), inverse)


def _det_jvp(args, out, tangents):
    adj = _adjugate(args, out)
    dm = (np.zeros(shape_of(args[0])) if tangents[0] is None else tangents[0], tangents[1])
    re, im = times((np.transpose(adj[0]), np.transpose(adj[1])), dm)     # tr(adj dM)
    return np.stack([np.sum(re), np.zeros(()) if im is None else np.sum(im)])


def _det_vjp(args, out, w):
    re, im = times(adjoint(_adjugate(args, out)), (w[0], w[1]))
    return re, np.zeros(shape_of(re)) if im is None else im


_det = primitive(lambda re, im: np.stack([np.linalg.det(re + 1j * im).real,
                                          np.linalg.det(re + 1j * im).imag]).astype(float),
                 jvp=_det_jvp, vjp=_det_vjp, name="numpy.linalg.det(complex)")
_det.pure = True


def _on_pair(rule, m):
    """``rule`` of a complex matrix's real and imaginary parts (zeros for a
    real one)."""
    re, im = _pair(m)
    return rule(re, np.zeros(shape_of(re)) if im is None else im)


def det(a):
    if not complex_.is_complex(a):
        return linalg.det(a)
    square("det", a)

    def one(m):
        out = _on_pair(_det, m)
        return complex_.make(out[0], out[1], ())
    return over_stack(one, np.linalg.det, [a])


# ---- slogdet: d log det M = tr(M^-1 dM) = t, so d log|det| = Re t and, the sign
# being det/|det|, d sign = sign i Im t. The adjoint of (sign, log|det|) with
# weights (ws, wl) is g M^-H, g = wl + i Im(conj(ws) sign) (Giles 2008's trace rule).

def _inverse(args):
    """M^-1 as a pair: LAPACK's complex solve on plain values, the real
    system of twice the size when recorded (second derivatives)."""
    re, im = args
    try:
        return solve_pairs((re, im), (np.eye(shape_of(re)[0]), None))
    except np.linalg.LinAlgError as err:
        raise UndefinedDerivative("adsim: np.linalg.slogdet of a singular complex matrix has "
                                  "no derivative (its log|det| is -inf)") from err


def _slogdet_value(re, im):
    sign, logabsdet = np.linalg.slogdet(re + 1j * im)
    return np.array([sign.real, sign.imag, logabsdet])


def _slogdet_jvp(args, out, tangents):
    inverse = _inverse(args)
    dm = (np.zeros(shape_of(args[0])) if tangents[0] is None else tangents[0], tangents[1])
    t_re, t_im = times((np.transpose(inverse[0]), np.transpose(inverse[1])), dm)
    t_re, t_im = np.sum(t_re), np.zeros(()) if t_im is None else np.sum(t_im)
    return np.stack([-out[1] * t_im, out[0] * t_im, t_re])


def _slogdet_vjp(args, out, w):
    g = (w[2], w[1] * out[0] - w[0] * out[1])
    re, im = times(adjoint(_inverse(args)), g)
    return re, np.zeros(shape_of(re)) if im is None else im


_slogdet = primitive(_slogdet_value, jvp=_slogdet_jvp, vjp=_slogdet_vjp,
                     name="numpy.linalg.slogdet(complex)")
_slogdet.pure = True


def slogdet(a):
    """np.linalg.slogdet of a complex matrix: the sign det/|det| (complex) and
    log|det| (real), NumPy's values."""
    if not complex_.is_complex(a):
        return linalg.slogdet(a)
    square("slogdet", a)

    def one(m):
        out = _on_pair(_slogdet, m)
        return linalg.SlogdetResult(complex_.make(out[0], out[1], ()), out[2])
    return over_stack(one, np.linalg.slogdet, [a])


def matrix_power(a, n):
    """a ** n (a stack of square matrices) by binary powering of complex
    products, the inverse's for n < 0 (a periodic stack's transfer matrix
    ``matrix_power(M_period, N)``); real when a is."""
    if not complex_.is_complex(a):
        return linalg.matrix_power(a, n)
    square("matrix_power", a)
    n = operator.index(n)
    if n < 0:
        a, n = inv(a), -n
    if n == 0:                                 # no dependence on a
        return np.broadcast_to(np.eye(shape_of(a)[-1]), shape_of(a)).astype(complex)
    result, base = None, _pair(a)
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return _complex(result)


FUNCTIONS = {np.linalg.solve: solve, np.linalg.inv: inv, np.linalg.det: det,
             np.linalg.slogdet: slogdet, np.linalg.matrix_power: matrix_power}
