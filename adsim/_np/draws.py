"""Random draws whose distribution parameters are active: the pathwise
(reparameterised) derivative.

``rng.normal(mu, sigma, n)`` with active ``mu``, ``sigma`` is, in NumPy's own
code (numpy/random/src/distributions/distributions.c, and the legacy
functions of RandomState), ``loc + scale * z`` with ``z`` drawn the same way
whatever the parameters: the draw is a location-scale transform of a draw
that does not depend on them. adsim draws that ``z`` by calling the same
method at the standard parameters (``normal(0.0, 1.0, shape)``), from the
generator state the user's call would start from, and records ``loc +
scale * z``; the derivative with respect to the parameters is the pathwise
one, ``d/dloc = 1``, ``d/dscale = z``, with the random numbers held fixed.
``z`` is a constant of the tape, as a draw with plain parameters is: a
replay at new parameters reuses the same random numbers (common random
numbers). The families, with NumPy's computation of one draw (``U`` is
``next_double``, the same for every parameter):

========================  =================================  =================
method                    NumPy computes                     active parameters
========================  =================================  =================
``normal``                ``loc + scale * standard_normal``  loc, scale
``uniform``               ``low + (high - low) * U``         low, high
``exponential``           ``scale * standard_exponential``   scale
``gumbel``                ``loc - scale * log(-log(1 - U))`` loc, scale
``laplace``               ``loc -/+ scale * log(...U...)``   loc, scale
``logistic``              ``loc + scale * log(U / (1 - U))`` loc, scale
``rayleigh``              ``scale * sqrt(-2 log(1 - U))``    scale
``gamma``                 ``scale * standard_gamma(shape)``  scale (shape plain)
``multivariate_normal``   ``z @ F + mean`` (F from cov)      mean, cov
========================  =================================  =================

and ``choice(a, size, replace, p)`` with active ``p`` and ``a`` (the indices
are piecewise constant in ``p``: :func:`_choice`), for
``numpy.random.Generator`` and ``numpy.random.RandomState`` (and so
``np.random.normal(...)`` and the other functions of NumPy's global
RandomState). With the standard draw ``z`` (at loc 0, scale 1: ``0 + 1 * x``
is ``x``, and ``loc - scale * x`` is ``loc + scale * (-x)``), adsim's value
is NumPy's bit for bit; each call checks that the two draws consumed the
generator state alike and agree (tests/numpy/test_random_draws.py checks
bitwise equality). Any other distribution with an active parameter
(``lognormal``, whose ``exp`` is the C library's, ``poisson``, ``beta``,
``gamma``'s shape, ...) is refused by name
with the transform to write instead where there is one.

adsim/_record/interpose.py puts :func:`method` wrappers in the two classes
and :func:`legacy_function` ones in ``numpy.random`` while a recording runs
with interposition on.
"""
import inspect

import numpy as np

from .._active import Active
from .._tapecache.random_watch import _freeze
from ..errors import ActiveValueLeak
from .integers import current, guard
from .joins import from_pieces, holds_active


class _Family:
    """A location-scale family: the parameter that is the location (or
    None), how the scale is made from the parameters, the standard values,
    and the parameters that must stay plain."""

    __slots__ = ("location", "scale", "standard", "plain")

    def __init__(self, location, scale, standard, plain=()):
        self.location = location
        self.scale = scale
        self.standard = standard
        self.plain = plain


def _named(name):
    return lambda p: p[name]


FAMILIES = {
    "normal": _Family("loc", _named("scale"), {"loc": 0.0, "scale": 1.0}),
    "uniform": _Family("low", lambda p: p["high"] - p["low"], {"low": 0.0, "high": 1.0}),
    "exponential": _Family(None, _named("scale"), {"scale": 1.0}),
    "gumbel": _Family("loc", _named("scale"), {"loc": 0.0, "scale": 1.0}),
    "laplace": _Family("loc", _named("scale"), {"loc": 0.0, "scale": 1.0}),
    "logistic": _Family("loc", _named("scale"), {"loc": 0.0, "scale": 1.0}),
    "rayleigh": _Family(None, _named("scale"), {"scale": 1.0}),
    "gamma": _Family(None, _named("scale"), {"scale": 1.0}, plain=("shape",)),
    "multivariate_normal": _Family("mean", None, {}),   # an active cov: _multivariate_normal
}

