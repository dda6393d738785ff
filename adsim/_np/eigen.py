"""np.linalg.eig and eigvals of general (non-symmetric) matrices, real or
complex (complex intermediates, adsim/_np/complex.py).

With A V = V diag(λ) and U = V^{-1} (its rows are the left eigenvectors
w_k^H, scaled so that U V = I), a simple eigenvalue moves as

    dλ_k = (U dA V)_kk = w_k^H dA v_k / (w_k^H v_k),

and the eigenvectors as dX = V (F ∘ (U dA V)), F_ij = 1 / (λ_j - λ_i) off
the diagonal and 0 on it. NumPy (LAPACK) scales each eigenvector to unit
2-norm and fixes no phase, so the rule then removes the part of dX that
would change the norm,

    dv_k = dx_k - v_k Re(v_k^H dx_k),

which is the gauge of JAX and PyTorch: v_k^H dv_k is imaginary. Quantities
that do not depend on the eigenvectors' phases (|v_ik|, v_k v_k^H, the
eigenvalues, V diag(λ) V^{-1}) have the same derivatives in every gauge, so
theirs are right; the derivative of a phase itself is this convention's.
The reverse rules are the adjoints of these (for a C-linear map the
adjoint of the pair (Re, Im) is the conjugate transpose, its real part for
a real A):

    Ā = U^H (diag(λ̄) + conj(F) ∘ (V^H V̄ - V^H V diag(Re diag(V^H V̄)))) V^H.

Each call is one op per result (eigenvalues, eigenvectors) whose output
holds the real and imaginary parts stacked, (2, ...), as numpy.fft's do. The
rules are written with real operations adsim records (products of
(real, imaginary) pairs, a complex solve as the real solve of its 2n x 2n
form), so second-order sweeps differentiate them again. Repeated
eigenvalues have no derivative (the eigenvalues move as roots of the
perturbation, and F is undefined): the rules raise UndefinedDerivative
where two eigenvalues are equal within their rounding errors.

References: M. Giles, "An extended collection of matrix derivative results
for forward and reverse mode AD", 2008; M. Boeddeker et al., "On the
computation of complex-valued gradients with application to statistically
optimum beamforming", arXiv:1701.00392, 2017 (eqs. 4.60, 4.63).
"""
from collections import namedtuple

import numpy as np

from .._active import Active
from ..errors import UndefinedDerivative
from ..primitives import primitive
from . import complex as complex_
from .complex import ComplexActive
from .complex_linalg import adjoint as _adjoint, conj as _conj, matmul as _matmul, plus as _plus, \
    solve_pairs as _solve, times as _times
from .core import shape_of
from .integers import current
from .stacks import over_stack, square

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])   # NumPy's field names

# Two eigenvalues are repeated when they differ by less than this many times
# the sum of their rounding error bounds, eps ||A||_F kappa_k, with kappa_k
# = |w_k| |v_k| / |w_k^H v_k| their condition numbers: a defective matrix's
# computed eigenvalues are split by about its rounding error bound, not by 0.
_REPEATED = 100.0


def _split(stacked):
    """The (real, imaginary) pair of a primitive's stacked output."""
    return stacked[0], stacked[1]


def _matrix(parts):
    """The (real, imaginary) pair of a primitive's matrix arguments (or
    their tangents, None where constant)."""
    re = parts[0]
    im = parts[1] if len(parts) > 1 else None
    if re is None:
        re = np.zeros(shape_of(im))
    return re, im


def _inverse_gaps(lam):
    """F_ij = 1 / (λ_j - λ_i) for i != j, 0 on the diagonal."""
    lr, li = lam
    eye = np.eye(shape_of(lr)[0])
    off = 1.0 - eye
    dr = lr[None, :] - lr[:, None]
    if li is None:
        return off / (dr + eye), None
    di = li[None, :] - li[:, None]
    size = dr * dr + di * di + eye
    return off * dr / size, -(off * di) / size


# ---- repeated eigenvalues ---------------------------------------------------

def _plain(v):
    return current(v) if isinstance(v, Active) else np.asarray(v)


