"""Sparse Jacobians and Hessians by compressed vector-mode sweeps.

A plan records the function once, detects the sparsity pattern on the tape
(:mod:`adsim.sparse.pattern`), colors it (:mod:`adsim.coloring`) and keeps
the seed matrices and the recovery. Each call then runs ONE compressed sweep
of the tape in C -- ``J S`` by a tangent sweep with one direction per color,
``W^T J`` by an adjoint sweep with one weight per color, or both for a
bicoloring; ``H S`` by a second-order adjoint sweep -- and reads the nonzeros
out of the compressed product into a CSR matrix. No dense ``m x n`` array is
formed. When a recorded comparison comes out differently at a new point
(:class:`adsim.BranchChanged`) the plan records, detects and colors again.

References
----------
.. [1] A. R. Curtis, M. J. D. Powell and J. K. Reid, "On the estimation of
   sparse Jacobian matrices", IMA J. Appl. Math. 13, 117-119, 1974.
.. [2] T. F. Coleman and A. Verma, "The efficient computation of sparse
   Jacobian matrices using automatic differentiation", SIAM J. Sci. Comput.
   19(4), 1210-1233, 1998.
.. [3] A. H. Gebremedhin, F. Manne and A. Pothen, "What color is your
   Jacobian? Graph coloring for computing derivatives", SIAM Review 47(4),
   629-705, 2005.
.. [4] A. Walther, "Computing sparse Hessians with automatic
   differentiation", ACM Trans. Math. Software 34(1), 2008.
.. [5] S. Hossain and T. Steihaug, "Computing a sparse Jacobian matrix by
   rows and columns", Optim. Methods Softw. 10(1), 33-48, 1998.
"""
import threading
import time

import numpy as np
import scipy.sparse as sp

from adsim._record.recording import record
from adsim._validate import given
from adsim.errors import BranchChanged, InvalidArgnums, InvalidArgumentValue, NotPicklable
from adsim.sparse.arguments import Argument
from adsim.sparse.bicoloring import JACOBIAN_ORDERS, bicoloring, jacobian_coloring
from adsim.sparse.coloring import Bicoloring, column_coloring, compact, row_coloring
from adsim.sparse.orderings import twin_positions
from adsim.sparse.pattern import hessian_pattern, jacobian_pattern
from adsim.sparse.recovery import NEUTRAL, recovery_for
from adsim.sparse.results import Structure, on_pattern
from adsim.sparse.symmetric import best_acyclic_coloring, best_star_coloring

__all__ = ["SparseHessianPlan", "SparseJacobianPlan", "choose_jacobian_coloring", "jacobian_cost",
           "sparse_hessian", "sparse_hessian_plan", "sparse_jacobian", "sparse_jacobian_plan",
           "split_bicoloring"]

REVERSE_WEIGHT = 1.5
"""Cost of one adjoint direction relative to one tangent direction."""

SWEEP_COST = 1.0
"""Fixed cost of one sweep (its values), in tangent directions."""

BICOLORING_ABOVE = 8
"""Bicolorings are tried when the best one-sided coloring needs more colors."""

DENSE_LINE = 256
"""Rows or columns with more entries make full bicoloring searches quadratic:
beyond it only dense-line splits are tried."""

HESSIAN_ORDERS = ("largest_first", "smallest_last", "natural")
"""Orderings tried for star and acyclic colorings."""

JACOBIAN_MODES = ("auto", "forward", "reverse", "bidirectional")
HESSIAN_METHODS = ("auto", "star", "acyclic")


def jacobian_cost(n_forward, n_reverse):
    """Estimated cost of the sweeps of a Jacobian coloring, in tangent directions."""
    cost = 0.0
    if n_forward:
        cost += SWEEP_COST + n_forward
    if n_reverse:
        cost += SWEEP_COST + REVERSE_WEIGHT * n_reverse
    return cost


