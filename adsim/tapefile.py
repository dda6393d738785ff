"""Tape files: a finished tape written as bytes and read back safely.

``tape.save(file)``, :func:`adsim.load_tape`, pickling and copying a tape
use this format; docs/tape-format.md specifies it byte by byte. A file holds
the recorded program as data: the tape's buffers as little-endian arrays of
explicit types, and for each callback op (a named primitive, a checkpointed
loop) a short JSON description plus the tapes it owns. No Python code or
pickle is ever written or read.

Reading checks the magic bytes, the format version, the lengths and a
SHA-256 digest, then rebuilds every tape through the recording checks of the
compiled core (adsim/_tapefile.pxi): each operand, slot, index range and
branch record is checked before the tape is handed out, so a damaged or
hostile file raises :class:`adsim.TapeFileError` and never reaches a replay.
The digest detects damage; it is not a signature (anyone can write a file
with a valid digest), which is why the program itself is checked.

Callback objects take part through a small protocol: a class attribute
``file_kind`` (a stable name listed in :func:`callback_classes`), a method
``file_state()`` returning ``(state, tapes)`` (a JSON-able dict and the
tapes the object owns), a classmethod ``from_file_state(state, tapes)`` and
a method ``operand_sizes()`` returning ``(argument sizes, result size)``,
which the loader compares with the op that calls the object.
"""
import hashlib
import os
import json
import struct

import numpy as np

from . import _opcodes, _program
from ._decoder import decode_op
from ._tapefile_write import (  # noqa: F401  (the format's writing, public here)
    FORMAT_VERSION, MAGIC, MAX_DEPTH, MAX_TAPES, MAX_VERSION_BYTES, READS_VERSIONS, SECTIONS_OF,
    _COUNT, _DIGEST_BYTES, _HEAD, _LENGTH, _NATIVE, _SECTION, _SECTIONS, _TYPES, _path, binary_file,
    dumps, save)
from ._containers.saved_trees import structures_from_data
from ._containers.tree_tape import TreeTape
from ._np.special import special_ufunc
from ._scipy import hooks
from ._scipy.bvp_tapes import BvpApplication
from ._scipy.constrained_file import ConstrainedApplication
from ._scipy.implicit_file import SolutionApplication
from ._scipy.operator_solve import OperatorSolveApplication
from ._scipy.quadrature import IntegralApplication
from ._scipy.solver_files import READERS
from ._scipy.ufuncs import scipy_ufunc
from .checkpoint.op import LoopOp
from ._filefields import size_of
from .errors import AdsimError, InvalidArgument, InvalidArgumentValue, TapeFileError
from ._nesting.nested import NestedApplication
from .integrate._events import EventTimeApplication
from .integrate._lsoda import LsodaPiece
from .integrate._odeint_op import OdeintOp
from .integrate._sparse_jacobian import ColoredApplication
from .primitives import Application, BuiltinApplication, builtin_family, primitives_named
from .tape import Tape

__all__ = ["FORMAT_VERSION", "MAGIC", "dumps", "loads", "save", "load"]

_CALLBACK_CLASSES = {cls.file_kind: cls for cls in (Application, BuiltinApplication,
                                                    NestedApplication, ColoredApplication,
                                                    EventTimeApplication, IntegralApplication,
                                                    SolutionApplication, ConstrainedApplication,
                                                    OperatorSolveApplication, BvpApplication,
                                                    LsodaPiece, OdeintOp, LoopOp)}


def callback_classes():
    """The callback classes a tape file may hold, by their ``file_kind``."""
    return dict(_CALLBACK_CLASSES)


def _reader(cls):
    """The function making a callback of class ``cls`` from its file
    state: its ``from_file_state``, or for a solver's solution, whose
    reading runs the solvers that sit above its class, the reader of
    adsim/_scipy/solver_files.py."""
    return cls.from_file_state or READERS[cls.file_kind]


