"""C for one run of elementwise ops: its fused kernels.

A run (``adsim/_chunks.pxi``) is a stretch of ops whose element i reads
element i of its operands (or a broadcast scalar, or one element of a strided
or 2-d slice of a source no op of the run writes). Each op's value and
derivatives come from its row in ``adsim/ops.py`` (``UnaryRule``,
``BinaryRule``) or, for the few unary ops written by hand, from
``adsim/_elementwise.h``, which the compiled sweeps use too, as they use its
``chain`` (the zero-times-infinity rule). So a fused kernel computes what
the interpreter computes, up to rounding: the interpreter's fast paths for
common ops write some products differently (``g / b`` for ``chain(1 / b,
g)``), and sums over the run's elements (into the output, or into the
adjoint of a broadcast scalar) add in another order.

The kernels of a run:

- ``values``: the last value of every slot the run writes;
- ``tangents``: the same, with their tangents (one direction);
- ``vtangents``: the same with p tangent directions (vector mode: ``jvp``
  with several directions, compressed sparse Jacobians): a block's values
  and partial derivatives are computed once, then each direction's tangents
  are a loop over the block reading the partials from per-block buffers;
- ``gradient`` (a run the tape's last op sums into the scalar output): the
  run, the sum, and the reverse sweep seeded with the output's adjoint,
  adding the adjoints of the run's inputs; it writes no slot, so slots keep
  the values they had before the run (all a reverse sweep after it reads);
- ``second_order``: the same with tangents and the tangents of the adjoints
  (reverse on forward: Hessian-vector products).

The kernels loop over the run's rows (one row unless it holds 2-d slices) in
blocks of ``BLOCK`` elements. Inside a block every value, tangent, adjoint
and adjoint tangent of op k is a local (``v``, ``t``, ``g``, ``h`` and k);
what goes to memory per element is gathered in per-block buffers first, so
the element loop has no store a later element reads, and vectorises; the
values kernel stores its results in place, telling the compiler that no
element's store reaches another's loads (each element reads only itself of
the slots the run writes).

Kernel arguments (``vtangents``: ``V``, ``T`` and the number of directions
``n_dirs``; direction d of a ref's tangents starts d times its size after
``T[i]``): ``V``, ``T``, ``A``, ``D`` hold the values, tangents,
adjoints and adjoint tangents of the refs in ``RunSource.refs`` (NULL where
a sweep has none, and for constants), ``seeds`` the output's adjoint, its
tangent and, for the summed kernels, ``fresh``: nonzero when the adjoint
arrays of the run's inputs are not yet written (the whole-tape path hands
new arrays, which the kernel then sets rather than adds to: one pass over
them fewer), ``outs`` receives the output's value and tangent.
"""
from math import isinf, isnan
import re
from dataclasses import dataclass

import numpy as np

from ..ops import BY_CODE, BinaryRule, UnaryRule, ZERO
from .._decoder import decode_op
from .._opcodes import OpFlag

BLOCK = 256
SUMS = 16                   # partial sums of a run summed into the output
KINDS = ("values", "tangents", "vtangents", "reverse", "reverse2", "gradient", "second_order",
         "sum")
SUMMED_KINDS = ("gradient", "second_order", "sum")  # only for a run summed into the output
_PASSIVE = int(OpFlag.FLAG_PASSIVE)
_PUSH = int(OpFlag.FLAG_PUSH)

# unary ops written by hand: value, slope, curvature as C over x, y, c (_elementwise.h)
_WRITTEN_UNARY = {
    "ABS": ("adsim_abs_value(x)", "adsim_abs_slope(x)", "0.0"),
    "SIGN": ("adsim_sign_value(x)", "0.0", "0.0"),
    "POW_C": ("adsim_pow_c_value(x, c)", "adsim_pow_c_slope(x, c)",
              "adsim_pow_c_curvature(x, c)"),
    "RPOW_C": ("adsim_rpow_c_value(x, c)", "adsim_rpow_c_slope(y, c)",
               "adsim_rpow_c_curvature(y, c)"),
}

# glibc's vector math library (libmvec, glibc 2.35 or newer): declared SIMD,
# the element loops call its vector exp, log, ... (within 4 ulp of libm)
# rather than one libm call per element; compiler.py defines ADSIM_VECTOR_MATH
# where it links.
VECTOR_MATH = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cos", "cosh", "exp",
               "exp2", "expm1", "log", "log10", "log1p", "log2", "sin", "sinh", "tan", "tanh")
VECTOR_MATH_2 = ("atan2", "hypot", "pow")             # of two arguments

PRELUDE = "\n".join([
    "#include <stdint.h>", "#include <string.h>", "#include <math.h>",
    "#ifdef ADSIM_VECTOR_MATH"] +
    [f'__attribute__((simd("notinbranch"))) double {name}(double);' for name in VECTOR_MATH] +
    [f'__attribute__((simd("notinbranch"))) double {name}(double, double);'
     for name in VECTOR_MATH_2] +
    ["#endif", '#include "_elementwise.h"', "#define LN2 log(2.0)", "#define LN10 log(10.0)",
     f"#define BLOCK {BLOCK}", ""])


class NotFusable(Exception):
    """A run holds an op without a fused form; the interpreter sweeps it."""


@dataclass(frozen=True)
class RunSource:
    """The C of one run's kernels and the refs they read, in order."""

    text: str
    refs: tuple                   # slot and constant refs: the index of V[], T[], A[], D[]
    kinds: tuple                  # the kernels made (KINDS), named adsim_<kind>_<name>
    inputs: tuple = ()            # slots the run reads from before it (its kernels recompute it)
    pushes: tuple = ()            # slots whose first writer in the run pushes the value before it
    stored: tuple = ()            # slots the values and tangents kernels store (read after the run)


def c_literal(value):
    """A double as C source, exactly."""
    if isnan(value):
        return "NAN"
    if isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    return f"({float(value).hex()})"


