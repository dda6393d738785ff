"""Fault injection for snapshots on disk (``snapshot_dir``).

A loop's snapshot file has no name (adsim/checkpoint/storage.py): nothing
may ever be left in the directory, after a sweep, when the step or a
callback raises in the middle of one, on KeyboardInterrupt, on a real
Ctrl-C (SIGINT) and on SIGKILL, and when the directory vanishes, turns into
a file, becomes read-only or runs out of room while the loop runs; the
open file keeps working through the directory's changes. Failures of the
file system are adsim errors subclassing the matching builtin, naming
``snapshot_dir`` and what to do. After each case the files left below the
directory are counted: there must be none.

Tests may run as root, whom permission bits do not stop; the read-only cases
then run in a child process that drops to an unprivileged user first.
A full disk is simulated with the per-process file size limit
(RLIMIT_FSIZE) in a child process: every write past it fails with EFBIG, as
a write to a full file system fails with ENOSPC.
"""
import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import adsim
from adsim.checkpoint import DiskStore
from adsim.errors import SnapshotDirError, SnapshotDirNotADirectoryError
from snapshot_files import held_files

ROOT = Path(__file__).resolve().parents[2]
N = 30
X = np.linspace(0.1, 1.0, 200)
K = np.linspace(-0.5, 0.7, 200)


def step(u, k):
    return u + 0.1 * np.sin(k * u) * np.roll(u, 1)


def disk_loss(directory, limit, progress=None):
    def f(x, k):
        return np.sum(adsim.checkpoint_loop(step, x, N, args=(k,), memory_limit=limit,
                                            snapshots=6, snapshot_dir=directory,
                                            progress=progress) ** 2)
    return f


def gradients(f):
    return adsim.grad(f, argnums=(0, 1))(X, K)


def plain_gradients():
    def f(x, k):
        for _ in range(N):
            x = step(x, k)
        return np.sum(x ** 2)
    return gradients(f)


def files_below(path):
    return sorted(str(Path(root) / f) for root, _, files in os.walk(path) for f in files)


@pytest.fixture(scope="module")
def all_on_disk(tmp_path_factory):
    """The smallest budget with snapshot_dir: every snapshot goes to disk."""
    with pytest.raises(adsim.MemoryBudgetError) as caught:
        gradients(disk_loss(tmp_path_factory.mktemp("probe"), 1))
    return int(re.search(r"smallest budget that works is (\d+) bytes", str(caught.value))[1])


def at_step(k, action):
    """A progress callback running ``action()`` once ``k`` steps are reversed."""
    def progress(done, total):
        if done == k:
            action()
    return progress


def assert_names_the_directory(error, directory):
    message = str(error)
    assert "adsim:" in message and "snapshot_dir=" in message and str(directory) in message
    assert "writable" in message or "write to" in message


def test_files_are_removed_after_the_sweep(tmp_path, all_on_disk):
    directory = tmp_path / "made-by-the-loop"
    seen = []
    f = disk_loss(directory, all_on_disk, progress=lambda d, t: seen.append(
        (held_files(directory), files_below(directory))))
    for got, want in zip(gradients(f), plain_gradients()):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert min(held for held, _ in seen) == 1, "no snapshot went to disk"
    assert all(names == [] for _, names in seen), "a snapshot file had a name"
    assert not directory.exists()


def test_directory_removed_mid_run_does_not_stop_the_sweep(tmp_path, all_on_disk):
    directory = tmp_path / "snapshots"
    got = gradients(disk_loss(directory, all_on_disk, at_step(2, lambda: shutil.rmtree(directory))))
    for g, want in zip(got, plain_gradients()):
        np.testing.assert_allclose(g, want, rtol=1e-12)
    assert files_below(tmp_path) == [] and not directory.exists()


def test_directory_replaced_by_a_file_mid_run_does_not_stop_the_sweep(tmp_path, all_on_disk):
    directory = tmp_path / "snapshots"

    def replace():
        shutil.rmtree(directory)
        directory.write_text("someone else's file")
    got = gradients(disk_loss(directory, all_on_disk, at_step(2, replace)))
    for g, want in zip(got, plain_gradients()):
        np.testing.assert_allclose(g, want, rtol=1e-12)
    assert files_below(tmp_path) == [str(directory)]       # only the user's file


def test_directory_under_a_file_before_the_run(tmp_path, all_on_disk):
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="snapshot_dir=.*is a file") as caught:
        gradients(disk_loss(tmp_path / "file" / "snapshots", all_on_disk))
    assert isinstance(caught.value, SnapshotDirError)
    assert files_below(tmp_path) == [str(tmp_path / "file")]


