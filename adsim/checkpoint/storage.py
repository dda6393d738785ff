"""Snapshot stores: where a checkpointed loop keeps its stored states.

A snapshot is a sequence of NumPy arrays (the loop state). A store has a
fixed number of slots, numbered from 0 like the slot indices of the schedule
actions; ``put`` copies a snapshot into a slot (replacing its content) and
``get`` returns a copy, so the driver may modify what it gets or gave.

Every store is a context manager; ``close()`` (also on leaving the ``with``
block, whether normally or by an exception) drops the snapshots and removes
every file the store created.
"""

import os
import shutil
import tempfile
import weakref

import numpy as np

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
    """Snapshots kept in memory as private copies.

    Parameters
    ----------
    slots : int
        Number of slots.
    """

    def __init__(self, slots):
        super().__init__(slots)
        self._snapshots = {}

    def put(self, index, arrays):
        """Store a copy of ``arrays`` (a tuple or list of arrays) in slot ``index``."""
        index = self._check(index)
        snapshot = tuple(array.copy() for array in _as_snapshot(arrays))
        self._snapshots[index] = snapshot
        self._sizes[index] = sum(array.nbytes for array in snapshot)

    def get(self, index):
        """Return a copy of the snapshot in slot ``index`` as a tuple of arrays."""
        index = self._check(index, reading=True)
        return tuple(array.copy() for array in self._snapshots[index])

    def close(self):
        """Drop all snapshots. Further use raises ``ValueError``."""
        self._snapshots.clear()
        self._sizes.clear()
        self._closed = True

    def __repr__(self):
        return f"MemoryStore(slots={self.slots})"


def _remove_directory(path, root_to_remove):
    """Remove the store's private directory, and its parent if it made it."""
    shutil.rmtree(path, ignore_errors=True)
    if root_to_remove is not None:
        try:
            os.rmdir(root_to_remove)
        except OSError:
            pass  # not empty: something else lives there now


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
        directory = os.fspath(directory)
        created = None
        if not os.path.isdir(directory):
            os.makedirs(directory)
            created = directory
        self._directory = tempfile.mkdtemp(prefix="adsim-snapshots-", dir=directory)
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
        handle, temporary = tempfile.mkstemp(
            prefix=f"slot-{index}-", suffix=".tmp", dir=self._directory
        )
        try:
            with os.fdopen(handle, "wb") as stream:
                count = np.array(len(snapshot), dtype=np.int64)
                np.lib.format.write_array(stream, count, allow_pickle=False)
                for array in snapshot:
                    np.lib.format.write_array(stream, array, allow_pickle=False)
            os.replace(temporary, self._path(index))
        except BaseException:
            if os.path.exists(temporary):
                os.remove(temporary)
            raise
        self._sizes[index] = sum(array.nbytes for array in snapshot)

    def get(self, index):
        """Read the snapshot in slot ``index``; returns a tuple of new arrays."""
        index = self._check(index, reading=True)
        with open(self._path(index), "rb") as stream:
            count = int(np.lib.format.read_array(stream, allow_pickle=False))
            return tuple(
                np.lib.format.read_array(stream, allow_pickle=False)
                for _ in range(count)
            )

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
    """

    def __init__(self, memory_slots, disk_slots, directory=None):
        self.memory = MemoryStore(memory_slots)
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
