"""Smoke run of the benchmark suite: ``python -m benchmarks --quick`` finishes
and writes its results (no timing is asserted). Other AD tools are left out
(``--no-peers``): importing JAX and PyTorch alone takes seconds, and CI does
not install them; ``python -m benchmarks --quick`` runs them where installed."""
import importlib.util
import json
import os
import subprocess
import sys
from paths import ROOT



# generous: on a loaded machine (the suite's other worker, other jobs) the
# run has taken over 5 minutes
TIMEOUT = 1200


def test_quick_benchmarks_run(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--no-peers",
                           "--no-docs", "--results-dir", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    for area in ("recording", "helmholtz"):
        payload = json.loads((tmp_path / f"{area}.json").read_text())
        assert payload["area"] == area
        assert payload["machine"]["cpu"]
    helmholtz = json.loads((tmp_path / "helmholtz.json").read_text())["results"]
    for entries in helmholtz["by_size"].values():
        measured = [e for e in entries.values() if "timing" in e]
        assert {"f_numpy", "f_tape", "adsim_tape_gradient"} <= set(entries)
        assert all(e["timing"]["median"] > 0 for e in measured)
        assert all("skipped" in e for k, e in entries.items() if k in ("autograd", "jax", "torch"))
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "helmholtz.png").exists()
