"""``scipy.signal.find_peaks`` (and ``peak_prominences``, ``peak_widths``) of
an active signal: SciPy's peaks, as plain
integer indices (users index the active signal with them: ``x[peaks]``),
with the properties that are values of the signal active.

Which samples are peaks, and every other integer SciPy decides on the way
(bases, plateau edges, the samples where a width's interpolation starts and
whether it interpolates), are piecewise constant in the signal: their
derivative is zero wherever it exists. They are guarded: a primitive
computes, at every replay, SciPy's find_peaks of the signal with the same
options and a digest of that structure, and a recorded comparison checks it
against the recording's, so a replay where the peaks (or any of it) differ
raises ``BranchChanged`` (the functional API records again there). A tape
file holds the guard by its kind and plain parameters (the options, the
peaks and bases it was given), from which the reader makes it again.

The properties SciPy computes from the signal's values are recorded with
SciPy's formulas at those integers: ``peak_heights = x[p]``,
``left_thresholds = x[p] - x[p - 1]``, ``right_thresholds = x[p] -
x[p + 1]``, ``prominences = x[p] - max(x[left_base], x[right_base])``, and
for widths (SciPy's ``_peak_widths``) the height ``h = x[p] - prominence *
rel_height`` and the crossings, ``left_ip = i + (h - x[i]) / (x[i + 1] -
x[i])`` where the walk left from p stops at a sample i below h (``i``
itself where it stops at the base), ``right_ip`` likewise, ``widths =
right_ip - left_ip``. Integer properties (bases, edges, plateau sizes) are
plain. The thresholds ``height``, ``threshold``, ``prominence`` and
``width`` may be active (``height=0.5 * x.max()``): the selection has
derivative zero in them, and the guard reads them at every replay; the
other options stay plain.
"""
import numpy as np
import scipy.signal

from .._np.core import as_active, tape_of
from .._np.integers import current, plain_if_constant
from .._active import Active
from ..errors import UnsupportedOperation
from .._replay_guard import guard_primitive, guard_structure
from ..primitives import BuiltinFamily
from .plain_settings import decoded, encoded
from .arrays import array

_INTEGER_PROPERTIES = ("left_bases", "right_bases", "left_edges", "right_edges", "plateau_sizes")


def _crossings(xv, peaks, props, rel_height):
    """For each peak the samples (i_left, i_right) where SciPy's width walks
    stop, and whether each lies below the height (then it interpolates)."""
    return _width_crossings(xv, peaks, xv[peaks] - props["prominences"] * rel_height,
                            props["left_bases"], props["right_bases"])


def _structure(xv, options):
    """SciPy's peaks and properties of the plain signal, and the integers
    the recorded properties are computed at."""
    peaks, props = scipy.signal.find_peaks(xv, **options)
    crossings = _crossings(xv, peaks, props, options["rel_height"]) if "widths" in props else \
        np.zeros((0, 4), np.intp)
    return peaks, props, crossings


def _integers(peaks, props, crossings):
    """Every integer of a find_peaks result and of the width walks."""
    return (peaks, *(props[k] for k in _INTEGER_PROPERTIES if k in props), crossings)


_GUARD_NAME = "scipy.signal peak finding (its guard)"


def _find_structure(options, names):
    """find_peaks' integers at the plain ``options`` and the active
    thresholds ``names`` read at a replay."""
    def structure(xv, *values):
        return _integers(*_structure(xv, {**options, **{n: _as_option(v)
                                                        for n, v in zip(names, values)}}))
    return structure


def _prominence_structure(peaks, wlen):
    def structure(xv):
        return scipy.signal.peak_prominences(xv, peaks, wlen)[1:]
    return structure


def _width_structure(peaks, rel_height, left_bases, right_bases):
    def structure(xv, prominences):
        return (_width_crossings(xv, peaks, xv[peaks] - prominences * rel_height, left_bases,
                                 right_bases),)
    return structure


_STRUCTURES = {"find_peaks": _find_structure, "prominences": _prominence_structure,
               "widths": _width_structure}


