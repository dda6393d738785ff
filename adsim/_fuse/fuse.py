"""Give a tape's runs their fused kernels (``Tape.fuse``, and the policy).

A tape's kernels come in families, one per kind of replay (``FAMILIES``): a
keeping forward sweep of a fused run pushes what that run's fused reverse
kernel reads, so the two are always compiled together. ``fuse`` compiles
the families asked for that the tape lacks, each into its own library, and
installs a table of every kernel compiled so far: a replay takes the table
when it starts and keeps it to its end.
"""
import threading
from dataclasses import dataclass

from . import codegen, compiler

# the kernels each family the policy counts uses: the replay layouts with one
# direction (VALUES, TANGENTS, ADJOINTS, SECOND_ORDER), then tangents in
# several directions (VECTOR_TANGENTS in adsim/_tape.pxd)
FAMILIES = (("values", "sum"), ("tangents",), ("values", "reverse", "gradient"),
            ("tangents", "reverse2", "second_order"), ("vtangents",))


@dataclass(frozen=True)
class Fusion:
    """What fusing did: the runs fused, and why the others were not."""

    runs: int                   # runs of elementwise ops the tape has
    fused: int                  # runs that now have fused kernels
    reasons: tuple              # (run index, why it stays interpreted)
    kinds: tuple = ()           # the kernels compiled (codegen.KINDS)

    def __str__(self):
        lines = [f"{self.fused} of {self.runs} runs of elementwise ops fused"]
        lines += [f"  run {run}: {why}" for run, why in self.reasons]
        return "\n".join(lines)


class _Fused:
    """A tape's fusion so far: its runs (``Tape._fusion_runs``), the
    kernels compiled, the libraries."""

    def __init__(self, tape):
        runs = tape._fusion_runs()
        self.table = runs[2] if runs is not None else ()
        self.kinds = ()
        self.kernels = {}               # run index -> {kind: address}
        self.plans = {}                 # run index -> (refs, saved)
        self.reasons = {}               # run index -> why it stays interpreted
        self.libraries = []

    def report(self):
        return Fusion(len(self.table), len(self.kernels), tuple(sorted(self.reasons.items())),
                      self.kinds)


def fuse(tape, kinds=codegen.KINDS):
    """Compile the tape's runs of elementwise ops for ``kinds`` of kernels
    and hand them to it; the report of everything fused so far.

    Raises ``adsim.errors.NoCompiler`` when no C compiler builds them."""
    with _LOCK:                 # one tape's families are compiled one at a time
        tape._check_recorded()
        state = getattr(tape, "_fusion", None)
        if state is None:
            state = _Fused(tape)
        missing = tuple(kind for kind in kinds if kind not in state.kinds)
        if missing and len(state.table):
            _compile(tape, state, missing)
        state.kinds += missing
        tape._set_internal("_fusion", state)     # (adsim/tape.py: users cannot set it)
        return state.report()


_LOCK = threading.Lock()


def _compile(tape, state, kinds):
    codes = tape.op_codes()
    flags = [tape.op_flags(k) for k in range(len(codes))]
    sources = []
    for index, row in enumerate(state.table):
        if index in state.reasons:
            continue
        try:
            sources.append((index, codegen.run_source(tape, row, codes, flags, f"r{index}",
                                                      kinds)))
        except codegen.NotFusable as why:
            state.reasons[index] = str(why)
    saved = codegen.saved_slots(tape, state.table, dict(sources))
    sources = [(index, s) for index, s in sources if s.kinds]
    if not sources:
        return
    library = compiler.build("\n".join([codegen.PRELUDE] + [s.text for _, s in sources]))
    state.libraries.append(library)
    for index, s in sources:
        state.kernels.setdefault(index, {}).update(
            {kind: compiler.address(library, f"adsim_{kind}_r{index}") for kind in s.kinds})
        state.plans[index] = (list(s.refs), saved[index])
    entries = [(index, kernels) + state.plans[index] for index, kernels in state.kernels.items()]
    # the runs go in with the first table, in one step under the GIL: a
    # replay starting now takes both or neither
    tape._install_fused(entries, list(state.libraries))
