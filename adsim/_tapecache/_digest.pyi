"""Type stub of adsim/_tapecache/_digest.pyx: content digests of arrays."""
import numpy as np

P61: int
BLOCK_WORDS: int
KERNELS: tuple[str, ...]
KEYS: tuple[np.ndarray, int, int]

def digest(a: np.ndarray, keys: tuple[np.ndarray, int, int] | None = ...,
           kernel: str | None = ...) -> int: ...
def number_run(items: list | tuple) -> bytes | None: ...
def all_of_type(items: list | tuple, kind: type) -> bool: ...