def _int_structure(kind, parameters):
    """The structure of ``kind`` made from its ``parameters``, as int64 arrays."""
    if kind not in _STRUCTURES:
        raise ValueError(f"no peak structure of kind {kind!r}")
    structure = _STRUCTURES[kind](**parameters)

    def integers(*values):
        return [np.asarray(part, dtype=np.int64) for part in structure(*values)]
    return integers


def _guard_of(kind, settings):
    """The guard of ``kind`` from its ``settings`` (the parameters encoded
    as adsim/_scipy/plain_settings.py encodes them: a tape file's)."""
    return guard_primitive(_int_structure(kind, decoded(settings)), _GUARD_NAME)


# the guards as a tape file makes them again (by kind and settings)
_GUARDS = BuiltinFamily("scipy.signal.peak_structure", 1, _guard_of)


def _structure_guard(x, inputs, kind, **parameters):
    """Record a check that the structure of ``kind`` (SciPy's integers, made
    from ``parameters``) of the plain values of ``x`` and ``inputs`` is, at
    every replay, what it is now (BranchChanged otherwise). The recording
    uses the parameters as a tape file gives them back."""
    try:
        settings = encoded(parameters)
    except TypeError as err:            # an option a tape file cannot keep
        guard_structure(_int_structure(kind, parameters), (x, *inputs), _GUARD_NAME,
                        f"whose options hold {err} (adsim/_scipy/peaks.py)")
        return
    guard_structure(_int_structure(kind, decoded(settings)), (x, *inputs), _GUARD_NAME,
                    saved_as=(_GUARDS, {"kind": kind, "settings": settings}))


def _width_crossings(xv, peaks, height, left_bases, right_bases):
    out = []
    for p, h, lo, hi in zip(peaks, height, left_bases, right_bases):
        i = p
        while lo < i and h < xv[i]:
            i -= 1
        j = p
        while j < hi and h < xv[j]:
            j += 1
        out.append((i, j, xv[i] < h, xv[j] < h))
    return np.array(out, dtype=np.intp).reshape(-1, 4)


def _ips(x, crossings, h):
    """SciPy's interpolated crossings of the height h at the stops found."""
    i, j = crossings[:, 0], crossings[:, 1]
    below_i, below_j = crossings[:, 2].astype(bool), crossings[:, 3].astype(bool)
    # the neighbour of a stop that is not below h is the stop itself: no division by zero
    i_next = np.where(below_i, i + 1, i)
    j_prev = np.where(below_j, j - 1, j)
    left = i + np.where(below_i, (h - x[i]) / np.where(below_i, x[i_next] - x[i], 1.0), 0.0)
    right = j - np.where(below_j, (h - x[j]) / np.where(below_j, x[j_prev] - x[j], 1.0), 0.0)
    return left, right


def peak_prominences(x, peaks, wlen=None):
    """SciPy's bases (plain, guarded) and prominences x[p] - max(x[left
    base], x[right base]) (active)."""
    x = array(x, "scipy.signal.peak_prominences")
    peaks = np.asarray(peaks)
    wlen = _option("wlen", wlen)
    if not isinstance(x, Active):
        return scipy.signal.peak_prominences(x, peaks, wlen)

    _structure_guard(x, (), "prominences", peaks=peaks, wlen=wlen)
    _, left, right = scipy.signal.peak_prominences(current(x), peaks, wlen)
    return x[peaks] - np.maximum(x[left], x[right]), left, right