@dataclass(frozen=True)
class Operand:
    """How an op reads one operand at element j: its value and tangent as C,
    and the locals its adjoint and adjoint tangent add to (None: a constant)."""

    value: str
    tangent: str
    adjoint: str = None
    adjoint_tangent: str = None


@dataclass
class External:
    """A ref the run reads but does not write (at the time it reads it)."""

    index: int                    # in refs
    kind: str                     # "vector", "scalar", "gather" or "rotated"
    active: bool                  # a slot (not a constant): adjoints flow to it
    offset: str = ""              # gather: the first element of a block
    step: int = 1                 # rotated: the shift (element j reads (j + step) mod m)
    start: int = 0                # gather: offset is start + base
    base: str = ""


class _Run:
    """The names and lines of one run's kernels, built op by op."""

    def __init__(self, tape, m, row):
        self.tape, self.m = tape, m
        self.row = row if row > 1 else m        # a run of 2-d slices is swept by rows
        self.refs = []                  # index in V[], T[], A[], D[] per ref
        self.versions = {}              # slot -> op whose result it holds
        self.writer = {}                # slot -> op that wrote its last value
        self.externals = {}             # (ref, kind, offset, step) -> (position, External)
        self.ops = []
        self.value, self.tangent = [], []           # per op, in order
        self.partials, self.vtangent = [], []       # per op: vector mode (vtangents)
        self.reverse, self.reverse2 = [], []        # per op, last op first

    def ref_index(self, ref):
        if ref not in self.refs:
            self.refs.append(ref)
        return self.refs.index(ref)

    def external(self, ref, kind, offset="", step=1, start=0, base=""):
        key = (ref, kind, offset, step)
        if key not in self.externals:
            self.externals[key] = (len(self.externals),
                                   External(self.ref_index(ref), kind, ref >= 0, offset, step,
                                            start, base))
        return self.externals[key]

    def read(self, ref):
        """The Operand of ``ref`` at element j."""
        if ref >= 0 and ref in self.versions:
            k = self.versions[ref]
            return Operand(f"v{k}", f"t{k}", f"g{k}", f"h{k}")
        size = self.tape.slot_size_of(ref)
        if size == self.m:
            x, ext = self.external(ref, "vector")
            names = (f"E{x}[j]", f"TE{x}[j]")
        elif size == 1:
            x, ext = self.external(ref, "scalar")
            names = (f"s{x}", f"ts{x}")
        else:
            raise NotFusable(f"an operand of {size} elements in a run of {self.m}")
        if not ext.active:
            return Operand(names[0], "0.0")
        return Operand(names[0], names[1], f"ge{x}", f"he{x}")

    def add(self, k, result, value, tangent, reverse, reverse2, vector=None):
        """Op k's lines; ``vector`` is its tangent for vector mode: (lines
        storing its partials in block buffers P<k>_<i>, a statement setting
        t<k>_ from them), by default ``tangent`` (which then reads no value)."""
        self.ops.append(k)
        self.value.append(f"double v{k}; {value}")
        self.tangent.append(tangent)      # a statement setting t<k>_
        partials, vtangent = vector if vector is not None else ([], tangent)
        self.partials.append(partials)
        self.vtangent.append(vtangent)
        self.reverse[:0] = reverse
        self.reverse2[:0] = reverse2
        self.versions[result] = k
        self.writer[result] = k


def _block(names, body):
    """``{ const double x = ..., ...; body }`` with every name used (no warnings)."""
    decls = ", ".join(f"{n} = {e}" for n, e in names)
    unused = " ".join(f"(void){n};" for n, _ in names)
    return f"{{ const double {decls}; {unused} {body} }}"


_LITERAL = re.compile(r"\(?-?[0-9.]+\)?")


def _vector_tangent(k, names, terms):
    """Op k's vector-mode tangent from ``terms`` of (times, partial, operand
    tangent): each partial is stored per element in a block buffer by the
    value loop (a literal is written in place), and the direction loop reads
    it back. Returns (partial lines, tangent statement)."""
    lines, products = [], []
    for i, (times, partial, tangent) in enumerate(terms):
        if _LITERAL.fullmatch(partial.strip()):
            products.append(f"{times}({partial}, {tangent})")
            continue
        lines.append(_block(names, f"P{k}_{i}[j] = {partial};"))
        products.append(f"{times}(P{k}_{i}[j], {tangent})")
    return lines, f"t{k}_ = {' + '.join(products)};"


def _unary(run, k, spec, op, live):
    x = run.read(op.x)
    c = c_literal(run.tape.param_value(op.c)) if op.c >= 0 else "0.0"
    if isinstance(spec.rule, UnaryRule):
        value, slope, curvature = spec.rule.value, spec.rule.slope, spec.rule.curvature
    elif spec.name in _WRITTEN_UNARY:
        value, slope, curvature = _WRITTEN_UNARY[spec.name]
    else:
        raise NotFusable(f"{spec.name} has no fused form")
    names = [("x", x.value), ("y", f"v{k}"), ("c", c)]
    times = "scaled" if spec.constant_slope else "chain"
    value_line = _block(names[::2], f"v{k} = {value};")
    tangent = _block(names, f"t{k}_ = {times}({slope}, {x.tangent});")
    reverse, reverse2 = [], []
    if live and x.adjoint:
        reverse.append(_block(names, f"{x.adjoint} += {times}({slope}, g{k});"))
        if spec.constant_slope:
            second = f"{x.adjoint_tangent} += scaled({slope}, h{k});"
        else:
            second = (f"{x.adjoint_tangent} += chain({slope}, h{k}) + "
                      f"chain({x.tangent}, chain({curvature}, g{k}));")
        reverse2.append(_block(names, f"{x.adjoint} += {times}({slope}, g{k}); {second}"))
    vector = _vector_tangent(k, names, [(times, slope, x.tangent)])
    run.add(k, op.result, value_line, tangent, reverse, reverse2, vector)


