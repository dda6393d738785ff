"""Snapshot stores: where a checkpointed loop keeps its stored states.

A snapshot is a sequence of NumPy arrays (the loop state). A store has a
fixed number of slots, numbered from 0 like the slot indices of the schedule
actions; ``put`` copies a snapshot into a slot (replacing its content) and
``get`` returns a copy, so the driver may modify what it gets or gave.

Every store is a context manager; ``close()`` (also on leaving the ``with``
block, whether normally or by an exception) drops the snapshots and removes
every file the store created (the disk store's file has no name: it
vanishes with the process whatever happens). File system errors of the disk level are
raised as :class:`adsim.errors.SnapshotDirError` (a subclass of the matching
builtin ``OSError``), naming the directory and what to do.
"""

import io
import os
import tempfile
import weakref

import numpy as np

from .._validate import given
from ..errors import (InvalidArgument, InvalidArgumentValue, SnapshotDirError,
                      SnapshotDirNotADirectoryError, SnapshotDirNotFoundError,
                      SnapshotDirPermissionError)

__all__ = ["MemoryStore", "DiskStore", "TieredStore"]


def _as_snapshot(arrays):
    """Check that ``arrays`` is a sequence of arrays; return it as a tuple."""
    if isinstance(arrays, np.ndarray) or not isinstance(arrays, (tuple, list)):
        raise InvalidArgument(
            "a snapshot is a tuple or list of arrays, got "
            f"{type(arrays).__name__}; wrap a single array as (array,)"
        )
    return tuple(np.asarray(array) for array in arrays)


class _Store:
    """Slot bookkeeping shared by the stores."""

    def __init__(self, slots):
        if isinstance(slots, bool) or not isinstance(slots, (int, np.integer)):
            raise InvalidArgument(f"adsim: slots must be an integer >= 0, got {given(slots)}")
        if slots < 0:
            raise InvalidArgumentValue(f"adsim: slots must be >= 0, got {slots}")
        self._slot_count = int(slots)
        self._sizes = {}
        self._closed = False

    @property
    def slots(self):
        """Number of slots."""
        return self._slot_count

    @property
    def closed(self):
        """Whether :meth:`close` has been called."""
        return self._closed

    @property
    def nbytes(self):
        """Bytes of array data currently stored."""
        return sum(self._sizes.values())

    def __contains__(self, index):
        return index in self._sizes

    def _check(self, index, reading=False):
        if self._closed:
            raise ValueError(f"{type(self).__name__} is closed")
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"slot index must be an integer, got {index!r}")
        if not 0 <= index < self._slot_count:
            raise IndexError(
                f"slot {index} is outside 0..{self._slot_count - 1} of "
                f"{type(self).__name__}"
            )
        if reading and index not in self._sizes:
            raise KeyError(f"slot {index} of {type(self).__name__} is empty")
        return int(index)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        self.close()
        return False


class MemoryStore(_Store):
    """Snapshots kept in memory.

    Parameters
    ----------
    slots : int
        Number of slots.
    copy : bool, optional
        ``True`` (default): ``put`` stores private copies and ``get`` returns
        copies, so the caller may modify what it gave or got. ``False``: the
        store keeps read-only views of the arrays it is given and ``get``
        returns those views; no state is copied. A driver that never writes
        into its states (the checkpoint driver replaces them) saves one
        state-sized copy per ``put`` and per ``get``.
    """

    def __init__(self, slots, copy=True):
        super().__init__(slots)
        self._snapshots = {}
        self._copy = bool(copy)

    def put(self, index, arrays):
        """Store ``arrays`` (a tuple or list of arrays) in slot ``index``."""
        index = self._check(index)
        snapshot = tuple(_private(array, self._copy) for array in _as_snapshot(arrays))
        self._snapshots[index] = snapshot
        self._sizes[index] = sum(array.nbytes for array in snapshot)

    def get(self, index):
        """Return the snapshot in slot ``index`` as a tuple of arrays (copies
        unless the store was made with ``copy=False``)."""
        index = self._check(index, reading=True)
        if not self._copy:
            return self._snapshots[index]
        return tuple(array.copy() for array in self._snapshots[index])

    def close(self):
        """Drop all snapshots. Further use raises ``ValueError``."""
        self._snapshots.clear()
        self._sizes.clear()
        self._closed = True

    def __repr__(self):
        return f"MemoryStore(slots={self.slots})"


def _npy_record(array):
    """(the ``.npy`` header of ``array``, its data as a C-contiguous array)."""
    if array.dtype.hasobject:
        raise ValueError("object arrays cannot be stored as snapshots (no pickles)")
    if not array.flags.c_contiguous:
        array = array.copy()
    header = io.BytesIO()
    np.lib.format.write_array_header_2_0(header, np.lib.format.header_data_from_array_1_0(array))
    return header.getvalue(), array


