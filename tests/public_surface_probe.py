"""Feeds every public name of adsim awkward arguments (run as a child process
by tests/test_public_surface.py, so that a crash of the interpreter fails the
test instead of killing the test run): the names of ``adsim.__all__``, of its
public submodules, the user-facing methods of a recorded and of a loaded
tape, and of sparse plans. Prints one line per call whose error is not a
clear one, then a count.

A clear error is adsim's own (an :class:`adsim.errors.AdsimError`, which names
the argument, what was given and what is accepted), Python's for a call that
does not fit the signature (raised before adsim runs), or whatever the
probe's own functions raise (the user's code). A builtin error raised inside
adsim is unclear: it does not say which argument of which entry point was
wrong."""
import inspect
import itertools
import os
import shutil
import signal
import sys
import tempfile
import warnings

import numpy as np

import adsim
import adsim.integrate
import adsim.parallel
import adsim.tapefile
import adsim.testing

warnings.simplefilter("ignore")
ADSIM_DIR = os.path.dirname(adsim.__file__)

AWKWARD = [None, 0, -1, 2 ** 40, 1.5, float("nan"), "abc", (), [], [None], {}, np.array([]),
           np.zeros((0, 3)), np.array([np.nan, 1.0]), np.array([1 + 2j]),
           np.array([None], dtype=object), np.array(["2020-01-01"], dtype="datetime64[D]"),
           np.ones((2, 2)), lambda *a: None, lambda x: x, lambda x: np.sum(x ** 2),
           lambda x: (x, x), slice(None), object(),
           # ndarrays whose numbers or arithmetic differ from a plain float64 array's
           np.array([0.5, -0.3]).astype(">f8"), np.matrix([[1.0, 2.0]]),
           np.ma.array([1.0, 2.0], mask=[False, True])]

UNCLEAR = (SystemError, AttributeError, UnboundLocalError, NameError, AssertionError,
           RecursionError)


def _raised_inside_adsim(err):
    """Whether the innermost frame of ``err``'s traceback that belongs to adsim
    or to this probe is adsim's (a frame of NumPy or SciPy reached from the
    probe's own function is the user's error)."""
    inside = False
    tb = err.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.startswith(ADSIM_DIR):
            inside = True
        elif name == __file__ and tb.tb_frame.f_code.co_name == "<lambda>":
            inside = False
        tb = tb.tb_next
    return inside


def unclear(err):
    """The reason ``err`` is not a clear error, or None."""
    if isinstance(err, adsim.errors.AdsimError):
        return None
    if isinstance(err, UNCLEAR):
        return type(err).__name__
    if isinstance(err, (FileNotFoundError, MemoryError, KeyboardInterrupt)):
        return None
    if _raised_inside_adsim(err):
        return f"{type(err).__name__} raised inside adsim"
    return None


def calls(obj):
    try:
        n = len([p for p in inspect.signature(obj).parameters.values()
                 if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    except (TypeError, ValueError):
        n = 2
    n = min(max(n, 1), 3)
    small = [None, -1, 2 ** 40, "abc", np.array([]), np.array([np.nan, 1.0]), np.ones((2, 2)),
             AWKWARD[19], AWKWARD[20]]
    for args in itertools.product(small, repeat=n):
        yield args
    for a in AWKWARD:
        yield (a,)


class TookTooLong(Exception):
    pass


def _alarm(signum, frame):
    raise TookTooLong()


def _tape_targets():
    """The user-facing methods of a recorded tape, of the same tape loaded
    from its file, and of sparse plans."""
    x = np.array([0.5, -0.3, 0.2])
    tape = adsim.record(lambda z: np.sum(np.sin(z) * z), x)
    loaded = adsim.tapefile.loads(adsim.tapefile.dumps(tape))
    targets = {}
    for label, t in (("tape", tape), ("loaded tape", loaded)):
        for method in ("forward", "gradient", "value_and_gradient", "jvp", "vjp", "hvp",
                       "gradient_and_hvp", "jacobian", "save"):
            targets[f"{label}.{method}"] = getattr(t, method)
    jac = adsim.sparse_jacobian_plan(lambda z: z[1:] * z[:-1], x)
    hes = adsim.sparse_hessian_plan(lambda z: np.sum(z[1:] * z[:-1] ** 2), x)
    targets["sparse_jacobian_plan(...)"] = jac
    targets["sparse_hessian_plan(...)"] = hes
    targets["sparse_hessian_plan(...).value_gradient_hessian"] = hes.value_gradient_hessian
    return targets


def public_targets():
    """{name: callable} of everything public."""
    targets = {}
    for name in sorted(set(adsim.__all__) - {"Active"}):
        targets[name] = getattr(adsim, name)
    for module in (adsim.integrate, adsim.parallel):
        for name in module.__all__:
            targets[f"{module.__name__.split('.')[-1]}.{name}"] = getattr(module, name)
    targets["testing.check_grads"] = adsim.testing.check_grads
    targets["tapefile.loads"] = adsim.tapefile.loads
    targets["tapefile.load"] = adsim.tapefile.load
    targets.update(_tape_targets())
    return {name: obj for name, obj in targets.items()
            if callable(obj) and not (isinstance(obj, type) and issubclass(obj, BaseException))}


def main():
    signal.signal(signal.SIGALRM, _alarm)
    bad = slow = 0
    for name, obj in public_targets().items():
        for args in calls(obj):
            signal.setitimer(signal.ITIMER_REAL, 0.5)
            try:
                result = obj(*args)
                if callable(result) and not isinstance(result, type):
                    for a in AWKWARD[:14]:
                        try:
                            result(a)
                        except Exception as err:      # noqa: PERF203
                            why = unclear(err)
                            if why:
                                bad += 1
                                print(f"{name}(...)({type(a).__name__}): {why}: {err}"[:300],
                                      flush=True)
            except TookTooLong:
                slow += 1
                print(f"{name}{tuple(map(type, args))}: still running after 0.5 s", flush=True)
            except Exception as err:
                why = unclear(err)
                if why:
                    bad += 1
                    print(f"{name}{tuple(type(a).__name__ for a in args)}: {why}: {err}"[:300],
                          flush=True)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    print(f"unclear {bad} slow {slow}")
    return 0


if __name__ == "__main__":
    scratch = tempfile.mkdtemp(prefix="adsim-probe-")      # files the probe's saves write
    os.chdir(scratch)
    try:
        sys.exit(main())
    finally:
        os.chdir(os.path.dirname(scratch))
        shutil.rmtree(scratch, ignore_errors=True)
