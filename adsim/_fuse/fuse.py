"""Give a tape's runs their fused kernels (``Tape.fuse``)."""
import threading
from dataclasses import dataclass

from . import codegen, compiler


@dataclass(frozen=True)
class Fusion:
    """What ``Tape.fuse`` did: the runs fused, and why the others were not."""

    runs: int                   # runs of elementwise ops the tape has
    fused: int                  # runs that now have fused kernels
    reasons: tuple              # (run index, why it stays interpreted)

    def __str__(self):
        lines = [f"{self.fused} of {self.runs} runs of elementwise ops fused"]
        lines += [f"  run {run}: {why}" for run, why in self.reasons]
        return "\n".join(lines)


def fuse(tape):
    """Compile the tape's runs of elementwise ops and hand the kernels to it.

    Raises ``adsim.errors.NoCompiler`` when no C compiler builds them."""
    with _LOCK:                 # a tape's kernels are installed once
        done = getattr(tape, "_fusion", None)
        if done is None:
            done = tape._fusion = _fuse(tape)
        return done


_LOCK = threading.Lock()


# runs from this size on are fused (one loop instead of one per op pays off
# well below the size from which the interpreter chunks runs)
FUSED_RUN_MIN_SIZE = 1024


def _fuse(tape):
    tape._find_smaller_runs(FUSED_RUN_MIN_SIZE)
    table = tape._run_table()
    codes = tape.op_codes()
    flags = [tape.op_flags(k) for k in range(len(codes))]
    sources, reasons = [], []
    for index, row in enumerate(table):
        try:
            sources.append((index, codegen.run_source(tape, row, codes, flags, f"r{index}")))
        except codegen.NotFusable as why:
            reasons.append((index, str(why)))
    if sources:
        library = compiler.build("\n".join([codegen.PRELUDE] + [s.text for _, s in sources]))
        entries = [(index, {kind: compiler.address(library, f"adsim_{kind}_r{index}")
                            for kind in s.kinds}, list(s.refs), list(s.saved))
                   for index, s in sources]
        tape._install_fused(entries, library)
    return Fusion(len(table), len(sources), tuple(reasons))
