"""Feeds every public name of adsim awkward arguments (run as a child process
by tests/test_public_surface.py, so that a crash of the interpreter fails the
test instead of killing the test run). Prints one line per call whose error
is not a clear one, then a count."""
import inspect
import itertools
import signal
import sys
import warnings

import numpy as np

import adsim

warnings.simplefilter("ignore")

AWKWARD = [None, 0, -1, 2 ** 40, 1.5, float("nan"), "abc", (), [], [None], {}, np.array([]),
           np.zeros((0, 3)), np.array([np.nan, 1.0]), np.array([1 + 2j]),
           np.array([None], dtype=object), np.array(["2020-01-01"], dtype="datetime64[D]"),
           np.ones((2, 2)), lambda *a: None, lambda x: x, lambda x: np.sum(x ** 2),
           lambda x: (x, x), slice(None), object()]

# errors a user can act on: adsim's own, and Python's for calls that do not
# fit a signature or a value NumPy itself refuses
CLEAR = (adsim.errors.AdsimError, TypeError, ValueError, ZeroDivisionError, OverflowError,
         MemoryError, KeyError, IndexError, FileNotFoundError)
UNCLEAR = (SystemError, AttributeError, UnboundLocalError, NameError, AssertionError,
           RecursionError)


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


def main():
    signal.signal(signal.SIGALRM, _alarm)
    bad = slow = 0
    names = sorted(set(adsim.__all__) - {"Active"})
    for name in names:
        obj = getattr(adsim, name)
        if not callable(obj) or isinstance(obj, type) and issubclass(obj, BaseException):
            continue
        for args in calls(obj):
            signal.setitimer(signal.ITIMER_REAL, 0.5)
            try:
                result = obj(*args)
                if callable(result) and not isinstance(result, type):
                    for a in AWKWARD[:14]:
                        try:
                            result(a)
                        except CLEAR:
                            pass
            except UNCLEAR as err:
                bad += 1
                print(f"{name}{tuple(map(type, args))}: {type(err).__name__}: {err}"[:300])
            except TookTooLong:
                slow += 1
                print(f"{name}{tuple(map(type, args))}: still running after 0.5 s", flush=True)
            except CLEAR:
                pass
            except RuntimeError as err:
                if not str(err).startswith("adsim"):
                    bad += 1
                    print(f"{name}{tuple(map(type, args))}: RuntimeError: {err}"[:300], flush=True)
            except Exception as err:   # anything else counts as unclear too
                bad += 1
                print(f"{name}{tuple(map(type, args))}: {type(err).__name__}: {err}"[:300], flush=True)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    print(f"unclear {bad} slow {slow}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
