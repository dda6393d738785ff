"""The tape cache's analysis of a function's bytecode reads ``co_code``
directly (adsim/_tapecache/codeinfo.py, ``_instructions``); it must find
exactly what the analysis through ``dis.get_instructions`` finds, for every
code object of real modules (NumPy's, SciPy's, adsim's own, the standard
library's) and for the shapes user code takes."""
import inspect
import json
import types

import numpy as np
import pytest
import scipy.integrate
import scipy.optimize

import adsim
from adsim._tapecache import codeinfo

FIELDS = ("global_names", "unused", "positional", "external", "dynamic_globals", "names",
          "imports")


def _codes(module):
    for obj in vars(module).values():
        if isinstance(obj, types.FunctionType):
            yield obj.__code__
        elif inspect.isclass(obj):
            for member in vars(obj).values():
                if isinstance(member, types.FunctionType):
                    yield member.__code__


def _user_shapes():
    k = 3.0

    def closure(x, unused, *, key=None):
        y = [v * k for v in x]
        import math                                     # noqa: F401
        return sum(y) + (lambda z: z + key)(1.0)

    def many_locals(a, b, c, d, e, f, g, h, i, j, k_, l_, m, n, o, p, q, r):
        s, t = a + b, c * d
        s, t = t, s
        return s + t + e + f + g + h + i + j + k_ + l_ + m + n + o + p + q + r

    def globals_read(x):
        return np.sum(np.exp(x)) + adsim.stop_gradient(x).sum() + eval("1")

    big = "def wide(x):\n" + "".join(f"    v{i} = x + {i}\n" for i in range(300)) + \
        "    return " + " + ".join(f"v{i}" for i in range(300)) + "\n"
    namespace = {}
    exec(compile(big, "<wide>", "exec"), namespace)     # locals past 255: EXTENDED_ARG
    return [closure.__code__, many_locals.__code__, globals_read.__code__,
            namespace["wide"].__code__]


MODULES = [np, np.linalg, scipy.integrate, scipy.optimize, adsim, adsim.api, json, inspect]


def test_the_direct_reading_finds_what_dis_finds(monkeypatch):
    if codeinfo._varname is None:
        pytest.skip("this interpreter has no direct reading: dis is used")
    codes = _user_shapes() + [c for m in MODULES for c in _codes(m)]
    assert len(codes) > 300
    fast = [codeinfo.CodeInfo(c) for c in codes]
    monkeypatch.setattr(codeinfo, "_varname", None)
    for code, got in zip(codes, fast):
        want = codeinfo.CodeInfo(code)
        for field in FIELDS:
            assert getattr(got, field) == getattr(want, field), (code, field)


def test_what_the_analysis_finds_in_user_shapes():
    closure, many, globals_read, wide = (codeinfo.CodeInfo(c) for c in _user_shapes())
    assert closure.unused == {"unused"} and closure.imports
    assert many.unused == frozenset() and len(many.positional) == 18
    assert globals_read.global_names[:2] == ("np", "adsim") and \
        globals_read.dynamic_globals == "eval"
    assert wide.unused == frozenset()