def _mode_of(coloring):
    if coloring.kind == "column":
        return "forward"
    if coloring.kind == "row":
        return "reverse"
    if coloring.n_row_colors == 0:
        return "forward"
    return "reverse" if coloring.n_column_colors == 0 else "bidirectional"


def _cost_of(coloring):
    if coloring.kind == "column":
        return jacobian_cost(coloring.ncolors, 0)
    if coloring.kind == "row":
        return jacobian_cost(0, coloring.ncolors)
    return jacobian_cost(coloring.n_column_colors, coloring.n_row_colors)


def _only_lines(csr, keep):
    """The entries of ``csr`` in the rows where ``keep`` is True (same shape)."""
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    kept = keep[rows]
    return sp.csr_array((np.ones(int(kept.sum()), dtype=np.int8), (rows[kept], csr.indices[kept])),
                        shape=csr.shape)


def split_bicoloring(csr, dense_rows, order="largest_first"):
    """Bicoloring that reads the rows marked ``dense_rows`` from reverse
    products (a row coloring of those rows) and every other entry from
    forward products (a column coloring of the remaining rows) [2]_ [5]_.

    Colorings never see a dense row together with the columns it couples,
    so their graphs stay as sparse as the remaining rows.

    Parameters
    ----------
    csr : scipy.sparse CSR matrix or array
        Jacobian pattern (m x n).
    dense_rows : numpy.ndarray of bool
        Rows to read from reverse products (length m).
    order : str
        Vertex ordering of both colorings.

    Returns
    -------
    adsim.coloring.Bicoloring
        Valid by ``adsim.coloring.check``; neutral rows are those not dense,
        neutral columns those without entries outside the dense rows.
    """
    reverse_part, forward_part = _only_lines(csr, dense_rows), _only_lines(csr, ~dense_rows)
    row_colors = row_coloring(reverse_part, order).colors.copy()
    column_colors = column_coloring(forward_part, order).colors.copy()
    row_colors[~dense_rows] = NEUTRAL
    column_colors[np.bincount(forward_part.indices, minlength=csr.shape[1]) == 0] = NEUTRAL
    row_colors, kr = compact(row_colors)
    column_colors, kc = compact(column_colors)
    return Bicoloring(row_colors, column_colors, kr, kc, f"dense-rows/{order}")


def _dense_line_bicolorings(csr, orders):
    """Bicolorings from splitting off the densest rows (and, on the
    transpose, the densest columns) at a few degree thresholds."""
    out = []
    for transpose in (False, True):
        part = sp.csr_array(csr.T) if transpose else csr
        degree = np.diff(part.indptr)
        mean = max(float(degree.mean()) if degree.size else 0.0, 1.0)
        limits = sorted({max(BICOLORING_ABOVE, int(c * mean)) for c in (2, 8, 32)})
        for limit in limits:
            dense = degree > limit
            if not dense.any() or dense.sum() * 2 > dense.size:
                continue
            result = split_bicoloring(part, dense, orders[0])
            if transpose:
                result = Bicoloring(result.column_colors, result.row_colors,
                                    result.n_column_colors, result.n_row_colors,
                                    f"dense-columns/{orders[0]}")
            out.append(result)
    return out


def _bicolorings(csr, orders, row_bound, column_bound):
    candidates = _dense_line_bicolorings(csr, orders)
    if max(row_bound, column_bound) <= DENSE_LINE:      # no quadratic graphs: search more
        candidates += [bicoloring(csr, order) for order in orders[:2]]
    return candidates


