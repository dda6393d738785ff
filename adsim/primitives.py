"""User-registered primitives: a function adsim records as one op whose
derivative rules are given in Python (for compiled code, solvers, or
functions adsim has no rule for). One Python call per op and sweep.

Example::

    def f_value(x):                       # any code on plain NumPy arrays
        return np.fft.irfft(np.fft.rfft(x) * kernel, n=x.size)

    def f_jvp(args, out, tangents):       # tangents[i] is None for constants
        (dx,) = tangents
        return f_value(dx)                # linear: J dx = f(dx)

    def f_vjp(args, out, out_adjoint):    # one adjoint per argument
        return (np.fft.irfft(np.fft.rfft(out_adjoint) * kernel.conj(), n=out_adjoint.size),)

    conv = adsim.primitive(f_value, jvp=f_jvp, vjp=f_vjp, name="conv")
    adsim.grad(lambda x: np.sum(conv(x) ** 2))(x0)

Second-order sweeps (``hvp``) differentiate the vjp rule itself by recording
it, so a vjp written with NumPy operations adsim supports gives exact
Hessian-vector products with no further work.
"""
import numpy as np

from ._creation import suspended
from ._tape import Active, Opcode as Op, wrap
from .errors import UnsupportedOperation


class Primitive:
    """A function recorded as one CALLBACK op with user-given rules."""

    def __init__(self, value, jvp=None, vjp=None, name=None, linear=False):
        self.value = value
        self.jvp = jvp
        self.vjp = vjp
        self.linear = linear
        self.name = name or getattr(value, "__name__", "primitive")

    def __repr__(self):
        return f"<adsim.primitive {self.name}>"

    def __call__(self, *args):
        if not any(isinstance(a, Active) for a in args):
            return self.value(*args)
        from ._np.core import constant, tape_of
        tape = tape_of(*args)
        refs, shapes = [], []
        for a in args:
            if isinstance(a, Active):
                refs.append(a.slot)
                shapes.append(a.shape)
            else:
                arr = constant(a)
                refs.append(tape.const_ref(arr))
                shapes.append(arr.shape)
        plain = [tape.slot_value(r).reshape(s) for r, s in zip(refs, shapes)]
        with suspended():          # the rule runs on plain arrays
            out = np.asarray(self.value(*plain), dtype=np.float64)
        app = Application(self, shapes, out.shape, first_value=out)
        cb = tape.add_callback(app)
        slot = tape.record_op(int(Op.CALLBACK), out.size, [cb, len(refs)] + refs)
        return wrap(tape, slot, out.shape)


def primitive(value, *, jvp=None, vjp=None, name=None, linear=False):
    """Make ``value`` (a function of plain arrays returning one array) a
    primitive with forward rule ``jvp(args, out, tangents)`` and reverse rule
    ``vjp(args, out, out_adjoint)``. Either rule may be omitted; sweeps that
    need a missing rule raise ``UnsupportedOperation``. ``linear=True``
    declares the function linear in its active arguments (an FFT, a linear
    solve with a constant matrix): its second derivative is zero, so
    Hessian-vector products need only the vjp rule."""
    return Primitive(value, jvp=jvp, vjp=vjp, name=name, linear=linear)