def peak_widths(x, peaks, rel_height=0.5, prominence_data=None, wlen=None):
    """SciPy's widths at ``rel_height`` of the prominence: the height
    x[p] - prominence * rel_height and its interpolated crossings, at the
    stops SciPy's walks find (guarded)."""
    x = array(x, "scipy.signal.peak_widths")
    peaks = np.asarray(peaks)
    rel_height = _option("rel_height", rel_height)
    if isinstance(rel_height, Active):
        raise UnsupportedOperation("adsim: scipy.signal.peak_widths(..., rel_height=<active>) "
                                   "is not supported; pass adsim.value(rel_height)")
    if prominence_data is None:
        prominence_data = peak_prominences(x, peaks, wlen)
    prominences, left_bases, right_bases = prominence_data
    if not isinstance(x, Active) and not isinstance(prominences, Active):
        return scipy.signal.peak_widths(x, peaks, rel_height, prominence_data, wlen)
    left_bases, right_bases = np.asarray(left_bases), np.asarray(right_bases)

    _structure_guard(x, (prominences,), "widths", peaks=peaks, rel_height=rel_height,
                     left_bases=left_bases, right_bases=right_bases)
    h = x[peaks] - prominences * rel_height
    xv = current(x) if isinstance(x, Active) else np.asarray(x, dtype=float)
    pv = current(prominences) if isinstance(prominences, Active) else np.asarray(prominences)
    crossings = _width_crossings(xv, peaks, xv[peaks] - pv * rel_height, left_bases, right_bases)
    if not isinstance(x, Active):
        x = as_active(tape_of(prominences), x)
    left, right = _ips(x, crossings, h)
    return right - left, h, left, right


def _as_option(v):
    """A threshold's value as SciPy takes it: a number, or an array of one
    entry per sample (a 0-d array is neither)."""
    v = np.asarray(v, dtype=float)
    return float(v) if v.ndim == 0 else v


def _option(name, v):
    """An option as find_peaks reads it: plain, or an active array (a
    threshold computed from the signal), whose derivative is zero: the
    selection is piecewise constant in it."""
    v = plain_if_constant(v)
    if isinstance(v, (list, tuple)) and any(isinstance(o, Active) for o in v):
        raise UnsupportedOperation(
            f"adsim: scipy.signal.find_peaks(..., {name}=(...)) with active bounds inside a "
            f"tuple is not supported; pass an array, np.array([lo, hi]), or plain bounds")
    return v


def find_peaks(x, height=None, threshold=None, distance=None, prominence=None, width=None,
               wlen=None, rel_height=0.5, plateau_size=None):
    x = array(x, "scipy.signal.find_peaks")
    if np.ndim(x) != 1:
        raise ValueError("`x` must be a 1-D array")
    options = {name: _option(name, v) for name, v in (
        ("height", height), ("threshold", threshold), ("distance", distance),
        ("prominence", prominence), ("width", width), ("wlen", wlen),
        ("rel_height", rel_height), ("plateau_size", plateau_size))}
    active = {name: v for name, v in options.items() if isinstance(v, Active)}
    if "rel_height" in active or "distance" in active or "wlen" in active or \
            "plateau_size" in active:
        raise UnsupportedOperation(
            f"adsim: scipy.signal.find_peaks(..., {next(iter(active))}=<active>) is not "
            f"supported: only the thresholds height, threshold, prominence and width may "
            f"depend on the inputs; pass adsim.value(...)")
    now = {**options, **{name: _as_option(current(v)) for name, v in active.items()}}
    if not isinstance(x, Active) and not active:
        return scipy.signal.find_peaks(x, **options)
    x = x if isinstance(x, Active) else np.asarray(x, dtype=float)
    peaks, props, crossings = _structure(current(x) if isinstance(x, Active) else x, now)
    _structure_guard(x, tuple(active.values()), "find_peaks", names=list(active),
                     options={n: v for n, v in now.items() if n not in active})
    if not isinstance(x, Active):
        return peaks, props               # thresholds alone active: guarded plain results
    return peaks, _properties(x, peaks, props, crossings, options["rel_height"])


def _properties(x, peaks, props, crossings, rel_height):
    out = {}
    top = x[peaks]
    for key, v in props.items():
        if key in _INTEGER_PROPERTIES:
            out[key] = v
        elif key == "peak_heights":
            out[key] = top
        elif key == "left_thresholds":
            out[key] = top - x[peaks - 1]
        elif key == "right_thresholds":
            out[key] = top - x[peaks + 1]
        elif key == "prominences":
            out[key] = top - np.maximum(x[props["left_bases"]], x[props["right_bases"]])
    if "widths" in props:
        h = top - out["prominences"] * rel_height
        left, right = _ips(x, crossings, h)
        out["widths"] = right - left
        out["width_heights"] = h
        out["left_ips"] = left
        out["right_ips"] = right
    return {key: out[key] for key in props}          # SciPy's order
