"""Which library function the user called, seen from inside it: errors that
arise deep in SciPy (an ``np.asarray`` on an active array) name the
function the user wrote, as its documentation names it; and which call the
user's line is making, read from its source (``np.zeros(...)``,
``A.dot(x)``)."""
import ast
import linecache
import sys
import types

import numpy as np

_OURS = ("adsim",)
# Python's own modules (statistics, functools, ...) are libraries too
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) - {"__main__"}


def library_entry():
    """``scipy.special.logsumexp``-style name of the outermost library
    function on the stack below the user's code, or None when the user's
    own code is the caller."""
    entry = entry_frame()
    return None if entry is None else _public_name(entry)


def entry_frame():
    """The frame of the outermost library function on the stack below the
    user's code, or None."""
    frame = sys._getframe(1)
    entry = None
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        top = module.split(".", 1)[0]
        if top in _OURS:
            pass
        elif _is_library(module):
            entry = frame
        else:
            break                  # the user's frame: the entry is the one below it
        frame = frame.f_back
    return entry


def _is_library(module):
    top = module.split(".", 1)[0]
    if top in ("numpy", "scipy") or top in _STDLIB:
        return True
    mod = sys.modules.get(top)
    path = getattr(mod, "__file__", "") or ""
    return "site-packages" in path or "dist-packages" in path


def _public_name(frame):
    """The function's name where users import it from (the shortest module
    path that exports the same object). A decorator's wrapper (SciPy's
    batching wrapper, say) is named after the function it wraps, found
    among the wrapper's closure variables."""
    module = frame.f_globals.get("__name__", "")
    name = frame.f_code.co_name
    found = _exported(module, name, frame.f_globals.get(name))
    if found is None:
        for var in frame.f_code.co_freevars:
            inner = frame.f_locals.get(var)
            if callable(inner) and hasattr(inner, "__module__") and hasattr(inner, "__name__"):
                found = found or _exported(inner.__module__ or "", inner.__name__, inner)
    return found or f"{module}.{getattr(frame.f_code, 'co_qualname', name)}"


def _exported(module, name, obj):
    """``package.name`` for the shortest parent of ``module`` that exports
    ``obj`` (or a wrapper of it) as ``name``; None if none does."""
    if obj is None:
        return None
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        parent = sys.modules.get(".".join(parts[:i]))
        candidate = getattr(parent, name, None) if parent is not None else None
        if candidate is not None and (candidate is obj or
                                      getattr(candidate, "__wrapped__", None) is obj):
            return f"{'.'.join(parts[:i])}.{name}"
    return None


def user_frame():
    """The innermost frame of the user's code (neither adsim nor a library)."""
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.split(".", 1)[0] not in _OURS and not _is_library(module):
            return frame
        frame = frame.f_back
    return None


def user_line():
    """Where the user's code is: ", at model.py:41 in rate (`k = float(p[0])`)", or
    "" when no frame of the user's code is on the stack."""
    frame = user_frame()
    if frame is None:
        return ""
    code = frame.f_code
    text = linecache.getline(code.co_filename, frame.f_lineno).strip()
    where = f", at {code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno} in {code.co_name}"
    return where + (f" (`{text}`)" if text else "")


def source_hint(more=""):
    """Sentences for errors raised where np.array([...]) and np.zeros(n) in
    the user's code make plain arrays: code that has no source to read
    (typed at a prompt, ``python -c``, ``exec``; np.array([...]) of active
    values is recognised by reading the calling line, so it cannot be
    there), followed by ``more`` (the caller's own sentences)."""
    frame = user_frame()
    if frame is None or linecache.getline(frame.f_code.co_filename, frame.f_lineno):
        return more
    return (" (This code has no source file to read, as when typed at a prompt or run with "
            "python -c, so np.array([...]) and np.zeros(n) inside it stay plain: use "
            "np.stack([...]) and np.zeros_like(x, shape=(n,)) there, or put the function in "
            "a file.)" + more)


def forget_locals(frame):
    """Drop the snapshot of ``frame``'s locals that reading ``f_locals``
    made before Python 3.13: it holds a reference to every local, which
    would make each later in-place update of a plain local array look
    aliased (the snapshot is made again whenever something reads it)."""
    if sys.version_info < (3, 13):
        frame.f_locals.clear()


_EXPRESSIONS = {}      # (code, instruction offset) -> the expression it executes, or None


def current_expression(frame):
    """The expression the instruction ``frame`` is executing belongs to, as
    an ast node (the call ``np.zeros(n)``, the operation ``a - b``), or None
    without source."""
    return expression_at(frame.f_code, frame.f_lasti)


