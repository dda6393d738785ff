"""When adsim fuses a tape's runs on its own (``adsim.set_fusion``).

Compiling a new tape's runs takes the system compiler about a second (then
the kernels are cached on disk, and a later process loads them in
milliseconds); interpreting them costs a few nanoseconds per element and
op. So in the default mode, ``"auto"``, a tape is fused once its replays
have done about as much interpreted elementwise work as compiling costs:
the ski-rental rule, which never spends more than twice what the better
choice made in hindsight would have. Each kind of replay (values, tangents,
adjoints, second order with one direction; tangents with several, a replay
of p directions counting as p replays) counts and compiles its own kernels
(``fuse.FAMILIES``). ``"always"`` fuses at a tape's first replay,
``"never"`` leaves every tape to the interpreter; ``tape.fuse()`` fuses
whatever the mode. Tapes whose elementwise ops all have fewer than
``adsim._tape.FUSED_RUN_MIN`` elements are never fused automatically: the
Cython side stops counting them at their first replay.

The Cython side counts replays per family (``_replay.pxi``, fusion_tick)
and calls ``consider`` when a count the policy set runs out; checkpointed
loops tell the policy how many step replays a sweep will make
(``expect``), since they replay one step tape many times per call.
"""
from math import ceil
import os
import warnings

from ..errors import NoCompiler
from . import fuse

MODES = ("auto", "always", "never")
# elementwise work (elements written by fusable ops, summed over replays) of
# roughly a second interpreted: about what compiling a tape's kernels costs
AUTO_WORK = 2e8
_mode = os.environ.get("ADSIM_FUSION", "auto")
if _mode not in MODES:
    warnings.warn(f"adsim: ADSIM_FUSION={_mode!r} is not one of {MODES}; using 'auto'",
                  RuntimeWarning, stacklevel=2)
    _mode = "auto"


def set_fusion(mode):
    """How adsim fuses runs of elementwise ops on large arrays into compiled
    loops (docs/tape.md, "Fused runs"): ``"auto"`` (the default) once a
    tape's replays have done about as much interpreted work as compiling
    costs, ``"always"`` at a tape's first replay, ``"never"`` not on its
    own (``tape.fuse()`` still does). Applies to replays from now on;
    returns the previous mode. ``ADSIM_FUSION`` sets it at import."""
    global _mode
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"adsim.set_fusion: mode must be one of {MODES}, not {mode!r}")
    previous, _mode = _mode, mode
    return previous


def consider(tape, layout):
    """The count of ``layout``'s replays ran out, the first time at the
    tape's first such replay: set it to when fusing pays, or fuse the
    kernels that layout uses when it was set before."""
    if _mode == "always" or (_mode == "auto" and tape._fusion_armed(layout)):
        _fuse(tape, layout)
    else:                       # first look, or "never" (which may change)
        tape._arm_fusion(layout, max(1, ceil(AUTO_WORK / tape._fusion_work()) - 1))


def expect(tape, layout, replays):
    """A checkpointed loop's sweep is about to replay ``tape`` about
    ``replays`` times laid out as ``layout`` (one direction): fuse first
    when that work pays for compiling."""
    if _mode == "never" or not tape.chunked:
        return
    work = tape._fusion_work()
    if work and (_mode == "always" or work * replays >= AUTO_WORK):
        _fuse(tape, layout)


def _fuse(tape, layout):
    try:
        fuse.fuse(tape, fuse.FAMILIES[layout])
    except NoCompiler:
        return                  # the interpreter stays; tape.fuse() says why
    except Exception as exc:    # a defect of the fused path must not stop the replay
        warnings.warn(f"adsim: compiling this tape's runs failed ({type(exc).__name__}: "
                      f"{exc}); it stays with the interpreter", RuntimeWarning, stacklevel=3)
