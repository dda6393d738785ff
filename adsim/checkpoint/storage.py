"""Snapshot stores: where a checkpointed loop keeps its stored states.

A snapshot is a sequence of NumPy arrays (the loop state). A store has a
fixed number of slots, numbered from 0 like the slot indices of the schedule
actions; ``put`` copies a snapshot into a slot (replacing its content) and
``get`` returns a copy, so the driver may modify what it gets or gave.

Every store is a context manager; ``close()`` (also on leaving the ``with``
block, whether normally or by an exception) drops the snapshots and removes
every file the store created. File system errors of the disk level are
raised as :class:`adsim.errors.SnapshotDirError` (a subclass of the matching
builtin ``OSError``), naming the directory and what to do.
"""

import errno
import os
import tempfile
import warnings
import weakref

import numpy as np

from ..errors import (SnapshotCleanupWarning, SnapshotDirError, SnapshotDirNotADirectoryError,
                      SnapshotDirNotFoundError, SnapshotDirPermissionError)

__all__ = ["MemoryStore", "DiskStore", "TieredStore"]


def _as_snapshot(arrays):
    """Check that ``arrays`` is a sequence of arrays; return it as a tuple."""
    if isinstance(arrays, np.ndarray) or not isinstance(arrays, (tuple, list)):
        raise TypeError(
            "a snapshot is a tuple or list of arrays, got "
            f"{type(arrays).__name__}; wrap a single array as (array,)"
        )
    return tuple(np.asarray(array) for array in arrays)


class _Store:
    """Slot bookkeeping shared by the stores."""

    def __init__(self, slots):
        if isinstance(slots, bool) or not isinstance(slots, (int, np.integer)):
            raise TypeError(f"slots must be an integer, got {slots!r}")
        if slots < 0:
            raise ValueError(f"slots must be >= 0, got {slots}")
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


def _write_array(stream, array):
    """One array in the ``.npy`` format, written through ``stream`` so that a
    failed or short write (a full disk) raises OSError; NumPy's own writer
    can lose such errors on the way to the file."""
    if array.dtype.hasobject:
        raise ValueError("object arrays cannot be stored as snapshots (no pickles)")
    if not array.flags.c_contiguous:
        array = array.copy()
    np.lib.format.write_array_header_2_0(stream, np.lib.format.header_data_from_array_1_0(array))
    if array.size:
        stream.write(memoryview(array.reshape(-1)).cast("B"))


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


def _remove_directory(path, created):
    """Remove the store's private directory with its files, then the
    directories the store created for it (while they are empty). Warns
    if the file system keeps anything."""
    left = []
    if os.path.isdir(path):
        try:
            os.chmod(path, 0o700)    # ours: writable again if someone changed that
        except OSError:
            pass
        try:
            names = os.listdir(path)
        except OSError:
            names = []
        for name in names:
            try:
                os.unlink(os.path.join(path, name))
            except FileNotFoundError:
                pass
            except OSError:
                left.append(name)
        try:
            os.rmdir(path)
        except FileNotFoundError:
            pass
        except OSError as error:
            warnings.warn(
                f"adsim: could not remove the snapshot directory {path!r} ({len(left)} files "
                f"left in it): {error.strerror or error}; remove it by hand",
                SnapshotCleanupWarning, stacklevel=3)
    for parent in created:
        try:
            os.rmdir(parent)
        except OSError:
            break       # not empty: something else lives there now


class DiskStore(_Store):
    """Snapshots kept in files, one per slot, written atomically.

    The store works in a private directory it creates inside ``directory``
    (created too if missing). Each ``put`` writes a temporary file in that
    directory and renames it over the slot's file (``os.replace``), so a slot
    file is always either the old or the new snapshot, never a partial one.
    ``close`` removes the private directory and everything in it (and
    ``directory`` itself if the store created it and it is empty); this also
    happens when the store is garbage collected or the interpreter exits.

    Parameters
    ----------
    directory : str or os.PathLike
        Where to keep the snapshot files.
    slots : int
        Number of slots.

    Notes
    -----
    Files use the ``.npy`` format (``numpy.lib.format``), without pickles: a
    count, then each array. Files are not synced to the device; snapshots
    only need to outlive the run, not a crash.
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
            self._directory = tempfile.mkdtemp(prefix="adsim-snapshots-", dir=directory)
        except OSError as error:
            _remove_directory("", created)
            raise snapshot_dir_error(error, directory, "create a snapshot directory there") \
                from error
        except BaseException:
            _remove_directory("", created)
            raise
        self._finalizer = weakref.finalize(
            self, _remove_directory, self._directory, created
        )

    @property
    def directory(self):
        """The private directory holding the snapshot files."""
        return self._directory

    def _path(self, index):
        return os.path.join(self._directory, f"slot-{index}.npy")

    def put(self, index, arrays):
        """Write ``arrays`` (a tuple or list of arrays) to slot ``index``."""
        index = self._check(index)
        snapshot = _as_snapshot(arrays)
        temporary = None
        try:
            handle, temporary = tempfile.mkstemp(
                prefix=f"slot-{index}-", suffix=".tmp", dir=self._directory
            )
            with os.fdopen(handle, "wb") as stream:
                count = np.array(len(snapshot), dtype=np.int64)
                for array in (count,) + snapshot:
                    _write_array(stream, array)
            os.replace(temporary, self._path(index))
        except BaseException as error:
            if temporary is not None:
                try:
                    os.remove(temporary)
                except OSError:
                    pass
            if isinstance(error, OSError):
                raise snapshot_dir_error(
                    error, self._root, f"write snapshot slot {index} to {self._path(index)!r}"
                ) from error
            raise
        self._sizes[index] = sum(array.nbytes for array in snapshot)

    def get(self, index):
        """Read the snapshot in slot ``index``; returns a tuple of new arrays."""
        index = self._check(index, reading=True)
        try:
            with open(self._path(index), "rb") as stream:
                count = int(np.lib.format.read_array(stream, allow_pickle=False))
                return tuple(
                    np.lib.format.read_array(stream, allow_pickle=False)
                    for _ in range(count)
                )
        except OSError as error:
            raise snapshot_dir_error(
                error, self._root, f"read snapshot slot {index} from {self._path(index)!r}"
            ) from error
        except ValueError as error:        # the file was changed since it was written
            raise snapshot_dir_error(
                OSError(errno.EIO, f"the file is damaged ({error})", self._path(index)),
                self._root, f"read snapshot slot {index} from {self._path(index)!r}"
            ) from error

    def close(self):
        """Remove every file and directory the store created."""
        self._sizes.clear()
        self._closed = True
        self._finalizer()

    def __repr__(self):
        return f"DiskStore({self._directory!r}, slots={self.slots})"


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