def test_disk_store_errors_name_the_directory(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(SnapshotDirNotADirectoryError, match="create a snapshot file") as caught:
        DiskStore(tmp_path / "file" / "d", 2)
    assert_names_the_directory(caught.value, tmp_path / "file" / "d")
    store = DiskStore(tmp_path / "d", 2)
    store.put(0, (np.arange(3.0),))
    shutil.rmtree(tmp_path / "d")                 # the open file keeps its snapshots
    store.put(1, (np.arange(4.0),))
    np.testing.assert_array_equal(store.get(0)[0], np.arange(3.0))
    store.close()
    assert files_below(tmp_path) == [str(tmp_path / "file")]


READ_ONLY = r"""
import json, os, sys, warnings
import numpy as np
import adsim
from adsim.errors import SnapshotCleanupWarning, SnapshotDirPermissionError
work = sys.argv[1]
x = np.linspace(0.1, 1.0, 200)
def loss(directory, limit, at=None, action=None):
    def progress(done, total):
        if done == at:
            action()
    def f(x):
        u = adsim.checkpoint_loop(lambda u: u * np.cos(u), x, 30, memory_limit=limit,
                                  snapshots=6, snapshot_dir=directory, progress=progress)
        return np.sum(u ** 2)
    return f
try:
    adsim.grad(loss(os.path.join(work, "probe"), 1))(x)
except adsim.MemoryBudgetError as error:     # its minimum puts every snapshot on disk
    limit = int(str(error).split("smallest budget that works is ")[1].split()[0])
if os.geteuid() == 0:                        # permission bits bind only the unprivileged
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
def files():
    return sum(len(names) for _, _, names in os.walk(work))
def chmod_all(directory, mode):
    for name in os.listdir(directory):
        os.chmod(os.path.join(directory, name), mode)
    os.chmod(directory, mode)
def case(name, directory, at=None, action=None):
    os.makedirs(directory)
    if at is None:
        os.chmod(directory, 0o500)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            adsim.grad(loss(directory, limit, at, action))(x)
            outcome = "finished"
        except OSError as error:
            outcome = type(error).__name__
            permission = isinstance(error, SnapshotDirPermissionError)
            message = str(error)
    left = files()
    chmod_all(directory, 0o700)
    for root, dirs, names in os.walk(directory, topdown=False):
        for d in dirs:
            os.rmdir(os.path.join(root, d))
    os.rmdir(directory)
    result = dict(outcome=outcome, files=left, warned=any(
        issubclass(w.category, SnapshotCleanupWarning) for w in caught))
    if outcome != "finished":
        result.update(permission=permission, message=message)
    return result
d = os.path.join(work, "snapshots")
print(json.dumps(dict(
    before=case("before", d),
    parent=case("parent", d, 2, lambda: os.chmod(d, 0o500)),
    everything=case("everything", d, 2, lambda: chmod_all(d, 0o500)),
    uid=os.geteuid())))
"""


def test_read_only_directories():
    """Read-only before the run: a PermissionError naming snapshot_dir.
    Made read-only mid-run (alone, or with everything in it): the loop's
    open file still takes snapshots, so the sweep finishes, and nothing is
    left, nor any warning about what could not be removed.
    Run unprivileged (a child that drops root), since root ignores the bits."""
    work = tempfile.mkdtemp(prefix="adsim-read-only-")
    os.chmod(work, 0o777)
    try:
        child = run_child(READ_ONLY, work)
        out, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
        result = json.loads(out)
        assert result["uid"] != 0
        before, parent, everything = result["before"], result["parent"], result["everything"]
        assert before["outcome"] == "SnapshotDirPermissionError" and before["permission"]
        assert "snapshot_dir=" in before["message"] and "snapshots" in before["message"]
        assert parent["outcome"] == everything["outcome"] == "finished"
        assert not parent["warned"] and not everything["warned"]
        assert before["files"] == parent["files"] == everything["files"] == 0
        assert files_below(work) == []
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_exception_in_a_callback_mid_run(tmp_path, all_on_disk):
    directory = tmp_path / "snapshots"

    def fail():
        raise ArithmeticError("stop here")
    with pytest.raises(ArithmeticError, match="stop here"):
        gradients(disk_loss(directory, all_on_disk, at_step(3, fail)))
    assert files_below(tmp_path) == []


def test_keyboard_interrupt_mid_run_cleans_up_and_the_loop_still_works(tmp_path, all_on_disk):
    directory = tmp_path / "snapshots"
    seen = []

    def interrupt():
        seen.append(held_files(directory))
        raise KeyboardInterrupt
    g = adsim.grad(disk_loss(directory, all_on_disk, at_step(4, interrupt)), argnums=(0, 1))
    with pytest.raises(KeyboardInterrupt):
        g(X, K)
    assert seen and seen[0], "no snapshot was on disk when the interrupt came"
    assert files_below(tmp_path) == []
    again = adsim.grad(disk_loss(directory, all_on_disk), argnums=(0, 1))(X, K)
    for got, want in zip(again, plain_gradients()):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def run_child(script, *args, timeout=60):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


DISK_FULL = r"""
import json, os, resource, signal, sys
import numpy as np
import adsim
directory = sys.argv[1]
x = np.linspace(0.1, 1.0, 200)
def loss(limit):
    def f(x):
        u = adsim.checkpoint_loop(lambda u: u * np.cos(u), x, 30, memory_limit=limit,
                                  snapshots=6, snapshot_dir=directory)
        return np.sum(u ** 2)
    return f
try:
    adsim.grad(loss(1))(x)
except adsim.MemoryBudgetError as error:     # its minimum puts every snapshot on disk
    limit = int(str(error).split("smallest budget that works is ")[1].split()[0])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
try:
    adsim.grad(loss(limit))(x)
    out = dict(outcome="finished")
except Exception as error:
    out = dict(outcome=type(error).__name__, errno=getattr(error, "errno", None),
               message=str(error), oserror=isinstance(error, OSError),
               adsim=isinstance(error, adsim.errors.SnapshotDirError))
out["files"] = sum(len(files) for _, _, files in os.walk(directory))
print(json.dumps(out))
"""


def test_disk_full_is_an_adsim_error_and_leaves_no_file(tmp_path):
    directory = tmp_path / "snapshots"
    child = run_child(DISK_FULL, directory)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    result = json.loads(out)
    assert result["outcome"] == "SnapshotDirError", result
    assert result["oserror"] and result["adsim"] and result["errno"] == errno.EFBIG
    assert "snapshot_dir=" in result["message"] and "room for the snapshots" in result["message"]
    assert result["files"] == 0 and files_below(tmp_path) == []


CTRL_C = r"""
import json, os, sys, time
import numpy as np
import adsim
directory, n_steps, when = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n = 2000
x = np.linspace(0.0, 1.0, n)
k = np.linspace(0.5, 1.0, n)
def step(u, k):
    return u + 1e-4 * k * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
def progress(done, total):
    if done == 1 and when == "reverse":
        print("now", flush=True)
def loss(steps, limit):
    def f(x):
        u = adsim.checkpoint_loop(step, x, steps, args=(k,), memory_limit=limit, snapshots=6,
                                  snapshot_dir=directory, progress=progress)
        return np.sum(u ** 2)
    return f
try:
    adsim.grad(loss(3, 1))(x)
except adsim.MemoryBudgetError as error:     # its minimum puts every snapshot on disk
    limit = int(str(error).split("smallest budget that works is ")[1].split()[0])
f = loss(n_steps, limit)
if when == "value":
    print("now", flush=True)
try:
    adsim.grad(f)(x)
    print(json.dumps(dict(outcome="finished")), flush=True)
except KeyboardInterrupt:
    files = sum(len(fs) for _, _, fs in os.walk(directory))
    print(json.dumps(dict(outcome="interrupted", files=files)), flush=True)
"""


@pytest.mark.parametrize(("when", "n_steps", "delay"), [("value", 10**6, 1.0),
                                                       ("reverse", 10**5, 0.2)])
def test_ctrl_c_is_honoured_within_half_a_second(tmp_path, when, n_steps, delay):
    """SIGINT while plain replays of many steps run in C (one second into
    the value pass of 10**6 steps of about 3 us, or during the reverse sweep
    with every snapshot on disk): KeyboardInterrupt within 0.5 s and no file
    left. Replaying all steps in one call would take seconds."""
    directory = tmp_path / "snapshots"
    child = run_child(CTRL_C, directory, n_steps, when)
    try:
        assert child.stdout.readline() == "now\n", child.stderr.read()
        time.sleep(delay)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline()
        elapsed = time.monotonic() - sent
    finally:
        child.kill()
        _, err = child.communicate()
    assert line, err
    result = json.loads(line)
    assert result["outcome"] == "interrupted"
    assert elapsed < 0.5, f"KeyboardInterrupt after {elapsed:.2f} s"
    assert result["files"] == 0 and files_below(tmp_path) == []


KILLED = r"""
import sys
import numpy as np
import adsim
directory = sys.argv[1]
x = np.linspace(0.1, 1.0, 200)
def loss(limit, progress=None):
    def f(x):
        u = adsim.checkpoint_loop(lambda u: u * np.cos(u), x, 3000, memory_limit=limit,
                                  snapshots=6, snapshot_dir=directory, progress=progress)
        return np.sum(u ** 2)
    return f
try:
    adsim.grad(loss(1))(x)
except adsim.MemoryBudgetError as error:     # its minimum puts every snapshot on disk
    limit = int(str(error).split("smallest budget that works is ")[1].split()[0])
def progress(done, total):
    if done == 5:
        print("snapshots on disk", flush=True)
    if done > 5:
        sys.stdin.readline()                  # waits for the kill
adsim.grad(loss(limit, progress))(x)
"""


def _open_files(pid):
    """What the running process ``pid`` has open (a descriptor closed while
    they are read is skipped: the process goes on with its sweep)."""
    held = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            held.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except FileNotFoundError:
            pass
    return held


def test_a_process_killed_mid_sweep_leaves_nothing(tmp_path):
    directory = tmp_path / "snapshots"
    directory.mkdir()
    child = subprocess.Popen([sys.executable, "-c", KILLED, str(directory)], cwd=ROOT,
                             env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                                 filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "snapshots on disk\n", child.stderr.read()
        held = _open_files(child.pid)
        assert any(path.startswith(str(directory)) for path in held), held
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        child.kill()
        child.communicate()
    assert child.returncode == -signal.SIGKILL
    assert files_below(tmp_path) == [] and list(directory.iterdir()) == []
