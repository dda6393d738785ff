"""``scipy.spatial`` with adsim's rules, called explicitly: the module
``adsim.scipy.spatial.distance``."""
import importlib

__all__ = ["distance"]


def __getattr__(name):
    if name == "distance":
        return importlib.import_module(f"{__name__}.distance")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}; adsim has rules for "
                         f"scipy.spatial.distance only (adsim.scipy.spatial.distance)")
