"""A check that runs at every replay: a Python function of the plain values
of some inputs, whose result (integers, outcomes, a path of decisions) the
recording fixed. Its digest is compared with the recording's by a recorded
comparison, so a replay where it differs raises ``BranchChanged`` (the
functional API records again there).

Used where a decision that the tape's ops cannot hold is made outside them:
SciPy's peak finding (adsim/_scipy/peaks.py), the switches of an ODE's
right-hand side along the steps of an integration whose outputs are
checkpointed (adsim/integrate/_switches.py).
"""
import hashlib

import numpy as np

from ._active import Active
from ._np.core import compare
from ._np.integers import current
from ._opcodes import CompareKind
from .primitives import primitive


def guard_structure(structure, inputs, name, not_saved=None, saved_as=None):
    """Record a check that ``digest_of(structure(*values))`` of the plain
    values of ``inputs`` is, at every replay, what it is now. ``name``
    names the check in errors. A tape file holds it when ``saved_as``
    gives its :class:`~adsim.primitives.BuiltinFamily` and parameters (the
    family makes :func:`guard_primitive` of the same structure again);
    else ``not_saved`` says why it cannot (it runs Python code). At the
    recorded values the digest is not computed again."""
    now = [current(a) if isinstance(a, Active) else np.asarray(a, dtype=float)
           for a in inputs]
    recorded = digest_of(structure(*now))
    prim = guard_primitive(structure, name, (_key(now), recorded))
    if saved_as is None:
        prim.not_saved = not_saved
    else:
        family, parameters = saved_as
        family.adopt(prim, **parameters)
    compare(CompareKind.CMP_EQ, prim(*inputs), recorded)


def guard_primitive(structure, name, known=None):
    """The primitive computing ``digest_of(structure(*values))`` (zero
    derivatives); ``known``: (values' key, digest) already computed."""
    def value(*args):
        plain = [np.asarray(a, dtype=float) for a in args]
        if known is not None and _key(plain) == known[0]:
            return np.array(known[1])
        return np.array(digest_of(structure(*plain)))

    def jvp(args, out, tangents):
        return np.zeros(())

    def vjp(args, out, w):
        return tuple(np.zeros(np.shape(a)) for a in args)
    prim = primitive(value, jvp=jvp, vjp=vjp)
    prim.name = name
    return prim


def _key(values):
    return tuple((v.shape, v.tobytes()) for v in values)


def digest_of(parts):
    """A float that changes when any of the arrays ``parts`` changes (their
    dtypes, shapes or bits; a 52-bit hash: exactly representable)."""
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        a = np.ascontiguousarray(part)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return float(int.from_bytes(h.digest(), "little") % (1 << 52))
