"""Every function adsim records, checked in every mode, from one table
(tests/functable_cases.py), in the style of JAX's NumPy tests.

* Completeness: every callable adsim dispatches (read from its dispatch
  tables: ``FUNCTIONS`` and the ufunc tables of adsim/_numpy_api.py, the
  scipy.special ufuncs, the SciPy hooks and distributions, the methods and
  operators of ``Active``; plus every NumPy ufunc found to record) has a
  case, a value-only case, a refusal or a stated reason.
* Every differentiable case: the value against NumPy/SciPy; tangents,
  adjoints and Hessian-vector products against central differences; the
  tangent against the complex step where the function is holomorphic and
  NumPy takes complex input (``NO_COMPLEX_STEP`` says why not elsewhere);
  the Jacobian and Hessian sparsity patterns contain every nonzero of the
  dense Jacobian and of the Hessian of a weighted sum of the outputs; the
  tape saved to a tape file and loaded replays values and adjoints bitwise.
* Value-only cases: the value inside a recording equals NumPy's.
* Refusals: a typed adsim error naming what was refused.

Known bugs are xfail(strict=True) cases whose reason names the bug and a
reproducer; a fixed bug makes its case pass and the test fail until the
mark is removed.
"""
import functools
import importlib
import zlib

import numpy as np
import pytest
import scipy.stats as st

import adsim
from adsim import tapefile
from adsim._active import Active
from adsim.sparse.pattern import hessian_pattern, jacobian_pattern
import functable_cases as table
from functable_cases import name_of
from fdcheck import ATOL, RTOL, assert_close, central, check_hvp, complex_step, distinct

# ---------------------------------------------------------------- what adsim dispatches

def _records_on_active(uf):
    """Whether the NumPy ufunc ``uf`` records on active float arguments
    (tried with vectors and, for the matrix ufuncs, matrices)."""
    def call(x, shapes):
        uf(*[x[:int(np.prod(s))].reshape(s) for s in shapes[:uf.nin]])
        return x * 1.0
    for shapes in (((2,), (2,)), ((2, 2), (2,)), ((2,), (2, 2)), ((2, 2), (2, 2))):
        try:
            adsim.record(lambda x: call(x, shapes), np.array([0.3, 0.6, 0.45, 0.8]))
            return True
        except adsim.UnsupportedOperation:
            return False
        except Exception:               # noqa: BLE001  (operands of the wrong dimensions: others)
            continue
    return False


def _scipy_special_ufuncs():
    """The scipy.special ufuncs adsim records (the private ones behind
    public functions, such as zeta's, included)."""
    import scipy.special as sc
    from adsim._np.special import special_ufunc
    from adsim._scipy.ufuncs import scipy_ufunc
    ufuncs = {id(u): u for module in (sc, sc._ufuncs) for u in vars(module).values()
              if isinstance(u, np.ufunc)}
    return [u for u in ufuncs.values()
            if special_ufunc(u) is not None or scipy_ufunc(u) is not None]


_GENERIC = ("rv_continuous", "rv_discrete", "rv_generic")   # hooked for every distribution


def _scipy_hooks():
    """The SciPy functions hooked while recording, read from the rule
    tables: each distribution's methods one by one, the refusals of the
    methods shared by all distributions."""
    from adsim._scipy import distributions, hooks, stats, stats_rvs
    found = []
    for scipy_module, rules in hooks._TABLES.items():
        importlib.import_module(scipy_module)
        for (module, path), rule in importlib.import_module(rules).HOOKS.items():
            refuses = rule.__qualname__.split(".")[0] in ("unsupported", "_unsupported")
            # rvs: one rule for every continuous distribution (its loc and scale)
            if path.split(".")[0] not in _GENERIC or refuses or rule is stats_rvs.rvs:
                function = hooks._resolve(module, path)
                if function is not None:
                    found.append(function)
    for families in (distributions.CONTINUOUS, distributions.DISCRETE):
        for dist, family in families.items():
            found += [getattr(getattr(st, dist), m) for m in stats._methods(family)]
    return found