def choose_jacobian_coloring(pattern, mode="auto", orders=JACOBIAN_ORDERS):
    """The cheapest coloring of a Jacobian pattern for the given mode.

    ``"auto"`` compares a column coloring (forward sweep), a row coloring
    (reverse sweep) and, when both need more than :data:`BICOLORING_ABOVE`
    colors, bicolorings (both sweeps), by :func:`jacobian_cost`. A side whose
    lower bound (longest row for columns, longest column for rows) already
    costs more than a candidate found is not colored: with a dense row, a
    column coloring would be quadratic to compute and useless.

    Returns
    -------
    Coloring or Bicoloring
    """
    if mode not in JACOBIAN_MODES:
        raise ValueError(f"adsim: unknown Jacobian mode {mode!r}; expected one of {JACOBIAN_MODES}")
    if mode in ("forward", "reverse"):
        return jacobian_coloring(pattern, mode, orders)
    csr = sp.csr_array(pattern)
    row_bound = int(np.diff(csr.indptr).max(initial=0))
    column_bound = int(np.bincount(csr.indices, minlength=csr.shape[1]).max(initial=0))
    if mode == "bidirectional":
        candidates = _bicolorings(csr, orders, row_bound, column_bound)
        if not candidates:
            candidates = [bicoloring(csr, orders[0], "split")]
        return min(candidates, key=_cost_of)
    candidates = []
    if min(row_bound, column_bound) > BICOLORING_ABOVE:
        candidates += _bicolorings(csr, orders, row_bound, column_bound)

    def worth(cost):
        return not candidates or cost < min(_cost_of(c) for c in candidates)
    if worth(jacobian_cost(row_bound, 0)):
        candidates.append(jacobian_coloring(csr, "forward", orders))
    m, n = csr.shape
    symmetric = m == n and (csr != csr.T).nnz == 0
    if not symmetric and worth(jacobian_cost(0, column_bound)):
        candidates.append(jacobian_coloring(csr, "reverse", orders))
    if min(c.ncolors for c in candidates) > BICOLORING_ABOVE and \
            not any(c.kind == "bicoloring" for c in candidates):
        candidates += _bicolorings(csr, orders, row_bound, column_bound)
    return min(candidates, key=_cost_of)


def _positions(recovery, kind, forward, reverse):
    """Where a direct recovery reads each nonzero: recovering from products
    whose entries are their own flat positions (in the buffer of the forward
    products ``(p, m)`` followed by the reverse ones ``(q, n)``) turns every
    later recovery into one gather."""
    if kind == "column" or kind == "star":
        data = recovery(forward).data
    elif kind == "row":
        data = recovery(reverse).data
    else:
        data = recovery(forward, reverse).data
    return np.rint(data).astype(np.intp)


class _Plan:
    """What both plans share: argument checks, recording, the matrix shape."""

    def __init__(self, fn, args, argnum, choice, choices, what, orders):
        if not 0 <= argnum < len(args):
            raise InvalidArgnums(f"adsim: argnum={argnum} but {len(args)} arguments were given")
        if choice not in choices:
            raise InvalidArgumentValue(f"adsim: unknown {what} {given(choice)}; expected one of "
                                       f"{choices}")
        self.fn = fn
        self.argnum = argnum
        self.choice = choice
        self.orders = tuple(orders)
        self.recordings = 0
        self._lock = threading.Lock()
        self._generation = 0      # odd while _prepare replaces the plan's state
        self._prepare(args)

    def __reduce__(self):
        made = "adsim.sparse_hessian_plan" if isinstance(self, SparseHessianPlan) else \
            "adsim.sparse_jacobian_plan"
        raise NotPicklable(
            f"adsim: a plan made by {made}(f, x) cannot be pickled: it lives in the process "
            f"that made it (it holds f, its tapes and a lock). Send a function defined at module "
            f"level (pickle sends it by name) and make the plan in the other process")

    def _record(self, args):
        """Record the function; returns the start and end times."""
        t0 = time.perf_counter()
        self.tape = record(self.fn, *args)
        self.recordings += 1
        self.argument = Argument(self.tape, self.argnum)
        return t0, time.perf_counter()

    def _evaluate(self, args, value=True):
        """The plan's compressed sweep at ``args``, recording, detecting and
        coloring again when a comparison comes out differently there
        (``value=False``: the caller drops the function's value, which a
        sweep may then leave out).

        Threads may share a plan. Sweeps run concurrently; a branch change
        replaces the plan's state under a lock, and the generation count
        (odd while the state is being replaced) tells a concurrent sweep that
        it may have read a mix of old and new state, so it sweeps again."""
        for _ in range(8):
            gen = self._generation
            try:
                result = self._sweep(args, value)
            except BranchChanged:
                return self._prepare_and_sweep(args, value)
            except Exception:
                if self._generation != gen:
                    continue
                raise
            if self._generation == gen and gen % 2 == 0:
                return result
        return self._prepare_and_sweep(args, value, only_if_changed=True)

    def _prepare_and_sweep(self, args, value, only_if_changed=False):
        with self._lock:
            if only_if_changed:
                try:
                    return self._sweep(args, value)
                except BranchChanged:
                    pass
            self._generation += 1
            try:
                self._prepare(args)
                return self._sweep(args, value)
            finally:
                self._generation += 1

    @property
    def shape(self):
        return self.pattern.shape


