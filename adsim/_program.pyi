"""The Python surface of adsim/_program.pyx: a recorded program as a whole."""
from typing import Any

import numpy as np

from ._tape import Tape

def finish(tape: Tape, output_slot: int, output_shape: tuple, optimise: bool = ...) -> None: ...
def set_optimise(on: bool) -> bool: ...
def program_buffers(tape: Tape) -> dict: ...
def load_program(tape: Tape, code: np.ndarray, start: np.ndarray, flags: np.ndarray,
                 opnd: np.ndarray, consts: np.ndarray, const_off: np.ndarray,
                 const_size: np.ndarray, ints: np.ndarray, branches: np.ndarray,
                 slot_size: np.ndarray, input_slots: list, input_shapes: list,
                 input_varied: list, out_slot: int, output_shape: tuple, callbacks: Any,
                 chunked: bool, layout_observed: bool = ...) -> None: ...