def _binary(run, k, spec, op, live):
    if not isinstance(spec.rule, BinaryRule):
        raise NotFusable(f"{spec.name} has no fused form")
    a, b = run.read(op.a), run.read(op.b)
    r = spec.rule
    names = [("a", a.value), ("b", b.value), ("y", f"v{k}")]
    value_line = _block(names[:2], f"v{k} = {r.value};")
    tangent = _block(names, f"t{k}_ = chain({r.da}, {a.tangent}) + chain({r.db}, {b.tangent});")
    first = [f"{o.adjoint} += chain({d}, g{k});" for o, d in ((a, r.da), (b, r.db)) if o.adjoint]
    second = []
    ha = _second_partial(k, ((r.daa, a.tangent), (r.dab, b.tangent)))
    hb = _second_partial(k, ((r.dab, a.tangent), (r.dbb, b.tangent)))
    for o, d, hess in ((a, r.da, ha), (b, r.db, hb)):
        if o.adjoint:
            curvature = f" + chain({hess}, g{k})" if hess else ""
            second.append(f"{o.adjoint_tangent} += chain({d}, h{k}){curvature};")
    reverse = [_block(names, " ".join(first))] if live and first else []
    reverse2 = [_block(names, " ".join(first + second))] if live and first else []
    vector = _vector_tangent(k, names, [("chain", r.da, a.tangent), ("chain", r.db, b.tangent)])
    run.add(k, op.result, value_line, tangent, reverse, reverse2, vector)


def _second_partial(k, terms):
    """The tangent of an operand's partial, sum of (second partial, operand
    tangent) products, zero where op k's adjoint is; None when every second
    partial is the literal 0 (chain(0, t) is 0 whatever t: the term goes)."""
    products = [f"chain({d}, {t})" for d, t in terms if not _is_zero(d)]
    if not products:
        return None
    return f"(g{k} != 0.0 ? {' + '.join(products)} : 0.0)"


def _is_zero(expression):
    try:
        return float(expression.strip().strip("()")) == 0.0
    except ValueError:
        return False


def _copy(run, k, op, live):
    a = run.read(op.a)
    back = live and a.adjoint
    run.add(k, op.result, f"v{k} = {a.value};", f"t{k}_ = {a.tangent};",
            [f"{a.adjoint} += g{k};"] if back else [],
            [f"{a.adjoint} += g{k}; {a.adjoint_tangent} += h{k};"] if back else [])


def _gather(run, k, op, live):
    """A strided (one row) or 2-d slice gather: r[i] = a[start + i step], or
    for rows of ``inner``: a[start + row outer_step + col step]; or a
    rotation (np.roll of a vector): r[i] = a[(i + shift) mod m]."""
    if op.a in run.versions:
        raise NotFusable("a gather from a slot the run writes")
    if op.step == 0:
        return _rotation(run, k, op, live)
    if op.inner > 0 and op.inner != run.m:             # rows of op.inner elements
        if op.inner != run.row:
            raise NotFusable("a 2-d slice whose rows are not the run's")
        base = f"r * (int64_t){op.outer_step} + c0 * (int64_t){op.step}"
    else:
        base = f"(r * (int64_t){run.row} + c0) * (int64_t){op.step}"
    x, ext = run.external(op.a, "gather", f"{op.start} + {base}", op.step, op.start, base)
    at = f"[j * (int64_t){op.step}]"
    tangent = f"t{k}_ = TG{x}{at};" if ext.active else f"t{k}_ = 0.0;"
    back = live and ext.active
    run.add(k, op.result, f"v{k} = G{x}{at};", tangent,
            [f"ge{x} += g{k};"] if back else [],
            [f"ge{x} += g{k}; he{x} += h{k};"] if back else [])


def _rotation(run, k, op, live):
    """An indexed gather whose indices rotate a vector of the run's size
    (np.roll): each block reads its source through a staged buffer."""
    m = run.m
    if run.row != m or run.tape.slot_size_of(op.a) != m:
        raise NotFusable("an indexed gather from a source of another size")
    idx = run.tape.index_record(op.index_offset, m)
    shift = int(idx[0]) % m if m else 0
    if not np.array_equal(idx, (np.arange(m) + shift) % m):
        raise NotFusable("an indexed gather that is not a rotation (np.roll)")
    x, ext = run.external(op.a, "rotated", step=shift)
    tangent = f"t{k}_ = TR{x}[j];" if ext.active else f"t{k}_ = 0.0;"
    back = live and ext.active
    run.add(k, op.result, f"v{k} = R{x}[j];", tangent,
            [f"ge{x} += g{k};"] if back else [],
            [f"ge{x} += g{k}; he{x} += h{k};"] if back else [])


def _block_loops(run):
    """The loops over a run's rows and their blocks of BLOCK elements: ``nb``
    elements from element ``i0`` (closed by the caller)."""
    return [f"    for (int64_t r = 0; r < {run.m // run.row}; r++) {{",
            f"      for (int64_t c0 = 0; c0 < {run.row}; c0 += BLOCK) {{",
            f"        const int64_t nb = {run.row} - c0 < BLOCK ? {run.row} - c0 : BLOCK;",
            f"        const int64_t i0 = r * (int64_t){run.row} + c0;",
            "        (void)i0;"]


def _rotated_block(x, e, m, array, buffer, into, base=None):
    """Stage a block of a rotated source into ``buffer`` (or, ``into``, add
    ``buffer`` back to it): element j of the block is (i0 + j + shift) mod m.
    The source is ``array[e.index]``, or ``base`` when given. A block wraps
    around the source at most once (it is no longer than m), so it is two
    unit-stride loops, which vectorise (an index wrapped per element does not)."""
    const = "" if into else "const "
    base = base or f"{array}[{e.index}]"
    if into:
        before, after = f"a[p + j] += {buffer}[j];", f"a[j - n1] += {buffer}[j];"
    else:
        before, after = f"{buffer}[j] = a[p + j];", f"{buffer}[j] = a[j - n1];"
    return [f"        {{ {const}double* a = {base};",
            f"          const int64_t p = (i0 + {e.step}) % {m};",
            f"          const int64_t n1 = {m} - p < nb ? {m} - p : nb;",
            f"          for (int64_t j = 0; j < n1; j++) {before}",
            f"          for (int64_t j = n1; j < nb; j++) {after} }}"]