@functools.cache
def dispatched():
    """Name -> callable of everything adsim records or refuses by a rule of
    its own, read from its dispatch tables."""
    from adsim import _numpy_api as api
    from adsim._record import creation as _creation

    found = list(api.FUNCTIONS)
    # every NumPy ufunc api.ufunc() records, from a table or a branch of its own
    found += [uf for uf in vars(np).values() if isinstance(uf, np.ufunc) and uf.nin <= 2
              and _records_on_active(uf)]
    found += [uf.reduce for uf in api._REDUCTIONS] + [uf.accumulate for uf in api._ACCUMULATIONS]
    found += [uf.reduceat for uf in api._REDUCTIONS]
    found += [uf.at for uf in api._AT_UFUNCS]
    found += [getattr(np, name) for name in _creation._wrappers()]
    found += _scipy_special_ufuncs() + _scipy_hooks()
    found += [f"ndarray.{name}" for name in vars(Active)
              if not name.startswith("_") or name.startswith("__")]
    return {name_of(f): f for f in found}


def _listed():
    return {name_of(k): k for t in (table.CASES, table.VALUE_ONLY, table.REFUSED,
                                    table.NOT_FUNCTIONS) for k in t}


def test_every_dispatched_function_has_a_case():
    missing = sorted(set(dispatched()) - set(_listed()))
    assert missing == [], (f"functions adsim dispatches without a case in "
                           f"tests/functable_cases.py: {missing}")


def test_every_table_entry_is_dispatched():
    stale = sorted(set(_listed()) - set(dispatched()))
    assert stale == [], f"table entries adsim does not dispatch: {stale}"
    keys = {name_of(k) for k in table.CASES}
    assert sorted(set(map(name_of, table.NO_COMPLEX_STEP)) - keys) == []
    cases, values, refused, others = (set(map(name_of, t)) for t in (
        table.CASES, table.VALUE_ONLY, table.REFUSED, table.NOT_FUNCTIONS))
    assert cases & values == set(), "both differentiable and value-only"
    assert others & (cases | values | refused) == set(), "not a function, yet with cases"
    assert all(table.CASES.values()) and all(table.VALUE_ONLY.values())


def test_case_names_are_unique():
    """A case's name keys its recorded tape and its seed."""
    names = [_id(key, c, i) for t in (table.CASES, table.VALUE_ONLY)
             for key, cases in t.items() for i, c in enumerate(cases)]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


# ---------------------------------------------------------------- points

def _id(key, c, i):
    return f"{name_of(key)}[{c.label or i}]"


def _seed(text):
    return zlib.crc32(text.encode())


def sample(c, seed):
    """A point of the case's domain: values 0.08 apart and away from the
    multiples of 0.5, so that differences cross no kink or reordering."""
    return distinct(np.random.default_rng(seed), c.shape, *c.domain)


class Prepared:
    """One case recorded at one point, with its reference Jacobian; shared
    by the modes of the case."""

    def __init__(self, c, seed):
        self.rng = np.random.default_rng(seed)
        self.x = sample(c, seed)
        self.want = np.asarray(c.f(self.x.copy()), dtype=float)
        self.tape = adsim.record(c.f, self.x)
        self.m, self.n = self.want.size, self.x.size
        self.J = _fd_jacobian(c.f, self.x, self.m)
        self.scale = max(1.0, np.max(np.abs(self.J), initial=0.0))


def _fd_jacobian(f, x, m):
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = 1.0
        cols.append(np.ravel(central(f, [x], [e.reshape(x.shape)])))
    return np.stack(cols, axis=1) if cols else np.zeros((m, 0))


_PREPARED = {}


def prepared(cid, c):
    if cid not in _PREPARED:
        _PREPARED[cid] = Prepared(c, _seed(cid))
    return _PREPARED[cid]