class SparseJacobianPlan(_Plan):
    """A sparse Jacobian of ``F(*args)`` w.r.t. ``args[argnum]``, ready to
    evaluate at new arguments by one compressed sweep.

    Made by :func:`sparse_jacobian_plan`. Arguments are flattened: the
    Jacobian is (size of ``F``'s output) x (size of ``args[argnum]``), C order.

    Attributes
    ----------
    pattern : scipy.sparse.csr_array
        Boolean sparsity pattern of the recorded path.
    coloring : adsim.coloring.Coloring or Bicoloring
    mode : str
        ``"forward"`` (``J S``), ``"reverse"`` (``W^T J``) or ``"bidirectional"``.
    ncolors : int
        Directions carried by the sweep(s): the cost in units of one
        directional derivative.
    recordings : int
        How often ``F`` was recorded (1, plus one per branch change).
    timings : dict
        Seconds spent in the last ``record``, ``detect`` and ``color`` steps.
    """

    def __init__(self, F, args, argnum=0, mode="auto", orders=JACOBIAN_ORDERS):
        super().__init__(F, args, argnum, mode, JACOBIAN_MODES, "Jacobian mode", orders)

    # ---- setup -----------------------------------------------------------
    def _prepare(self, args):
        t0, t1 = self._record(args)
        self.pattern = jacobian_pattern(self.tape, self.argument.inputs)
        t2 = time.perf_counter()
        self.coloring = choose_jacobian_coloring(self.pattern, self.choice, self.orders)
        self.mode = _mode_of(self.coloring)
        self.recovery = recovery_for(self.pattern, self.coloring)
        if self.coloring.kind == "bicoloring":
            self._S = self.coloring.column_seed()
            self._W = self.coloring.row_seed()
            column_colors = self.coloring.column_colors
        elif self.coloring.kind == "column":
            self._S, self._W = self.coloring.seed(), np.zeros((self.shape[0], 0))
            column_colors = self.coloring.colors
        else:
            self._S, self._W = np.zeros((self.shape[1], 0)), self.coloring.seed()
        self._V = np.ascontiguousarray(self._S.T)
        self._V_parts = self.argument.parts(self._V)
        self._Wt = np.ascontiguousarray(self._W.T)
        if self.n_forward and not self.n_reverse and self.argument.single:
            # the sweep seeds itself from them
            self._column_colors = np.ascontiguousarray(column_colors, dtype=np.int64)
        m, n = self.shape
        p, q = self.n_forward, self.n_reverse
        forward = np.arange(p * m, dtype=np.float64).reshape(p, m).T
        reverse = p * m + np.arange(q * n, dtype=np.float64).reshape(q, n)
        self._positions = _positions(self.recovery, self.coloring.kind, forward, reverse)
        if self._positions.size and (p * m + q * n) < 2 ** 31:
            self._positions = self._positions.astype(np.int32)      # half the bytes to read
        self._structure = Structure(self.recovery.pattern)
        self._cut = self.argument.cutter(self.recovery.pattern)
        t3 = time.perf_counter()
        self.timings = {"record": t1 - t0, "detect": t2 - t1, "color": t3 - t2}

    @property
    def ncolors(self):
        return self._V.shape[0] + self._Wt.shape[0]

    @property
    def n_forward(self):
        """Tangent directions per evaluation."""
        return self._V.shape[0]

    @property
    def n_reverse(self):
        """Adjoint weights per evaluation."""
        return self._Wt.shape[0]

    def __repr__(self):
        m, n = self.shape
        return (f"<SparseJacobianPlan {m}x{n}, {self.pattern.nnz} nonzeros, mode {self.mode!r}, "
                f"{self.n_forward} forward + {self.n_reverse} reverse directions>")

    # ---- evaluation --------------------------------------------------------
    def _sweep(self, args, value=True):
        tape, argument = self.tape, self.argument
        xs = argument.leaves(tape, args)
        if self.n_forward and not self.n_reverse and argument.single:
            # forward only: recovered in the sweep
            data = np.empty(self._positions.shape[0])
            y = tape._tangent_gathered(xs, argument.inputs[0], self._column_colors,
                                       self.n_forward, self._positions, data, value)
            return y, self._cut(on_pattern(self._structure, data))
        m, n = self.shape
        y, forward, reverse = None, np.zeros((m, 0)), None
        if self.n_forward:
            y, tangents = tape._tangent(xs, argument.seeded(len(xs), self._V_parts))
            forward = tangents.T
        if self.n_reverse:
            y, adjoints = tape._adjoint(xs, self._Wt)
            reverse = argument.gathered(adjoints)
        if y is None:
            y = tape._forward(xs)
        parts = [a.reshape(-1) for a in (forward.T, reverse) if a is not None and a.size]
        products = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else \
            np.zeros(0)
        # positions are in range by construction: "clip" only skips the bounds checks
        return y, self._cut(on_pattern(self._structure,
                                        np.take(products, self._positions, mode="clip")))

    def value_and_jacobian(self, *args):
        """``(F(*args), J)`` from the same sweep; ``J`` a ``csr_array`` (in
        the argument's structure for a container, see :meth:`__call__`)."""
        return self._evaluate(args)

    def __call__(self, *args):
        """The sparse Jacobian at ``args``: a ``scipy.sparse.csr_array`` of
        shape (output size, ``args[argnum].size``); for an argument that is a
        container of arrays, the container holding one such matrix per array
        (as :func:`adsim.jacobian` nests its blocks)."""
        return self._evaluate(args, value=False)[1]

    def as_ivp_jac(self, format="csc"):
        """A ``jac(t, y, *args)`` callable for :func:`scipy.integrate.solve_ivp`.

        For a plan of ``rhs(t, y, *args)`` made with ``argnum=1`` (``t`` is a
        recorded input: use it through NumPy operations) the arguments are
        passed on unchanged; for a plan of an autonomous ``F(y, *args)``
        (``argnum=0``) ``t`` is dropped.

        Parameters
        ----------
        format : {"csc", "csr"}
            Sparse format returned; the implicit solvers of SciPy factorize
            CSC matrices.
        """
        if self.argnum not in (0, 1):
            raise ValueError("adsim: as_ivp_jac needs a plan of rhs(t, y, ...) with argnum=1 "
                             "or of F(y, ...) with argnum=0")
        convert = (lambda J: J.tocsc()) if format == "csc" else (lambda J: J)
        if self.argnum == 1:
            def jac(t, y, *args):
                return convert(self(t, y, *args))
        else:
            def jac(t, y, *args):
                return convert(self(y, *args))
        jac.plan = self
        return jac


