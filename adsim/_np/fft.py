"""numpy.fft on active arrays.

Each transform is one recorded linear op (a user-level primitive, so no
compiled code of its own) whose value, tangent and adjoint are NumPy FFTs
of plain arrays, O(n log n) each. Complex data travels as its real and
imaginary parts (adsim/_np/complex.py): a transform of a complex array takes
both parts as arguments and returns them stacked, (2, *shape).

Adjoints. For a C-linear map y = A x the adjoint of the real pair (Re x,
Im x) is A^H ybar; for a real input it is Re(A^H ybar). The adjoint of
``fftn(norm=a)`` is ``ifftn(norm=dual(a))`` (``backward`` and ``forward``
swap, ``ortho`` stays), and zero padding and truncation to ``s`` are each
other's adjoints. ``rfftn`` is ``fftn`` keeping the first s[-1]//2 + 1
entries of the last axis; ``irfftn`` reads each entry k of the last axis
c_k times (c_0 = 1, c_{n/2} = 1 for even n, else 2) and ignores the
imaginary parts of the self-conjugate ones, so its adjoint is
c_k rfftn(ybar, norm=dual(a))_k. The Hermitian transforms ``hfft`` and
``ihfft`` are ``irfft`` and ``rfft`` with conjugates, as NumPy defines them.
"""
import warnings

import numpy as np
import scipy.sparse as sp

from .._active import Active
from ..errors import UnsupportedOperation
from ..primitives import BuiltinFamily, Primitive
from .complex import ComplexActive
from .core import normalize_axis

DUAL = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def resize(a, shape):
    """``a`` truncated or zero-padded (at the end of each axis) to ``shape``."""
    shape = tuple(shape)
    if a.shape == shape:
        return a
    out = np.zeros(shape, dtype=a.dtype)
    common = tuple(slice(0, min(p, q)) for p, q in zip(a.shape, shape))
    out[common] = a[common]
    return out


def _with(shape, axes, lengths):
    out = list(shape)
    for ax, n in zip(axes, lengths):
        out[ax] = n
    return tuple(out)


def axes_pattern(in_shape, out_shape, axes):
    """Which input element each output element of a transform along
    ``axes`` depends on (CSR, C order): all along those axes, its own index
    along the others."""
    P = sp.csr_array(np.ones((1, 1), dtype=bool))
    for ax, (n_out, n_in) in enumerate(zip(out_shape, in_shape)):
        block = np.ones((n_out, n_in), dtype=bool) if ax in axes else np.eye(n_in, dtype=bool)
        P = sp.csr_array(sp.kron(P, sp.csr_array(block)))
    return P