# the transform to write by hand: the same draws for the families above (in a
# recording with interposition off), the nearest for the others
TRANSFORMS = {
    "normal": "loc + scale * rng.standard_normal(size)",
    "uniform": "low + (high - low) * rng.random(size)",
    "exponential": "scale * rng.standard_exponential(size)",
    "gumbel": "loc + scale * rng.gumbel(0.0, 1.0, size)",
    "laplace": "loc + scale * rng.laplace(0.0, 1.0, size)",
    "logistic": "loc + scale * rng.logistic(0.0, 1.0, size)",
    "rayleigh": "scale * rng.rayleigh(1.0, size)",
    "gamma": "scale * rng.standard_gamma(shape, size)",
    "lognormal": "np.exp(mean + sigma * rng.standard_normal(size)) (the same draws up to the "
                 "last bit: NumPy's exp is the C library's)",
    "multivariate_normal": "u, s, vh = np.linalg.svd(cov); mean + rng.standard_normal((n, d)) "
                           "@ (u * np.sqrt(s)).T (NumPy's draws from a Generator)",
}


def supported():
    """The names of the methods whose draws take active parameters."""
    return tuple(FAMILIES) + ("choice",)


def _families():
    return ", ".join([n if not FAMILIES[n].plain else
                      f"{n} (not its {'/'.join(FAMILIES[n].plain)})" for n in FAMILIES]
                     + ["and choice (its a and p)"])


def refusal_message(kind, name, what):
    """Why a draw of ``kind.name`` (``Generator.lognormal``) given ``what``
    (``active sigma``) has no pathwise rule, and what to write instead."""
    instead = TRANSFORMS.get(name) if name not in FAMILIES else None
    if name in ("gamma", "standard_gamma"):
        instead = None              # the shape enters the rejection sampler
    if name == "multivariate_normal":
        instead = TRANSFORMS[name]
    if kind == "RandomState" and instead is not None:
        instead = instead.replace("rng.random(", "rng.random_sample(")
    return (f"adsim: `numpy.random.{kind}.{name}` was given {what}: its draws are not a "
            f"location-scale transform of draws that do not depend on the parameters, so "
            f"adsim has no pathwise derivative for them (it has for {_families()}). "
            + (f"Write {instead}; or pass" if instead else "Pass")
            + " adsim.value(...) if no derivative is wanted")


def leak_message(kind, name, what):
    """The error for a draw method of ``kind`` that converted ``what`` (an
    active parameter) to a plain value itself: adsim's stand-in did not run
    (interposition is off, or the draw has no pathwise rule)."""
    if name == "choice":
        return (f"adsim: `numpy.random.{kind}.choice` was given {what} in a recording with "
                f"interposition off (or outside a recording), where NumPy converts it to a "
                f"plain value. With interposition on adsim records the draw; here, pass "
                f"adsim.value(p) for the probabilities (the indices drawn do not change with "
                f"small changes of p: their derivative is zero) and index the population "
                f"with the indices drawn: a[rng.choice(len(a), size, p=adsim.value(p))]")
    if name not in FAMILIES:
        return refusal_message(kind, name, what)
    transform = TRANSFORMS[name]
    if kind == "RandomState":
        transform = transform.replace("rng.random(", "rng.random_sample(")
    return (f"adsim: `numpy.random.{kind}.{name}` was given {what} in a recording with "
            f"interposition off (or outside a recording), where NumPy converts it to a plain "
            f"value, dropping its derivative. With interposition on adsim records the draw; "
            f"here, write `{transform}`, which gives the same draws from the same generator "
            f"state and which adsim records; or pass adsim.value(x) if no derivative is wanted")


def refusal(kind, name, active):
    return ActiveValueLeak(refusal_message(kind, name, "active " + "/".join(active)))


def generator_state(owner):
    """The state of a Generator or RandomState (set_generator_state puts
    it back)."""
    if isinstance(owner, np.random.Generator):
        return owner.bit_generator.state
    return owner.get_state(legacy=False)


def set_generator_state(owner, state):
    if isinstance(owner, np.random.Generator):
        owner.bit_generator.state = state
    else:
        owner.set_state(state)