def run_source(tape, run_row, codes, flags, name, kinds=KINDS):
    """The C of run ``run_row`` (a row of the tape's run table): functions
    ``adsim_<kind>_<name>`` for those of ``kinds`` the run has, or raise
    NotFusable. ``codes`` and ``flags`` are the tape's per-op arrays."""
    first, end, m, row = int(run_row[0]), int(run_row[1]), int(run_row[2]), int(run_row[7])
    run = _Run(tape, m, row)
    for k in range(first, end):
        code = int(codes[k])
        op, spec = decode_op(code, tape.op_operands(k)), BY_CODE[code]
        live = not (flags[k] & _PASSIVE) and spec.hessian != ZERO
        if spec.family == "unary":
            _unary(run, k, spec, op, live)
        elif spec.family == "binary":
            _binary(run, k, spec, op, live)
        elif spec.name == "COPY":
            _copy(run, k, op, live)
        elif spec.name == "GATHER":
            _gather(run, k, op, live)
        else:
            raise NotFusable(f"{spec.name} has no fused form")
    written = sorted(run.writer)
    shifted = {key[0] for key in run.externals if key[1] in ("gather", "rotated")}
    if shifted & run.writer.keys():     # blocks would read elements earlier blocks overwrote
        raise NotFusable("a slot the run reads shifted (a slice or np.roll) and writes later")
    for slot in written:
        run.ref_index(slot)
    read_later = [slot for slot in written if _read_after(tape, slot, end, codes, flags)]
    # the run the tape's last op sums into the output (run_into_output decides
    # when the kernels run; this only says whether to make them)
    summed = end == len(codes) - 1 and BY_CODE[int(codes[end])].name == "SUM" and \
        tape.op_operands(end)[1] == tape.op_operands(end - 1)[0]
    kinds = tuple(kind for kind in kinds if summed or kind not in SUMMED_KINDS)
    text = "\n".join(_vector_kernel(run, f"adsim_{kind}_{name}", read_later)
                     if kind == "vtangents" else
                     _kernel(run, kind, written, _function_name(kind, name), end - 1, read_later)
                     for kind in _with_variants(kinds))
    first_writer = {}
    for k in range(first, end):
        first_writer.setdefault(tape.op_operands(k)[0], k)
    inputs = sorted({key[0] for key in run.externals if key[0] >= 0})
    pushes = sorted(slot for slot, k in first_writer.items() if flags[k] & _PUSH)
    return RunSource(text, tuple(run.refs), kinds, tuple(inputs), tuple(pushes), tuple(read_later))


def saved_slots(tape, table, sources):
    """The slots a keeping forward pushes before each fused run, for its
    reverse kernel (FusedRun.saved): by run index, for the runs of the run
    table ``table`` whose RunSource is in ``sources`` (the others have no
    fused kernels).

    A run's reverse kernel recomputes the run from the values of its inputs
    before it, and the values it overwrites must come back for the reverse
    rules before it that read them (the ops' FLAG_PUSH): pushed, they are
    restored from the value stack. Neither is needed of a slot that nothing
    stores into from the run's first op on: its value is the same from the
    push to the pop. In a sweep where a run reverses by its kernel, so do
    all runs with kernels (fused_reversal in adsim/_chunks.pxi), and their
    keeping forwards store only the slots read after them (``stored``);
    every other op stores its result. And when every op before the run is
    in a fused run, no reverse rule before it reads a value: each of those
    runs takes back the slots it reads from its own pushes, so the run
    pushes only its inputs."""
    bounds = [(int(row[0]), int(row[1])) for row in table]
    in_fused = {k for index in sources for k in range(*bounds[index])}
    last_store = {}                 # slot -> the last op (a fused run: its first) storing it
    for k in range(len(tape.op_codes())):
        if k not in in_fused:
            result = tape.op_operands(k)[0]
            if result >= 0:
                last_store[result] = k
    for index, source in sources.items():
        for slot in source.stored:
            last_store[slot] = max(last_store.get(slot, -1), bounds[index][0])
    saved, fused_before, previous_end = {}, True, 0
    for index, (first, end) in enumerate(bounds):
        fused_before = fused_before and first == previous_end and index in sources
        previous_end = end
        if index not in sources:
            continue
        source = sources[index]
        needed = set(source.inputs) | (set() if fused_before else set(source.pushes))
        saved[index] = sorted(slot for slot in needed if last_store.get(slot, -1) >= first)
    return saved


# families whose ops write the whole of their result slot (an op of another
# family writing a slot may keep part of it, so it counts as reading it)
_WHOLE_WRITES = ("unary", "binary")
_INPLACE = int(OpFlag.FLAG_INPLACE)


def _read_after(tape, slot, end, codes, flags):
    """Whether an op from ``end`` on (or the output) reads the value the run
    leaves in ``slot``: only those are stored by the values and tangents
    kernels. Any operand equal to the slot counts as a read (operand lists
    hold sizes and offsets too: more stores, never fewer). The output's
    slot counts when no later op writes it whole first."""
    for k in range(end, len(codes)):
        operands = tape.op_operands(k)
        if slot in operands[1:]:
            return True
        if len(operands) and operands[0] == slot:
            spec = BY_CODE[int(codes[k])]
            whole = spec.family in _WHOLE_WRITES or spec.name in ("COPY", "GATHER")
            return not whole or bool(flags[k] & _INPLACE)
    return slot == tape.output_slot


