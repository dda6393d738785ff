"""The SciPy functions written in Python that adsim has rules for, and which
calls of them take a rule.

``scipy.linalg.solve_triangular``, ``scipy.special.logsumexp`` or the methods
of ``scipy.stats.norm`` are plain Python functions: NumPy's override
protocols never see them, and their first line, ``np.asarray(x)``, would
turn an active argument into a plain array (which adsim refuses, naming the
function). Each rule module below lists the functions it covers in a table
``HOOKS``; two things are made from these tables:

- the hooks (adsim/_record/interpose.py): while any thread records with
  interposition on, each listed function has its *code* replaced by a
  trampoline, so every name of it (``from scipy.special import
  logsumexp``, ``sla.solve_triangular``, the instance ``norm``) reaches
  the rule;
- the explicit namespace ``adsim.scipy`` (adsim/_scipy/explicit.py):
  ``adsim.scipy.special.logsumexp`` and the others, which need no change
  to SciPy.

Either way a call with an active argument anywhere in its arguments (nested
lists, tuples and dicts included), or one a rule's ``routes_also`` finds
out of their reach (a closure of ``fun``), goes to adsim's rule
(:func:`chooser`); every other call to SciPy's own code. Active arguments
without a derivative (``np.linspace(0, 1, n)`` made in the function) go as
the plain values they stand for. A rule with
``routes_when`` takes exactly the calls that test finds (``expm_multiply``
of a matrix of active values; with a constant matrix SciPy's own code runs
on the active vector, its products recorded).

Reach: the functions of the tables (see docs/scipy.md). Other SciPy
functions run as they are: those written with NumPy functions adsim
supports are recorded through them; those that convert an active argument
to a plain array raise ``UnsupportedOperation`` naming themselves.
"""
import importlib
import sys
import types

from .._np.core import active_leaves

# SciPy module -> adsim module holding its rule table ``HOOKS``, a dict
# {(module, "function" or "Class.method"): rule}
_TABLES = {"scipy.linalg": "adsim._scipy.linalg", "scipy.special": "adsim._scipy.special",
           "scipy.stats": "adsim._scipy.stats", "scipy.signal": "adsim._scipy.signal",
           "scipy.spatial.distance": "adsim._scipy.distance",
           "scipy.optimize": "adsim._scipy.optimize", "scipy.integrate": "adsim._scipy.integrate",
           "scipy.sparse": "adsim._scipy.sparse_matrices",
           "scipy.sparse.linalg": "adsim._scipy.sparse_solve",
           "scipy.interpolate": "adsim._scipy.interpolate", "scipy.fft": "adsim._scipy.fft",
           "scipy.fftpack": "adsim._scipy.fftpack",
           "scipy.ndimage": "adsim._scipy.ndimage"}


def scipy_modules():
    """The SciPy modules with a rule table, as users import them."""
    return tuple(_TABLES)


def rule_module(scipy_module):
    """The adsim module holding the rules for ``scipy_module``."""
    return importlib.import_module(_TABLES[scipy_module])


def rules(scipy_module):
    """{(module, "function" or "Class.method"): rule} for ``scipy_module``."""
    return rule_module(scipy_module).HOOKS


def has_rule(name):
    """Whether adsim has a rule for ``name`` (``scipy.integrate.quad``, as
    users import it)."""
    module, _, function = name.rpartition(".")
    return module in _TABLES and (module, function) in rules(module)


def _resolve(module, path):
    """The Python function at ``module.path`` (a property's getter, for a
    property); None where this SciPy version has none (nothing to route
    then)."""
    obj = sys.modules.get(module) or importlib.import_module(module)
    for part in path.split("."):
        obj = getattr(obj, part, None)
    if isinstance(obj, property):       # (read on the class: the property itself)
        obj = obj.fget
    return obj if isinstance(obj, types.FunctionType) else None


def chooser(rule):
    """``choose(args, kwargs)`` -> (takes_rule, args, kwargs): whether a
    call goes to ``rule`` rather than to SciPy's function, and the
    arguments it goes with. Active values without a derivative (constants
    made in the recorded function) are first made plain, as the plain
    values they stand for (adsim/_scipy/constant_arguments.py): a call
    whose active values are all such constants is SciPy's own. A rule with
    ``routes_when`` decides alone, on the arguments as given."""
    routes_when = getattr(rule, "routes_when", None)     # the rule's own test, alone
    if routes_when is not None:
        return lambda args, kwargs: (bool(routes_when(args, kwargs)), args, kwargs)
    routes_also = getattr(rule, "routes_also", None)     # active values out of reach
    from .constant_arguments import constants_made_plain   # (imports scipy.sparse)

    def takes_rule(args, kwargs):
        return bool(active_leaves((args, kwargs))) or \
            (routes_also is not None and bool(routes_also(args, kwargs)))

    def choose(args, kwargs):
        if not takes_rule(args, kwargs):
            return False, args, kwargs
        plain = constants_made_plain((args, kwargs))
        if plain is None:
            return True, args, kwargs
        args, kwargs = plain
        return takes_rule(args, kwargs), args, kwargs
    return choose
