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
    path that exports the same object)."""
    module = frame.f_globals.get("__name__", "")
    name = frame.f_code.co_name
    obj = frame.f_globals.get(name)
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        parent = sys.modules.get(".".join(parts[:i]))
        if parent is not None and obj is not None and getattr(parent, name, None) is obj:
            return f"{'.'.join(parts[:i])}.{name}"
    return f"{module}.{getattr(frame.f_code, 'co_qualname', name)}"