# ---------------------------------------------------------------- the modes

def check_value(p, c):
    assert tuple(p.tape.output_shape) == p.want.shape
    assert_close(p.tape.forward(p.x), p.want, rtol=1e-12, atol=1e-14, what="replayed value")


def check_forward(p, c):
    atol = ATOL * p.scale
    v = p.rng.standard_normal(p.x.shape)
    y, jv = p.tape.jvp([p.x], [v])
    assert_close(y, p.want, rtol=1e-12, atol=1e-14, what="value of the tangent sweep")
    assert_close(np.ravel(jv), p.J @ np.ravel(v), RTOL, atol, "J v")
    V = p.rng.standard_normal(p.x.shape + (3,))
    _, JV = p.tape.jvp([p.x], [V])
    assert_close(np.reshape(JV, (p.m, 3)), p.J @ V.reshape(p.n, 3), RTOL, atol, "J V")
    J = p.tape.jacobian(p.x, mode="forward")
    assert_close(np.reshape(J, (p.m, p.n)), p.J, RTOL, atol, "dense Jacobian (forward)")


def check_reverse(p, c):
    atol = ATOL * p.scale
    w = p.rng.standard_normal(p.want.shape)
    y, g = p.tape.vjp([p.x], w)
    assert_close(y, p.want, rtol=1e-12, atol=1e-14, what="value of the adjoint sweep")
    assert_close(np.ravel(g), p.J.T @ np.ravel(w), RTOL, atol, "J^T w")
    W = p.rng.standard_normal(p.want.shape + (3,))
    _, G = p.tape.vjp([p.x], W)
    assert_close(np.reshape(G, (p.n, 3)), p.J.T @ W.reshape(p.m, 3), RTOL, atol, "J^T W")
    J = p.tape.jacobian(p.x, mode="reverse")
    assert_close(np.reshape(J, (p.m, p.n)), p.J, RTOL, atol, "dense Jacobian (reverse)")
    v = p.rng.standard_normal(p.x.shape)
    _, jv = p.tape.jvp([p.x], [v])
    lhs, rhs = float(np.dot(np.ravel(w), np.ravel(jv))), float(np.dot(np.ravel(g), np.ravel(v)))
    assert abs(lhs - rhs) <= 1e-12 * max(abs(lhs), abs(rhs)) + 1e-13, \
        f"dot-product test <w, J v> = <J^T w, v>: {lhs!r} != {rhs!r}"
    if p.m == 1:
        _, grad = p.tape.value_and_gradient(p.x)
        assert_close(grad, p.J[0].reshape(p.x.shape), RTOL, atol, "gradient")


def check_hvp_mode(p, c):
    check_hvp(p.tape, [p.x], p.rng.standard_normal(p.want.shape), p.rng, k=2)


def check_complex_step(p, c):
    v = p.rng.standard_normal(p.x.shape)
    _, jv = p.tape.jvp([p.x], [v])
    assert_close(jv, complex_step(c.f, [p.x], [v]), rtol=1e-10, atol=1e-12 * p.scale,
                 what="J v against the complex step")


def check_sparsity(p, c):
    """Patterns may hold structural zeros, never miss a nonzero."""
    pattern = jacobian_pattern(p.tape).toarray()
    assert pattern.shape == (p.m, p.n)
    missed = np.argwhere((np.abs(p.J) > 1e-6 * p.scale) & ~pattern)
    assert missed.size == 0, f"Jacobian pattern misses nonzeros at (row, column) {missed.tolist()}"
    w = p.rng.standard_normal(p.want.shape)
    H = np.reshape(p.tape.hvp([p.x], np.eye(p.n).reshape(p.x.shape + (p.n,)), w), (p.n, p.n)) \
        if p.n else np.zeros((0, 0))
    hpattern = hessian_pattern(p.tape).toarray()
    missed = np.argwhere((np.abs(H) > 1e-10 * max(1.0, np.max(np.abs(H), initial=0.0)))
                         & ~hpattern)
    assert missed.size == 0, f"Hessian pattern misses nonzeros at {missed.tolist()}"