def _read_record(file):
    """One array written by put (an .npy header, then its bytes), read with
    the file's own readinto: numpy.lib.format.read_array's fromfile turns a
    Ctrl-C arriving during the read into a TypeError about the file."""
    np.lib.format.read_magic(file)
    shape, fortran, dtype = np.lib.format.read_array_header_2_0(file)
    array = np.empty(shape, dtype=dtype, order="F" if fortran else "C")
    view = memoryview(array.reshape(-1, order="A")).cast("B")
    done = 0
    while done < len(view):
        got = file.readinto(view[done:])
        if not got:
            raise OSError(f"the snapshot file ends {len(view) - done} bytes early")
        done += got
    return array


def _write_at(file, data, offset):
    """Write all of ``data`` at ``offset`` of ``file``; the offset after it.
    A failed write (a full disk) raises OSError."""
    data = memoryview(data)
    while len(data):
        done = os.pwrite(file.fileno(), data, offset)
        offset += done
        data = data[done:]
    return offset


def _private(array, copy):
    """A private copy of ``array``, or a read-only view sharing its data."""
    if copy:
        return array.copy()
    view = array.view()
    view.flags.writeable = False
    return view


_ERROR_CLASSES = ((PermissionError, SnapshotDirPermissionError),
                  (FileNotFoundError, SnapshotDirNotFoundError),
                  (NotADirectoryError, SnapshotDirNotADirectoryError))


def snapshot_dir_error(error, directory, doing):
    """``error`` (an OSError) as a :class:`SnapshotDirError` of the matching
    builtin class, naming ``snapshot_dir``, what failed and what to do."""
    cls = next((ours for builtin, ours in _ERROR_CLASSES if isinstance(error, builtin)),
               SnapshotDirError)
    reason = error.strerror or str(error) or type(error).__name__
    message = (f"adsim: cannot {doing} (snapshot_dir={os.fspath(directory)!r}): {reason}. "
               "Give snapshot_dir a directory this process may write to, with room for the "
               "snapshots, and keep it while the loop runs; or raise memory_limit so that "
               "fewer snapshots go to disk.")
    new = cls(error.errno, message) if error.errno is not None else cls(message)
    new.filename = error.filename
    return new


def _missing_parents(directory):
    """The directories ``os.makedirs(directory)`` would create, deepest first."""
    missing = []
    path = os.path.abspath(directory)
    while not os.path.exists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return missing


def _remove_directories(created):
    """Remove the directories a store created for its file, deepest first,
    while they are empty."""
    for path in created:
        try:
            os.rmdir(path)
        except OSError:
            break       # not empty: something else lives there now


def _close_file(file, created):
    file.close()
    _remove_directories(created)


