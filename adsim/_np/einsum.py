"""``np.einsum`` on active arrays for one or two operands.

Two-operand contractions without shared output indices become one MATMUL
between transposed, reshaped operands (as tensordot does); other cases align
both operands in one index space, multiply with broadcasting and sum.
"""
import math

import numpy as np

from .. import _active
from .._opcodes import CompareKind
from ..errors import UnsupportedOperation
from . import core, integers, layout, products, reductions, views


def _from_sublists(args):
    """The subscripts string of einsum's operand-list form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``, and the operands."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def spell(sub):
        return "".join("..." if s is Ellipsis else letters[s] for s in sub)
    has_output = len(args) % 2 == 1           # a trailing output sublist
    pairs = args[:-1] if has_output else args
    operands, terms = list(pairs[0::2]), [spell(sub) for sub in pairs[1::2]]
    output = "->" + spell(args[-1]) if has_output else ""
    return ",".join(terms) + output, operands


def _spell_ellipsis(subscripts, operands):
    """``...`` replaced by letters the subscripts do not use, aligned to the
    right as NumPy broadcasts the ellipsis dimensions."""
    if "." not in subscripts:
        return subscripts
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in subscripts]
    counts = [len(core.shape_of(x)) - len(t.replace("...", "")) if "..." in t else 0
              for t, x in zip(terms, operands)]
    n = max(counts, default=0)
    letters = "".join(free[:n])
    terms = [t.replace("...", letters[n - k:]) for t, k in zip(terms, counts)]
    if arrow:
        output = output.replace("...", letters)
    else:
        joined = "".join(terms)
        output = letters + "".join(sorted(c for c in set(joined)
                                          if joined.count(c) == 1 and c not in letters))
    return ",".join(terms) + "->" + output


def _parse(subscripts, n_operands):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        inputs, output = subscripts.split("->")
    else:
        inputs = subscripts
        letters = inputs.replace(",", "")
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    inputs = inputs.split(",")
    if len(inputs) != n_operands:
        raise ValueError(f"adsim: einsum subscripts name {len(inputs)} operands, {n_operands} given")
    return inputs, output


def _diagonal(x, labels):
    """Take diagonals for labels repeated within one operand ('ii' -> 'i')."""
    while len(set(labels)) < len(labels):
        for pos, c in enumerate(labels):
            second = labels.find(c, pos + 1)
            if second >= 0:
                x = views.index_map(lambda idx: np.diagonal(idx, 0, pos, second), [x]) \
                    if isinstance(x, _active.Active) else np.diagonal(x, 0, pos, second)
                labels = labels[:pos] + labels[pos + 1:second] + labels[second + 1:] + c
                break
    return x, labels


def _sum_out(x, labels, keep):
    """Sum over labels not in ``keep``."""
    axes = tuple(i for i, c in enumerate(labels) if c not in keep)
    if not axes:
        return x, labels
    x = reductions.sum(x, axis=axes) if isinstance(x, _active.Active) else np.sum(x, axis=axes)
    return x, "".join(c for c in labels if c in keep)


def _permute(x, labels, order):
    perm = [labels.index(c) for c in order]
    if perm == list(range(len(perm))):
        return x
    return views.transpose(x, perm) if isinstance(x, _active.Active) else np.transpose(x, perm)


def _reshape(x, shape):
    return views.reshape(x, shape) if isinstance(x, _active.Active) else np.reshape(x, shape)


def einsum(subscripts, *operands, optimize=False, **kwargs):
    """``np.einsum``: NumPy's own errors for subscripts that do not fit the
    operands; a view where NumPy's is one (``'ii->i'``, ``'ij->ji'``: one
    operand whose elements only move); else the contraction, laid out in
    memory as NumPy's."""
    if kwargs:
        raise UnsupportedOperation(f"adsim: np.einsum arguments {sorted(kwargs)} are not supported")
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts,) + operands)
    _check(subscripts, [np.broadcast_to(0.0, core.shape_of(x)) for x in operands])
    if len(operands) == 1 and isinstance(operands[0], _active.Active):
        a = operands[0]
        moved = np.einsum(subscripts, a._positions())      # NumPy's result, of positions
        if moved.size and np.may_share_memory(moved, a._root()._positions()):
            return views.derived(a, moved)
    out = contract(subscripts, *operands)
    if isinstance(out, _active.Active) and not any(out is x for x in operands) and \
            any(layout.other_layout(x) for x in operands):
        if out.base is not None:        # a view of the contraction's own result
            out = core.copy(out, "C")
        layout.laid_out(out, np.einsum(subscripts, *(layout.template(x) for x in operands)))
    return out


