"""Run the benchmark areas: ``python -m benchmarks [--quick] [--full] [area ...]``.

Every ``benchmarks/<area>.py`` script (all modules but ``problems`` and
``timing``) is an area; with no area named, all run, ``recording`` and
``helmholtz`` first. Each runs in its own process (``python -m
benchmarks.<area>``), so one tool's imports and memory do not colour the next
area's numbers. Options a script does not know are not passed to it; a script
that does not accept ``--quick`` is skipped in a quick run.
"""
import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIRST = ("recording", "helmholtz")
NOT_AREAS = {"__init__", "__main__", "problems", "timing"}


def areas():
    """Area names, in running order."""
    found = sorted(p.stem for p in HERE.glob("*.py") if p.stem not in NOT_AREAS
                   and not p.stem.startswith("_"))
    return [a for a in FIRST if a in found] + [a for a in found if a not in FIRST]


def _understands(source, flag):
    """Whether an area script takes ``flag``: all do that build their command
    line with ``timing.parser`` (or ``timing.area_main``); others must spell
    the flag out."""
    return ("T.parser(" in source or "timing.parser(" in source or "T.area_main(" in source
            or flag in source)


def _flags(args, source):
    """The runner's options that the area script ``source`` understands."""
    wanted = [("--quick", args.quick), ("--full", args.full), ("--no-peers", args.no_peers),
              ("--no-docs", args.docs is False), ("--docs", args.docs is True)]
    flags = [flag for flag, on in wanted if on and _understands(source, flag)]
    if args.threads != 1 and _understands(source, "--threads"):
        flags += ["--threads", str(args.threads)]
    if args.results_dir is not None and _understands(source, "--results-dir"):
        flags += ["--results-dir", str(args.results_dir)]
    return flags


def run_area(area, args, env):
    source = (HERE / f"{area}.py").read_text()
    if args.quick and not _understands(source, "--quick"):
        return "skipped (no --quick option)", 0.0
    cmd = [sys.executable, "-m", f"benchmarks.{area}"] + _flags(args, source)
    print(f"\n=== {area}: {' '.join(shlex.quote(c) for c in cmd[1:])}", flush=True)
    t0 = time.perf_counter()
    rc = subprocess.call(cmd, cwd=HERE.parent, env=env)
    return ("ok" if rc == 0 else f"failed (exit {rc})"), time.perf_counter() - t0


def main(argv=None):
    known = areas()
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    p.add_argument("areas", nargs="*", metavar="area", help=f"areas to run (default all: "
                                                            f"{', '.join(known)})")
    p.add_argument("--quick", action="store_true", help="small sizes, short samples (seconds)")
    p.add_argument("--full", action="store_true", help="also the slow methods at large sizes")
    p.add_argument("--no-peers", action="store_true", help="do not time other AD tools")
    p.add_argument("--threads", type=int, default=1,
                   help="threads for BLAS, PyTorch and XLA (default 1; 0: library defaults)")
    p.add_argument("--results-dir", type=Path, default=None, help="where JSON results go")
    p.add_argument("--docs", dest="docs", action="store_true", default=None,
                   help="update docs/benchmarks.md (default unless --quick)")
    p.add_argument("--no-docs", dest="docs", action="store_false", help="leave docs/ alone")
    p.add_argument("--list", action="store_true", help="list the areas and exit")
    args = p.parse_args(argv)
    if args.list:
        print("\n".join(known))
        return 0
    unknown = [a for a in args.areas if a not in known]
    if unknown:
        p.error(f"unknown area(s) {', '.join(unknown)}; known: {', '.join(known)}")
    env = dict(os.environ)
    env["ADSIM_BENCH_COMMAND"] = " ".join(
        ["python", "-m", "benchmarks"] + [shlex.quote(a) for a in (argv if argv is not None
                                                                    else sys.argv[1:])])
    if args.threads > 0:      # before any library starts its thread pools
        env.update({k: str(args.threads) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                   "MKL_NUM_THREADS")})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), env.get("PYTHONPATH")]))
    summary = [(area, *run_area(area, args, env)) for area in (args.areas or known)]
    print("\n=== summary")
    for area, status, seconds in summary:
        print(f"{area:24s} {status:32s} {seconds:8.1f} s")
    return 0 if all(not s.startswith("failed") for _, s, _ in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
