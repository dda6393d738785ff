"""examples/ensemble_dask.py runs small and passes its own checks (central
differences, bitwise agreement with serial replays): as a script, on a local
Dask cluster when dask.distributed is installed and on a thread pool when it
is not, and in-process on a thread pool."""
import importlib.util
import os
import subprocess
import sys
from paths import ROOT



def test_the_script_runs_on_dask_or_falls_back_to_threads():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    run = subprocess.run([sys.executable, "examples/ensemble_dask.py", "--members", "8",
                          "--steps", "200"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    with_dask = importlib.util.find_spec("distributed") is not None
    where = "a local cluster of 2 worker processes" if with_dask else "a thread pool"
    assert f"8 gradients of a 200-step checkpointed Lorenz misfit on {where}" in run.stdout
    assert ("not installed" in run.stdout) != with_dask


def test_the_example_on_a_thread_pool(load_example, capsys):
    example = load_example("ensemble_dask")
    summary = example.main(["--threads", "--members", "6", "--steps", "120"])
    assert summary["executor"] == "threads" and summary["members"] == 6
    assert summary["fd_error"] < 1e-5
    assert "on a thread pool" in capsys.readouterr().out
