"""Every replay of a tape as bytes, for tapes whose arguments may be
containers (dicts, lists, tuples, namedtuples of arrays): what a tape loaded
from its file (or unpickled) must reproduce bitwise. Used by the tests of
tape files of containers, adsim's built-in primitives, nested derivatives
and solve_ivp."""
import json
import pickle

import numpy as np

from adsim import tapefile
from tapefile_bytes import sections


def like(x, rng, scale=1.0):
    """Random values (normal, times ``scale``) in the structure of ``x``."""
    if isinstance(x, dict):
        return {k: like(v, rng, scale) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return type(x)(*[like(v, rng, scale) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(like(v, rng, scale) for v in x)
    if x is None:
        return None
    return scale * rng.standard_normal(np.shape(x))


def nearby(x, rng, scale=1e-3):
    """``x`` (a container of arrays, or arrays) moved a little."""
    if isinstance(x, dict):
        return {k: nearby(v, rng, scale) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return type(x)(*[nearby(v, rng, scale) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(nearby(v, rng, scale) for v in x)
    if x is None:
        return None
    return np.asarray(x, dtype=float) + scale * rng.uniform(0.5, 1.0, np.shape(x))


def as_bytes(result):
    """A replay's result (arrays in containers) as comparable bytes, with
    the containers' types and keys."""
    if isinstance(result, dict):
        return ("dict", tuple((k, as_bytes(v)) for k, v in result.items()))
    if isinstance(result, (list, tuple)):
        return (type(result).__name__, tuple(as_bytes(v) for v in result))
    if result is None:
        return None
    return np.asarray(result).tobytes()


def outcomes(tape, args, seed=0, methods=None):
    """Every replay of ``tape`` at the arguments ``args`` (a tuple, one per
    recorded argument) as bytes, or the name of the error it raised."""
    rng = np.random.default_rng(seed)
    point = args[0] if len(args) == 1 else tuple(args)
    v = like(point, rng)
    w = rng.standard_normal(tuple(tape.output_shape))
    calls = {"forward": lambda: tape.forward(*args),
             "jvp": lambda: tape.jvp(point, v),
             "vjp": lambda: tape.vjp(point, w)}
    if int(np.prod(tape.output_shape)) == 1:
        calls.update(gradient=lambda: tape.gradient(*args),
                     hvp=lambda: tape.gradient_and_hvp(point, v))
    else:
        calls.update(hvp=lambda: tape.gradient_and_hvp(point, v, w))
    out = {}
    for name in methods or calls:
        try:
            out[name] = as_bytes(calls[name]())
        except Exception as err:            # the copy must raise the same error
            out[name] = type(err).__name__
    return out


def copies(tape, tmp_path=None):
    """The tape saved and loaded (through a file when ``tmp_path`` is given)
    and pickled: what must replay like it."""
    if tmp_path is not None:
        tape.save(tmp_path / "saved.adtape")
        loaded = tapefile.load(tmp_path / "saved.adtape")
    else:
        loaded = tapefile.loads(tapefile.dumps(tape))
    return [loaded, pickle.loads(pickle.dumps(tape))]


def assert_same_replays(tape, copied, points, methods=None):
    """Every tape of ``copied`` (a tape or a list of them) replays bitwise
    like ``tape`` at every point of ``points`` (each a tuple of arguments)."""
    copied = copied if isinstance(copied, list) else [copied]
    for k, args in enumerate(points):
        want = outcomes(tape, args, seed=k, methods=methods)
        assert not any(isinstance(v, str) for v in want.values()), want
        for other in copied:
            assert outcomes(other, args, seed=k, methods=methods) == want


def callback_kinds(tape):
    """The kinds of the callbacks of every tape in ``tape``'s file (its
    loops' step tapes and nested derivatives' inner tapes too)."""
    data = tapefile.dumps(tape)
    return {c["kind"] for _, tag, _, count, _, at in sections(data) if tag == "CALL"
            for c in json.loads(bytes(data[at:at + count]).decode())}