def _check(subscripts, stand_ins):
    """NumPy's own error when the subscripts do not fit the operands' shapes.
    NumPy's einsum_path checks them without computing; where it objects,
    einsum itself is asked (of stand-ins of the operands' shapes) for its
    message, which it gives before computing anything."""
    try:
        np.einsum_path(subscripts, *stand_ins, optimize=False)
    except ValueError:
        np.einsum(subscripts, *stand_ins)


def contract(subscripts, *operands):
    """einsum of checked subscripts (string form). adsim sums a label out of
    an operand (or of a partial product) before multiplying by operands
    without it ('i,j->' as sum(x) * sum(y)): for finite values that is
    NumPy's sum, up to rounding, but not with infinities, where NumPy forms
    the products (inf * 0 is NaN) in all but its innermost loop. So where
    that factoring happens, finite active operands are guarded to stay
    finite (a replay at an infinity raises BranchChanged and the functional
    API records again), and operands holding infinities or NaN take the
    form of every product (_at_non_finite)."""
    subscripts = _spell_ellipsis(subscripts.replace(" ", ""), operands)
    inputs, output = _parse(subscripts, len(operands))
    if _factored(inputs, output):
        values = [integers.current(x) if isinstance(x, _active.Active) else np.asarray(x)
                  for x in operands]
        if not all(np.isfinite(v).all() for v in values):
            return _at_non_finite(inputs, output, operands, values)
        for x in operands:
            if isinstance(x, _active.Active):
                integers.guard(x, -np.finfo(np.float64).max, np.inf)
    return _pairwise(inputs, output, operands)


def _factored(inputs, output):
    """Whether adsim's contraction sums a label before multiplying by an
    operand without it: a summed label missing from some operand."""
    return len(inputs) > 1 and any(c not in output and any(c not in t for t in inputs)
                                   for c in set("".join(inputs)))


def _at_non_finite(inputs, output, operands, values):
    """adsim's contraction or the sum of every product, whichever gives
    NumPy's own einsum's value at these values (NumPy's innermost loop may
    factor a sum as adsim does), with each active element guarded to keep
    its kind (NaN, -inf, negative, zero, positive, +inf) on replay; else
    refused."""
    subscripts = f"{','.join(inputs)}->{output}"
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.einsum(subscripts, *values)
        for form in (_pairwise, _every_product):
            out = form(inputs, output, operands)
            if _same_numbers(want, integers.current(out) if isinstance(out, _active.Active)
                             else out):
                break
        else:
            raise UnsupportedOperation(
                f"adsim: np.einsum {subscripts} of operands holding infinities or NaN: NumPy's "
                f"value here ({np.array2string(np.asarray(want), threshold=6)}) depends on the "
                f"order in which its loops sum, which adsim does not follow. Contract two "
                f"operands at a time, or keep the values finite")
    for x, v in zip(operands, values):
        if isinstance(x, _active.Active):
            _guard_kinds(x, v)
    return out


