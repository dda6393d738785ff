"""Snapshot files of disk stores have no name (adsim/checkpoint/storage.py):
tests see them only as files this process holds open in a directory."""
import os


def held_files(directory):
    """How many files in ``directory`` (named or not) this process has open."""
    directory = os.path.realpath(directory)
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue                    # closed since listed
        if os.path.dirname(target) == directory:
            count += 1
    return count
