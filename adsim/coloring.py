"""Graph coloring of sparsity patterns, seed matrices and recovery.

Public entry points; the algorithms live in :mod:`adsim.sparse`. A plan for a
sparse derivative calls one coloring, one seed and one recovery::

    import adsim.coloring as coloring

    # Jacobian, forward or reverse, whichever needs fewer products
    result = coloring.jacobian_coloring(pattern)          # Coloring, kind "column" or "row"
    seed = result.seed()                                  # S (n x k) or W (m x k)
    recovery = coloring.recovery_for(pattern, result)
    jacobian = recovery(J @ seed)                         # or recovery(seed.T @ J)

    # Jacobian with dense rows and columns: both directions
    result = coloring.best_bicoloring(pattern)            # Bicoloring
    jacobian = coloring.recovery_for(pattern, result)(J @ result.column_seed(),
                                                      result.row_seed().T @ J)

    # Hessian: star (direct) or acyclic (substitution, fewer colors)
    result = coloring.hessian_coloring(pattern, "star")
    hessian = coloring.recovery_for(pattern, result)(H @ result.seed())

``coloring.check(pattern, result)`` verifies any coloring.
"""
from adsim.sparse.bicoloring import best_bicoloring, bicoloring, jacobian_coloring
from adsim.sparse.coloring import (DEFAULT_ORDERS, Bicoloring, Coloring,
                                   best_column_coloring, best_row_coloring, check,
                                   column_coloring, row_coloring)
from adsim.sparse.orderings import ORDERINGS, ordering
from adsim.sparse.recovery import (NEUTRAL, AcyclicRecovery, BidirectionalRecovery,
                                   ColumnRecovery, RowRecovery, StarRecovery, recover,
                                   recovery_for, seed_matrix)
from adsim.sparse.symmetric import (acyclic_coloring, best_acyclic_coloring,
                                    best_star_coloring, hessian_coloring, star_coloring)

__all__ = [
    "AcyclicRecovery", "BidirectionalRecovery", "Bicoloring", "Coloring", "ColumnRecovery",
    "DEFAULT_ORDERS", "NEUTRAL", "ORDERINGS", "RowRecovery", "StarRecovery",
    "acyclic_coloring", "best_acyclic_coloring", "best_bicoloring", "best_column_coloring",
    "best_row_coloring", "best_star_coloring", "bicoloring", "check", "column_coloring",
    "hessian_coloring", "jacobian_coloring", "ordering", "recover", "recovery_for",
    "row_coloring", "seed_matrix", "star_coloring",
]