def check_saved(p, c):
    """Every tape recorded from NumPy and SciPy code saves, and its copy
    replays bitwise."""
    copy = tapefile.loads(tapefile.dumps(p.tape))
    w = p.rng.standard_normal(p.want.shape)
    for got, want in zip(copy.vjp([p.x], w), p.tape.vjp([p.x], w)):
        np.testing.assert_array_equal(got, want, err_msg="a tape file's copy")


CHECKS = {"value": check_value, "forward": check_forward, "reverse": check_reverse,
          "hvp": check_hvp_mode, "complex_step": check_complex_step, "sparsity": check_sparsity,
          "saved": check_saved}


def no_complex_step(key, c):
    return c.no_complex_step or table.NO_COMPLEX_STEP.get(key, "")


class KnownBug(Exception):
    """The failure a case's strict xfail expects: only this exception counts
    as expected, so any other failure of a case with a known bug is reported."""


_KNOWN = {}


def bug_modes(key, c):
    """Mode -> reasons of the case's known bugs."""
    if id(c) not in _KNOWN:
        found = {}
        for mode, reason in c.bugs + table.known_bugs(key, c):
            for m in table.MODES if mode == "all" else (mode,):
                found.setdefault(m, []).append(reason)
        _KNOWN[id(c)] = found
    return _KNOWN[id(c)]


def _xfail(bugs):
    reason = "; ".join(dict.fromkeys(r for reasons in bugs.values() for r in reasons))
    return [pytest.mark.xfail(strict=True, raises=KnownBug, reason=reason)] if bugs else []


def expect_bug(check):
    """``check()``, whose failure is a known bug: re-raised as KnownBug,
    without the traceback (hundreds of those would dominate the run time)."""
    try:
        check()
    except Exception as e:              # noqa: BLE001  (re-raised as the expected failure)
        raise KnownBug(f"{type(e).__name__}: {e}") from None


def _params():
    for key, cases in table.CASES.items():
        for i, c in enumerate(cases):
            modes = [m for m in table.MODES if m != "complex_step" or not no_complex_step(key, c)]
            bugs = {m: r for m, r in bug_modes(key, c).items() if m in modes}
            cid = _id(key, c, i)
            yield pytest.param(cid, c, modes, bugs, id=cid, marks=_xfail(bugs))


@pytest.mark.parametrize("cid, c, modes, bugs", list(_params()))
def test_function(cid, c, modes, bugs):
    """Every mode of one case, in a fixed order; the modes with a known bug
    must all fail, the others pass."""
    fixed = []
    for mode in modes:
        try:
            CHECKS[mode](prepared(cid, c), c)
        except Exception as e:
            if mode not in bugs:
                e.add_note(f"mode: {mode}")
                raise
        else:
            if mode in bugs:
                fixed.append(mode)
    assert not fixed, f"modes {fixed} pass: remove their known bug from the case"
    if bugs:
        raise KnownBug(f"modes {sorted(bugs)} fail as expected")


def _refusing_complex():
    for key, cases in table.CASES.items():
        for i, c in enumerate(cases):
            if no_complex_step(key, c) == table.REFUSES_COMPLEX:
                yield pytest.param(c, id=_id(key, c, i))


@pytest.mark.parametrize("c", list(_refusing_complex()))
def test_complex_input_is_refused_where_the_table_says(c):
    """A reason to skip the complex step that has gone stale fails here."""
    x = sample(c, 0)
    with pytest.raises((TypeError, ValueError, np.exceptions.ComplexWarning)):
        c.f(x + 1e-20j)


# ---------------------------------------------------------------- without derivatives