class SparseHessianPlan(_Plan):
    """A sparse Hessian of scalar ``f(*args)`` w.r.t. ``args[argnum]``.

    Made by :func:`sparse_hessian_plan`. Each evaluation runs one
    second-order adjoint sweep with one direction per color (seed ``S``,
    output weight 1) and recovers ``H`` from ``H S``: directly for a star
    coloring, by substitution for an acyclic one. The result is symmetric
    (entries read twice are averaged).

    Attributes
    ----------
    pattern : scipy.sparse.csr_array
        Boolean, symmetric.
    coloring : adsim.coloring.Coloring
        Kind ``"star"`` or ``"acyclic"``.
    ncolors : int
    recordings : int
    timings : dict
    """

    def __init__(self, f, args, argnum=0, method="auto", orders=HESSIAN_ORDERS):
        super().__init__(f, args, argnum, method, HESSIAN_METHODS, "Hessian method", orders)

    def _prepare(self, args):
        t0, _ = self._record(args)
        if int(np.prod(self.tape.output_shape)) != 1:
            raise InvalidArgumentValue(f"adsim: a Hessian needs a scalar function; this one "
                                       f"returns shape {tuple(self.tape.output_shape)} (use "
                                       f"sparse_jacobian_plan for vector functions)")
        t1 = time.perf_counter()
        self.pattern = hessian_pattern(self.tape, self.argument.inputs)
        t2 = time.perf_counter()
        coloring = None
        if self.choice in ("auto", "star"):
            coloring = best_star_coloring(self.pattern, self.orders)
        if self.choice in ("auto", "acyclic"):
            acyclic = best_acyclic_coloring(self.pattern, self.orders)
            if coloring is None or acyclic.ncolors < coloring.ncolors:
                coloring = acyclic
        self.coloring = coloring
        self.recovery = recovery_for(self.pattern, coloring)
        self._V = np.ascontiguousarray(coloring.seed().T)
        self._V_parts = self.argument.parts(self._V)
        self._twin = twin_positions(self.recovery.pattern)
        self._structure = Structure(self.recovery.pattern)
        self._cut = self.argument.cutter(self.recovery.pattern, square=True)
        p, n = self.ncolors, self.shape[0]
        self._positions = None
        if coloring.kind == "star":
            products = np.arange(p * n, dtype=np.float64).reshape(p, n).T
            positions = _positions(self.recovery, "star", products, None)
            self._positions = (positions, positions[self._twin])
        t3 = time.perf_counter()
        self.timings = {"record": t1 - t0, "detect": t2 - t1, "color": t3 - t2}

    @property
    def ncolors(self):
        return self._V.shape[0]

    def __repr__(self):
        n = self.shape[0]
        return (f"<SparseHessianPlan {n}x{n}, {self.pattern.nnz} nonzeros, "
                f"{self.coloring.kind} coloring, {self.ncolors} directions>")

    def _sweep(self, args, value=True):
        tape, argument = self.tape, self.argument   # (the value comes with the sweep)
        xs = argument.leaves(tape, args)
        n = self.shape[0]
        if self.ncolors == 0:
            y, adjoints = tape._adjoint(xs, np.ones((1, 1)))
            H = self.recovery(np.zeros((n, 0)))
            return float(y.reshape(())), argument.vector(argument.gathered(adjoints)[0]), \
                self._cut(H)
        y, _, adjoints, adjoint_tangents = tape._soadjoint(
            xs, argument.seeded(len(xs), self._V_parts), np.ones(1))
        products = argument.gathered(adjoint_tangents)            # (H S)^T
        if self._positions is not None:                           # direct: a gather
            here, there = self._positions
            data = np.take(products, here)
            data += np.take(products, there)
            data *= 0.5
        else:                                                     # substitution
            data = self.recovery(products.T).data
            data = 0.5 * (data + data[self._twin])
        gradient = argument.gathered([None if a is None else a.reshape(1, -1)
                                      for a in adjoints]).reshape(-1)
        return float(y.reshape(())), argument.vector(gradient), \
            self._cut(on_pattern(self._structure, data))

    def value_gradient_hessian(self, *args):
        """``(f, gradient (flat), H)`` from one second-order sweep; for an
        argument that is a container, the gradient as one flat piece per
        array and ``H`` as blocks, both in its structure (see :meth:`__call__`)."""
        return self._evaluate(args)

    def __call__(self, *args):
        """The sparse Hessian at ``args``: a symmetric ``csr_array`` of
        shape (n, n), n = ``args[argnum].size``; for an argument that is a
        container of arrays, blocks ``H[i][j]`` (leaf i's elements by leaf
        j's) nested in its structure, as :func:`adsim.hessian` nests them."""
        return self._evaluate(args)[2]


