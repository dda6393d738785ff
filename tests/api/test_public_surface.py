"""Every public name of adsim, fed awkward arguments in a child process: no
crash of the interpreter, and every error a clear one (adsim's own, or
Python's for a call that does not fit). See tests/public_surface_probe.py."""
import subprocess
import sys

import pytest
from paths import ROOT, TESTS

PROBE = TESTS / "public_surface_probe.py"


@pytest.mark.slow
def test_public_names_survive_awkward_arguments():
    run = subprocess.run([sys.executable, str(PROBE)], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert run.returncode == 0, f"the probe died (signal {-run.returncode}):\n{run.stderr[-3000:]}"
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith("unclear 0 "), run.stdout[-5000:]
