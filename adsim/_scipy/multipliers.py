"""The multipliers of a constrained minimiser's KKT solution
(adsim/_scipy/constrained.py) in the layouts of SciPy's result fields:
SLSQP's ``multipliers`` and trust-constr's ``v``, so a shadow price read
from them moves with the parameters.

``kkt.active`` indexes the rows of the canonical constraint vector g (per
constraint, bounds last: its equality rows c - lb, lower sides c - lb,
upper sides ub - c, as ``piece.layout`` masks them); ``mu`` holds the
active rows' multipliers (grad f = J_A^T mu).
"""
import numpy as np

__all__ = ["slsqp_multipliers", "trust_constr_multipliers"]


def _rows(kkt):
    """Each piece's (equal, lower, upper) rows of g, as index arrays, and
    the number of rows."""
    out, start = [], 0
    for piece in kkt.problem.pieces:
        counts = [int(np.count_nonzero(mask)) for mask in piece.layout]
        ends = np.cumsum([start] + counts)
        out.append([np.arange(ends[i], ends[i + 1]) for i in range(3)])
        start = int(ends[-1])
    return out, start


def _on_rows(kkt, mu, size):
    """``mu`` (the active rows' multipliers) on every row of g, zero on the
    inactive ones."""
    select = np.zeros((size, kkt.active.size))
    select[kkt.active, np.arange(kkt.active.size)] = 1.0
    return select @ mu


def slsqp_multipliers(kkt, mu, scipys):
    """SLSQP's ``multipliers`` from the KKT solution's active ``mu``, in
    SciPy's layout: one per row of the constraints (bounds have none), the
    equality rows of every constraint first, then the inequality rows (each
    constraint's lower sides, then its upper sides, as g lays them out),
    zero where inactive; SciPy's own where its layout is not that."""
    rows, size = _rows(kkt)
    constraints = [r for piece, r in zip(kkt.problem.pieces, rows)
                   if piece.fun is not None or piece.matrix is not None]   # not the bounds
    order = np.concatenate([r[0] for r in constraints] +
                           [np.concatenate([r[1], r[2]]) for r in constraints] +
                           [np.zeros(0, dtype=np.int64)]).astype(np.int64)
    if order.size != np.size(scipys):
        return scipys
    return _on_rows(kkt, mu, size)[order]


def trust_constr_multipliers(kkt, mu, scipys):
    """trust-constr's ``v``: per constraint (bounds last, where given) one
    multiplier per component of c, v = mu_upper - mu_lower - mu_equal with
    the KKT solution's ``mu`` of g's rows (ub - c, c - lb, c - lb), zero
    where inactive; SciPy's own where its layout is not that."""
    rows, size = _rows(kkt)
    pieces = kkt.problem.pieces
    if len(scipys) != len(pieces) or any(
            np.size(v) != piece.layout[0].size for v, piece in zip(scipys, pieces)):
        return scipys
    full = _on_rows(kkt, mu, size)
    out = []
    for piece, (equal, lower, upper) in zip(pieces, rows):
        to_components = np.zeros((piece.layout[0].size, size))
        for mask, at, sign in zip(piece.layout, (equal, lower, upper), (-1.0, -1.0, 1.0)):
            to_components[np.flatnonzero(mask), at] = sign
        out.append(to_components @ full)
    return out
