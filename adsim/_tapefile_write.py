"""Tape files (see adsim/tapefile.py, docs/tape-format.md): the format's
constants and the writing of a finished tape as bytes (``dumps``) or to a
file (``save``). Below the user-facing Tape class, whose ``save`` writes
here, and below the callback classes a file may hold: a callback is written
when its class is the one named for its ``file_kind`` in ``CALLBACK_CLASSES``
(adsim/tapefile.py reads them back with the classes themselves)."""
import errno
import hashlib
import io
import json
import os
import struct
import tempfile

import numpy as np

from . import _program, _tape
from ._version import __version__
from .errors import InvalidArgument, InvalidArgumentValue, TapeCopyError

MAGIC = b"\x89adsim-tape\r\n\x1a\n\x00"     # 16 bytes: binary, catches newline translation
FORMAT_VERSION = 2                           # 2: ARGS section; readers read 1 too
READS_VERSIONS = (1, 2)
MAX_TAPES = 1 << 16                          # tapes in one file (a tape and the tapes it owns)
MAX_DEPTH = 32                               # callbacks owning tapes that own callbacks ...
MAX_VERSION_BYTES = 64

_HEAD = struct.Struct("<16sHHI")             # magic, format version, flags, version length
_LENGTH = struct.Struct("<Q")                # payload bytes
_DIGEST_BYTES = 32                           # SHA-256
_COUNT = struct.Struct("<I")                 # tapes in the payload, sections in a tape
_SECTION = struct.Struct("<4sB3xQ")          # tag, type code, padding, item count

_TYPES = {1: np.dtype("<u1"), 2: np.dtype("<u2"), 3: np.dtype("<i4"), 4: np.dtype("<i8"),
          5: np.dtype("<f8"), 6: np.dtype("u1")}           # 6: UTF-8 text
_NATIVE = {1: np.uint8, 2: np.uint16, 3: np.int32, 4: np.int64, 5: np.float64}

# the sections of a tape: tag -> (type code, key of program_buffers)
_SECTIONS = {
    b"CODE": (2, "code"), b"STRT": (3, "start"), b"FLAG": (1, "flags"), b"OPND": (3, "opnd"),
    b"CNST": (5, "consts"), b"COFF": (4, "const_off"), b"CSIZ": (4, "const_size"),
    b"INTS": (3, "ints"),
    b"BRCH": (1, "branches"), b"SLOT": (4, "slot_size"), b"INPT": (4, None),
    b"OUTP": (4, None), b"OPTS": (4, None), b"CALL": (6, None), b"ARGS": (6, None),
}
# the sections of each format version a reader knows
SECTIONS_OF = {1: frozenset(_SECTIONS) - {b"ARGS"}, 2: frozenset(_SECTIONS)}

# file_kind -> the class (module and qualified name) whose callbacks a tape file holds
CALLBACK_CLASSES = {"adsim.primitive": "adsim.primitives.Application",
                    "adsim.builtin_primitive": "adsim.primitives.BuiltinApplication",
                    "adsim.nested_derivative": "adsim._nesting.nested.NestedApplication",
                    "adsim.sparse_jacobian": "adsim.integrate._sparse_jacobian.ColoredApplication",
                    "adsim.event_time": "adsim.integrate._events.EventTimeApplication",
                    "adsim.integral": "adsim._scipy.quadrature.IntegralApplication",
                    "adsim.operator_solve": "adsim._scipy.operator_solve.OperatorSolveApplication",
                    "adsim.implicit_solution":
                        "adsim._scipy.implicit_file.SolutionApplication",
                    "adsim.constrained_solution":
                        "adsim._scipy.constrained_file.ConstrainedApplication",
                    "adsim.bvp_solution": "adsim._scipy.bvp_tapes.BvpApplication",
                    "adsim.lsoda": "adsim.integrate._lsoda.LsodaPiece",
                    "adsim.odeint": "adsim.integrate._odeint_op.OdeintOp",
                    "adsim.checkpoint_loop": "adsim.checkpoint.op.LoopOp"}


def _class_name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


# ---- writing ---------------------------------------------------------------------

def dumps(tape):
    """The tape file of a finished ``tape``, as bytes.

    Raises :class:`adsim.errors.TapeCopyError` when the tape holds something
    that is code rather than data (see its documentation)."""
    if not isinstance(tape, _tape.Tape):
        raise TypeError(f"adsim: only tapes are written as tape files, not {type(tape).__name__}")
    order, depth, blocks = [tape], [0], []
    while len(blocks) < len(order):
        t = order[len(blocks)]
        if t.recording or t.recording_failed:
            raise TapeCopyError("adsim: a tape that is still recording, or whose recording "
                                "failed, or an empty Tape() made directly, cannot be saved, "
                                "pickled or copied; save a tape made by adsim.record(f, x)")
        calls = []
        for cb in t.callbacks:
            kind, state, owned = _callback_state(cb)
            if owned and depth[len(blocks)] + 1 > MAX_DEPTH:
                raise TapeCopyError(f"adsim: callbacks own tapes {MAX_DEPTH} levels deep (loops "
                                    f"in loops ...); tape files hold at most {MAX_DEPTH}")
            calls.append({"kind": kind, "state": state,
                          "tapes": list(range(len(order), len(order) + len(owned)))})
            order.extend(owned)
            depth.extend([depth[len(blocks)] + 1] * len(owned))
        if len(order) > MAX_TAPES:
            raise TapeCopyError(f"adsim: the tape owns more than {MAX_TAPES} tapes")
        blocks.append(_encode_tape(t, calls))
    payload = _COUNT.pack(len(blocks)) + b"".join(blocks)
    return _seal(payload)