# adsim's own primitives are made on first use: its scipy.special ufuncs, and
# the primitives and built-in families of the SciPy rule modules, named after
# SciPy's functions ("scipy.linalg.expm", "scipy.linalg.lu_factor"). (name
# prefix, function making those of that prefix), tried in order until the name
# is known.
_MADE_ON_DEMAND = (
    ("scipy.special.", lambda: special_ufunc(None)),
    ("scipy.special.", lambda: scipy_ufunc(None)),
    *((f"{module}.", lambda module=module: hooks.rule_module(module))
      for module in hooks.scipy_modules()))

# the field of a callback's state naming what is made on first use, by kind
_NAMED_BY = {Application: ("name", primitives_named),
             BuiltinApplication: ("family", builtin_family)}


def _make_named_primitive(cls, state):
    """Make the adsim primitive (or family of primitives) a file's callback
    ``state`` names, if it is one of those made on first use and not made yet."""
    field, known = _NAMED_BY.get(cls, (None, None))
    name = state.get(field) if field is not None and isinstance(state, dict) else None
    if not isinstance(name, str):
        return
    for prefix, make in _MADE_ON_DEMAND:
        if name.startswith(prefix) and not known(name):
            make()


# ---- reading ---------------------------------------------------------------------

# What a load may allocate unless told otherwise (``max_bytes``): the values
# of every tape in the file (its arena) and the values its forward sweeps
# save for the reverse sweep. A program's values are not bounded by its
# file: one op can fill a large array from a scalar constant. Recordings of
# the size of their data stay well within 64 bytes of values per byte of
# file; the fixed allowance covers small files of large arrays.
_BYTES_PER_FILE_BYTE = 64
_BYTES_ALLOWED = 2 ** 30


def default_max_bytes(file_bytes):
    """The memory a file of ``file_bytes`` bytes may ask for by default."""
    return _BYTES_PER_FILE_BYTE * file_bytes + _BYTES_ALLOWED


_REFUSED = (ValueError, TypeError, LookupError, OverflowError, MemoryError, RecursionError,
            OSError, struct.error, AdsimError)