def inside_recording(f, x):
    """``f(x)`` computed on an active ``x`` while recording."""
    box = []

    def g(a):
        out = f(a)
        box.append(_plain(out))
        return out * 1.0 if isinstance(out, Active) else a * 1.0
    tape = adsim.record(g, x)
    return np.asarray(tape.forward(x)) if isinstance(box[0], Active) else box[0]


def _plain(v):
    """``v`` without recorded values, taken while the recording runs."""
    if isinstance(v, Active):
        return v                    # its value is the recording's output
    if isinstance(v, (tuple, list)):
        return type(v)(_plain(o) for o in v)
    if v is None or isinstance(v, (np.ndarray, np.generic, np.dtype, int, float, str)):
        return v
    return np.asarray(v)            # recorded integer data, say: its value, guarded


def _same(got, want, what):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), what
        for a, b in zip(got, want):
            _same(a, b, what)
        return
    got_a, want_a = np.asarray(got), np.asarray(want)
    assert got_a.dtype == want_a.dtype, f"{what}: dtype {got_a.dtype} != {want_a.dtype}"
    np.testing.assert_array_equal(got_a, want_a, err_msg=what)


def _value_params():
    for key, cases in table.VALUE_ONLY.items():
        for i, c in enumerate(cases):
            cid = _id(key, c, i)
            bugs = bug_modes(key, c)
            yield pytest.param(cid, c, bool(bugs), id=cid, marks=_xfail(bugs))


@pytest.mark.parametrize("cid, c, known", list(_value_params()))
def test_value_only(cid, c, known):
    x = sample(c, _seed(cid))
    check = lambda: _same(inside_recording(c.f, x), c.f(x.copy()), cid)     # noqa: E731
    expect_bug(check) if known else check()


def _refused_params():
    for key, cases in table.REFUSED.items():
        for i, (c, error, match) in enumerate(cases):
            cid = _id(key, c, i)
            bugs = bug_modes(key, c)
            yield pytest.param(cid, c, error, match, bool(bugs), id=cid, marks=_xfail(bugs))


@pytest.mark.parametrize("cid, c, error, match, known", list(_refused_params()))
def test_refused(cid, c, error, match, known):
    def check():
        with pytest.raises(error, match=match):
            inside_recording(c.f, sample(c, _seed(cid)))
    expect_bug(check) if known else check()


# ---------------------------------------------------------------- the checks can fail

def _sin_rules(jvp_slope=1.0, vjp_slope=1.0, curvature=True):
    """sin as a primitive whose rules may be off by a factor, or whose
    reverse rule hides its own derivative (no curvature)."""
    def slope(x):
        return np.cos(x) if curvature else adsim.stop_gradient(np.cos(x))
    return adsim.primitive(np.sin, jvp=lambda a, out, t: jvp_slope * np.cos(a[0]) * t[0],
                           vjp=lambda a, out, w: (vjp_slope * slope(a[0]) * w,))


WRONG_RULES = {
    "forward": _sin_rules(jvp_slope=1.0 + 1e-4),
    "complex_step": _sin_rules(jvp_slope=1.0 + 1e-4),
    "reverse": _sin_rules(vjp_slope=1.0 + 1e-4),
    "hvp": _sin_rules(curvature=False),
    # declared elementwise, but each output depends on the inputs before it
    "sparsity": adsim.primitive(np.cumsum, jvp=lambda a, out, t: np.cumsum(t[0]),
                                vjp=lambda a, out, w: (np.cumsum(w[::-1])[::-1],),
                                elementwise=True, linear=True),
}


@pytest.mark.parametrize("mode", sorted(WRONG_RULES))
def test_each_check_fails_on_a_wrong_rule(mode):
    c = table.case(WRONG_RULES[mode], 4)
    p = Prepared(c, _seed(mode))
    check_value(p, c)
    with pytest.raises(AssertionError):
        CHECKS[mode](p, c)