def _same_numbers(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    keep = ~np.isnan(a)
    return bool(np.all(a[keep] == b[keep]) or
                np.allclose(a[keep], b[keep], rtol=1e-10, atol=0, equal_nan=False))


def _guard_kinds(x, v):
    """Record that each element of x keeps the kind it has now: NaN, -inf,
    negative, zero, positive or +inf."""
    tiny, big = np.nextafter(0.0, 1.0), np.finfo(np.float64).max
    exact = np.isinf(v) | (v == 0)
    lo = np.where(exact, v, np.where(v > 0, tiny, -big))
    hi = np.where(exact, v, np.where(v > 0, big, -tiny))
    tape = core.tape_of(x)
    core.record_compare(tape, CompareKind.CMP_GE, x.slot, tape.const_ref(lo), x.shape)
    core.record_compare(tape, CompareKind.CMP_LE, x.slot, tape.const_ref(hi), x.shape)
    if np.isnan(v).any():      # NaN fails both bounds whatever x is
        core.record_compare(tape, CompareKind.CMP_EQ, x.slot, x.slot, x.shape)


_EVERY_PRODUCT_LIMIT = 2 ** 26      # elements of the aligned product


def _every_product(inputs, output, operands):
    """NumPy's own sum of every product: all operands aligned in the union of
    their labels, multiplied, and the labels not in the output summed."""
    union = "".join(dict.fromkeys(output + "".join(inputs)))
    xs, sizes = [], {}
    for x, lab in zip(operands, inputs):        # plain values too (the check above)
        x, lab = _diagonal(x, lab)
        own = dict(zip(lab, core.shape_of(x)))      # 1 where this operand broadcasts
        for c, d in own.items():
            sizes[c] = max(sizes.get(c, 1), d)
        x = _permute(x, lab, "".join(c for c in union if c in lab))
        xs.append(_reshape(x, tuple(own.get(c, 1) for c in union)))
    if math.prod(sizes.get(c, 1) for c in union) > _EVERY_PRODUCT_LIMIT:
        raise UnsupportedOperation(
            f"adsim: np.einsum {','.join(inputs)}->{output} of operands holding infinities or "
            f"NaN: NumPy sums every product (inf * 0 gives NaN), which adsim forms in full here, "
            f"and that would take more than {_EVERY_PRODUCT_LIMIT} elements; contract in steps "
            f"(np.einsum of two operands at a time), or keep the values finite")
    prod = xs[0]
    for x in xs[1:]:
        prod = prod * x
    prod, lab = _sum_out(prod, union, set(output))
    return _as_result(_permute(prod, lab, output))


def _pairwise(inputs, output, operands):
    """The contraction two operands at a time, from the left."""
    if len(operands) > 2:
        rest = "".join(sorted(set(inputs[0] + inputs[1]) & set(output + "".join(inputs[2:]))))
        first = _pairwise(inputs[:2], rest, operands[:2])
        return _pairwise([rest] + inputs[2:], output, (first,) + tuple(operands[2:]))
    xs, labels = [], []
    others = [set("".join(inputs[j] for j in range(len(inputs)) if j != i)) for i in range(len(inputs))]
    for x, lab, other in zip(operands, inputs, others):
        x = x if isinstance(x, _active.Active) else core.constant(x)
        x, lab = _diagonal(x, lab)
        x, lab = _sum_out(x, lab, set(output) | other)
        xs.append(x)
        labels.append(lab)
    if len(xs) == 1:
        return _as_result(_permute(xs[0], labels[0], output))
    (a, b), (la, lb) = xs, labels
    sizes = {}
    for x, lab in zip(xs, labels):      # a broadcast dimension of size 1 takes the other's
        for c, d in zip(lab, core.shape_of(x)):
            sizes[c] = max(sizes.get(c, 1), d)
    shared = [c for c in la if c in lb]
    contracted = [c for c in shared if c not in output]
    batch = [c for c in shared if c in output]
    if not batch:
        free_a = [c for c in la if c not in contracted]
        free_b = [c for c in lb if c not in contracted]
        ka = math.prod(sizes[c] for c in contracted)
        a2 = _reshape(_permute(a, la, free_a + contracted),
                      (math.prod(sizes[c] for c in free_a), ka))
        b2 = _reshape(_permute(b, lb, contracted + free_b),
                      (ka, math.prod(sizes[c] for c in free_b)))
        prod = products.matmul(a2, b2) if (isinstance(a2, _active.Active) or isinstance(b2, _active.Active)) \
            else a2 @ b2
        prod = _reshape(prod, tuple(sizes[c] for c in free_a + free_b))
        return _as_result(_permute(prod, "".join(free_a + free_b), output))
    # batched: align both in the union of labels, multiply, sum the contracted
    union = "".join(dict.fromkeys(output + la + lb))
    aligned = []
    for x, lab in zip((a, b), (la, lb)):
        own = dict(zip(lab, core.shape_of(x)))      # 1 where this operand broadcasts
        order = [c for c in union if c in lab]
        x = _permute(x, lab, "".join(order))
        aligned.append(_reshape(x, tuple(own.get(c, 1) for c in union)))
    prod = aligned[0] * aligned[1]
    prod, lab = _sum_out(prod, union, set(output))
    return _as_result(_permute(prod, lab, output))


def _as_result(x):
    return x if isinstance(x, _active.Active) else np.asarray(x)


def tensordot(a, b, axes=2):
    """Through einsum: the contracted axes get shared letters."""
    na, nb = len(core.shape_of(a)), len(core.shape_of(b))
    if np.ndim(axes) == 0:
        axes_a, axes_b = list(range(na - axes, na)), list(range(axes))
    else:
        axes_a, axes_b = [np.atleast_1d(ax).tolist() for ax in axes]
    axes_a = [ax % na for ax in axes_a]
    axes_b = [ax % nb for ax in axes_b]
    sa, sb = core.shape_of(a), core.shape_of(b)
    if len(axes_a) != len(axes_b) or any(sa[i] != sb[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError(f"shape-mismatch for sum (shapes {sa} and {sb}, axes {axes_a} and "
                         f"{axes_b})")
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    la = [next(letters) for _ in range(na)]
    lb = [next(letters) for _ in range(nb)]
    for i, j in zip(axes_a, axes_b):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in axes_a] + \
        [c for j, c in enumerate(lb) if j not in axes_b]
    return contract(f"{''.join(la)},{''.join(lb)}->{''.join(out)}", a, b)


def matmul(a, b, out=None):
    """``np.matmul`` (and ``@``): 2-d products as one op; stacked (batched)
    ones broadcast over the leading axes as NumPy does, through einsum (1-d
    operands as NumPy promotes them)."""
    core.reject_kwargs("matmul", out=out)
    sa, sb = core.shape_of(a), core.shape_of(b)
    if len(sa) <= 2 and len(sb) <= 2:
        return products.matmul(a, b)
    if len(sa) == 0 or len(sb) == 0:
        raise ValueError("adsim: matmul: input operand does not have enough dimensions")
    if sa[-1] != (sb[0] if len(sb) == 1 else sb[-2]):
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(shapes {sa} and {sb})")
    left = "...j" if len(sa) == 1 else "...ij"
    right = "j" if len(sb) == 1 else "...jk"
    result = "..." + ("" if len(sa) == 1 else "i") + ("" if len(sb) == 1 else "k")
    return contract(f"{left},{right}->{result}", a, b)


def dot(a, b, out=None):
    """``np.dot``: products of operands of up to 2 dimensions and scalars;
    an N-d ``a`` (N > 2) sums its last axis against the second-to-last of
    ``b`` (its only one when 1-d), as NumPy does."""
    na, nb = len(core.shape_of(a)), len(core.shape_of(b))
    if max(na, nb) > 2 and min(na, nb) > 0:
        core.reject_kwargs("dot", out=out)
        return tensordot(a, b, axes=([na - 1], [max(nb - 2, 0)]))
    return products.dot(a, b, out=out)


def inner(a, b):
    """``np.inner``: sums over the last axes of both (a product with a scalar)."""
    na, nb = len(core.shape_of(a)), len(core.shape_of(b))
    if na == 0 or nb == 0:
        return products.dot(a, b)
    if na == 1 and nb == 1:
        return products.matmul(a, b)
    return tensordot(a, b, axes=([na - 1], [nb - 1]))