def draw(original, owner, args, kwargs):
    """``original(owner, *args, **kwargs)`` (a draw method of a Generator or
    RandomState, unbound) when some parameter holds active values: the
    active result of the module docstring, or its refusal."""
    name = original.__name__
    kind = "Generator" if isinstance(owner, np.random.Generator) else "RandomState"
    bound = inspect.signature(original).bind(owner, *args, **kwargs)
    bound.apply_defaults()
    params = bound.arguments
    active = [p for p, v in params.items() if _varies(v)]
    if not active:                  # active values without derivative: NumPy's draw
        args, kw = _rebound(bound, {p: _plain(v) for p, v in params.items() if holds_active(v)})
        return original(*args, **kw)
    if name == "choice" and set(active) <= {"a", "p"}:
        return _choice(original, bound, active)
    if name == "multivariate_normal" and "cov" in active:
        return _multivariate_normal(original, owner, kind, bound, active)
    family = FAMILIES.get(name)
    if family is None or any(p in family.plain for p in active):
        raise refusal(kind, name, active)
    values = {p: from_pieces(params[p]) for p in active}     # lists of active values: arrays
    if any(not isinstance(v, Active) for v in values.values()):
        raise refusal(kind, name, active)                    # complex parameters
    plain = {p: current(v) for p, v in values.items()}
    # NumPy's own draw with the plain values: its checks, its shape, its numbers
    before = generator_state(owner)
    args, kw = _rebound(bound, plain)
    drawn = original(*args, **kw)
    after = _freeze(generator_state(owner))
    standard = dict(family.standard)
    if family.location == "mean":       # multivariate_normal: the draw at mean 0
        standard["mean"] = np.zeros(np.shape(plain.get("mean", params["mean"])))
    else:
        standard["size"] = None if np.ndim(drawn) == 0 else np.shape(drawn)
    set_generator_state(owner, before)
    args, kw = _rebound(bound, {**plain, **standard})
    z = original(*args, **kw)
    assert _freeze(generator_state(owner)) == after, \
        f"adsim: {kind}.{name} at the standard parameters drew differently"
    values = {**params, **values}
    scale = None if family.scale is None else family.scale(values)
    if isinstance(scale, Active) and (kind, name) != ("RandomState", "uniform"):
        _checked_on_replay(scale)
    result = z if scale is None else scale * z
    if family.location is not None:
        result = values[family.location] + result
    assert isinstance(result, Active) and result.shape == np.shape(drawn), \
        f"adsim: the pathwise draw of {kind}.{name} has the wrong shape"
    assert np.allclose(current(result), drawn, rtol=1e-12, atol=0.0, equal_nan=True), \
        f"adsim: the pathwise draw of {kind}.{name} differs from NumPy's"
    return result


def _varies(v):
    """Does ``v`` hold an active value with a derivative? (Constants made in
    the recorded function, np.array([[2.0, 0.3], ...]), are active arrays
    without one: they are drawn with as plain values.)"""
    if isinstance(v, Active):
        return v.tape.slot_is_varied(v.slot)
    return isinstance(v, (list, tuple)) and any(_varies(o) for o in v)


def _plain(v):
    """The plain value of a parameter holding active values without derivative."""
    return current(from_pieces(v) if isinstance(v, (list, tuple)) else v)


def _multivariate_normal(original, owner, kind, bound, active):
    """``multivariate_normal(mean, cov, size)`` with an active ``cov`` (and
    perhaps ``mean``): NumPy's draw is ``z @ F + mean`` for standard normal
    draws ``z`` (``standard_normal(size + (d,))``, from the same generator
    state) and a factor F of cov computed from the factorisation NumPy uses:
    Generator's ``method='svd'`` (default) F = (u sqrt(s))^T of
    ``svd(cov) = u s vh``, RandomState's F = sqrt(s)[:, None] vh, ``'eigh'``
    F = (u sqrt|s|)^T of ``eigh(cov)``, ``'cholesky'`` F = L^T. adsim
    records the same factorisation of the active cov (adsim's svd, eigh and
    cholesky rules), so the draw's derivative is that of NumPy's own factor
    with z held fixed (the pathwise derivative for the factor NumPy uses).
    The SVD's and eigh's need distinct eigenvalues of cov (an isotropic
    cov = s^2 I has none: adsim.UndefinedDerivative; method='cholesky' has
    a derivative at every positive definite cov)."""
    params = bound.arguments
    values = {p: from_pieces(params[p]) for p in active}
    if any(not isinstance(v, Active) for v in values.values()):
        raise refusal(kind, "multivariate_normal", active)     # complex parameters
    plain = {p: current(v) for p, v in values.items()}
    before = generator_state(owner)
    args, kw = _rebound(bound, plain)
    drawn = original(*args, **kw)            # NumPy's checks, warnings, shape and numbers
    after = _freeze(generator_state(owner))
    set_generator_state(owner, before)
    z = owner.standard_normal(np.shape(drawn))
    assert _freeze(generator_state(owner)) == after, \
        f"adsim: {kind}.multivariate_normal drew its normal variates differently"
    cov = values["cov"]
    mean = values.get("mean", params["mean"])
    method = params.get("method", "svd")
    if method == "cholesky":
        factor = np.linalg.cholesky(cov).T
    elif method == "eigh":
        s, u = np.linalg.eigh(cov)
        factor = (u * np.sqrt(np.abs(s))).T
    else:
        u, s, vh = np.linalg.svd(cov)
        factor = np.sqrt(s)[:, None] * vh if kind == "RandomState" else (u * np.sqrt(s)).T
    d = np.shape(cov)[0]
    result = np.reshape(np.reshape(z, (-1, d)) @ factor + mean, np.shape(drawn))
    assert np.allclose(current(result), drawn, rtol=1e-12, atol=1e-14), \
        f"adsim: the pathwise draw of {kind}.multivariate_normal differs from NumPy's"
    return result


