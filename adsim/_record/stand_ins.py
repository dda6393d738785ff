"""How a stand-in bound in place of a library's function presents itself."""


def named_like(stand_in, original, module=None):
    """``stand_in``, named as ``original`` (``__name__``, ``__qualname__``,
    ``__module__``, ``__doc__``) and keeping it as ``__wrapped__`` (how
    adsim/_record/interpose.py finds the original to put back, and
    ``inspect.signature`` its signature). ``module``: the module to report,
    where the original's own would be a private one (``math``, ``cmath``)."""
    stand_in.__wrapped__ = original
    stand_in.__name__ = original.__name__
    stand_in.__qualname__ = getattr(original, "__qualname__", original.__name__)
    stand_in.__module__ = module or getattr(original, "__module__", None)
    stand_in.__doc__ = original.__doc__
    return stand_in