def expression_at(code, offset):
    """The expression the instruction at ``offset`` of ``code`` belongs to
    (an ast node), or None without source."""
    key = (code, offset)
    if key not in _EXPRESSIONS:
        if len(_EXPRESSIONS) > 4096:
            _EXPRESSIONS.clear()
        _EXPRESSIONS[key] = _parse(code, offset)
    return _EXPRESSIONS[key]


def called_expression(frame):
    """The expression naming the function that the call ``frame`` is
    executing calls, as its source spells it (``np.zeros`` of
    ``np.zeros(n)``, an ast node), or None without source."""
    node = current_expression(frame)
    return node.func if isinstance(node, ast.Call) else None


def _parse(code, offset):
    try:
        line, end_line, col, end_col = list(code.co_positions())[offset // 2]
        lines = linecache.getlines(code.co_filename)
        if None in (line, end_line, col, end_col) or end_line > len(lines):
            return None
        text = [ln.encode() for ln in lines[line - 1:end_line]]
        text[-1] = text[-1][:end_col]
        text[0] = text[0][col:]
        return ast.parse(b"".join(text).decode(), mode="eval").body
    except (SyntaxError, ValueError, IndexError, UnicodeDecodeError):
        return None


_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
              ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.Lt: "<", ast.LtE: "<=",
              ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def listed_operation():
    """What the user's line applies to active values inside a Python list or
    tuple that NumPy converts without asking adsim: "`numpy.exp`" for a
    ufunc given no active operand of its own and reached past adsim's
    stand-in (``exp = np.exp`` kept before the recording, ``exp([a, b])``), "the
    operator `-`" for a list and a plain array (``[a, b] - data``); else
    None."""
    frame = user_frame()
    node = current_expression(frame) if frame is not None else None
    if isinstance(node, ast.Call):
        func = _named_object(node.func, frame)
        uf = getattr(func, "__self__", func)            # np.add.reduce: its ufunc
        if isinstance(uf, np.ufunc):
            return f"`{ufunc_name(uf)}{'' if uf is func else '.' + func.__name__}`"
        return None
    if isinstance(node, ast.BinOp):
        ops, operands = [node.op], [node.left, node.right]
    elif isinstance(node, ast.Compare):
        ops, operands = node.ops, [node.left, *node.comparators]
    else:
        return None
    if any(_is_listed(o, frame) for o in operands) and type(ops[0]) in _OPERATORS:
        return f"the operator `{_OPERATORS[type(ops[0])]}`"
    return None


def _named_object(node, frame):
    """The object a dotted name (``np.exp``, ``np.add.reduce``, ``exp``)
    of the frame's code is bound to; None for any other expression. Only
    modules and ufuncs are looked into, so no user code runs."""
    if isinstance(node, ast.Name):
        return frame.f_locals.get(node.id, frame.f_globals.get(
            node.id, frame.f_builtins.get(node.id)))
    if isinstance(node, ast.Attribute):
        owner = _named_object(node.value, frame)
        if isinstance(owner, (types.ModuleType, np.ufunc)):
            return getattr(owner, node.attr, None)
    return None


def _is_listed(node, frame):
    """Is the operand ``node`` a list or tuple (a display, a comprehension,
    or a name bound to one)?"""
    if isinstance(node, (ast.List, ast.Tuple, ast.ListComp)):
        return True
    return isinstance(node, ast.Name) and isinstance(_named_object(node, frame), (list, tuple))


def listed_message(name):
    """The error for active values inside a list or tuple that ``name`` (a
    NumPy function, ufunc or operator) turned into a plain array itself."""
    return (f"adsim: {name} received active values inside a Python list or tuple, which NumPy "
            f"turns into a plain array before adsim sees it: that would drop the derivatives. "
            f"adsim makes such lists active arrays in the calls NumPy hands to it (an argument "
            f"of its own is active: np.add([a, b], x), [a, b] - x) and, while a recording "
            f"with interposition on runs, in calls of NumPy's functions and ufuncs through "
            f"the numpy module and by NumPy's own names imported at the top of a module "
            f"(np.sum([a, b]), np.exp([a, b]), or sum([a, b]) after `from numpy import sum`; "
            f"not operators with a plain array ([a, b] - data), other names "
            f"such as `from numpy import sum as total` or a variable holding np.sum taken "
            f"before the recording, nor modules imported while recording). Make the list one "
            f"array "
            f"first: np.array([...]) or np.stack([...]) inside the recorded function")


def method_call_name():
    """``dot`` when the user's line is calling a method ``a.dot(...)`` (not a
    module's function such as ``np.dot``), else None."""
    frame = user_frame()
    func = called_expression(frame) if frame is not None else None
    if not isinstance(func, ast.Attribute):
        return None
    receiver = func.value
    if isinstance(receiver, ast.Name):
        bound = frame.f_locals.get(receiver.id, frame.f_globals.get(receiver.id))
        if isinstance(bound, types.ModuleType):
            return None
    return func.attr


def ufunc_name(uf):
    """``numpy.sin``, ``scipy.special.gammaln``: where users find the ufunc."""
    name = uf.__name__
    if getattr(np, name, None) == uf:      # a stand-in (adsim/_record/listed.py) equals its ufunc
        return f"numpy.{name}"
    special = sys.modules.get("scipy.special")
    if special is not None and getattr(special, name, None) == uf:
        return f"scipy.special.{name}"
    if special is not None and name.startswith("_") and hasattr(special, name[1:]):
        return f"scipy.special.{name[1:]}"      # the private ufunc behind zeta, say
    return name


_NUMPY_FOR_MATH = {"pow": "power", "fabs": "abs", "atan2": "arctan2", "asin": "arcsin",
                   "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
                   "atanh": "arctanh", "lgamma": "scipy.special.gammaln",
                   "gamma": "scipy.special.gamma", "erf": "scipy.special.erf",
                   "erfc": "scipy.special.erfc", "fsum": "sum", "prod": "prod"}


def compiled_call_message(shape):
    """The error for an active value that a compiled function on the user's
    line converted to a plain number or array, where NumPy's protocols never
    see the call (``math.exp(x)``, ``rng.normal(mu, s)``, ``np.float64(x)``):
    it names the call and what adsim records instead; None for other lines."""
    frame = user_frame()
    node = called_expression(frame) if frame is not None else None
    func = _compiled_callee(node, frame) if node is not None else None
    if func is None:
        return None
    owner = getattr(func, "__self__", None)
    if isinstance(owner, types.ModuleType) and owner.__name__ in ("math", "cmath"):
        name = _NUMPY_FOR_MATH.get(func.__name__, func.__name__)
        use = name if "." in name else f"np.{name}" if hasattr(np, name) else None
        return (f"adsim: `{owner.__name__}.{func.__name__}` converted its active argument "
                f"(shape {shape}) to a Python number, which would drop its derivative: "
                f"{owner.__name__}'s functions take only plain numbers. "
                + (f"Use {use}, which adsim records (it takes 0-d arrays as numbers)"
                   if use else "Write it with the NumPy functions adsim records")
                + ", or call it on adsim.value(x) if no derivative is wanted")
    if isinstance(owner, (np.random.Generator, np.random.RandomState)):
        from .._np import draws
        kind = "Generator" if isinstance(owner, np.random.Generator) else "RandomState"
        return draws.leak_message(kind, func.__name__, f"an active parameter (shape {shape})")
    if isinstance(func, type) and issubclass(func, np.generic):
        return (f"adsim: `numpy.{func.__name__}(x)` of an active value (shape {shape}) makes a "
                f"plain NumPy scalar, which would drop its derivative. Keep x as it is: a 0-d "
                f"active array works where a number does (x.astype(np.{func.__name__}) for "
                f"another dtype); or numpy.{func.__name__}(adsim.value(x)) if no derivative "
                f"is wanted")
    return None


def _compiled_callee(node, frame):
    """The object a dotted name on the user's line is bound to, looked up
    through modules and NumPy's random generators only (no user code runs),
    when it is a function of math or cmath, a method of a NumPy random
    generator or a NumPy scalar type; else None."""
    obj = _bound(node, frame)
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return obj
    owner = getattr(obj, "__self__", None)
    compiled = isinstance(owner, (np.random.Generator, np.random.RandomState)) or (
        isinstance(owner, types.ModuleType) and owner.__name__ in ("math", "cmath"))
    return obj if compiled else None


def _bound(node, frame):
    """What a name or a dotted name of modules and generators is bound to;
    None for other expressions."""
    if isinstance(node, ast.Name):
        return frame.f_locals.get(node.id, frame.f_globals.get(
            node.id, frame.f_builtins.get(node.id)))
    if isinstance(node, ast.Attribute):
        owner = _bound(node.value, frame)
        if isinstance(owner, (types.ModuleType, np.random.Generator, np.random.RandomState)):
            return getattr(owner, node.attr, None)
    return None