def _kernel(run, kind, written, function, last, read_later):
    """The C function ``function``, kernel ``kind`` of the run; or one of two
    variants that a summed kernel calls when part of its results is unused:
    "hvp", second_order when nothing but the adjoint tangents is asked for
    (the output's value and tangent, the gradient and the output's adjoint
    tangent seed all unused), and "novalue", gradient when the output's
    value is not asked for (``outs`` NULL: tape.gradient)."""
    hvp = kind == "hvp"
    novalue = kind == "novalue"
    tangents = kind in ("tangents", "reverse2", "second_order", "hvp")
    reverse = kind in ("reverse", "reverse2", "gradient", "second_order", "hvp", "novalue")
    second = kind in ("reverse2", "second_order", "hvp")        # adjoint tangents too
    summed = kind in SUMMED_KINDS and not hvp                   # into the scalar output
    seeded = summed or hvp or novalue   # the whole run reversed from the output's seed
    externals = [e for _, e in run.externals.values()]
    actives = [x for x, e in enumerate(externals) if e.active]
    lines = [f"{'static ' if hvp or novalue else ''}void {function}(double** V, double** T, double** A, "
             f"double** D, const double* seeds, double* outs) {{",
             "    (void)V; (void)T; (void)A; (void)D; (void)seeds; (void)outs;"]
    if kind == "second_order" and actives:      # (no input: nothing the variant could skip)
        unused = " && ".join(["seeds[1] == 0.0"] +
                             [f"A[{i}] == NULL" for i in sorted({externals[x].index
                                                                 for x in actives})])
        lines += [f"    if ({unused}) {{ {function}_hvp(V, T, A, D, seeds, outs); return; }}"]
    if kind == "gradient":
        lines += [f"    if (outs == NULL) {{ {function}_novalue(V, T, A, D, seeds, outs); return; }}"]
    for x, e in enumerate(externals):
        if e.kind == "scalar":
            lines.append(f"    const double s{x} = V[{e.index}][0];")
            if tangents and e.active:
                lines.append(f"    const double ts{x} = T[{e.index}][0];")
            if reverse and e.active:
                lines.append(f"    double acc{x} = 0.0, accd{x} = 0.0; (void)acc{x}; (void)accd{x};")
    groups = _overlapping_gathers(externals) if reverse else []
    if reverse and seeded:
        lines += _fresh_prologue(run, externals, groups, second, hvp)
    if summed:
        lines.append(_sum_declaration("sum"))
        if tangents:
            lines.append(_sum_declaration("sumd"))
    lines += _block_loops(run)
    for x, e in enumerate(externals):
        if e.kind == "rotated":
            lines.append(f"        double R{x}[BLOCK];")
            lines += _rotated_block(x, e, run.m, "V", f"R{x}", False)
            if tangents and e.active:
                lines.append(f"        double TR{x}[BLOCK];")
                lines += _rotated_block(x, e, run.m, "T", f"TR{x}", False)
    for x, e in enumerate(externals):
        if e.kind == "rotated" and reverse and e.active:
            lines += [f"        double b{x}[BLOCK];"] if not hvp else []
            if second:
                lines += [f"        double bd{x}[BLOCK];"]
        if e.kind in ("scalar", "rotated"):
            continue
        start = "i0" if e.kind == "vector" else f"({e.offset})"
        name = "E" if e.kind == "vector" else "G"
        lines.append(f"        const double* {name}{x} = V[{e.index}] + {start};")
        if tangents and e.active:
            lines.append(f"        const double* T{name}{x} = T[{e.index}] + {start};")
        if reverse and e.active:
            lines += [f"        double b{x}[BLOCK];"] if not hvp else []
            if second:
                lines += [f"        double bd{x}[BLOCK];"]
    for x, e in enumerate(externals):
        if e.kind == "scalar" and reverse and e.active:
            lines += [f"        double b{x}[BLOCK];"] if not hvp else []
            if second:
                lines += [f"        double bd{x}[BLOCK];"]
    if summed:
        lines += ["        double last[BLOCK];"] + (["        double lastd[BLOCK];"]
                                                     if tangents else [])
    elif hvp or novalue:
        pass
    elif not (reverse or tangents):     # values: stored in place. Element j of a result is
        for slot in read_later:  # stored after every load of element j, and no other
            i = run.refs.index(slot)     # element loads it (the loop says so: ivdep)
            lines.append(f"        double* W{i} = V[{i}] + i0;")
    elif not reverse:           # results go to block buffers (a block whose chain
        for slot in read_later:  # products meet a NaN runs again: it must not have
            i = run.refs.index(slot)     # overwritten what it reads)
            lines.append(f"        double w{i}[BLOCK];")
            lines.append(f"        double tw{i}[BLOCK];")
    else:                       # the adjoints of the slots' last values seed the sweep,
        for slot in read_later:  # read in place (the element loop stores only to block
            i = run.refs.index(slot)     # buffers) and cleared after it; a slot no later
            lines.append(f"        const double* sd{i} = A[{i}] + i0;")   # op reads has none
            if second:
                lines.append(f"        const double* sdd{i} = D[{i}] + i0;")
    body = []
    for k, value, tangent in zip(run.ops, run.value, run.tangent):
        body.append(value)
        if tangents:
            body.append(f"double t{k}_; {tangent} const double t{k} = t{k}_; (void)t{k};")
    if reverse:
        if summed:
            body.append(f"last[j] = v{last};")
        if summed and tangents:
            body.append(f"lastd[j] = t{last};")
        # An op's adjoint starts at -0.0, which the compiler drops from its
        # first sum (x + -0.0 is x for every x, -0.0 included; x + 0.0 is not,
        # so a start at 0.0 costs one addition per op and element). Adjoints
        # differ from the interpreter's only in the sign of a zero, which no
        # product or sum turns into a nonzero value; the inputs' adjoints ge/he
        # start at +0.0 and so give the interpreter's +0.0 for a zero total.
        body += [f"double g{k} = -0.0;" for k in run.ops]
        if second:
            body += [f"double h{k} = -0.0;" for k in run.ops]
        body += [f"double ge{x} = 0.0; (void)ge{x};" for x in actives]
        if second:
            body += [f"double he{x} = 0.0;" for x in actives]
        if seeded:
            body.append(f"g{last} = seeds[0];")
            if second:
                body.append(f"h{last} = {'0.0' if hvp else 'seeds[1]'};")
        else:
            body += [f"g{run.writer[slot]} = sd{run.refs.index(slot)}[j];"
                     for slot in read_later]
            if second:
                body += [f"h{run.writer[slot]} = sdd{run.refs.index(slot)}[j];"
                         for slot in read_later]
        body += run.reverse2 if second else run.reverse
        body += [f"b{x}[j] = ge{x};" for x in actives] if not hvp else []
        if second:
            body += [f"bd{x}[j] = he{x};" for x in actives]
    elif summed:
        body.append(f"last[j] = v{last};")
    else:
        for slot in read_later:
            i = run.refs.index(slot)
            if not tangents:
                body.append(f"W{i}[j] = v{run.writer[slot]};")
                continue
            body.append(f"w{i}[j] = v{run.writer[slot]};")
            body.append(f"tw{i}[j] = t{run.writer[slot]};")
    lines += _element_loops(body, _derivative_outputs(run, kind, written, last, read_later),
                            independent=not (tangents or reverse or summed))
    if tangents and not reverse and not summed:
        for slot in read_later:
            i = run.refs.index(slot)
            lines.append(f"        memcpy(V[{i}] + i0, w{i}, (size_t)nb * sizeof(double));")
            lines.append(f"        memcpy(T[{i}] + i0, tw{i}, (size_t)nb * sizeof(double));")
    if summed:
        lines += _block_sums("last", "sum") + (_block_sums("lastd", "sumd") if tangents else [])
    if reverse and not seeded:
        for slot in read_later:         # cleared, as the interpreter clears them, before
            i = run.refs.index(slot)    # the adjoints of the run's inputs are added
            lines.append(f"        memset(A[{i}] + i0, 0, (size_t)nb * sizeof(double));")
            if second:
                lines.append(f"        memset(D[{i}] + i0, 0, (size_t)nb * sizeof(double));")
    if reverse:
        covered = _covered_sources(run, externals, groups) if seeded else set()
        merged = {x for group in groups for x in group}
        for array, prefix in ([("A", "b")] if not hvp else []) + ([("D", "bd")] if second else []):
            # a Hessian-vector product needs no gradient: the whole-tape
            # path passes NULL for the inputs' adjoints
            optional = array == "A" and kind == "second_order"
            for group in groups:
                index = externals[group[0]].index
                lines += _guarded(optional, array, index, _merged_scatter(
                    externals, group, array, prefix, index in covered))
            for x, e in enumerate(externals):
                if not e.active or x in merged:
                    continue
                buffer = f"{prefix}{x}"
                if e.kind == "scalar":
                    acc = f"acc{x}" if array == "A" else f"accd{x}"
                    lines.append(f"        for (int64_t j = 0; j < nb; j++) {acc} += {buffer}[j];")
                elif e.kind == "rotated":
                    lines += _guarded(optional, array, e.index,
                                      _rotated_block(x, e, run.m, array, buffer, True))
                else:
                    lines += _guarded(optional, array, e.index,
                                      _scatter(array, e, buffer, e.index in covered))
    lines += ["      }", "    }"]
    if reverse:
        for x, e in enumerate(externals):
            if e.kind == "scalar" and e.active and not hvp:
                lines.append(f"    if (A[{e.index}]) A[{e.index}][0] += acc{x};")
                if second:
                    lines.append(f"    D[{e.index}][0] += accd{x};")
    if summed:
        lines.append(f"    outs[0] = {_sum_total('sum')};")
        if tangents:
            lines.append(f"    outs[1] = {_sum_total('sumd')};")
    lines.append("}")
    return "\n".join(lines)


