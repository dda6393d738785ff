"""Whether a recording drew random numbers.

:class:`RandomWatch` reads, before and after a recording, the state of every
random source the recorded function could draw from: NumPy's global
RandomState, Python's ``random`` module and the generators its environment
walk met. A recording that changed any of them drew random numbers, and its
tape is never reused.
"""
import ctypes
import random as _py_random
import sys
import threading

import numpy as np


def _state_of(source):
    """A comparable fingerprint of a random source's state."""
    if isinstance(source, np.random.Generator):
        return _freeze(source.bit_generator.state)
    if isinstance(source, np.random.RandomState):
        return _freeze(source.get_state(legacy=False))
    if isinstance(source, np.random.BitGenerator):
        return _freeze(source.state)
    if isinstance(source, np.random.SeedSequence):
        return source.n_children_spawned
    return source.getstate()                 # random.Random


def _freeze(state):
    if isinstance(state, dict):
        return tuple((k, _freeze(v)) for k, v in state.items())
    if isinstance(state, np.ndarray):
        return state.dtype.str, state.shape, state.tobytes()
    return state


class _LegacyState:
    """NumPy's global RandomState (behind ``np.random.normal`` etc., and
    SciPy's default ``random_state``).

    A full read (``get_state()``, about 25 us) is taken before a recording.
    After it, the MT19937 words and position are read directly from the
    state struct (a 2.5 kB copy): they change with every draw except a
    normal served from the cached second Gaussian, so the full state is read
    again only if a cached Gaussian was there before. The struct layout is
    checked against ``get_state()`` once; if it differs, reads are all full.
    """

    def __init__(self):
        bits = getattr(getattr(np.random.mtrand, "_rand", None), "_bit_generator", None)
        self.address = bits.ctypes.state_address if type(bits) is np.random.MT19937 else None
        if self.address is not None and self._raw() != self.read()[0]:
            self.address = None

    def _raw(self):
        return ctypes.string_at(self.address, 624 * 4 + 4)

    def read(self):
        """(MT19937 words and position as bytes, has_gauss, gauss)."""
        full = np.random.get_state(legacy=False)
        state = full["state"]
        if isinstance(state, dict) and "key" in state:
            raw = state["key"].tobytes() + int(state["pos"]).to_bytes(4, sys.byteorder, signed=True)
        else:
            raw = _freeze(state)
        return raw, full["has_gauss"], full["gauss"]

    def changed_since(self, before):
        if self.address is not None:
            if self._raw() != before[0]:
                return True
            if not before[1]:                # no cached Gaussian: every draw moves the words
                return False
        return self.read() != before


_legacy = None
_legacy_lock = threading.Lock()


def _legacy_state():
    global _legacy
    if _legacy is None:
        with _legacy_lock:
            if _legacy is None:
                _legacy = _LegacyState()
    return _legacy


class RandomWatch:
    """The states of every random source a recording could draw from:
    NumPy's and Python's global ones, and the generators met in the
    environment."""

    def __init__(self, generators):
        self.legacy = _legacy_state()
        self.legacy_before = self.legacy.read()
        sources = [_py_random._inst] + [g for g in generators if g is not _py_random._inst]
        self.sources = [(_what(g), g) for g in sources]
        self.states = [_state_of(g) for _, g in self.sources]

    def changed(self):
        """None, or which source a recording drew from since construction."""
        if self.legacy.changed_since(self.legacy_before):
            return "it draws random numbers (NumPy's global random state, np.random.*)"
        for (what, source), before in zip(self.sources, self.states):
            if _state_of(source) != before:
                return f"it draws random numbers ({what})"
        return None


def _what(source):
    if source is _py_random._inst:
        return "Python's random module"
    return f"the {type(source).__module__}.{type(source).__qualname__} in its environment"