def _callback_state(cb):
    kind = getattr(type(cb), "file_kind", None)
    if kind is None or CALLBACK_CLASSES.get(kind) != _class_name(type(cb)):
        # a callback may say what it is and why it needs this process (``not_saved``)
        what = (f"`{cb.name}`" if isinstance(getattr(cb, "name", None), str)
                else f"a callback op of type {type(cb).__name__}")
        why = (getattr(cb, "not_saved", None)
               or "only primitives, nested derivatives and checkpointed loops")
        raise TapeCopyError(f"adsim: the tape holds {what}, which tape files cannot hold "
                            f"({why}); record the function in the process that replays it")
    state, owned = cb.file_state()
    for t in owned:
        if not isinstance(t, _tape.Tape):
            raise TypeError(f"adsim: a {kind} callback gave {type(t).__name__} as a tape")
    return kind, state, list(owned)


def _options(buffers):
    """The OPTS section: chunked; then, for a program that read its arrays'
    memory layout, 1 (every input in C order) or 2 and each input's layout:
    0 for C order, else 1, its F-contiguity and the strides of a dense array
    laid out as it was (the tape's layout_key; docs/tape-format.md)."""
    out = [int(buffers["chunked"])]
    if not buffers["layout_observed"]:
        return out
    layouts = buffers["input_layouts"]
    if all(key is None for key in layouts):
        return out + [1]
    out.append(2)
    for key in layouts:
        out += [0] if key is None else [1, int(key[1]), *key[0]]
    return out


def _encode_tape(tape, calls):
    buffers = _program.program_buffers(tape)
    inputs = [len(buffers["input_slots"])]
    for slot, shape, varied in zip(buffers["input_slots"], buffers["input_shapes"],
                                   buffers["input_varied"]):
        inputs += [slot, int(varied), len(shape), *shape]
    extra = {
        b"INPT": np.array(inputs, dtype=np.int64),
        b"OUTP": np.array([buffers["out_slot"], len(buffers["output_shape"]),
                           *buffers["output_shape"]], dtype=np.int64),
        b"OPTS": np.array(_options(buffers), dtype=np.int64),
        b"CALL": _text(calls),
        b"ARGS": _text(_argument_structures(tape)),
    }
    parts = [_COUNT.pack(len(_SECTIONS))]
    for tag, (code, key) in _SECTIONS.items():
        arr = buffers[key] if key is not None else extra[tag]
        data = np.ascontiguousarray(arr, dtype=_TYPES[code]).tobytes()
        parts += [_SECTION.pack(tag, code, len(data) // _TYPES[code].itemsize), data]
    return b"".join(parts)


def _text(data):
    """JSON data as the bytes of a text section."""
    return np.frombuffer(json.dumps(data, allow_nan=False, sort_keys=True,
                                    separators=(",", ":")).encode(), dtype=np.uint8)


def _argument_structures(tape):
    """The containers a tape takes (a TreeTape's structures), or None for
    a tape of arrays."""
    structures = getattr(tape, "_argument_structures", None)
    return None if structures is None else structures()


def _writer_version():
    return __version__.encode()


def _seal(payload):
    """Header, digest and payload."""
    version = _writer_version()
    head = _HEAD.pack(MAGIC, FORMAT_VERSION, 0, len(version)) + version + _LENGTH.pack(len(payload))
    return head + hashlib.sha256(head + payload).digest() + payload


def _path(file, mode):
    if isinstance(file, (str, bytes, os.PathLike)):
        return os.fspath(file)
    where = "adsim.load_tape" if mode == "reading" else "tape.save"
    raise InvalidArgument(f"{where}: file must be a path (str, bytes or os.PathLike) or a binary "
                          f"file object open for {mode}, got an object of type "
                          f"{type(file).__name__}")


def binary_file(file, where, mode):
    """``file`` (an object with read or write) if it is not a text file: a
    tape file is bytes."""
    if isinstance(file, io.TextIOBase):
        raise InvalidArgument(f"{where}: file is a text file object ({type(file).__name__}); "
                              f"a tape file holds bytes: open it in binary mode, "
                              f"open(path, {mode!r})")
    return file


def save(tape, file):
    """Write ``tape`` to ``file``: a path (written to a temporary file in the
    same directory, then renamed, so a reader never sees half a file) or a
    binary file object."""
    data = dumps(tape)
    if hasattr(file, "write"):
        binary_file(file, "tape.save", "wb").write(data)
        return
    path = os.fsdecode(_path(file, "writing"))
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise InvalidArgumentValue(f"tape.save: file {path!r} is a directory; give the path "
                                   f"of a file in it, such as {os.path.join(path, 'f.adtape')!r}")
    if not os.path.isdir(folder):      # else mkstemp's error would name its temporary file
        raise FileNotFoundError(errno.ENOENT, f"tape.save: no folder {folder!r} to write {path!r} "
                                f"in; create it first", folder)
    fd, tmp = tempfile.mkstemp(prefix=".adsim-tape-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
