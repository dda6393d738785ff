"""How the benchmarks time things, describe the machine and write results.

Timing method
-------------
A callable is called ``warmup`` times (first-call costs such as JIT
compilation or tape allocation are not measured), then the number of calls
per sample is chosen so that one sample lasts at least ``target`` seconds.
``repeats`` samples are taken with the garbage collector off (as ``timeit``
does); the result is the median time per call with the minimum and maximum
over the samples as its spread. Slow callables get fewer samples, so that one
measurement never takes much more than ``budget`` seconds.

Results
-------
Each area writes ``benchmarks/results/<area>.json`` (machine, settings and
numbers) and a markdown section of ``docs/benchmarks.md`` between the markers
``<!-- bench:<area>:begin -->`` and ``<!-- bench:<area>:end -->``; text
outside the markers is kept. Quick runs write JSON only, unless asked.
"""
import argparse
import datetime
import gc
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "benchmarks" / "results"
DOCS_PATH = ROOT / "docs" / "benchmarks.md"
FIGURES_DIR = ROOT / "docs" / "figures"
PEERS = ("autograd", "casadi", "jax", "torch", "diffrax", "torchdiffeq")
BLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
            "MKL_NUM_THREADS")


# ---- settings -----------------------------------------------------------------

@dataclass(frozen=True)
class Settings:
    """How long to measure; built from the command line by :func:`parse_args`."""

    quick: bool = False
    full: bool = False
    target: float = 0.05      # seconds per sample, at least
    repeats: int = 7          # samples per measurement
    warmup: int = 2           # calls before sampling
    budget: float = 20.0      # seconds per measurement, about
    peers: bool = True        # time other AD tools when they are installed
    threads: int = 1          # threads of BLAS, PyTorch and XLA (0: the libraries' defaults)
    results_dir: Path = RESULTS_DIR
    docs_path: Path = DOCS_PATH
    figures_dir: Path = FIGURES_DIR   # None: no figures
    write_docs: bool = True
    command: str = ""

    @classmethod
    def quick_settings(cls, **kw):
        return cls(quick=True, target=0.002, repeats=3, warmup=1, budget=0.5, write_docs=False,
                   results_dir=RESULTS_DIR, figures_dir=None, **kw)


def parser(area, description):
    """The command line shared by every area script."""
    p = argparse.ArgumentParser(prog=f"python -m benchmarks.{area}", description=description)
    p.add_argument("--quick", action="store_true",
                   help="small sizes and short samples: finishes in seconds (a smoke run)")
    p.add_argument("--full", action="store_true",
                   help="also run the slow methods at the largest sizes")
    p.add_argument("--threads", type=int, default=1,
                   help="threads for BLAS, PyTorch and XLA (default 1; 0 keeps the libraries' "
                        "defaults)")
    p.add_argument("--no-peers", action="store_true",
                   help="do not time other AD tools even when installed")
    p.add_argument("--results-dir", type=Path, default=None,
                   help="where to write <area>.json (default benchmarks/results)")
    p.add_argument("--docs", dest="docs", action="store_true", default=None,
                   help="update docs/benchmarks.md and docs/figures (default unless --quick "
                        "or the machine is busy: a load average over 0.75 per core)")
    p.add_argument("--no-docs", dest="docs", action="store_false",
                   help="do not touch docs/benchmarks.md or docs/figures")
    return p


BUSY_LOAD = 0.75     # load average per core above which docs are left alone by default


def busy_machine(area):
    """Whether other work holds the cores now (load average over BUSY_LOAD per
    core): a run then measures the machine's load as much as the code, so it
    does not replace the docs' tables unless ``--docs`` asks for it."""
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load <= BUSY_LOAD * cores:
        return False
    print(f"{area}: load average {load:.2f} on {cores} cores: docs/benchmarks.md is left "
          f"alone (pass --docs to write it anyway)", file=sys.stderr)
    return True


def settings_from(args, area):
    """Settings for parsed ``args``; quick runs keep their files out of docs/."""
    command = os.environ.get("ADSIM_BENCH_COMMAND") or " ".join(
        ["python", "-m", f"benchmarks.{area}"] + [shlex.quote(a) for a in sys.argv[1:]])
    kw = dict(full=args.full, peers=not args.no_peers, threads=args.threads, command=command)
    s = Settings.quick_settings(**kw) if args.quick else Settings(**kw)
    results = args.results_dir if args.results_dir is not None else s.results_dir
    docs = (not args.quick and not busy_machine(area)) if args.docs is None else args.docs
    # figures go to docs/figures with the docs, beside the JSON when a results
    # directory is named, and nowhere otherwise (benchmarks/results keeps JSON only)
    figures = FIGURES_DIR if docs else (Path(results) if args.results_dir is not None else None)
    return Settings(**{**asdict(s), "results_dir": Path(results), "write_docs": docs,
                       "figures_dir": figures})