def sparse_jacobian_plan(F, *args, argnum=0, mode="auto", orders=JACOBIAN_ORDERS):
    """Detect, color and prepare a sparse Jacobian of ``F`` once.

    Parameters
    ----------
    F : callable
        ``F(*args)`` returning one array; written with NumPy operations.
    *args : array_like
        Arguments at which ``F`` is recorded; all are tape inputs, so later
        calls may change any of them without a new recording.
    argnum : int
        The argument the Jacobian is taken with respect to.
    mode : {"auto", "forward", "reverse", "bidirectional"}
        Which compressed sweeps to use; ``"auto"`` picks the cheapest (see
        :func:`choose_jacobian_coloring`).
    orders : sequence of str
        Vertex orderings tried by the coloring.

    Returns
    -------
    SparseJacobianPlan
        ``plan(*args)`` returns the Jacobian as a ``scipy.sparse.csr_array``
        of shape (output size, ``args[argnum].size``).

    Examples
    --------
    >>> import numpy as np
    >>> def F(u):
    ...     return u[:-2] - 2 * u[1:-1] + u[2:] + np.exp(u[1:-1])
    >>> plan = sparse_jacobian_plan(F, np.zeros(6))
    >>> plan.mode, plan.ncolors
    ('forward', 3)
    >>> plan(np.ones(6)).toarray().round(2)
    array([[1.  , 0.72, 1.  , 0.  , 0.  , 0.  ],
           [0.  , 1.  , 0.72, 1.  , 0.  , 0.  ],
           [0.  , 0.  , 1.  , 0.72, 1.  , 0.  ],
           [0.  , 0.  , 0.  , 1.  , 0.72, 1.  ]])
    """
    return SparseJacobianPlan(F, args, argnum, mode, orders)


