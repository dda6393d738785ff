"""SciPy's real-to-real transforms (DCT and DST of types 1-4, their
inverses and n-dimensional forms) of active arrays.

Each call is one recorded linear op of the built-in family
``scipy.fft.r2r`` (saved in tape files by its parameters), whose value and
tangent are SciPy's transform itself and whose adjoint is the transpose
computed with another transform, O(n log n).

Adjoint. Along one axis of length N, every variant (forward type t, any
``norm`` and ``orthogonalize``) is M = c diag(u) O_t diag(v), where O_t is
the orthonormal transform (``norm="ortho", orthogonalize=True``), c a
scale and u, v vectors of ones but at the end points that
``orthogonalize`` rescales by sqrt(2):

- c = s / f with f = 1/sqrt(2(N-1)) (DCT-I), 1/sqrt(2(N+1)) (DST-I),
  1/sqrt(2N) (others) and s = 1, f, f^2 for norm backward, ortho, forward;
- without orthogonalization, u = 1/r_out and v = 1/r_in, where the
  orthogonalization multiplies the inputs by r_in and the outputs by r_out
  (DCT-I: x_0, x_{N-1} by sqrt(2) and y_0, y_{N-1} by 1/sqrt(2); DCT-II:
  y_0 by 1/sqrt(2); DCT-III: x_0 by sqrt(2); DST-II: y_{N-1} by
  1/sqrt(2); DST-III: x_{N-1} by sqrt(2)); with it, u = v = 1.

O_t is orthogonal and its transpose is the orthonormal transform of the
inverse type (II <-> III; I and IV are symmetric), so M^T w = c v O_t'(u w).
The inverse transform of type t with ``norm`` is the forward one of type
t' with the dual norm (backward <-> forward). Several axes: the product of
the per-axis maps; a length ``s`` other than the input's pads or truncates
the input first, whose adjoint truncates or pads back. These identities
are checked against the transposed matrices of all 128 variants in
tests/scipy/test_fft_r2r.py.

References
----------
SciPy's ``scipy.fft.dct`` and ``scipy.fft.dst`` documentation (definitions
of the types, normalisations and orthogonalisation).
"""
import numpy as np
import scipy.fft
from scipy.fft._pocketfft.helper import _init_nd_shape_and_axes

from .._active import Active
from .._np.complex import ComplexActive
from .._np.fft import DUAL, axes_pattern, resize
from ..errors import UnsupportedOperation
from ..primitives import BuiltinFamily, Primitive

INVERSE_TYPE = {1: 1, 2: 3, 3: 2, 4: 4}


def factors(kind, type, n, norm, orthogonalize):
    """(c, u, v) of the forward transform ``kind`` of ``type`` and length
    ``n``: the transform is c diag(u) O diag(v), O orthonormal."""
    if (kind, type) == ("dct", 1):
        m = n - 1
    elif (kind, type) == ("dst", 1):
        m = n + 1
    else:
        m = n
    f = np.sqrt(0.5 / m)
    s = {None: 1.0, "backward": 1.0, "ortho": f, "forward": f * f}[norm]
    u, v = np.ones(n), np.ones(n)
    if not orthogonalize:               # undo the end-point factors of O
        root2 = np.sqrt(2.0)
        if (kind, type) == ("dct", 1):
            u[[0, -1]], v[[0, -1]] = root2, 1 / root2
        elif (kind, type) == ("dct", 2):
            u[0] = root2
        elif (kind, type) == ("dct", 3):
            v[0] = 1 / root2
        elif (kind, type) == ("dst", 2):
            u[-1] = root2
        elif (kind, type) == ("dst", 3):
            v[-1] = 1 / root2
    return s / f, u, v


class R2R:
    """One call's plan: ``kind`` (dct, dst), ``inverse``, ``type``, input
    shape, lengths ``s`` along ``axes``, ``norm`` and ``orthogonalize``
    (None: SciPy's default, True for norm "ortho")."""

    def __init__(self, kind, inverse, type, in_shape, s, axes, norm, orthogonalize):
        self.kind, self.inverse, self.type = kind, inverse, type
        self.in_shape, self.s, self.axes, self.norm = in_shape, s, axes, norm
        self.orthogonalize = orthogonalize

    @property
    def out_shape(self):
        out = list(self.in_shape)
        for ax, n in zip(self.axes, self.s):
            out[ax] = n
        return tuple(out)

    def forward(self, x):
        fn = getattr(scipy.fft, f"{'i' if self.inverse else ''}{self.kind}n")
        return fn(x, type=self.type, s=self.s, axes=self.axes, norm=self.norm,
                  orthogonalize=self.orthogonalize)

    def adjoint(self, w):
        """M^T w, shaped like the input."""
        if self.inverse:
            type, norm = INVERSE_TYPE[self.type], DUAL[self.norm]
        else:
            type, norm = self.type, self.norm
        orth = self.norm == "ortho" if self.orthogonalize is None else self.orthogonalize
        scale, u_of, v_of = 1.0, [], []
        for ax, n in zip(self.axes, self.s):
            c, u, v = factors(self.kind, type, n, norm, orth)
            scale *= c
            along = (-1,) + (1,) * (len(self.in_shape) - 1 - ax)
            u_of.append(u.reshape(along))
            v_of.append(v.reshape(along))
        for u in u_of:
            w = w * u
        g = getattr(scipy.fft, f"{self.kind}n")(w, type=INVERSE_TYPE[type], axes=self.axes,
                                                 norm="ortho", orthogonalize=True)
        for v in v_of:
            g = g * v
        return resize(g * scale, self.in_shape)


