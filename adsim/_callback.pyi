"""Type stub of adsim/_callback.pyx: what CALLBACK rules see of a replay."""
from typing import Any

class SweepContext:
    """What CALLBACK rules see of the replay running them (adsim/_callback_rules.py)."""
    layout: int
    directions: int
    def __init__(self, sweep: str = ..., directions: int = ...) -> None: ...
    @property
    def sweep(self) -> str: ...
    def keep(self, owner: Any, value: Any) -> None: ...
    def take(self, owner: Any) -> Any: ...

class CompiledRules:
    """Rules of a CALLBACK op in C: value and adjoint on the sweep's arrays,
    run without the GIL."""

class DenseFactors:
    """The kept LU factorisations of one problem's dense Newton matrices,
    per thread."""
    n: int
    kept: int
    def __init__(self, n: int, kept: int) -> None: ...
    @property
    def held(self) -> int: ...          # the calling thread's
    def solution(self, form: str, transposed: bool, data: Any, scalars: tuple[float, ...],
                 b: Any) -> Any: ...

class DenseNewtonSolve(CompiledRules):
    """The compiled value and adjoint of one kind of dense Newton solve."""
    factors: DenseFactors
    @property
    def form(self) -> int: ...
    @property
    def transposed(self) -> bool: ...
    def __init__(self, factors: DenseFactors, form: str, transposed: bool) -> None: ...
