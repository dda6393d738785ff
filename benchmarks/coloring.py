"""Color counts and coloring times on standard sparsity patterns.

Prints two markdown tables: the number of colors (products) our colorings need
on standard patterns next to SciPy's ``group_columns`` (greedy in a random
column order) and CasADi's colorings when ``casadi`` is importable; and the
time to color a 2-D 5-point stencil pattern with n = 10^4 and 10^5 unknowns.

Usage::

    python benchmarks/coloring.py            # n ~ 10^4 patterns, best of 3 timings
    python benchmarks/coloring.py --quick    # smaller patterns, one timing each
"""
import argparse
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize._numdiff import group_columns

import adsim.coloring as coloring

try:
    import casadi
except ImportError:             # optional comparison
    casadi = None


# ------------------------------------------------------------------ patterns
def tridiagonal(n):
    return sp.diags_array([np.ones(n - 1), np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1],
                          format="csr")


def stencil_5_point(side):
    line, eye = tridiagonal(side), sp.eye_array(side)
    return sp.csr_array(sp.kron(eye, line) + sp.kron(line, eye))


def stencil_9_point(side):
    line = tridiagonal(side)
    return sp.csr_array(sp.kron(line, line))


def stencil_7_point(side):
    line, eye = tridiagonal(side), sp.eye_array(side)
    return sp.csr_array(sp.kron(sp.kron(eye, eye), line) + sp.kron(sp.kron(eye, line), eye)
                        + sp.kron(sp.kron(line, eye), eye))


def block_tridiagonal(nblocks, b):
    return sp.csr_array(sp.kron(tridiagonal(nblocks), np.ones((b, b))))


def arrowhead(n):
    pattern = sp.lil_array((n, n))
    pattern[0, :] = 1
    pattern[:, 0] = 1
    pattern.setdiag(1)
    return sp.csr_array(pattern)


def standard_patterns(quick):
    """(name, pattern, optimal column colors or None) for the count table."""
    scale = 2_000 if quick else 10_000
    side2, side3 = int(np.sqrt(scale)), int(round(scale ** (1 / 3)))
    return [
        ("tridiagonal", tridiagonal(scale), 3),
        (f"2-D 5-point {side2}x{side2}", stencil_5_point(side2), 5),
        (f"2-D 9-point {side2}x{side2}", stencil_9_point(side2), 9),
        (f"3-D 7-point {side3}^3", stencil_7_point(side3), 7),
        ("block tridiagonal b=4", block_tridiagonal(scale // 4, 4), 12),
        ("arrowhead", arrowhead(scale // 5), None),
    ]


# ---------------------------------------------------------------- competitors
def scipy_colors(pattern):
    return int(group_columns(pattern).max()) + 1


def casadi_sparsity(pattern):
    csc = sp.csc_array(pattern)
    return casadi.Sparsity(pattern.shape[0], pattern.shape[1], csc.indptr.tolist(),
                           csc.indices.tolist())


def casadi_column_colors(pattern):
    return casadi_sparsity(pattern).uni_coloring().size2()


def casadi_star_colors(pattern):
    return casadi_sparsity(pattern).star_coloring().size2()


# --------------------------------------------------------------------- tables
def markdown(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def count_rows(quick):
    for name, pattern, optimum in standard_patterns(quick):
        best = coloring.jacobian_coloring(pattern)
        both = coloring.best_bicoloring(pattern)
        row = [name, pattern.shape[1], pattern.nnz, "-" if optimum is None else optimum,
               f"{best.ncolors} ({best.kind})",
               f"{both.ncolors} ({both.n_row_colors}+{both.n_column_colors})",
               coloring.best_star_coloring(pattern).ncolors,
               coloring.best_acyclic_coloring(pattern).ncolors,
               scipy_colors(pattern)]
        if casadi is not None:
            row += [casadi_column_colors(pattern), casadi_star_colors(pattern)]
        yield row


def count_table(quick):
    header = ["pattern", "n", "nnz", "optimum (one-sided)", "ours: forward/reverse",
              "ours: bicoloring (rows+cols)", "ours: star", "ours: acyclic",
              "SciPy group_columns"]
    if casadi is not None:
        header += ["CasADi uni_coloring", "CasADi star_coloring"]
    return markdown(header, list(count_rows(quick)))


def timed(function, pattern, repeats):
    """Best wall time in milliseconds, and the result of the last call."""
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(pattern)
        best = min(best, time.perf_counter() - start)
    return 1e3 * best, result


def colors_of(result):
    if isinstance(result, (int, np.integer)):
        return int(result)
    return result.ncolors


TIMED = [
    ("ours: column_coloring (largest_first)", lambda p: coloring.column_coloring(p)),
    ("ours: jacobian_coloring (forward/reverse choice)", coloring.jacobian_coloring),
    ("ours: best_column_coloring (all orderings)", coloring.best_column_coloring),
    ("ours: star_coloring (largest_first)", lambda p: coloring.star_coloring(p)),
    ("ours: best_star_coloring", coloring.best_star_coloring),
    ("ours: acyclic_coloring (largest_first)", lambda p: coloring.acyclic_coloring(p)),
    ("ours: bicoloring (largest_first)", lambda p: coloring.bicoloring(p)),
    ("SciPy group_columns", scipy_colors),
]
if casadi is not None:
    TIMED += [("CasADi uni_coloring", casadi_column_colors),
              ("CasADi star_coloring", casadi_star_colors)]


def timing_table(quick):
    repeats = 1 if quick else 3
    sides = (100, 316)
    patterns = [stencil_5_point(side) for side in sides]
    rows = []
    for name, function in TIMED:
        row = [name]
        for pattern in patterns:
            milliseconds, result = timed(function, pattern, repeats)
            row.append(f"{milliseconds:.1f} ms ({colors_of(result)} colors)")
        rows.append(row)
    header = ["2-D 5-point stencil"] + [f"n = {p.shape[0]} ({p.nnz} nnz)" for p in patterns]
    return markdown(header, rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small patterns, one timing")
    args = parser.parse_args()
    print("## Colors (compressed products) on standard patterns\n")
    print(count_table(args.quick))
    print("\n## Coloring time\n")
    print(timing_table(args.quick))
    if casadi is None:
        print("\n(casadi is not installed: its columns are left out)")


if __name__ == "__main__":
    main()