class Application:
    """One recorded call of a Primitive: the protocol of the CALLBACK kernel
    (flat float64 arrays in, flat arrays out; see adsim/_ops/callback.pxi)."""

    def __init__(self, prim, in_shapes, out_shape, first_value=None):
        self.prim = prim
        self.in_shapes = in_shapes
        self.out_shape = out_shape
        self._first_value = first_value

    def _args(self, flat_args):
        return [a.reshape(s) for a, s in zip(flat_args, self.in_shapes)]

    def value(self, flat_args):
        if self._first_value is not None:      # computed while recording
            out, self._first_value = self._first_value, None
            return out.reshape(-1)
        with suspended():
            return np.asarray(self.prim.value(*self._args(flat_args)), dtype=np.float64).reshape(-1)

    def _rule(self, kind):
        rule = getattr(self.prim, kind)
        if rule is None:
            mode = "forward mode (jvp, jacobian columns)" if kind == "jvp" else "reverse mode (grad, vjp)"
            raise UnsupportedOperation(f"adsim: primitive `{self.prim.name}` has no {kind} rule, "
                                       f"which {mode} needs; pass {kind}= to adsim.primitive")
        return rule

    def tangent(self, flat_args, result, tangents):
        jvp = self._rule("jvp")
        args = self._args(flat_args)
        out = result.reshape(self.out_shape)
        p = next(t.shape[0] for t in tangents if t is not None) if any(
            t is not None for t in tangents) else 1
        rows = []
        for j in range(p):
            tj = [None if t is None else t[j].reshape(s) for t, s in zip(tangents, self.in_shapes)]
            with suspended():
                rows.append(np.asarray(jvp(args, out, tj), dtype=np.float64).reshape(-1))
        return np.stack(rows)

    def adjoint(self, flat_args, result, adjoint):
        vjp = self._rule("vjp")
        args = self._args(flat_args)
        out = result.reshape(self.out_shape)
        per_arg = [[] for _ in args]
        for j in range(adjoint.shape[0]):
            with suspended():
                adj = vjp(args, out, adjoint[j].reshape(self.out_shape))
            for i, a in enumerate(adj):
                per_arg[i].append(None if a is None else
                                  np.broadcast_to(np.asarray(a, dtype=np.float64),
                                                  self.in_shapes[i]).reshape(-1))
        return [None if any(a is None for a in col) else np.stack(col) for col in per_arg]

    def soadjoint(self, flat_args, result, tangents, adjoint, adjoint_tangents):
        """Adjoint, and its tangent: the tangent of the vjp rule in the
        direction (arg tangents, result tangent, adjoint tangent), computed by
        recording the vjp rule and running its tangent sweep."""
        from ._recording import record
        vjp = self._rule("vjp")
        p = adjoint_tangents.shape[0]
        if self.prim.linear:       # no curvature: the adjoint tangents are a vjp
            adjs = self.adjoint(flat_args, result, adjoint.reshape(1, -1))
            adots = self.adjoint(flat_args, result, adjoint_tangents)
            return [None if a is None else a[0] for a in adjs], adots
        self._rule("jvp")
        args = self._args(flat_args)
        out = result.reshape(self.out_shape)
        zeros = [np.zeros((p, a.size)) for a in args]
        arg_t = [z if t is None else t for z, t in zip(zeros, tangents)]
        out_t = self.tangent(flat_args, result, arg_t)
        n_args = len(args)

        def flat_vjp(*xs):
            adj = vjp(list(xs[:n_args]), xs[n_args], xs[n_args + 1])
            from ._np.core import reshaped
            pieces = [reshaped(a, (-1,)) if isinstance(a, Active) else np.ravel(a) * 0.0
                      for a in adj]
            return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
        try:
            tape = record(flat_vjp, *args, out, adjoint.reshape(self.out_shape))
        except (UnsupportedOperation, TypeError) as err:
            raise UnsupportedOperation(
                f"adsim: second-order sweeps through primitive `{self.prim.name}` differentiate "
                f"its vjp rule, which could not be recorded ({err}); write the vjp with NumPy "
                f"operations adsim supports") from err
        V = arg_t + [out_t, adjoint_tangents]
        xs = args + [out, adjoint.reshape(self.out_shape)]
        _, dadj = tape._tangent(tape._inputs(xs), [np.ascontiguousarray(v) for v in V])
        with suspended():
            adj = vjp(args, out, adjoint.reshape(self.out_shape))
        sizes = np.cumsum([0] + [a.size for a in args])
        adjs = [None if a is None else np.broadcast_to(np.asarray(a, float), s).reshape(-1)
                for a, s in zip(adj, self.in_shapes)]
        adots = [dadj[:, sizes[i]:sizes[i + 1]] for i in range(n_args)]
        return adjs, adots