_VARIANTS = {"second_order": "hvp", "gradient": "novalue"}   # see _kernel


def _with_variants(kinds):
    """``kinds`` with each one's variant (which it calls) before it."""
    return [k for kind in kinds for k in ((_VARIANTS[kind], kind) if kind in _VARIANTS
                                          else (kind,))]


def _function_name(kind, name):
    base = {variant: kind for kind, variant in _VARIANTS.items()}.get(kind)
    return f"adsim_{base}_{name}_{kind}" if base else f"adsim_{kind}_{name}"


def _scatter(array, e, buffer, covered=False):
    """Add a block buffer of adjoints into a vector or gathered source (set
    it, in a fresh kernel, when the source is ``covered``)."""
    start, step = ("i0", 1) if e.kind == "vector" else (f"({e.offset})", e.step)
    loop = "for (int64_t j = 0; j < nb; j++) "
    target, value = f"a[j * (int64_t){step}]", f"{buffer}[j]"
    return [f"        {{ double* a = {array}[{e.index}] + {start};",
            *_add_or_set("fresh" if covered else None, loop, target, value, "          "),
            "        }"]


def _guarded(optional, array, index, lines):
    """``lines`` writing ``array[index]``, skipped where that is NULL when
    ``optional``."""
    if not optional:
        return lines
    return [f"        if ({array}[{index}]) {{"] + ["  " + line for line in lines] + ["        }"]


def _add_or_set(set_when, loop, target, value, indent):
    """``loop`` adding ``value`` to ``target``; when the C condition
    ``set_when`` holds, setting it instead (the first write to an element of
    a fresh kernel's uninitialised adjoints)."""
    add = [f"{indent}{loop}{target} += {value};"]
    if set_when is None:
        return add
    return [f"{indent}if ({set_when}) {loop}{target} = {value};",
            f"{indent}else {loop}{target} += {value};"]


def _overlapping_gathers(externals):
    """Groups of active gathers of one source with one step whose blocks
    overlap (x[1:] and x[:-1]): their adjoints go back in one pass over the
    source instead of one per gather. Each group: the externals' positions,
    by start."""
    by_source = {}
    for x, e in enumerate(externals):
        if e.active and e.kind == "gather" and e.step > 0:
            by_source.setdefault((e.index, e.step, e.base), []).append(x)
    groups = []
    for (_, step, _), members in by_source.items():
        members.sort(key=lambda x: externals[x].start)
        first = externals[members[0]].start
        if len(members) > 1 and all((externals[x].start - first) % step == 0 for x in members):
            groups.append(tuple(members))
    return groups