class DiskStore(_Store):
    """Snapshots kept in one anonymous file in ``directory``.

    The file has no name: it is unlinked as it is created
    (``tempfile.TemporaryFile``, with ``O_TMPFILE`` where the file system
    has it), so nothing is ever left in ``directory``, whatever happens to
    the process (an exception, Ctrl-C, SIGKILL) or to the directory (made
    read-only, removed) while the loop runs; its space returns to the file
    system when the store closes or the process ends. The file is opened when
    the store is made, so a directory that cannot take files is refused
    before the loop starts.

    Each slot's snapshot lies in a region of the file. A ``put`` writes into
    a free region (a new one at the end if none fits) and only then releases
    the slot's old region, so a failed write (a full disk) leaves the old
    snapshot. A loop's snapshots have one size, so the file holds at most
    one region per slot and one more. ``close`` closes the file, and removes
    ``directory`` if the store created it and it is empty; this also
    happens when the store is garbage collected or the interpreter exits.

    Parameters
    ----------
    directory : str or os.PathLike
        Where to keep the snapshot file.
    slots : int
        Number of slots.

    Notes
    -----
    Snapshots use the ``.npy`` format (``numpy.lib.format``), without
    pickles: a count, then each array. Nothing is synced to the device;
    snapshots only need to outlive the run, not a crash.
    """

    def __init__(self, directory, slots):
        super().__init__(slots)
        if not isinstance(directory, (str, os.PathLike)):
            raise TypeError(f"adsim: snapshot_dir must be a path (str or os.PathLike), got "
                            f"{type(directory).__name__}")
        directory = os.fspath(directory)
        if not isinstance(directory, str):
            raise TypeError("adsim: snapshot_dir must be a text path, not bytes")
        self._root = directory
        created = _missing_parents(directory)
        try:
            if created:
                os.makedirs(directory)
            self._file = tempfile.TemporaryFile(prefix="adsim-snapshots-", dir=directory,
                                                buffering=0)   # unbuffered: no write is left pending
        except OSError as error:
            _remove_directories(created)
            raise snapshot_dir_error(error, directory, "create a snapshot file there") \
                from error
        except BaseException:
            _remove_directories(created)
            raise
        self._regions = {}        # slot -> (offset, capacity) of its snapshot
        self._free = []           # regions no slot holds
        self._end = 0             # bytes of the file in regions
        self._finalizer = weakref.finalize(self, _close_file, self._file, created)

    @property
    def directory(self):
        """The directory holding the (nameless) snapshot file."""
        return self._root

    def _take_region(self, size):
        for i, (offset, capacity) in enumerate(self._free):
            if capacity >= size:
                return self._free.pop(i)
        self._end += size
        return self._end - size, size

    def put(self, index, arrays):
        """Write ``arrays`` (a tuple or list of arrays) to slot ``index``."""
        index = self._check(index)
        snapshot = _as_snapshot(arrays)
        records = [_npy_record(array) for array in (np.array(len(snapshot), np.int64),) + snapshot]
        region = self._take_region(sum(len(header) + array.nbytes for header, array in records))
        try:
            offset = region[0]
            for header, array in records:
                offset = _write_at(self._file, header, offset)
                offset = _write_at(self._file, memoryview(array.reshape(-1)).cast("B"), offset)
        except BaseException as error:
            self._free.append(region)
            if isinstance(error, OSError):
                raise snapshot_dir_error(error, self._root, f"write snapshot slot {index}") \
                    from error
            raise
        if index in self._regions:
            self._free.append(self._regions[index])
        self._regions[index] = region
        self._sizes[index] = sum(array.nbytes for array in snapshot)

    def get(self, index):
        """Read the snapshot in slot ``index``; returns a tuple of new arrays."""
        index = self._check(index, reading=True)
        try:
            self._file.seek(self._regions[index][0])
            count = int(_read_record(self._file))
            return tuple(_read_record(self._file) for _ in range(count))
        except OSError as error:
            raise snapshot_dir_error(error, self._root, f"read snapshot slot {index}") \
                from error

    def close(self):
        """Close the snapshot file (its space returns to the file system) and
        remove the directory if the store created it."""
        self._sizes.clear()
        self._regions.clear()
        self._closed = True
        self._finalizer()

    def __repr__(self):
        return f"DiskStore({self._root!r}, slots={self.slots})"


class TieredStore:
    """Memory slots followed by disk slots, for :class:`TwoLevel` schedules.

    Slots ``0 .. memory_slots - 1`` are kept in memory, slots
    ``memory_slots .. memory_slots + disk_slots - 1`` on disk, matching the
    slot indices of :class:`~adsim.checkpoint.multistage.TwoLevel`.

    Parameters
    ----------
    memory_slots, disk_slots : int
        Slots per level.
    directory : str or os.PathLike, optional
        Where the disk slots keep their files (see :class:`DiskStore`); the
        system's temporary directory if not given. No directory is created
        when ``disk_slots`` is 0.
    copy : bool, optional
        Whether the memory slots keep copies (see :class:`MemoryStore`).
    """

    def __init__(self, memory_slots, disk_slots, directory=None, copy=True):
        self.memory = MemoryStore(memory_slots, copy=copy)
        if disk_slots:
            if directory is None:
                directory = tempfile.gettempdir()
            self.disk = DiskStore(directory, disk_slots)
        else:
            self.disk = MemoryStore(0)

    @property
    def slots(self):
        """Total number of slots."""
        return self.memory.slots + self.disk.slots

    @property
    def closed(self):
        """Whether :meth:`close` has been called."""
        return self.memory.closed

    @property
    def nbytes(self):
        """Bytes of array data stored on both levels."""
        return self.memory.nbytes + self.disk.nbytes

    def _locate(self, index):
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            if self.memory.slots <= index < self.slots:
                return self.disk, index - self.memory.slots
            if index >= self.slots:
                raise IndexError(f"slot {index} is outside 0..{self.slots - 1} of TieredStore")
        return self.memory, index

    def is_disk(self, index):
        """Whether slot ``index`` is on disk."""
        return self._locate(index)[0] is self.disk

    def __contains__(self, index):
        store, local = self._locate(index)
        return local in store

    def put(self, index, arrays):
        """Store ``arrays`` in slot ``index`` on its level."""
        store, local = self._locate(index)
        store.put(local, arrays)

    def get(self, index):
        """Return a copy of the snapshot in slot ``index``."""
        store, local = self._locate(index)
        try:
            return store.get(local)
        except KeyError:
            raise KeyError(f"slot {index} of TieredStore is empty") from None

    def close(self):
        """Close both levels, removing every file created."""
        try:
            self.disk.close()
        finally:
            self.memory.close()

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        self.close()
        return False

    def __repr__(self):
        return f"TieredStore(memory_slots={self.memory.slots}, disk_slots={self.disk.slots})"
