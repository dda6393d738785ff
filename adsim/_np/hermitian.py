"""np.linalg.eigh and eigvalsh of complex Hermitian matrices (complex
intermediates, adsim/_np/complex.py); real matrices are adsim/_np/linalg.py's.

NumPy (LAPACK's zheevd) reads one triangle and takes the matrix as the
Hermitian one it makes: the other triangle mirrored and conjugated, the
diagonal's imaginary part ignored. That matrix is recorded from the
triangle read, so the derivatives are those of the triangle, as NumPy's
values are. With A V = V diag(λ), V unitary, a simple eigenvalue moves as
dλ_k = v_k^H dA v_k and the eigenvectors as dV = V (F ∘ (V^H dA V)),
F_ij = 1 / (λ_j - λ_i) off the diagonal and 0 on it: v_k^H dv_k = 0, so the
norm stays 1 and the phase is fixed as JAX and PyTorch fix it (NumPy fixes
none: derivatives of quantities independent of the phases, |v_ik| and
v_k v_k^H, are exact). The adjoints: Ā = V diag(λ̄) V^H and
Ā = V (F ∘ (V^H V̄)) V^H, as (Re, Im) pairs. Eigenvector derivatives need
distinct eigenvalues (UndefinedDerivative otherwise); eigenvalue ones do
not, as for real matrices.
"""
import numpy as np

from .._active import Active
from . import complex as complex_
from . import linalg
from .complex_linalg import adjoint, matmul, times
from .core import shape_of
from .eigen import _matrix, _split, _stacked
from .stacks import over_stack, square
from ..primitives import primitive


def _hermitian_of(re, im, lower):
    """(Re, Im) of the Hermitian matrix NumPy reads from one triangle."""
    tri = np.tril if lower else np.triu
    strict = 1 if not lower else -1
    re_t = tri(re) + np.transpose(tri(re, strict))
    im_t = tri(im, strict) - np.transpose(tri(im, strict))
    return re_t, im_t


def _packed_vectors(V):
    return np.stack([V.real, V.imag]).astype(float)


def _system(args, uplo):
    """(λ, V pair) of the Hermitian matrix (re, im), recorded when active."""
    re, im = args
    if isinstance(re, Active) or isinstance(im, Active):
        return _EIGH_VALUES[uplo](re, im), _split(_EIGVECS[uplo](re, im))
    w, V = np.linalg.eigh(re + 1j * im, uplo)
    return w, (V.real, V.imag)


def _pair_adjoints(pair):
    re, im = pair
    return re, np.zeros(shape_of(re)) if im is None else im


def _values_rules(uplo):
    def jvp(args, out, tangents):
        _, V = _system(args, uplo)
        AV = matmul(_matrix(tangents), V)
        return np.sum(V[0] * AV[0] + V[1] * AV[1], axis=0)        # Re(v_k^H dA v_k)

    def vjp(args, out, w):
        _, V = _system(args, uplo)
        return _pair_adjoints(matmul(times(V, (w[None, :], None)), adjoint(V)))
    return jvp, vjp


def _inverse_gaps(lam):
    """F_ij = 1 / (λ_j - λ_i) off the diagonal, 0 on it (distinct eigenvalues)."""
    linalg.distinct_eigenvalues(lam, "the eigenvectors of a complex Hermitian matrix are used")
    d = lam[None, :] - lam[:, None]
    eye = np.eye(shape_of(lam)[0])
    return (1.0 - eye) / (d + eye)


def _vectors_rules(uplo):
    def jvp(args, out, tangents):
        lam, _ = _system(args, uplo)
        V = _split(out)
        inner = matmul(adjoint(V), matmul(_matrix(tangents), V))
        return _stacked(matmul(V, times((_inverse_gaps(lam), None), inner)))

    def vjp(args, out, w):
        lam, _ = _system(args, uplo)
        V = _split(out)
        inner = times((_inverse_gaps(lam), None), matmul(adjoint(V), _split(w)))
        return _pair_adjoints(matmul(matmul(V, inner), adjoint(V)))
    return jvp, vjp


def _per_triangle(value, name, rules):
    """One primitive per triangle LAPACK reads (its rounding and phases are
    those of the triangle read, and NumPy's values those of the one named)."""
    prims = {}
    for uplo, suffix in (("L", ""), ("U", "(UPLO='U')")):
        jvp, vjp = rules(uplo)
        prims[uplo] = primitive(lambda re, im, uplo=uplo: value(re + 1j * im, uplo), jvp=jvp,
                                vjp=vjp, name=f"{name}(complex){suffix}")
        prims[uplo].pure = True
    return prims


_EIGVALSH = _per_triangle(np.linalg.eigvalsh, "numpy.linalg.eigvalsh", _values_rules)
_EIGH_VALUES = _per_triangle(lambda m, uplo: np.linalg.eigh(m, uplo)[0],
                             "numpy.linalg.eigh.eigenvalues", _values_rules)
_EIGVECS = _per_triangle(lambda m, uplo: _packed_vectors(np.linalg.eigh(m, uplo)[1]),
                         "numpy.linalg.eigh", _vectors_rules)


# ---- NumPy's functions ----------------------------------------------------------

def _parts_of(a):
    re, im = complex_.parts(a)
    return re, (np.zeros(shape_of(re)) if type(im) is float else im)


def eigvalsh(a, UPLO="L"):
    if not complex_.is_complex(a):
        return linalg.eigvalsh(a, UPLO)
    square("eigvalsh", a)
    uplo = linalg.uplo_of(UPLO)
    return over_stack(lambda m: _EIGVALSH[uplo](*_hermitian_of(*_parts_of(m), uplo == "L")),
                      lambda m: np.linalg.eigvalsh(m, uplo), [a])


def eigh(a, UPLO="L"):
    if not complex_.is_complex(a):
        return linalg.eigh(a, UPLO)
    square("eigh", a)
    uplo = linalg.uplo_of(UPLO)

    def one(m):
        h = _hermitian_of(*_parts_of(m), uplo == "L")
        V = _split(_EIGVECS[uplo](*h))
        return linalg.EighResult(_EIGH_VALUES[uplo](*h), complex_.make(V[0], V[1], shape_of(V[0])))
    return over_stack(one, lambda m: np.linalg.eigh(m, uplo), [a])


FUNCTIONS = {np.linalg.eigh: eigh, np.linalg.eigvalsh: eigvalsh}