def _covered_sources(run, externals, groups):
    """The sources (indices in refs) whose every element a summed kernel's
    blocks reach, each once per block pass, through one vector operand or
    one group of gathers without gaps (x[:-1] and x[1:] together cover x).
    Such kernels take, where ``seeds[2]`` is nonzero (``fresh``), adjoint
    arrays not yet written: they set these sources' elements as they reach
    them (fewer passes over memory than zeroing first) and zero the others'
    first (``_fresh_prologue``)."""
    writers = {}
    for x, e in enumerate(externals):
        if e.active:
            writers.setdefault(e.index, set()).add(x)
    covered = set()
    for index, xs in writers.items():
        e = externals[min(xs)]
        if len(xs) == 1 and e.kind == "vector":
            covered.add(index)
            continue
        group = next((g for g in groups if set(g) == xs), None)
        if group is None or run.row != run.m or e.step != 1:
            continue
        starts = [externals[x].start for x in group]
        size = run.tape.slot_size_of(run.refs[index])
        if starts[0] == 0 and starts[-1] + run.m == size and \
                all(b - a <= run.m for a, b in zip(starts, starts[1:])):
            covered.add(index)
    return covered


def _fresh_prologue(run, externals, groups, second, hvp=False):
    """A summed kernel's start: ``fresh`` from its seeds, and in a fresh
    call the adjoints of the active sources its blocks do not cover zeroed."""
    covered = _covered_sources(run, externals, groups)
    lines = ["    const int fresh = seeds[2] != 0.0;", "    if (fresh) {"]
    for index in sorted({e.index for e in externals if e.active} - covered):
        size = run.tape.slot_size_of(run.refs[index])
        for array in ("D",) if hvp else ("A", "D") if second else ("A",):
            lines.append(f"        if ({array}[{index}]) "
                         f"memset({array}[{index}], 0, (size_t){size} * sizeof(double));")
    return lines + ["    }"]