def _choice(original, bound, active):
    """``rng.choice(a, size, replace, p)`` with active probabilities ``p``
    and/or an active population ``a``: NumPy's indices, drawn with the
    plain ``p``, are piecewise constant in ``p`` (each is where a uniform
    draw falls in the cumulative sum of ``p``), so their derivative is zero
    wherever it exists (a particle filter's resampling); ``p`` is guarded
    to stay what it was (a replay at other probabilities raises
    BranchChanged). An active ``a`` is gathered at the indices NumPy draws
    for ``choice(len(a), ...)``, which it draws for ``choice(a, ...)``."""
    params = bound.arguments
    replaced = {}
    if "p" in active:
        p = from_pieces(params["p"])
        v = current(p)
        guard(p, v, np.nextafter(v, np.inf))
        replaced["p"] = v
    population = None
    if "a" in active:
        population = from_pieces(params["a"])
        axis = params.get("axis", 0)
        replaced["a"] = population.shape[axis] if population.ndim else population
        if population.ndim == 0:
            raise ValueError("a must be a sequence or an integer, not a 0-d array")
    args, kw = _rebound(bound, replaced)
    drawn = original(*args, **kw)
    if population is None:
        return drawn
    return population.take(drawn, axis=params.get("axis", 0))


def _checked_on_replay(scale):
    """NumPy refuses a negative scale (``ValueError: scale < 0``; ``high -
    low < 0`` for Generator.uniform): a replay at such a point raises
    BranchChanged instead of drawing. (RandomState.uniform takes high < low.)"""
    v = current(scale)
    if np.all(np.isfinite(v) & (v >= 0)):
        guard(scale, 0.0, np.inf)


def _rebound(bound, replaced):
    """(args, kwargs) of ``bound`` with the parameters in ``replaced``
    replaced."""
    args, kwargs = [], {}
    for p, v in bound.arguments.items():
        v = replaced.get(p, v)
        if bound.signature.parameters[p].kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[p] = v
        else:
            args.append(v)
    return args, kwargs


def method(original, routed):
    """The stand-in of a Generator or RandomState draw method: NumPy's
    method unless a parameter holds an active value on a thread where
    ``routed()`` (adsim/_record/creation.py: it records with interposition
    on, or does not record)."""
    def stand_in(self, *args, **kwargs):
        if (_holds(args) or _holds(kwargs.values())) and routed():
            return draw(original, self, args, kwargs)
        return original(self, *args, **kwargs)
    _named_like(stand_in, original)
    return stand_in


def legacy_function(owner, unbound, original, routed):
    """The stand-in of ``np.random.normal`` and its kind (``original``): the
    method ``unbound`` of NumPy's global RandomState ``owner``."""
    stand_in = method(unbound, routed)

    def function(*args, **kwargs):
        return stand_in(owner, *args, **kwargs)
    _named_like(function, original)
    return function


def _holds(values):
    return any(isinstance(v, Active) or (isinstance(v, (list, tuple)) and holds_active(v))
               for v in values)


def _named_like(wrapper, original):
    wrapper.__wrapped__ = original
    wrapper.__name__ = original.__name__
    wrapper.__qualname__ = getattr(original, "__qualname__", original.__name__)
    wrapper.__doc__ = original.__doc__