def _refuse_repeated(name, args, lam, vectors):
    """UndefinedDerivative when two eigenvalues are equal within their
    rounding errors (checked on plain values: a recorded rule's first-order
    call, on the same values, has checked them)."""
    if any(isinstance(v, Active) for v in (*args, *lam, *vectors)):
        return
    a = _complex(args)
    w = lam[0] + 1j * lam[1]
    n = w.size
    if n < 2:
        return
    V = vectors[0] + 1j * vectors[1]
    try:
        kappa = np.linalg.norm(np.linalg.inv(V), axis=1)       # |v_k| = 1
    except np.linalg.LinAlgError:
        kappa = np.full(n, np.inf)
    bound = np.finfo(float).eps * np.linalg.norm(a) * kappa
    gaps = np.abs(w[:, None] - w[None, :])
    close = (gaps <= _REPEATED * (bound[:, None] + bound[None, :])) & ~np.eye(n, dtype=bool)
    if close.any():
        i, j = np.argwhere(close)[0]
        raise UndefinedDerivative(
            f"adsim: {name}: eigenvalues {i} and {j} are repeated ({_shown(w[i])} and "
            f"{_shown(w[j])}, "
            f"equal within their rounding errors): a repeated eigenvalue of a general matrix "
            f"has no derivative (it splits as a root of the perturbation) and neither have "
            f"its eigenvectors. Move the point, or differentiate a symmetric function of the "
            f"eigenvalues written without them (their sum is np.trace(a), their product "
            f"np.linalg.det(a)); for symmetric matrices use np.linalg.eigh")


def _shown(z):
    return f"{z.real:.6g}" if z.imag == 0 else f"{z:.6g}"


def _complex(args):
    args = [_plain(a) for a in args]
    return args[0] if len(args) == 1 else args[0] + 1j * args[1]


# ---- the rules ----------------------------------------------------------------

def _eigensystem(args, name):
    """(λ, V) as pairs, recorded when ``args`` are active (second-order
    sweeps), with repeated eigenvalues refused."""
    if any(isinstance(a, Active) for a in args):
        lam = _split(_EIG_VALUES[len(args)](*args))
        vectors = _split(_EIG_VECTORS[len(args)](*args))
    else:                   # one LAPACK call gives both, as each primitive's
        w, V = np.linalg.eig(_complex(args))
        lam, vectors = (w.real, w.imag), (V.real, V.imag)
    _refuse_repeated(name, args, lam, vectors)
    return lam, vectors


def _real_adjoints(abar, args):
    """One adjoint per argument: Re Ā for a real matrix, (Re Ā, Im Ā) for a
    complex one given as its two parts."""
    re, im = abar
    if len(args) == 1:
        return (re,)
    return re, np.zeros(shape_of(re)) if im is None else im


def _stacked(pair):
    re, im = pair
    return np.stack([re, np.zeros(shape_of(re)) if im is None else im])


def _values_jvp_with(lam, V, tangents):
    dP = _solve(V, _matmul(_matrix(tangents), V))
    return _stacked((np.diagonal(dP[0]), None if dP[1] is None else np.diagonal(dP[1])))


def _values_vjp_with(args, V, w):
    wr, wi = w
    Vh = _adjoint(V)
    return _real_adjoints(_solve(Vh, _times((wr[:, None], wi[:, None]), Vh)), args)


def _eig_values_jvp(args, out, tangents):
    lam, V = _eigensystem(args, "numpy.linalg.eig")
    return _values_jvp_with(lam, V, tangents)


def _eig_values_vjp(args, out, w):
    lam, V = _eigensystem(args, "numpy.linalg.eig")
    return _values_vjp_with(args, V, _split(w))


def _eig_vectors_jvp(args, out, tangents):
    lam, _ = _eigensystem(args, "numpy.linalg.eig (eigenvectors)")
    V = _split(out)
    dP = _solve(V, _matmul(_matrix(tangents), V))
    dX = _matmul(V, _times(_inverse_gaps(lam), dP))
    norm_change = np.sum(V[0] * dX[0] + V[1] * dX[1], axis=0)      # Re(v_k^H dx_k)
    return _stacked((dX[0] - V[0] * norm_change,
                     _plus(dX[1], -(V[1] * norm_change))))


def _eig_vectors_vjp(args, out, w):
    lam, _ = _eigensystem(args, "numpy.linalg.eig (eigenvectors)")
    V = _split(out)
    Vr, Vi = V
    Gr, Gi = _split(w)
    norm_change = np.sum(Vr * Gr + Vi * Gi, axis=0)                # Re diag(V^H V̄)
    xbar = (Gr - Vr * norm_change, Gi - Vi * norm_change)
    Vh = _adjoint(V)
    pbar = _times(_conj(_inverse_gaps(lam)), _matmul(Vh, xbar))
    return _real_adjoints(_solve(Vh, _matmul(pbar, Vh)), args)


