"""The linear solves of the implicit methods' Newton iterations, as
primitives that keep their factorisations: what the dense and the sparse
Jacobian share.

The Newton matrices are formed from the Jacobian ``J`` and one or two
coefficients exactly as SciPy forms them:

    shifted            A = c I - J                   (Radau, real system)
    shifted_complex    A = (alpha + i beta) I - J    (Radau, complex system)
    identity_minus     A = I - c J                   (BDF)

A factorisation is kept, keyed by the exact matrix (its coefficients and
the Jacobian's values), so the Newton iterations of a step, its error
estimate, and the tangent and adjoint rules of all those solves share one
factorisation, as SciPy reuses its factors while the step size and the
Jacobian stay. The complex system is solved in complex arithmetic, as in
SciPy; right-hand sides and solutions are stacked ``[real part, imaginary
part]`` (a tape holds real numbers).

Inside a recording each solve ``x = A^{-1} b`` is one op (a primitive):

    tangent:  dx = A^{-1} (db - dA x)
    adjoint:  u = A^{-T} x_bar (A^{-H} for the complex system) is b's adjoint,
              and every coefficient p of A gets  -Re(u^H (dA/dp) x)

The transposed solve ``y = A^{-T} w`` is a primitive with the mirrored rules
(its adjoint solves with A; its coefficient adjoints are
``-Re(y^H (dA/dp) w_bar)``). Both rules are written with these primitives
and NumPy operations, so they can be recorded: derivatives of higher order
differentiate them. A second-order sweep runs the tangent of the adjoint
rule directly (:meth:`_FlatRules.soadjoint`), with solves by the same
factors.

A storage (:class:`NewtonSolves` subclass) says how ``J`` is held (a dense
array, or values on a sparse pattern), how a matrix is factored and
solved, and how products with ``J`` and outer products on its entries are
formed. The dense storage also gives its solves compiled rules
(``Primitive.compiled``): replays compute their values and adjoints in C.
"""
import numpy as np

from ..primitives import Primitive
from ._kept import Kept

__all__ = ["NewtonSolves", "FORMS", "SINGULAR", "KEPT_FACTORS", "KEPT_SOLUTIONS",
           "KEPT_SOLUTION_BYTES"]

KEPT_FACTORS = 8
"""Factorisations kept per problem (the dense storage: per problem and
thread, adsim/_ops/dense_newton.pxi): a Radau step uses two (real and
complex), BDF one; a few more cover the retried steps of a reverse sweep."""

KEPT_SOLUTIONS = 64
"""Solutions kept per problem, by matrix and right-hand side (a storage that
solves in Python: the sparse one). A replay of a recorded step tries its
variants (Newton iteration counts, rejections) in turn and runs each up to
where its path leaves the step's, and the checkpointing replays steps from
their snapshots: on the 2-D Brusselator of the stiff test set a BDF
gradient asks for each solution about 2.8 times (3 376 distinct solutions
of 9 446 requests)."""

KEPT_SOLUTION_BYTES = 32 * 2 ** 20
"""Beyond :data:`KEPT_SOLUTIONS`, solutions are kept while together with
their right-hand sides they take at most this many bytes. The reverse
sweep replays each step forward (from a snapshot, then taped) before its
adjoint, and these replays solve what the forward sweep solved: kept, they
are looked up, and need neither a solve nor the factors. On the 2-D
Brusselator of the stiff test set (512 states) a BDF gradient's distinct
solutions and right-hand sides take 23 MB: with them kept, it solves each
once (4 758 SuperLU solves before, 3 376 after)."""

SINGULAR = "singular"
"""The factorisation of a matrix that is singular or not finite: solutions
with it are NaN, which the methods treat as a failed Newton iteration, as
SciPy's dense solvers do with the NaNs of a singular LU."""


def _solution_bytes(key, x):
    """The bytes of a kept solution and of its key's right-hand side."""
    return x.nbytes + len(key[2])


class _Shifted:
    """``A = c I - J``; coefficients ``(c,)``."""

    name = "shifted"
    complex = False

    @staticmethod
    def matrix(J, I, c):
        return c * I - J

    @staticmethod
    def derivative_times(times, data, d_data, scalars, dots, x, transposed):
        """``dA x`` (``dA^T x``), ``times(M, v, transposed)`` the product with J."""
        (dc,) = dots
        r = dc * x
        return r if d_data is None else r - times(d_data, x, transposed)

    @staticmethod
    def adjoints(pair, data, scalars, u, v):
        """(data adjoint, c adjoint) of ``-u^T A(data, c) v``."""
        return pair(u, v), -np.dot(u, v)

    @staticmethod
    def adjoints_tangent(pair, data, scalars, u, v, d_data, dots):
        """The tangent of :meth:`adjoints` for tangents of ``data`` and the
        coefficients alone (they are bilinear in ``u, v`` besides), or None."""
        return None


