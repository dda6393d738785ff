"""The matrix norms made of singular values, where they need more than the
singular values' own rule: np.linalg.norm with ord 2 (the largest singular
value), -2 (the smallest) and 'nuc' (their sum) of real and complex
matrices (complex intermediates, adsim/_np/complex.py). The other orders
are complex.py's and linalg.py's. np.linalg.cond by singular values (p None, 2, -2) is the
ratio of the 2 and -2 norms, so it has no derivative where they have none;
with another p it is norm(x, p) norm(inv(x), p).

With M = U diag(σ) V^H, a simple singular value moves as dσ_k = Re(u_k^H dM v_k),
so the nuclear norm as Re tr(U^H dM V); the adjoints are Mbar = w u_k v_k^H
and w U V^H, as (Re, Im) pairs. Values and first derivatives come from
NumPy's SVD. The rules a second-order sweep records use the Gram matrix
G = M^H M (M M^H when M is wide), whose Hermitian eigenvectors are the v_k
(the u_k): u_k^H dM v_k = v_k^H M^H dM v_k / σ_k and u_k v_k^H =
M v_k v_k^H / σ_k hold in every phase of v_k, so the rules read no phase.

Where the norm has no derivative the rules raise UndefinedDerivative: the
2-norm at a repeated largest singular value, the -2 norm at a repeated or
zero smallest one, the nuclear norm at a zero one (a rank-deficient
matrix), each "repeated" or "zero" within 100 times the rounding error of
the SVD (ε max(m, n) σ_1).

Reference: M. Giles, "An extended collection of matrix derivative results
for forward and reverse mode AD", 2008; J. Townsend, "Differentiating the
singular value decomposition", 2016.
"""
import numpy as np

from .._active import Active
from .._opcodes import CompareKind
from ..errors import UndefinedDerivative
from ..primitives import primitive
from . import complex as complex_
from . import hermitian, linalg
from .complex_linalg import adjoint, matmul
from .core import compare, shape_of
from .integers import current
from .stacks import at_least_2d, over_stack, square

_ROUNDING = 100.0


def _defined(kind, s, shape):
    """Refuse the points where the norm of this kind has no derivative."""
    if not s.size:          # an empty matrix's nuclear norm: the constant 0
        return
    bound = _ROUNDING * np.finfo(float).eps * max(shape) * s[0]
    if kind == "nuc" and s[-1] <= bound:
        why = f"a singular value is zero ({s[-1]:.3g}): the nuclear norm of a rank-deficient " \
              f"matrix has no derivative"
    elif kind == 2 and s.size > 1 and s[0] - s[1] <= bound:
        why = f"the largest singular value is repeated ({s[0]:.6g}, {s[1]:.6g})"
    elif kind == -2 and (s[-1] <= bound or s.size > 1 and s[-2] - s[-1] <= bound):
        why = f"the smallest singular value is zero or repeated ({s[-1]:.6g})"
    else:
        return
    raise UndefinedDerivative(f"adsim: numpy.linalg.norm(..., ord={kind!r}) of a matrix: "
                              f"{why}, where the norm is not differentiable; move the point")


def _picked(kind, count):
    """The singular values (NumPy's descending order) the norm sums."""
    return slice(None) if kind == "nuc" else slice(0, 1) if kind == 2 else slice(count - 1, count)


def _plain_factors(kind, re, im):
    """(u's, v's) of the singular values the norm reads, as complex columns."""
    U, s, Vh = np.linalg.svd(_matrix(re, im), full_matrices=False)
    _defined(kind, s, shape_of(re))
    k = _picked(kind, s.size)
    return U[:, k], Vh[k].conj().T


def _gram_factors(kind, re, im):
    """(u's, v's) as (Re, Im) pairs made of recorded operations: the
    eigenvectors of the smaller Gram matrix and M applied to them."""
    M = (re, im)
    m, n = shape_of(re)
    wide = m < n
    _distinct_singular_values(kind, _matrix(_plain(re), _plain(im)), wide)
    gram = matmul(M, adjoint(M)) if wide else matmul(adjoint(M), M)
    lam, (Qr, Qi) = hermitian._system(gram, "L")
    count = min(m, n)
    k = _picked(kind, count)
    order = slice(None, None, -1)                       # ascending eigenvalues, descending σ
    sigma = np.sqrt(lam[order][k])
    Q = (Qr[:, order][:, k], Qi[:, order][:, k])
    other = matmul(M if not wide else adjoint(M), Q)     # M v = σ u, or M^H u = σ v
    other = (other[0] / sigma, other[1] / sigma)
    return (Q, other) if wide else (other, Q)


def _plain(v):
    return current(v) if isinstance(v, Active) else np.asarray(v, dtype=float)


def _distinct_singular_values(kind, matrix, wide):
    """The eigenvectors of the Gram matrix, which second derivatives use, need
    its eigenvalues (the squared singular values) distinct: refuse by the
    norm's name, not by the Gram matrix's, which the user never wrote."""
    gram = matrix @ matrix.conj().T if wide else matrix.conj().T @ matrix
    if not np.all(np.isfinite(gram)):
        return
    pair = linalg.repeated_pair(np.linalg.eigvalsh(gram))
    if pair is not None:
        s = np.sqrt(np.abs(np.linalg.eigvalsh(gram)[list(pair)]))
        raise UndefinedDerivative(
            f"adsim: second derivatives of numpy.linalg.norm(..., ord={kind!r}) of a matrix "
            f"with repeated singular values ({s[0]:.6g}, {s[1]:.6g}) are not supported: they "
            f"are written with its singular vectors, which a repeated value leaves "
            f"undetermined; first derivatives are; move the point")