def sparse_jacobian(F, *args, argnum=0, mode="auto"):
    """The sparse Jacobian of ``F`` at ``args`` (one-shot
    :func:`sparse_jacobian_plan`): a ``scipy.sparse.csr_array``."""
    return sparse_jacobian_plan(F, *args, argnum=argnum, mode=mode)(*args)


def sparse_hessian_plan(f, *args, argnum=0, method="auto", orders=HESSIAN_ORDERS):
    """Detect, color and prepare a sparse Hessian of scalar ``f`` once.

    Parameters
    ----------
    f : callable
        ``f(*args)`` returning a scalar.
    *args : array_like
        Arguments at which ``f`` is recorded (all tape inputs).
    argnum : int
        The argument the Hessian is taken with respect to.
    method : {"auto", "star", "acyclic"}
        Star coloring with direct recovery, acyclic coloring with recovery
        by substitution (fewer colors), or ``"auto"``: acyclic only when it
        needs fewer colors than star.
    orders : sequence of str

    Returns
    -------
    SparseHessianPlan
        ``plan(*args)`` returns a symmetric ``scipy.sparse.csr_array``.
    """
    return SparseHessianPlan(f, args, argnum, method, orders)


def sparse_hessian(f, *args, argnum=0, method="auto"):
    """The sparse Hessian of scalar ``f`` at ``args`` (one-shot
    :func:`sparse_hessian_plan`): a symmetric ``scipy.sparse.csr_array``."""
    return sparse_hessian_plan(f, *args, argnum=argnum, method=method)(*args)