def _merged_scatter(externals, group, array, prefix, covered):
    """One pass adding the block buffers of ``group`` (overlapping gathers,
    by start) into their source: gather x's element j lands at j + shift x
    from the first gather's. Between consecutive ends of the gathers' ranges
    (the shifts, then nb plus the shifts: in that order once nb is at least
    the largest shift) the same buffers add to each element; a shorter last
    block adds them one by one. In a fresh kernel (``covered``), elements
    from the largest shift on are new to this block (the block before
    reached up to it) and are set, as are all of the first block's."""
    first, step = externals[group[0]], externals[group[0]].step
    shifts = [(externals[x].start - first.start) // step for x in group]
    span, k = shifts[-1], len(group)
    ends = [str(s) for s in shifts] + [f"nb + {s}" if s else "nb" for s in shifts]
    lines = [f"        {{ double* a = {array}[{first.index}] + ({first.offset});",
             f"          if (nb >= {span}) {{"]
    for p in range(2 * k - 1):
        terms = [f"{prefix}{group[i]}[j - {shifts[i]}]" if shifts[i] else f"{prefix}{group[i]}[j]"
                 for i in range(k) if p + 1 - k <= i <= p]
        set_when = None if not covered else "fresh" if p >= k - 1 else "fresh && c0 == 0"
        lines += _add_or_set(set_when, f"for (int64_t j = {ends[p]}; j < {ends[p + 1]}; j++) ",
                             f"a[j * (int64_t){step}]", " + ".join(terms), "            ")
    lines.append("          } else {")
    if covered:                 # a short last block: its new elements zeroed, then added to
        lines.append(f"            if (fresh) for (int64_t j = c0 == 0 ? 0 : {span}; "
                     f"j < nb + {span}; j++) a[j * (int64_t){step}] = 0.0;")
    lines += ["  " + line for x in group
              for line in _scatter(array, externals[x], f"{prefix}{x}")]
    lines += ["          }", "        }"]
    return lines


def _derivative_outputs(run, kind, written, last, read_later):
    """The locals holding what a block's element loop of ``kind`` stores
    of derivatives (tangents, adjoints, adjoint tangents)."""
    externals = [e for _, e in run.externals.values()]
    tangents = kind in ("tangents", "reverse2", "second_order")
    if kind == "hvp":
        return [f"he{x}" for x, e in enumerate(externals) if e.active]
    if kind in ("reverse", "reverse2", "gradient", "second_order", "novalue"):
        names = [f"ge{x}" for x, e in enumerate(externals) if e.active]
        return names + ([f"he{x}" for x, e in enumerate(externals) if e.active]
                        if kind in ("reverse2", "second_order") else [])
    if not tangents:
        return []
    if kind in SUMMED_KINDS:
        return [f"t{last}"]
    return [f"t{run.writer[slot]}" for slot in read_later]


_RULED_PRODUCT = re.compile(r"\b(chain|scaled)\(")


def _element_loops(body, outputs, independent=False):
    """A block's element loop over ``body``; ``independent``: no element's
    stores reach another element's loads (the compiler is told, ivdep, as
    it cannot see it through the pointers). Where its derivatives use
    ``chain`` (the zero-times-infinity rule, a select per product), the loop
    first runs with plain products, which differ from chain's only where a
    zero meets an infinity or a NaN (the product is then NaN, and NaN
    reaches the derivatives the loop stores: linear in the adjoints and
    tangents, they carry it through sums and products) or in the sign of a
    zero; when a stored derivative is NaN, the block runs again with chain.
    Every loop that may run twice writes only block buffers, so that is
    harmless."""
    loop = "        for (int64_t j = 0; j < nb; j++) {"
    exact = [loop] + ["            " + line for line in body] + ["        }"]
    if independent:
        return _IVDEP + exact
    if not outputs or not any(_RULED_PRODUCT.search(line) for line in body):
        return exact
    # bad is 64 bits wide, as the comparisons' lanes are: a narrower flag
    # costs the vectorised loop a pack of every comparison's mask
    checks = " ".join(f"bad |= (int64_t)({n} != {n});" for n in outputs)
    fast = [loop] + ["            " + _RULED_PRODUCT.sub("plain_product(", line)
                     for line in body] + ["            " + checks, "        }"]
    return (["        int64_t bad = 0;"] + fast +
            ["        if (bad) {          /* a NaN: again, with the zero-times-infinity rule */"]
            + exact + ["        }"])


_IVDEP = ["#if defined(__clang__)", "        #pragma clang loop vectorize(assume_safety)",
          "#elif defined(__GNUC__)", "        #pragma GCC ivdep", "#endif"]


def _vector_kernel(run, function, read_later):
    """The ``vtangents`` kernel: per block, one element loop for the values
    and every op's partials (kept in block buffers), then per direction one
    element loop for the tangents, which vectorises as the others do."""
    externals = [e for _, e in run.externals.values()]
    size = {e.index: run.tape.slot_size_of(run.refs[e.index]) for e in externals}
    lines = [f"void {function}(double** V, double** T, int64_t n_dirs) {{", "    (void)T;"]
    for x, e in enumerate(externals):
        if e.kind == "scalar":
            lines.append(f"    const double s{x} = V[{e.index}][0];")
    lines += _block_loops(run)
    for x, e in enumerate(externals):
        if e.kind == "rotated":
            lines.append(f"        double R{x}[BLOCK];")
            lines += _rotated_block(x, e, run.m, "V", f"R{x}", False)
        elif e.kind != "scalar":
            start = "i0" if e.kind == "vector" else f"({e.offset})"
            name = "E" if e.kind == "vector" else "G"
            lines.append(f"        const double* {name}{x} = V[{e.index}] + {start};")
    for k, partials in zip(run.ops, run.partials):
        lines += [f"        double P{k}_{i}[BLOCK];" for i in range(2)
                  if any(f"P{k}_{i}[j] =" in line for line in partials)]
    # a slot the run also reads is stored through a block buffer (the
    # element loop then stores nothing a load may alias); the others directly
    read = {e.index for e in externals}
    buffered = [slot for slot in read_later if run.refs.index(slot) in read]
    direct = [slot for slot in read_later if run.refs.index(slot) not in read]
    for slot in buffered:
        lines.append(f"        double w{run.refs.index(slot)}[BLOCK];")
    for slot in direct:
        i = run.refs.index(slot)
        lines.append(f"        double* restrict w{i} = V[{i}] + i0;")
    lines.append("        for (int64_t j = 0; j < nb; j++) {")
    for value, partials in zip(run.value, run.partials):
        lines += ["            " + line for line in [value] + partials]
    lines += [f"            w{run.refs.index(slot)}[j] = v{run.writer[slot]};"
              for slot in read_later]
    lines.append("        }")
    lines += [f"        memcpy(V[{run.refs.index(slot)}] + i0, w{run.refs.index(slot)}, "
              "(size_t)nb * sizeof(double));" for slot in buffered]
    lines.append("        for (int64_t d = 0; d < n_dirs; d++) {")
    for x, e in enumerate(externals):
        if not e.active:
            continue
        at = f"T[{e.index}] + d * (int64_t){size[e.index]}"
        if e.kind == "scalar":
            lines.append(f"          const double ts{x} = ({at})[0];")
        elif e.kind == "rotated":
            lines.append(f"        double TR{x}[BLOCK];")
            lines += _rotated_block(x, e, run.m, "T", f"TR{x}", False, base=at)
        else:
            start = "i0" if e.kind == "vector" else f"({e.offset})"
            name = "E" if e.kind == "vector" else "G"
            lines.append(f"          const double* T{name}{x} = {at} + {start};")
    for slot in buffered:
        lines.append(f"          double tw{run.refs.index(slot)}[BLOCK];")
    for slot in direct:
        i = run.refs.index(slot)
        lines.append(f"          double* restrict tw{i} = "
                     f"T[{i}] + d * (int64_t){run.tape.slot_size_of(slot)} + i0;")
    lines.append("          for (int64_t j = 0; j < nb; j++) {")
    lines += [f"              double t{k}_; {tangent} const double t{k} = t{k}_; (void)t{k};"
              for k, tangent in zip(run.ops, run.vtangent)]
    lines += [f"              tw{run.refs.index(slot)}[j] = t{run.writer[slot]};"
              for slot in read_later]
    lines.append("          }")
    for slot in buffered:
        i = run.refs.index(slot)
        lines.append(f"          memcpy(T[{i}] + d * (int64_t){run.tape.slot_size_of(slot)} + i0, "
                     f"tw{i}, (size_t)nb * sizeof(double));")
    lines += ["        }", "      }", "    }", "}"]
    return "\n".join(lines)


def _block_sums(buffer, acc):
    """Add a block's buffer to SUMS partial sums: independent, they vectorise
    into SUMS / 4 registers whose additions overlap (one register would wait
    out each addition's latency)."""
    unrolled = " ".join(f"{acc}[{i}] += {buffer}[j + {i}];" for i in range(SUMS))
    return ["        {", "            int64_t j = 0;",
            f"            for (; j + {SUMS} <= nb; j += {SUMS}) {{",
            f"                {unrolled}",
            "            }",
            f"            for (; j < nb; j++) {acc}[0] += {buffer}[j];",
            "        }"]


def _sum_declaration(acc):
    return f"    double {acc}[{SUMS}] = {{0.0}};"


def _sum_total(acc):
    """The partial sums added pairwise."""
    terms = [f"{acc}[{i}]" for i in range(SUMS)]
    while len(terms) > 1:
        terms = [f"({a} + {b})" for a, b in zip(terms[::2], terms[1::2])]
    return terms[0]
