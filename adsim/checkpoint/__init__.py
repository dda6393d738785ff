"""Checkpointed loops: schedules, snapshot stores and memory budgets."""

from .loop import checkpoint_loop, checkpoint_while
from .budget import format_bytes, parse_bytes, snapshots_for_budget
from .multistage import TwoLevel
from .online import Online
from .schedules import (
    Action,
    Advance,
    FirstTurn,
    Restore,
    Revolve,
    ScheduleCounts,
    TakeShot,
    YouTurn,
    binomial_cost,
    repetition_number,
    simulate,
)
from .storage import DiskStore, MemoryStore, TieredStore
from ..errors import (MemoryBudgetError, SnapshotCleanupWarning, SnapshotDirError,
                      SnapshotDirNotADirectoryError, SnapshotDirNotFoundError,
                      SnapshotDirPermissionError)

__all__ = [
    "checkpoint_loop",
    "checkpoint_while",
    "Action",
    "Advance",
    "TakeShot",
    "Restore",
    "FirstTurn",
    "YouTurn",
    "Revolve",
    "Online",
    "TwoLevel",
    "ScheduleCounts",
    "simulate",
    "binomial_cost",
    "repetition_number",
    "MemoryStore",
    "DiskStore",
    "TieredStore",
    "parse_bytes",
    "format_bytes",
    "snapshots_for_budget",
    "MemoryBudgetError",
    "SnapshotDirError",
    "SnapshotDirPermissionError",
    "SnapshotDirNotFoundError",
    "SnapshotDirNotADirectoryError",
    "SnapshotCleanupWarning",
]