class _Transform:
    """One call's plan: the kind (fftn, ifftn, rfftn, irfftn), the
    resolved lengths ``s`` and ``axes``, ``norm`` and the input shape."""

    def __init__(self, kind, in_shape, s, axes, norm):
        self.kind, self.in_shape, self.s, self.axes, self.norm = kind, in_shape, s, axes, norm

    def forward(self, z):
        return getattr(np.fft, self.kind)(z, s=self.s, axes=self.axes, norm=self.norm)

    def adjoint(self, w):
        """A^H w, shaped like the input (complex)."""
        axes, dual = self.axes, DUAL[self.norm]
        if self.kind == "fftn":
            g = np.fft.ifftn(w, axes=axes, norm=dual)
        elif self.kind == "ifftn":
            g = np.fft.fftn(w, axes=axes, norm=dual)
        elif self.kind == "rfftn":
            full = resize(w, _with(w.shape, axes[-1:], self.s[-1:]))
            g = np.fft.ifftn(full, axes=axes, norm=dual)
        else:                                            # irfftn
            g = np.fft.rfftn(w, axes=axes, norm=dual)
            n = self.s[-1]
            weight = np.full(n // 2 + 1, 2.0)
            weight[0] = 1.0
            if n % 2 == 0:
                weight[-1] = 1.0
            g = g * weight.reshape((-1,) + (1,) * (g.ndim - 1 - axes[-1]))
        in_lengths = [self.in_shape[ax] for ax in axes]
        return resize(g, _with(g.shape, axes, in_lengths))

    @property
    def complex_output(self):
        return self.kind != "irfftn"

    def local_pattern(self, n_args):
        """Per argument (x, or Re x and Im x), the pattern of the output
        (its real and imaginary parts stacked, for a complex one)."""
        out_shape = list(self.in_shape)
        for ax, n in zip(self.axes, self.s):
            out_shape[ax] = n // 2 + 1 if self.kind == "rfftn" and ax == self.axes[-1] else n
        P = axes_pattern(self.in_shape, out_shape, self.axes)
        if self.complex_output:
            P = sp.csr_array(sp.vstack([P, P]))
        return [P] * n_args


def _pack(y, complex_output):
    return np.stack([y.real, y.imag]) if complex_output else y


def _unpack(w, complex_output):
    return w[0] + 1j * w[1] if complex_output else w


def _primitive(plan, name, complex_input):
    """The recorded op of ``plan``: arguments (x,) or (Re x, Im x)."""
    def join(parts):
        parts = [np.zeros(plan.in_shape) if p is None else p for p in parts]
        return parts[0] + 1j * parts[1] if complex_input else parts[0]

    def value(*parts):
        return _pack(plan.forward(join(parts)), plan.complex_output)

    def jvp(args, out, tangents):
        return _pack(plan.forward(join(tangents)), plan.complex_output)

    def vjp(args, out, out_adjoint):
        g = plan.adjoint(_unpack(out_adjoint, plan.complex_output))
        return (g.real, g.imag) if complex_input else (np.real(g),)

    prim = Primitive(value, jvp=jvp, vjp=vjp, name=name, linear=True)
    prim.local_pattern = lambda: plan.local_pattern(2 if complex_input else 1)
    return prim


def _planned(kind, name, in_shape, s, axes, norm, complex_input):
    """The op of one transform from its plan's parameters (what tape files
    save of it), checked as a file's are."""
    lists = (in_shape, s, axes)
    if kind not in ("fftn", "ifftn", "rfftn", "irfftn") or type(complex_input) is not bool \
            or kind == "rfftn" and complex_input or not isinstance(name, str) \
            or not all(isinstance(v, (list, tuple)) and all(type(n) is int for n in v)
                       for v in lists) \
            or min(in_shape, default=0) < 0 or min(s, default=1) < 1 or len(in_shape) > 64:
        raise ValueError(f"the FFT plan {kind!r} {name!r} {in_shape!r} {s!r} is not one numpy.fft "
                         f"makes")
    return _primitive(_plan(kind, name, tuple(in_shape), s, axes, norm), name, complex_input)


_TRANSFORMS = BuiltinFamily("numpy.fft", 1, _planned)


def _plan(kind, name, shape, s, axes, norm):
    """Resolve ``s`` and ``axes`` as NumPy does (``s`` without ``axes``:
    the last len(s) axes, with NumPy's deprecation warning)."""
    if norm not in DUAL:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    ndim = len(shape)
    if axes is None:
        if s is not None:
            warnings.warn(f"`axes` should not be `None` if `s` is not `None` ({name}); pass "
                          f"axes explicitly", DeprecationWarning, stacklevel=4)
            axes = range(ndim - len(s), ndim)
        else:
            axes = range(ndim)
    axes = tuple(normalize_axis(int(a), ndim) for a in axes)
    if len(set(axes)) != len(axes):
        raise UnsupportedOperation(f"adsim: {name} with a repeated axis {axes} is not supported "
                                   f"on active arrays; transform each axis once")
    if s is None:
        s = [shape[a] for a in axes]
        if kind == "irfftn" and axes:
            s[-1] = 2 * (shape[axes[-1]] - 1)
    s = tuple(int(n) for n in s)
    if len(s) != len(axes):
        raise ValueError(f"adsim: {name}: s {s} and axes {axes} have different lengths")
    return _Transform(kind, tuple(shape), s, axes, norm)


def transform(kind, name, a, s, axes, norm, out):
    if out is not None:
        raise UnsupportedOperation(f"adsim: {name}(..., out=...) writes an active result into a "
                                   f"plain array; assign the result instead")
    complex_input = isinstance(a, ComplexActive)
    if not complex_input and not isinstance(a, Active):
        raise UnsupportedOperation(f"adsim: {name} of a plain array with active arguments "
                                   f"(s, axes or n) is not supported; pass plain integers")
    if kind == "rfftn" and complex_input:
        raise TypeError(f"adsim: {name} needs real input; NumPy refuses complex input too (use "
                        f"numpy.fft.fftn, or take z.real)")
    plan = _plan(kind, name, a.shape, s, axes, norm)
    args = (a.real, a.imag) if complex_input else (a,)
    y = _TRANSFORMS(kind=kind, name=name, in_shape=plan.in_shape, s=plan.s, axes=plan.axes,
                    norm=norm, complex_input=complex_input)(*args)
    return ComplexActive(y[0], y[1]) if plan.complex_output else y


def _conjugate(z):
    return ComplexActive(z.real, -z.imag) if isinstance(z, ComplexActive) else z


def hermitian(inverse, name, a, s, axes, norm, out):
    """``hfftn`` (``inverse`` False) or ``ihfftn`` as NumPy defines them:
    ``irfftn(conj(a))`` and ``conj(rfftn(a))``, each with the dual norm."""
    if norm not in DUAL:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    if not inverse:
        return transform("irfftn", name, _conjugate(a), s, axes, DUAL[norm], out)
    return _conjugate(transform("rfftn", name, a, s, axes, DUAL[norm], out))


def _hermitian_one_axis(inverse, name):
    def call(a, n=None, axis=-1, norm=None, out=None):
        return hermitian(inverse, name, a, None if n is None else (n,), (axis,), norm, out)
    call.__name__ = name.rsplit(".", 1)[1]
    return call


def _one_axis(kind, name):
    def call(a, n=None, axis=-1, norm=None, out=None):
        return transform(kind, name, a, None if n is None else (n,), (axis,), norm, out)
    call.__name__ = name.rsplit(".", 1)[1]
    return call


def _axes(kind, name, default_axes):
    def call(a, s=None, axes=default_axes, norm=None, out=None):
        return transform(kind, name, a, s, axes, norm, out)
    call.__name__ = name.rsplit(".", 1)[1]
    return call


FUNCTIONS = {}
for _kind, _one, _two, _n in (("fftn", "fft", "fft2", "fftn"), ("ifftn", "ifft", "ifft2", "ifftn"),
                              ("rfftn", "rfft", "rfft2", "rfftn"),
                              ("irfftn", "irfft", "irfft2", "irfftn")):
    FUNCTIONS[getattr(np.fft, _one)] = _one_axis(_kind, f"numpy.fft.{_one}")
    FUNCTIONS[getattr(np.fft, _two)] = _axes(_kind, f"numpy.fft.{_two}", (-2, -1))
    FUNCTIONS[getattr(np.fft, _n)] = _axes(_kind, f"numpy.fft.{_n}", None)
FUNCTIONS[np.fft.hfft] = _hermitian_one_axis(False, "numpy.fft.hfft")
FUNCTIONS[np.fft.ihfft] = _hermitian_one_axis(True, "numpy.fft.ihfft")