class _IdentityMinus:
    """``A = I - c J``; coefficients ``(c,)``."""

    name = "identity_minus"
    complex = False

    @staticmethod
    def matrix(J, I, c):
        return I - c * J

    @staticmethod
    def derivative_times(times, data, d_data, scalars, dots, x, transposed):
        (c,), (dc,) = scalars, dots
        r = -dc * times(data, x, transposed)
        return r if d_data is None else r - c * times(d_data, x, transposed)

    @staticmethod
    def adjoints(pair, data, scalars, u, v):
        (c,) = scalars
        uv = pair(u, v)
        return c * uv, np.sum(uv * data)

    @staticmethod
    def adjoints_tangent(pair, data, scalars, u, v, d_data, dots):
        (dc,) = dots
        uv = pair(u, v)
        return dc * uv, 0.0 if d_data is None else np.sum(uv * d_data)


class _ShiftedComplex:
    """``A = (alpha + i beta) I - J``; coefficients ``(alpha, beta)``; right-hand
    sides and solutions are stacked ``[real part, imaginary part]``."""

    name = "shifted_complex"
    complex = True

    @staticmethod
    def matrix(J, I, alpha, beta):
        return complex(alpha, beta) * I - J

    @staticmethod
    def derivative_times(times, data, d_data, scalars, dots, x, transposed):
        """``dA x``, or ``dA^H x`` (the conjugate of ``d_beta``), stacked."""
        d_alpha, d_beta = dots
        n = x.shape[0] // 2
        xr, xi = x[:n], x[n:]
        if transposed:
            d_beta = -d_beta
        re, im = d_alpha * xr - d_beta * xi, d_alpha * xi + d_beta * xr
        if d_data is not None:
            re, im = re - times(d_data, xr, transposed), im - times(d_data, xi, transposed)
        return np.concatenate([re, im])

    @staticmethod
    def adjoints(pair, data, scalars, u, v):
        n = u.shape[0] // 2
        ur, ui, vr, vi = u[:n], u[n:], v[:n], v[n:]
        return (pair(ur, vr) + pair(ui, vi), -(np.dot(ur, vr) + np.dot(ui, vi)),
                np.dot(ur, vi) - np.dot(ui, vr))

    @staticmethod
    def adjoints_tangent(pair, data, scalars, u, v, d_data, dots):
        return None


FORMS = (_Shifted, _IdentityMinus, _ShiftedComplex)
FORM_NAMES = {form.name: form for form in FORMS}


