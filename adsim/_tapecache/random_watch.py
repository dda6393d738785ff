"""Whether a recording drew random numbers.

:class:`RandomWatch` reads, before and after a recording, the state of every
random source the recorded function could draw from: NumPy's global
RandomState, Python's ``random`` module and the generators its environment
walk met. A recording that changed any of them drew random numbers, and its
tape is never reused.
"""
import ctypes
import platform
import random as _py_random
import struct
import sys
import threading

import numpy as np

_CPYTHON = platform.python_implementation() == "CPython"   # id() is an address


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

    Every draw changes its MT19937 words and position or its cached second
    Gaussian (``has_gauss``, ``gauss``). Both are read straight from memory
    (2.5 kB and 12 bytes), through views made once (a read is a copy, well
    under a microsecond; a ctypes call per read costs a few): the words from
    the bit generator's state struct, the Gaussian from the RandomState
    object at an offset found once on a RandomState of adsim's own. Both
    layouts are checked against ``get_state()`` once; if either differs,
    every read is a full ``get_state()`` (about 25 us, more than a small
    recording).
    """

    def __init__(self):
        self.rand = getattr(np.random.mtrand, "_rand", None)
        self.bits = bits = getattr(self.rand, "_bit_generator", None)   # kept: its memory is read
        self.views = None
        if _CPYTHON and type(bits) is np.random.MT19937 \
                and type(self.rand) is np.random.RandomState:
            gauss_at = _gauss_offset()
            if gauss_at is not None:
                at = id(self.rand) + gauss_at
                self.views = (_view(bits.ctypes.state_address, 624 * 4 + 4),
                              _view(at - 8, 4), _view(at, 8))
                if self.read() != self._full():
                    self.views = None

    def _full(self):
        """(MT19937 words and position, has_gauss and gauss) as bytes."""
        full = np.random.get_state(legacy=False)
        state = full["state"]
        if isinstance(state, dict) and "key" in state:
            raw = state["key"].tobytes() + int(state["pos"]).to_bytes(4, sys.byteorder, signed=True)
        else:
            raw = _freeze(state)
        return raw, struct.pack("=id", full["has_gauss"], full["gauss"])

    def read(self):
        """The state, as :meth:`_full` gives it."""
        if self.views is None:
            return self._full()
        words, has_gauss, gauss = self.views
        return words.tobytes(), has_gauss.tobytes() + gauss.tobytes()

    def changed_since(self, before):
        return self.read() != before


def _gauss_offset():
    """Where a RandomState object holds its cached Gaussian (``has_gauss``,
    an int, sits 8 bytes before it), found by setting known values on a
    RandomState of adsim's own; None if not found consistently."""
    probe = np.random.RandomState(0)
    size = type(probe).__basicsize__
    found = None
    for has_gauss, gauss in ((1, 0.1234567890123457), (0, -9.876543210987654e-05)):
        state = probe.get_state(legacy=False)
        state["has_gauss"], state["gauss"] = has_gauss, gauss
        probe.set_state(state)
        memory = ctypes.string_at(id(probe), size)
        at = memory.find(struct.pack("=d", gauss))
        if at < 8 or found not in (None, at) or memory.find(struct.pack("=d", gauss), at + 1) >= 0 \
                or struct.unpack_from("=i", memory, at - 8)[0] != has_gauss:
            return None
        found = at
    return found


class _PythonState:
    """Python's ``random`` module (its hidden ``random.Random`` instance):
    the Mersenne Twister words and index read straight from the object
    (2.5 kB, at an offset checked against ``getstate()`` once), and
    ``gauss_next``; ``getstate()`` (about 10 us) if the layout differs."""

    def __init__(self, source):
        self.source = source
        self.at = None
        if _CPYTHON:
            state = source.getstate()[1]
            words = struct.pack(f"=i{len(state) - 1}I", state[-1], *state[:-1])
            memory = ctypes.string_at(id(source), type(source).__basicsize__)
            at = memory.find(words)
            if at > 0 and memory.find(words, at + 1) < 0:
                self.at = at
                self.view = _view(id(source) + at, len(words))

    def read(self):
        if self.at is None:
            return self.source.getstate()
        return self.view.tobytes(), self.source.gauss_next


def _view(address, size):
    """A read-only memoryview of ``size`` bytes at ``address`` (memory of an
    object the caller keeps alive)."""
    return memoryview((ctypes.c_char * size).from_address(address)).cast("B").toreadonly()


_globals = None
_globals_lock = threading.Lock()


def _global_states():
    """The readers of NumPy's and Python's global random states, made once."""
    global _globals
    if _globals is None:
        with _globals_lock:
            if _globals is None:
                _globals = _LegacyState(), _PythonState(_py_random._inst)
    return _globals


class RandomWatch:
    """The states of every random source a recording could draw from:
    NumPy's and Python's global ones, and the generators met in the
    environment."""

    def __init__(self, generators):
        self.legacy, self.python = _global_states()
        self.legacy_before = self.legacy.read()
        self.python_before = self.python.read()
        self.sources = [(_what(g), g) for g in generators if g is not _py_random._inst]
        self.states = [_state_of(g) for _, g in self.sources]

    def changed(self):
        """None, or which source a recording drew from since construction."""
        if self.legacy.changed_since(self.legacy_before):
            return "it draws random numbers (NumPy's global random state, np.random.*)"
        if self.python.read() != self.python_before:
            return "it draws random numbers (Python's random module)"
        for (what, source), before in zip(self.sources, self.states):
            if _state_of(source) != before:
                return f"it draws random numbers ({what})"
        return None


def _what(source):
    return f"the {type(source).__module__}.{type(source).__qualname__} in its environment"