# ---- threads ----------------------------------------------------------------------

THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def thread_env(threads):
    """Environment variables that limit the thread pools of libraries loaded later."""
    return {k: str(threads) for k in THREAD_ENV} if threads > 0 else {}


def limit_threads(settings):
    """Limit the BLAS pools already loaded (through threadpoolctl) and those
    loaded later (environment; PyTorch and XLA are set where they are used).
    Returns a note for the results."""
    if settings.threads <= 0:
        return "library defaults"
    os.environ.update(thread_env(settings.threads))
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return (f"{settings.threads} through the environment only (threadpoolctl not installed: "
                f"BLAS pools loaded before it may keep their defaults)")
    threadpool_limits(limits=settings.threads)
    return f"{settings.threads} (threadpoolctl and environment)"


# ---- measuring ------------------------------------------------------------------

@dataclass(frozen=True)
class Timing:
    """Seconds per call: median over the samples, with their min and max, and
    the median CPU time of the process per call (which leaves out time spent
    waiting for a core on a busy machine, but adds up all threads)."""

    median: float
    min: float
    max: float
    repeats: int
    number: int               # calls per sample
    cpu_median: float = float("nan")

    def as_dict(self):
        return asdict(self)

    def per(self, count):
        """The same timing divided by ``count`` (for example per recorded op)."""
        return Timing(self.median / count, self.min / count, self.max / count, self.repeats,
                      self.number, self.cpu_median / count)


def _sample(fn, number):
    """(wall, CPU) seconds per call over ``number`` calls."""
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number, (time.process_time() - c0) / number


def measure(fn, settings=Settings(), repeats=None):
    """Time ``fn()`` as described in the module docstring."""
    repeats = repeats or settings.repeats
    enabled = gc.isenabled()
    try:
        gc.disable()
        estimate = _sample(fn, 1)[0]                  # first warm-up call
        for _ in range(settings.warmup - 1):
            if estimate > settings.budget / 10:       # slow: no more warm-up calls
                break
            estimate = _sample(fn, 1)[0]
        number = max(1, math.ceil(settings.target / max(estimate, 1e-9)))
        if number > 1:   # one call of a fast function is a noisy estimate: probe a few
            estimate = _sample(fn, min(number, 20))[0]
            number = max(1, math.ceil(settings.target / max(estimate, 1e-9)))
        repeats = max(1, min(repeats, int(settings.budget / max(estimate * number, 1e-9))))
        samples = [_sample(fn, number) for _ in range(repeats)]
    finally:
        if enabled:
            gc.enable()
    wall = [w for w, _ in samples]
    return Timing(statistics.median(wall), min(wall), max(wall), repeats, number,
                  statistics.median(c for _, c in samples))


# ---- the machine --------------------------------------------------------------

def _cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    if sys.platform == "darwin":
        try:
            return subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True,
                                  text=True, timeout=5).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine()


def _physical_cores():
    try:
        cores = set()
        phys = None
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("physical id"):
                    phys = line.split(":", 1)[1].strip()
                elif line.startswith("core id"):
                    cores.add((phys, line.split(":", 1)[1].strip()))
        return len(cores) or None
    except OSError:
        return None


def _memory_gib():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal"):
                    return round(int(line.split()[1]) / 2 ** 20, 1)
    except OSError:
        pass
    return None


def _blas_info():
    try:
        import threadpoolctl
    except ImportError:
        return {"note": "threadpoolctl is not installed; BLAS details unknown"}
    return {"threadpools": [{k: v for k, v in pool.items() if k != "filepath"}
                            for pool in threadpoolctl.threadpool_info()]}


def _git_commit():
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=5)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def peer_versions():
    """Versions of the other AD tools that are installed (None when not)."""
    import importlib.metadata as md
    import importlib.util
    versions = {}
    for name in PEERS:
        if importlib.util.find_spec(name) is None:
            versions[name] = None
            continue
        try:
            versions[name] = md.version(name)
        except md.PackageNotFoundError:
            versions[name] = "unknown"
    return versions


