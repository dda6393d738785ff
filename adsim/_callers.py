"""Which library function the user called, seen from inside it: errors that
arise deep in SciPy (an ``np.asarray`` on an active array) name the
function the user wrote, as its documentation names it."""
import sys

_OURS = ("adsim",)


def library_entry():
    """``scipy.special.logsumexp``-style name of the outermost library
    function on the stack below the user's code, or None when the user's
    own code is the caller."""
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
    return None if entry is None else _public_name(entry)


def _is_library(module):
    top = module.split(".", 1)[0]
    if top in ("numpy", "scipy"):
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