def _factors(kind, args):
    """(u's, v's) as (Re, Im) pairs: of NumPy's SVD on plain values, of
    recorded operations when a second-order sweep records the rule."""
    re, im = args
    if isinstance(re, Active) or isinstance(im, Active):
        return _gram_factors(kind, re, im)
    u, v = _plain_factors(kind, re, im)
    return (u.real, u.imag), (v.real, v.imag)


def _rules(kind):
    def jvp(args, out, tangents):
        (ur, ui), (vr, vi) = _factors(kind, args)
        dre = np.zeros(shape_of(args[0])) if tangents[0] is None else tangents[0]
        dim = np.zeros(shape_of(args[0])) if tangents[1] is None else tangents[1]
        # Re(u^H dM v) summed over the columns: Re(conj(u) . (dM v))
        dv_re = dre @ vr - dim @ vi
        dv_im = dre @ vi + dim @ vr
        return np.sum(ur * dv_re + ui * dv_im)

    def vjp(args, out, w):
        (ur, ui), (vr, vi) = _factors(kind, args)
        # w u v^H: (ur + i ui)(vr - i vi)^T
        return w * (ur @ vr.T + ui @ vi.T), w * (ui @ vr.T - ur @ vi.T)
    return jvp, vjp


def _matrix(re, im):
    """The plain matrix; a real one stays real, so that values are those of
    NumPy's real SVD to the last bit."""
    return re + 1j * im if np.any(im) else np.asarray(re, dtype=float)


def _value(kind):
    def value(re, im):          # NumPy's own: of an empty matrix 0, or its ValueError
        return np.asarray(np.linalg.norm(_matrix(re, im), kind), dtype=float)
    return value


_NORMS = {}
for _kind in (2, -2, "nuc"):
    _jvp, _vjp = _rules(_kind)
    _NORMS[_kind] = primitive(_value(_kind), jvp=_jvp, vjp=_vjp,
                              name=f"numpy.linalg.norm(ord={_kind!r})")
    _NORMS[_kind].pure = True
del _kind, _jvp, _vjp


def _singular_value_norm(x, ord, axis, keepdims):
    nd = len(shape_of(x))
    row, col = (nd - 2, nd - 1) if axis is None else axis
    if row == col:
        raise ValueError("Duplicate axes given.")
    moved = np.moveaxis(x, (row, col), (-2, -1))

    def one(m):
        re, im = complex_.parts(m)
        return _NORMS[ord](re, np.zeros(shape_of(re)) if np.ndim(im) == 0 else im)
    out = over_stack(one, lambda z: np.linalg.norm(z, ord, axis=(-2, -1)), [moved])
    if keepdims:
        out = np.reshape(out, tuple(1 if i in (row, col) else d
                                    for i, d in enumerate(shape_of(x))))
    return out


def norm(x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm: the matrix 2, -2 and nuclear norms here (a real
    matrix's nuclear norm too, so that a zero singular value is refused as
    for a complex one, not given the one-sided derivative of the singular
    values' rule); the other norms complex.py's and linalg.py's."""
    is_complex = isinstance(x, complex_.ComplexActive)
    nd = len(shape_of(x))
    axis = None if axis is None else linalg.norm_axes(axis, nd)
    matrix = nd == 2 if axis is None else np.ndim(axis) == 1 and len(axis) == 2
    if matrix and isinstance(ord, (int, str)) and ord in (2, -2, "nuc"):
        return _singular_value_norm(x, ord, axis, keepdims)
    if is_complex:
        return complex_.norm(x, ord, axis, keepdims)
    return linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def cond(x, p=None):
    """Condition numbers, of stacks too: by singular values (p None, 2, -2)
    the ratio of the 2 and -2 norms, whose rules refuse a repeated largest
    or a repeated or zero smallest singular value; else norm(x, p)
    norm(inv(x), p). A singular matrix's, which NumPy gives as inf, has no
    derivative and raises."""
    shape = shape_of(x)
    if 0 in shape[-2:]:
        raise np.linalg.LinAlgError("cond is not defined on empty arrays")
    at_least_2d(x)
    if p is None or p in (2, -2):
        largest, smallest = norm(x, 2, axis=(-2, -1)), norm(x, -2, axis=(-2, -1))
        denominator = largest if p == -2 else smallest
        if np.any(compare(CompareKind.CMP_EQ, denominator, 0.0)):
            raise UndefinedDerivative(f"adsim: np.linalg.cond(x, p={p!r}) of a singular matrix "
                                      f"(a zero singular value) is infinite and has no "
                                      f"derivative")
        return smallest / largest if p == -2 else largest / smallest
    square("cond", x)
    try:
        inverse = linalg.inv(x)
    except np.linalg.LinAlgError as err:
        raise UndefinedDerivative(f"adsim: np.linalg.cond(x, p={p!r}) of a singular matrix is "
                                  f"infinite and has no derivative") from err
    return linalg.norm(x, p, axis=(-2, -1)) * linalg.norm(inverse, p, axis=(-2, -1))


FUNCTIONS = {np.linalg.norm: norm}