class NewtonSolves:
    """The Newton solves of one problem of ``n`` equations, with their
    factorisations kept. A subclass gives the storage of ``J``:
    ``label`` (for the primitives' names), :meth:`matrix`,
    :meth:`identity`, :meth:`factorised` and :meth:`solve_factored` (or its
    own :meth:`_solve`), :meth:`times` and :meth:`pair`, and adopts the
    primitives into its tape-file family (:meth:`adopt`)."""

    label = ""

    def __init__(self, n):
        self.n = n
        self._factors = self.kept_factors()
        self._solutions = Kept(KEPT_SOLUTIONS, KEPT_SOLUTION_BYTES, _solution_bytes)
        self._last_values = b""
        self._solves = {}
        for form in FORMS:
            for transposed in (False, True):
                kind = "transposed " if transposed else ""
                self._solves[form, transposed] = self.adopt(Primitive(
                    self._value(form, transposed), jvp=self._jvp(form, transposed),
                    vjp=self._vjp(form, transposed),
                    name=f"solve_ivp's {self.label} {kind}Newton solve ({form.name})"),
                    form.name, transposed)
                self._solves[form, transposed].flat = _FlatRules(self, form, transposed)

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

    # ---- factors ------------------------------------------------------------------
    def _solve(self, form, data, scalars, b, transposed):
        """``A^{-1} b`` (``A^{-T} b``, ``A^{-H} b`` for the complex form) for the
        matrix of ``form`` at J's values ``data`` and the coefficients
        ``scalars`` (floats), with the kept factors; a solve repeated while
        its solution is kept (:data:`KEPT_SOLUTIONS`) is looked up, without
        the matrix's factors."""
        matrix = self._matrix_key(form, data, scalars)
        b = np.ascontiguousarray(b, dtype=float)
        key = (matrix, transposed, b.tobytes())
        x = self._solutions.get(key)
        if x is None:
            lu = self._factor(matrix, form, data, scalars)
            x = self._solutions.put(key, self._solve_with(form, lu, b, transposed))
        return x.copy()

    def _matrix_key(self, form, data, scalars):
        """The key of the matrix of ``form`` at ``data`` and ``scalars``: its
        name, coefficients and J's values as bytes. The values' bytes are
        those of the previous key when equal (J stays over many steps), so
        that their hash, which Python keeps with them, is computed once."""
        values = np.ascontiguousarray(data, dtype=float).tobytes()
        last = self._last_values
        if values == last:
            values = last
        else:
            self._last_values = values
        return form.name, scalars, values

    @staticmethod
    def kept_factors():
        """The cache of factorisations (:class:`Kept`)."""
        return Kept(KEPT_FACTORS)

    def kept_factorisations(self):
        """How many factorisations are kept now."""
        return len(self._factors._values)

    def _factor(self, key, form, data, scalars):
        """The factors of the matrix of ``form`` for J's values ``data`` and
        the coefficients ``scalars`` (floats); ``key`` is its
        :meth:`_matrix_key`."""
        lu = self._factors.get(key)
        if lu is None:
            data = np.ascontiguousarray(data, dtype=float)
            with np.errstate(all="ignore"):
                lu = self._factors.put(key, self.factorised(
                    self.newton_matrix(form, data, scalars), form.complex))
        return lu

    def newton_matrix(self, form, data, scalars):
        """The matrix of ``form`` at J's values ``data`` and the coefficients
        ``scalars``, as :meth:`factorised` takes it."""
        return form.matrix(self.matrix(data), self.identity(), *scalars)

    def _solve_with(self, form, lu, b, transposed):
        """``A^{-1} b`` (``A^{-T} b``, ``A^{-H} b`` for the complex form)."""
        if lu is SINGULAR:
            return np.full(np.shape(b), np.nan)
        b = np.asarray(b, dtype=float)
        if form.complex:
            x = self.solve_factored(lu, b[:self.n] + 1j * b[self.n:], transposed)
            return np.concatenate([x.real, x.imag])
        return self.solve_factored(lu, b, transposed)

    # ---- rules ------------------------------------------------------------------
    def _value(self, form, transposed):
        def value(data, *rest):
            scalars, b = tuple(float(s) for s in rest[:-1]), rest[-1]
            return self._solve(form, data, scalars, b, transposed)
        return value

    def _jvp(self, form, transposed):
        def jvp(args, out, tangents):
            data, scalars = args[0], args[1:-1]
            d_data, d_scalars, d_b = tangents[0], tangents[1:-1], tangents[-1]
            dots = [0.0 if d is None else d for d in d_scalars]
            with np.errstate(all="ignore"):          # NaNs of a singular matrix pass on
                dA_x = form.derivative_times(self.times, data, d_data, scalars, dots, out,
                                             transposed)
            r = -dA_x if d_b is None else d_b - dA_x
            return self._solves[form, transposed](data, *scalars, r)
        return jvp

    def _vjp(self, form, transposed):
        def vjp(args, out, out_adjoint):
            data, scalars = args[0], args[1:-1]
            u = self._solves[form, not transposed](data, *scalars, out_adjoint)
            # -Re(u^H dA v) with u the left and v the right vector of the bilinear form
            left, right = (out, u) if transposed else (u, out)
            adjoints = form.adjoints(self.pair, data, scalars, left, right)
            return tuple(adjoints) + (u,)
        return vjp