def loads(data, max_bytes=None):
    """The tape held by the bytes ``data`` (from :func:`dumps`).

    Raises :class:`adsim.TapeFileError` for anything but an intact tape file
    of a format this adsim reads, with every op checked (nothing replays
    while loading), and for a program whose values (and the values its
    sweeps save) need more than ``max_bytes`` bytes; by default
    :func:`default_max_bytes` of the file's size (docs/tape-format.md)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidArgument(f"adsim.tapefile.loads: data must be the bytes of a tape file "
                              f"(bytes, bytearray or memoryview), got an object of type "
                              f"{type(data).__name__}; for a path use adsim.load_tape(path), "
                              f"and open files in binary mode")
    data = memoryview(data).cast("B")
    bound = _memory_bound(max_bytes, len(data))
    try:
        blocks, writer = _open(data)
    except TapeFileError:
        raise
    except _REFUSED as err:
        raise TapeFileError(f"adsim: not a valid tape file: {_reason(err)}") from err
    try:
        return _build_all(blocks, _Budget(bound, max_bytes is None, len(data)))
    except TapeFileError:
        raise
    except _REFUSED as err:
        raise TapeFileError(f"adsim: not a valid tape file (written by adsim {writer}): "
                            f"{_reason(err)}") from err


def load(file, max_bytes=None):
    """The tape in ``file``: a path or a binary file object. ``max_bytes``
    bounds the memory the program may need, as for :func:`loads`."""
    if hasattr(file, "read"):
        return loads(binary_file(file, "adsim.load_tape", "rb").read(), max_bytes)
    if isinstance(file, bytes) and (file.startswith(MAGIC[:8]) or b"\0" in file):
        raise InvalidArgumentValue("adsim.load_tape: file is bytes, which name a path, but these "
                                   "hold a tape file's content; load them with "
                                   "adsim.tapefile.loads(data) or "
                                   "adsim.load_tape(io.BytesIO(data))")
    path = _path(file, "reading")
    if os.path.isdir(path):
        raise InvalidArgumentValue(f"adsim.load_tape: file {os.fsdecode(path)!r} is a directory; "
                                   f"give the path of a tape file (tape.save writes one)")
    with open(path, "rb") as fh:
        return loads(fh.read(), max_bytes)


def _memory_bound(max_bytes, file_bytes):
    if max_bytes is None:
        return default_max_bytes(file_bytes)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) \
            or max_bytes <= 0:
        raise InvalidArgument(f"adsim.load_tape: max_bytes must be a positive integer (bytes) "
                              f"or None (a bound from the file's size), got {max_bytes!r}")
    return int(max_bytes)


class _Budget:
    """The bytes of values the tapes of one file may need, counted as they load."""

    def __init__(self, bound, default, file_bytes):
        self.left, self.bound, self.default, self.file_bytes = bound, bound, default, file_bytes

    def take(self, n_bytes, what):
        if n_bytes > self.left:
            how = (f"the default bound for a file of {self.file_bytes} bytes "
                   f"({_BYTES_PER_FILE_BYTE} x its size + {_BYTES_ALLOWED} bytes)"
                   if self.default else f"max_bytes={self.bound}")
            raise TapeFileError(
                f"adsim: the tape file asks for more memory than {how}: {what} need "
                f"{n_bytes} bytes, {self.left} were left. If you trust the file, load it with "
                f"a larger bound: adsim.load_tape(file, max_bytes=...)")
        self.left -= n_bytes


def _loop_bytes(op):
    """The most a checkpointed loop's snapshots and returned states can take,
    from the counts its file gives: its snapshots (at most one per step, and
    within its memory_limit) and the states of ``save_at``."""
    state = 8 * op.size
    steps = op.n_steps if op.n_steps is not None else op.options.max_steps
    caps = [op.options.memory_limit, _times(op.options.snapshots, state), _times(steps, state),
            _times(getattr(op.options.schedule, "snapshots", None), state)]
    caps = [c for c in caps if c is not None]
    snapshots = min(caps) if caps else 0
    return snapshots + state * len(op.save_at or ())


def _times(count, size):
    return None if count is None else count * size


def _saved_values(tape):
    """An upper bound of the values one forward sweep of ``tape`` saves for
    the reverse sweep: each op flagged to save overwrites at most its result."""
    b = _program.program_buffers(tape)
    results = b["opnd"][b["start"][np.flatnonzero(b["flags"] & 1)]]
    return int(b["slot_size"][results[results >= 0]].sum())


def _reason(err):
    return str(err).removeprefix("adsim: ") or type(err).__name__


class _Reader:
    """Reads a memoryview front to back; running past its end is an error."""

    def __init__(self, view, what):
        self.view, self.pos, self.what = view, 0, what

    def take(self, n):
        if n < 0 or n > len(self.view) - self.pos:
            raise TapeFileError(f"adsim: not a valid tape file: {self.what} ends after "
                                f"{len(self.view)} bytes, {n} more were expected at byte "
                                f"{self.pos} (truncated?)")
        out = self.view[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt):
        return fmt.unpack(self.take(fmt.size))


def _open(view):
    """Check the header and digest; returns (raw tapes, writer version)."""
    if len(view) < len(MAGIC) or bytes(view[:len(MAGIC)]) != MAGIC:
        raise TapeFileError("adsim: not a tape file (its first bytes are not the tape file "
                            "magic); tape files are written by tape.save")
    head = _Reader(view, "the file")
    _, version, flags, n_version = head.unpack(_HEAD)
    if version not in READS_VERSIONS:
        newer = version > FORMAT_VERSION
        raise TapeFileError(f"adsim: the tape file has format version {version}; this adsim "
                            f"reads versions {', '.join(map(str, READS_VERSIONS))}"
                            + ("; upgrade adsim to load it" if newer else ""))
    if flags != 0:
        raise TapeFileError(f"adsim: the tape file sets header flags {flags:#x}, which format "
                            f"{version} does not define")
    if n_version > MAX_VERSION_BYTES:
        raise TapeFileError(f"adsim: the tape file's version field claims {n_version} bytes")
    writer = bytes(head.take(n_version)).decode("utf-8")
    (length,) = head.unpack(_LENGTH)
    body = head.pos
    digest = bytes(head.take(_DIGEST_BYTES))
    if length != len(view) - head.pos:
        raise TapeFileError(f"adsim: the tape file claims a payload of {length} bytes but "
                            f"{len(view) - head.pos} follow its header (truncated, or bytes "
                            f"appended?)")
    payload = view[head.pos:]
    check = hashlib.sha256(view[:body])
    check.update(payload)
    if check.digest() != digest:
        raise TapeFileError("adsim: the tape file's SHA-256 digest does not match its contents: "
                            "the file is damaged")
    return _parse_payload(_Reader(payload, "the payload"), version), writer


def _parse_payload(reader, version):
    (n_tapes,) = reader.unpack(_COUNT)
    if not 1 <= n_tapes <= MAX_TAPES:
        raise ValueError(f"the payload holds {n_tapes} tapes (1 to {MAX_TAPES})")
    blocks = [_parse_tape(reader, i, SECTIONS_OF[version], version) for i in range(n_tapes)]
    if reader.pos != len(reader.view):
        raise ValueError(f"{len(reader.view) - reader.pos} bytes follow the last tape")
    return blocks


def _parse_tape(reader, index, tags, version):
    (n_sections,) = reader.unpack(_COUNT)
    if n_sections != len(tags):
        raise ValueError(f"tape {index} has {n_sections} sections; format {version} "
                         f"tapes have {len(tags)}")
    found = {}
    for _ in range(n_sections):
        tag, code, count = reader.unpack(_SECTION)
        if tag not in tags or tag in found:
            raise ValueError(f"tape {index}: section {tag!r} is unknown or repeated")
        if code != _SECTIONS[tag][0]:
            raise ValueError(f"tape {index}: section {tag.decode()} has type code {code}, "
                             f"not {_SECTIONS[tag][0]}")
        dtype = _TYPES[code]
        if count > (len(reader.view) - reader.pos) // dtype.itemsize:
            raise ValueError(f"tape {index}: section {tag.decode()} claims {count} items, more "
                             f"than the bytes left")
        data = reader.take(count * dtype.itemsize)
        if code == 6:
            found[tag] = bytes(data).decode("utf-8")
        else:
            found[tag] = np.frombuffer(data, dtype=dtype).astype(_NATIVE[code])
    return found


def _ints(arr, what):
    """A section of int64 fields as Python ints, read in order."""
    return _Fields([int(v) for v in arr], what)


class _Fields:
    def __init__(self, values, what):
        self.values, self.pos, self.what = values, 0, what

    def next(self, minimum=None):
        if self.pos >= len(self.values):
            raise ValueError(f"{self.what} ends early")
        v = self.values[self.pos]
        self.pos += 1
        if minimum is not None and v < minimum:
            raise ValueError(f"{self.what} holds {v} where at least {minimum} belongs")
        return v

    def shape(self):
        ndim = self.next(0)
        if ndim > 64:
            raise ValueError(f"{self.what} holds a shape of {ndim} dimensions")
        return tuple(self.next(0) for _ in range(ndim))

    def left(self):
        return len(self.values) - self.pos

    def done(self):
        if self.pos != len(self.values):
            raise ValueError(f"{self.what} has {len(self.values) - self.pos} values too many")


def _refuse_constant(name):
    raise ValueError(f"a JSON section of the file holds {name}")


def _calls_of(blocks):
    """The parsed callback descriptions of every tape, with the tapes each
    owns checked: every tape but the first is owned exactly once, by a tape
    before it, and at most MAX_DEPTH levels deep."""
    n = len(blocks)
    owner, depth, calls = [None] * n, [0] * n, []
    for i, block in enumerate(blocks):
        listed = json.loads(block[b"CALL"], parse_constant=_refuse_constant)
        if not isinstance(listed, list):
            raise ValueError(f"tape {i}: the callback section is not a list")
        for c in listed:
            if not (isinstance(c, dict) and set(c) == {"kind", "state", "tapes"}
                    and isinstance(c["kind"], str) and isinstance(c["state"], dict)
                    and isinstance(c["tapes"], list)):
                raise ValueError(f"tape {i}: a callback description is not "
                                 f"{{kind, state, tapes}}")
            for j in c["tapes"]:
                if type(j) is not int or not i < j < n or owner[j] is not None:
                    raise ValueError(f"tape {i}: a callback owns tape {j!r}, which is not a "
                                     f"later tape owned by no other")
                owner[j] = i
                depth[j] = depth[i] + 1
                if depth[j] > MAX_DEPTH:
                    raise ValueError(f"tapes nest more than {MAX_DEPTH} levels deep")
        calls.append(listed)
    orphans = [j for j in range(1, n) if owner[j] is None]
    if orphans:
        raise ValueError(f"tape {orphans[0]} is owned by no callback")
    return calls


def _build_all(blocks, budget):
    """Tapes from the last to the first, so that owned tapes exist first,
    each counted against the ``budget`` of bytes before its arena exists."""
    calls = _calls_of(blocks)
    kinds = callback_classes()
    tapes = [None] * len(blocks)
    for i in range(len(blocks) - 1, -1, -1):
        callbacks = []
        for k, c in enumerate(calls[i]):
            cls = kinds.get(c["kind"])
            if cls is None:
                raise ValueError(f"tape {i}: callback {k} is of kind {c['kind']!r}, which this "
                                 f"adsim does not know")
            try:
                _make_named_primitive(cls, c["state"])
                # what building the callback itself allocates from a few bytes of file
                # (a compressed matrix), counted before it is built
                building = getattr(cls, "building_bytes", None)
                if building is not None:
                    budget.take(building(c["state"]), f"the arrays of tape {i}, callback "
                                f"{k} ({c['kind']}),")
                callbacks.append(_reader(cls)(c["state"], [tapes[j] for j in c["tapes"]]))
            except _REFUSED as err:
                raise ValueError(f"tape {i}, callback {k} ({c['kind']}): {_reason(err)}") from err
            if isinstance(callbacks[-1], LoopOp):
                budget.take(_loop_bytes(callbacks[-1]), f"the snapshots and saved states of "
                            f"the checkpointed loop of tape {i}, callback {k},")
            # a callback whose replay needs arrays its file does not bound (a
            # constrained solve's dense Jacobian of n unknowns) says how large
            working = getattr(callbacks[-1], "working_bytes", 0)
            if working:
                budget.take(working, f"the working arrays of tape {i}, callback {k} "
                            f"({c['kind']}),")
        slots = blocks[i].get(b"SLOT")
        if slots is not None and len(slots) and slots.min() >= 0:   # else refused while built
            budget.take(8 * int(slots.sum(dtype=np.float64)), f"the values of tape {i}")
        try:
            tapes[i] = _build_tape(blocks[i], callbacks)
        except _REFUSED as err:
            raise ValueError(f"tape {i}: {_reason(err)}") from err
        budget.take(8 * _saved_values(tapes[i]), f"the values tape {i} saves per sweep")
    return tapes[0]


def _input_layout(options, shape, i):
    """One input's layout_key from the options section (docs/tape-format.md):
    None for C order, else (the strides of a dense uint8 array laid out as
    the input was, its F-contiguity). Replays compare keys only."""
    if not options.next(0):
        return None
    f_contiguous = options.next(0)
    strides = tuple(options.next(0) for _ in shape)
    size = size_of(shape)
    if len(shape) < 2 or f_contiguous > 1 or any(s > size for s in strides):
        raise ValueError(f"input {i} of shape {shape} has the layout {f_contiguous}, "
                         f"{list(strides)}, not one of an array of that shape")
    return strides, bool(f_contiguous)


def _build_tape(block, callbacks):
    inputs = _ints(block[b"INPT"], "the input section")
    n_inputs = inputs.next(0)
    slots, shapes, varied = [], [], []
    for _ in range(n_inputs):
        slots.append(inputs.next(0))
        flag = inputs.next(0)
        if flag > 1:
            raise ValueError(f"the input section holds varied={flag}")
        varied.append(bool(flag))
        shapes.append(inputs.shape())
    inputs.done()
    output = _ints(block[b"OUTP"], "the output section")
    out_slot, out_shape = output.next(0), output.shape()
    output.done()
    options = _ints(block[b"OPTS"], "the options section")
    chunked = options.next(0)
    layout_observed = options.next(0) if options.left() else 0
    if chunked > 1:
        raise ValueError(f"the options section holds chunked={chunked}")
    if layout_observed > 2:
        raise ValueError(f"the options section holds layout_observed={layout_observed}")
    layouts = [_input_layout(options, shape, i) for i, shape in enumerate(shapes)] \
        if layout_observed == 2 else None
    options.done()
    structures = _argument_structures(block, n_inputs)
    tape = Tape() if structures is None else TreeTape()
    _program.load_program(tape, block[b"CODE"], block[b"STRT"], block[b"FLAG"], block[b"OPND"],
                       block[b"CNST"], block[b"COFF"], block[b"CSIZ"], block[b"INTS"],
                       block[b"BRCH"],
                       block[b"SLOT"], slots, shapes, varied, out_slot, out_shape, callbacks,
                       bool(chunked), bool(layout_observed), layouts)
    _check_callback_ops(tape, callbacks)
    if structures is not None:
        tape._set_trees(structures)
    return tape


def _argument_structures(block, n_inputs):
    """The containers the tape takes (treedefs), or None: a tape of arrays
    (and every tape of a version-1 file)."""
    if b"ARGS" not in block:
        return None
    data = json.loads(block[b"ARGS"], parse_constant=_refuse_constant)
    if data is None:
        return None
    try:
        return structures_from_data(data, n_inputs)
    except (ValueError, TypeError, RecursionError) as err:
        raise ValueError(f"the argument section: {_reason(err)}") from err


def _check_callback_ops(tape, callbacks):
    """Each callback is called by exactly one op, whose arguments and result
    have the sizes the callback works on."""
    uses = [0] * len(callbacks)
    callback = int(_opcodes.Opcode.CALLBACK)
    for k in np.flatnonzero(tape.op_codes() == callback):
        o = decode_op(callback, tape.op_operands(int(k)))
        uses[o.callback] += 1
        args, result = callbacks[o.callback].operand_sizes()
        given = [tape.slot_size_of(r) for r in o.args]
        if list(args) != given or result != tape.slot_size_of(o.result):
            raise ValueError(f"op {k} calls callback {o.callback} with arguments of {given} "
                             f"values and a result of {tape.slot_size_of(o.result)}; the "
                             f"callback works on {list(args)} and {result}")
    for i, n in enumerate(uses):
        if n != 1:
            raise ValueError(f"callback {i} is called by {n} ops; each is called by one")


# ---- pickling ----------------------------------------------------------------------

def reduce_tape(tape):
    """``__reduce__`` of tapes: pickled and copied as their tape file."""
    return (_from_bytes, (dumps(tape),))


def _from_bytes(data):
    return loads(data)