def machine_info(threads_note=None):
    """What the numbers depend on: CPU, cores, memory, Python, NumPy and its BLAS."""
    import adsim
    return {
        "threads": threads_note,
        "cpu": _cpu_model(),
        "logical_cores": os.cpu_count(),
        "physical_cores": _physical_cores(),
        "memory_gib": _memory_gib(),
        "platform": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "numpy": np.__version__,
        "blas": _blas_info(),
        "blas_env": {k: os.environ.get(k) for k in BLAS_ENV},
        "adsim": adsim.__version__,
        "commit": _git_commit(),
        "peers": peer_versions(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def machine_line(info):
    """One markdown line naming the machine, for the docs sections."""
    pools = info["blas"].get("threadpools", [])
    blas = ", ".join(f"{p.get('internal_api')} {p.get('version')} ({p.get('architecture')}, "
                     f"{p.get('num_threads')} threads)"
                     for p in pools if p.get("user_api") == "blas")
    env = ", ".join(f"{k}={v}" for k, v in info["blas_env"].items() if v is not None) or "none set"
    return (f"{info['cpu']}, {info['physical_cores'] or '?'} cores / {info['logical_cores']} "
            f"threads, {info['memory_gib']} GiB; {info['python']}, NumPy {info['numpy']}, "
            f"BLAS: {blas or 'unknown'}; BLAS environment variables: {env}")


# ---- writing ---------------------------------------------------------------------

def _jsonable(obj):
    if isinstance(obj, Timing):
        return obj.as_dict()
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"cannot write {type(obj).__name__} to JSON")


def write_json(area, settings, machine, results):
    """Write ``<results_dir>/<area>.json``; returns its path."""
    out = Path(settings.results_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{area}.json"
    payload = {"area": area, "command": settings.command,
               "settings": {k: v for k, v in asdict(settings).items()},
               "machine": machine, "results": results}
    path.write_text(json.dumps(payload, indent=1, default=_jsonable) + "\n")
    return path


def update_docs(area, markdown, settings):
    """Replace the area's marked section of docs/benchmarks.md (appending it
    when missing)."""
    path = Path(settings.docs_path)
    begin, end = f"<!-- bench:{area}:begin -->", f"<!-- bench:{area}:end -->"
    block = f"{begin}\n{markdown.strip()}\n{end}"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def table(headers, rows):
    """A markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt_time(seconds):
    """A duration with a unit chosen for it: 12.3 ns, 4.56 µs, 7.89 ms, 1.23 s."""
    if seconds is None or not math.isfinite(seconds):
        return "–"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_timing(t):
    """Median with the min–max spread in parentheses."""
    return f"{fmt_time(t.median)} ({fmt_time(t.min)}–{fmt_time(t.max)})"


def fmt_ratio(r):
    if r is None or not math.isfinite(r):
        return "–"
    return f"{r:.3g}"


def _load(machine):
    load = machine.get("load_average")
    return "unknown" if not load else " / ".join(f"{v:.2f}" for v in load)


def header(area, settings, machine):
    """Opening lines of an area's docs section: command and machine."""
    return (f"Command: `{settings.command}`  \n"
            f"Machine: {machine_line(machine)}  \n"
            f"Date: {machine['date']}, commit {machine['commit'] or 'unknown'}, load average "
            f"at the start {_load(machine)}; threads: {machine.get('threads') or 'not limited'}. "
            f"Times are medians (min–max over {settings.repeats} samples unless fewer fitted "
            f"in the time budget); see `benchmarks/timing.py` for the method.")


def report(area, settings, machine, results, md):
    """Print the markdown, write the JSON results and, unless told not to,
    the docs section of ``area``."""
    print(md)
    print(f"wrote {write_json(area, settings, machine, results)}")
    if settings.write_docs:
        print(f"updated {update_docs(area, md, settings)}")
    return 0


class Skip(Exception):
    """A method that cannot run here (not installed, or too large or slow at this size)."""


def peer(name):
    """Import an optional peer AD tool, or raise Skip naming it."""
    try:
        return __import__(name)
    except ImportError:
        raise Skip(f"{name} not installed") from None


def jax_peer(settings):
    """JAX in double precision (or raise Skip); with one thread asked for,
    XLA's CPU backend runs on one thread (its flags are read when it starts,
    so this must come before the first import of JAX)."""
    if settings.threads == 1 and "jax" not in sys.modules:
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false").strip()
    jax = peer("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def area_main(area, description, run, markdown, argv=None):
    """The command line of an area script: parse, measure, report."""
    args = parser(area, description).parse_args(argv)
    settings = settings_from(args, area)
    machine = machine_info(limit_threads(settings))
    results = run(settings)
    return report(area, settings, machine, results, markdown(results, settings, machine))
