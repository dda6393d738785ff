"""SciPy with adsim's rules, called explicitly: ``adsim.scipy.special``,
``adsim.scipy.linalg``, ``adsim.scipy.stats``, ``adsim.scipy.signal``,
``adsim.scipy.spatial.distance``, ``adsim.scipy.optimize``,
``adsim.scipy.integrate``, ``adsim.scipy.interpolate``, ``adsim.scipy.ndimage`` and
``adsim.scipy.fftpack`` hold the SciPy functions and distributions adsim
has rules for, under SciPy's names, as ``jax.scipy`` does for JAX.

Each runs adsim's rule when an argument is active and SciPy's own function
otherwise, so it is a drop-in replacement inside and outside recordings. It
changes nothing in SciPy: this is the way to call SciPy in a recording
entered with interposition off (``adsim.interposition(False)``,
``adsim.set_interposition(False)``, ``ADSIM_INTERPOSE=0``). With
interposition on, SciPy's own functions reach the same rules unchanged.

The names are made from adsim's rule tables (adsim/_scipy/explicit.py);
docs/scipy.md lists them. A SciPy function without a rule is not here.
"""
import importlib

_SUBMODULES = ("fftpack", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal",
               "spatial", "special", "stats")
__all__ = list(_SUBMODULES)


def __getattr__(name):
    if name in _SUBMODULES:                 # imported when first used (as SciPy's are)
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}; its modules are "
                         f"{', '.join(_SUBMODULES)}")