def _primitive(plan, name):
    def value(x):
        return plan.forward(x)

    def jvp(args, out, tangents):
        t = tangents[0]
        return plan.forward(np.zeros(plan.in_shape) if t is None else t)

    def vjp(args, out, out_adjoint):
        return (plan.adjoint(out_adjoint),)

    prim = Primitive(value, jvp=jvp, vjp=vjp, name=name, linear=True)
    prim.local_pattern = lambda: [axes_pattern(plan.in_shape, plan.out_shape, plan.axes)]
    return prim


def _ints(v):
    return isinstance(v, (list, tuple)) and all(type(n) is int for n in v)


def _planned(kind, inverse, type, name, in_shape, s, axes, norm, orthogonalize):
    """The op of one transform from its plan's parameters (what tape files
    save of it), checked as a file's are."""
    if kind not in ("dct", "dst") or type not in (1, 2, 3, 4) or type.__class__ is not int \
            or not isinstance(inverse, bool) or not isinstance(name, str) \
            or norm not in DUAL or orthogonalize not in (None, True, False) \
            or not all(_ints(v) for v in (in_shape, s, axes)) or len(s) != len(axes) \
            or len(in_shape) > 64 or min(in_shape, default=0) < 0 \
            or not all(0 <= a < len(in_shape) for a in axes) or len(set(axes)) != len(axes) \
            or min(s, default=1) < (2 if (kind, type) == ("dct", 1) else 1):
        raise ValueError(f"the transform {kind!r} {name!r} {in_shape!r} {s!r} {axes!r} is not "
                         f"one scipy.fft makes")
    plan = R2R(kind, inverse, type, tuple(in_shape), tuple(s), tuple(axes), norm, orthogonalize)
    return _primitive(plan, name)


_FAMILY = BuiltinFamily("scipy.fft.r2r", 1, _planned)


def transform(kind, inverse, name, x, type=2, s=None, axes=None, norm=None,
              orthogonalize=None):
    """``scipy.fft.{i}{dct,dst}n`` of an active ``x`` (``s``, ``axes``
    resolved as SciPy does)."""
    if isinstance(x, ComplexActive):
        # SciPy transforms both parts, leaving ``orthogonalize`` at its
        # default (SciPy 1.17 does not pass it on for complex input)
        return ComplexActive(transform(kind, inverse, name, x.real, type, s, axes, norm),
                             transform(kind, inverse, name, x.imag, type, s, axes, norm))
    if not isinstance(x, Active):
        raise UnsupportedOperation(f"adsim: {name} of a plain array with active arguments "
                                   f"(type, n, s, axes) is not supported; pass plain integers")
    if type not in (1, 2, 3, 4) or isinstance(type, bool):
        raise ValueError(f"adsim: {name}: type must be 1, 2, 3 or 4, got {type!r}")
    if norm not in DUAL:
        raise ValueError(f'Invalid norm value {norm!r}, should be "backward", "ortho" or '
                         f'"forward"')
    shape, axes = _init_nd_shape_and_axes(np.broadcast_to(0.0, x.shape), s, axes)
    if len(axes) == 0:
        return x
    if len(set(axes)) != len(axes):
        raise ValueError(f"adsim: {name}: axes {tuple(axes)} has a repeated axis")
    if (kind, int(type)) == ("dct", 1) and min(shape) < 2:
        raise ValueError("DCT-I is not defined for size < 2")
    return _FAMILY(kind=kind, inverse=inverse, type=int(type), name=name,
                   in_shape=[int(n) for n in x.shape], s=[int(n) for n in shape],
                   axes=[int(a) for a in axes], norm=norm,
                   orthogonalize=None if orthogonalize is None else bool(orthogonalize))(x)


def one_axis(kind, inverse, name, x, type=2, n=None, axis=-1, norm=None, orthogonalize=None):
    """``scipy.fft.{i}{dct,dst}`` of an active ``x``."""
    return transform(kind, inverse, name, x, type, None if n is None else (n,), (axis,), norm,
                     orthogonalize)