def _eigvals_jvp(args, out, tangents):
    lam, V = _eigensystem(args, "numpy.linalg.eigvals")
    return _values_jvp_with(lam, _in_order_of(out, lam, V), tangents)


def _eigvals_vjp(args, out, w):
    lam, V = _eigensystem(args, "numpy.linalg.eigvals")
    return _values_vjp_with(args, _in_order_of(out, lam, V), _split(w))


def _in_order_of(out, lam, V):
    """V's columns in the order of ``out``, the eigenvalues of eigvals
    (LAPACK computes them without the eigenvectors: the same values, to
    rounding, which each must match)."""
    w = _plain(out[0]) + 1j * _plain(out[1])
    lw = _plain(lam[0]) + 1j * _plain(lam[1])
    if np.array_equal(w, lw):
        return V
    order = np.argmin(np.abs(w[:, None] - lw[None, :]), axis=1)
    if np.unique(order).size != order.size:
        raise UndefinedDerivative(
            f"adsim: numpy.linalg.eigvals: the eigenvalues computed with and without "
            f"eigenvectors could not be matched one to one ({w} and {lw}); use "
            f"np.linalg.eig(a).eigenvalues")
    return V[0][:, order], V[1][:, order]


def _packed(z):
    return np.stack([z.real, z.imag]).astype(float)


def _per_kind(value, name, jvp, vjp):
    """One primitive for a real matrix (LAPACK's real routine, whose values
    NumPy gives for real input) and one for a complex matrix given as its
    real and imaginary parts."""
    return {1: primitive(lambda a: _packed(value(a)), jvp=jvp, vjp=vjp, name=name),
            2: primitive(lambda re, im: _packed(value(re + 1j * im)), jvp=jvp, vjp=vjp,
                         name=name + "(complex)")}


_EIG_VALUES = _per_kind(lambda m: np.linalg.eig(m).eigenvalues, "numpy.linalg.eig.eigenvalues",
                        _eig_values_jvp, _eig_values_vjp)
_EIG_VECTORS = _per_kind(lambda m: np.linalg.eig(m).eigenvectors, "numpy.linalg.eig",
                         _eig_vectors_jvp, _eig_vectors_vjp)
_EIGVALS = _per_kind(np.linalg.eigvals, "numpy.linalg.eigvals", _eigvals_jvp, _eigvals_vjp)

# they compute their results and nothing else: an unused one leaves the tape
for _kind in (_EIG_VALUES, _EIG_VECTORS, _EIGVALS):
    for _prim in _kind.values():
        _prim.pure = True
del _kind, _prim


# ---- NumPy's functions ----------------------------------------------------------

def _arguments(m):
    return (m.real, m.imag) if isinstance(m, ComplexActive) else (m,)


def _is_complex(a, values):
    """NumPy's choice: a complex matrix gives complex results; a real one
    gives real results when every eigenvalue's imaginary part is 0 (recorded
    comparisons, which replays check), complex ones otherwise."""
    return isinstance(a, ComplexActive) or bool(np.asarray(values[1] != 0.0).any())


def _result(parts, is_complex):
    re, im = _split(parts)
    return complex_.make(re, im, shape_of(re)) if is_complex else re


def _empty(a, numpy_rule):
    """NumPy's result for a stack or matrix without elements (no derivative)."""
    dtype = complex if isinstance(a, ComplexActive) else float
    return numpy_rule(np.zeros(shape_of(a), dtype))


def eig(a):
    """Eigenvalues and right eigenvectors (unit 2-norm columns), NumPy's
    values; real for a real matrix whose eigenvalues are all real, complex
    otherwise, as NumPy decides over the whole stack."""
    square("eig", a)
    if 0 in shape_of(a):
        return _empty(a, np.linalg.eig)
    values, vectors = over_stack(
        lambda m: (_EIG_VALUES[len(_arguments(m))](*_arguments(m)),
                   _EIG_VECTORS[len(_arguments(m))](*_arguments(m))), None, [a])
    values, vectors = np.moveaxis(values, -2, 0), np.moveaxis(vectors, -3, 0)
    is_complex = _is_complex(a, values)
    return EigResult(_result(values, is_complex), _result(vectors, is_complex))


def eigvals(a):
    square("eigvals", a)
    if 0 in shape_of(a):
        return _empty(a, np.linalg.eigvals)
    values = over_stack(lambda m: _EIGVALS[len(_arguments(m))](*_arguments(m)), None, [a])
    values = np.moveaxis(values, -2, 0)
    return _result(values, _is_complex(a, values))


FUNCTIONS = {np.linalg.eig: eig, np.linalg.eigvals: eigvals}
