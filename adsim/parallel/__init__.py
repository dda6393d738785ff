"""Batch derivatives: one tape replayed at many points on a thread pool, a
process pool or a Dask cluster (docs/parallel.md). Tapes travel as tape
files, never as the user's code."""
from ._api import METHODS, map, sum_gradients

__all__ = ["METHODS", "map", "sum_gradients"]