class _FlatRules:
    """The value and the reverse-sweep adjoint of one Newton solve on the
    op's flat arrays (``Primitive.flat``): what the primitive's rules
    compute, without the generic handling of user rules, since a reverse
    sweep replays thousands of these solves; and the second-order adjoint,
    which a primitive otherwise computes by recording its vjp rule and
    sweeping that tape's tangent (once per solve and sweep). Tangents go
    through the primitive's rules. (The dense storage's solves also carry
    compiled values and adjoints, which replays run instead of these.)"""

    def __init__(self, solves, form, transposed):
        self.solves, self.form, self.transposed = solves, form, transposed

    def _parts(self, flat_args):
        data, b = flat_args[0], flat_args[-1]
        return data, tuple(float(s[0]) for s in flat_args[1:-1]), b

    def value(self, flat_args):
        data, scalars, b = self._parts(flat_args)
        return self.solves._solve(self.form, data, scalars, b, self.transposed)

    def adjoint(self, flat_args, result, adjoint, in_shapes):
        """Per argument, its adjoint for each direction (row) of ``adjoint``:
        ``u`` solves the transposed system for the row, the coefficients
        get ``-Re(u^H dA/dp x)``; a zero row gives exactly zero."""
        solves, form = self.solves, self.form
        data, scalars, b = self._parts(flat_args)
        data = data.reshape(in_shapes[0])
        out = [np.zeros((adjoint.shape[0], a.size)) for a in flat_args]
        for j, row in enumerate(adjoint):
            if not row.any():
                continue
            with np.errstate(all="ignore"):          # NaNs of a singular matrix pass on
                u = solves._solve(form, data, scalars, row, not self.transposed)
                left, right = (result, u) if self.transposed else (u, result)
                parts = form.adjoints(solves.pair, data, scalars, left, right)
            for k, part in enumerate(tuple(parts) + (u,)):
                out[k][j] = np.ravel(part)
        return out

    def soadjoint(self, flat_args, result, tangents, adjoint, adjoint_tangents, in_shapes):
        """The adjoint of every argument for the output's ``adjoint`` (as
        :meth:`adjoint`) and its tangent for each direction (row) of the
        arguments' ``tangents`` (None: none) and of ``adjoint_tangents``:
        the tangent of the vjp rule, by solves with the same factors,

            x' = A^{-1} (b' - A' x)            the output's tangent
            u  = A^{-T} x_bar,   u' = A^{-T} (x_bar' - A'^T u)

        (``A^{-H}`` for the complex form; mirrored for the transposed
        solve), b's adjoint tangent ``u'`` and the coefficients' the tangent
        of ``form.adjoints`` (bilinear in ``u`` and ``x``). What recording the
        vjp rule and sweeping its tangent gives, without recording it."""
        solves, form, transposed = self.solves, self.form, self.transposed
        data, scalars, b = self._parts(flat_args)
        data = data.reshape(in_shapes[0])
        p = adjoint_tangents.shape[0]
        adots = [np.zeros((p, a.size)) for a in flat_args]
        if not adjoint.any() and not adjoint_tangents.any():
            return [np.zeros(a.size) for a in flat_args], adots
        pair = solves.pair
        with np.errstate(all="ignore"):              # NaNs of a singular matrix pass on
            u = solves._solve(form, data, scalars, adjoint, not transposed)
            left, right = (result, u) if transposed else (u, result)
            adjs = [np.ravel(a) for a in form.adjoints(pair, data, scalars, left, right)] + [u]
            for j in range(p):
                d_data = None if tangents[0] is None else tangents[0][j].reshape(in_shapes[0])
                dots = [0.0 if t is None else float(t[j][0]) for t in tangents[1:-1]]
                d_b = None if tangents[-1] is None else tangents[-1][j]
                x_dot = self._tangent_solve(data, scalars, d_data, dots, result, d_b,
                                            transposed)
                u_dot = self._tangent_solve(data, scalars, d_data, dots, u,
                                            adjoint_tangents[j], not transposed)
                left_dot, right_dot = (x_dot, u_dot) if transposed else (u_dot, x_dot)
                parts = [np.ravel(a) + np.ravel(c) for a, c in zip(
                    form.adjoints(pair, data, scalars, left_dot, right),
                    form.adjoints(pair, data, scalars, left, right_dot))]
                own = form.adjoints_tangent(pair, data, scalars, left, right, d_data, dots)
                if own is not None:
                    parts = [a + np.ravel(c) for a, c in zip(parts, own)]
                for k, part in enumerate(parts + [u_dot]):
                    adots[k][j] = part
        return adjs, adots

    def _tangent_solve(self, data, scalars, d_data, dots, x, d_b, transposed):
        """The tangent of ``x = A^{-1} b`` (``A^{-T}``: ``transposed``): ``A^{-1}
        (b' - A' x)``, with the kept factors (the jvp rule, on plain arrays)."""
        dA_x = self.form.derivative_times(self.solves.times, data, d_data, scalars, dots, x,
                                          transposed)
        r = -dA_x if d_b is None else d_b - dA_x
        return self.solves._solve(self.form, data, scalars, r, transposed)
