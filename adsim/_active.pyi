"""Type stub of adsim/_active.pyx: the recording front end."""
from typing import Any, Sequence

import numpy as np

from ._tape import Tape

UNARY_UFUNCS: dict[Any, int]

class Active:
    tape: Tape
    slot: int
    shape: tuple[int, ...]
    size: int
    ndim: int
    dtype: np.dtype
    def __getattr__(self, name: str) -> Any: ...

def wrap(tape: Tape, slot: int, shape: Sequence[int]) -> Active: ...
def record_unary(x: Active, code: int, c: float = ...) -> Active: ...
def record_binary_refs(tape: Tape, code: int, ra: int, rb: int, shape: Sequence[int]) -> Active: ...
def make_view(view: Active, root: Active, index: Any) -> Active: ...
def mark_written(root: Active) -> None: ...
def other_layout(v: Any) -> bool: ...
