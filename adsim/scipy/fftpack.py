"""``scipy.fftpack``'s real-to-real transforms with adsim's rules, called
explicitly: each name here is SciPy's function of that name running adsim's
rule when an argument is active and SciPy's own code otherwise, with nothing
in SciPy changed (it works with interposition off). Made from adsim's rule
tables (adsim/_scipy/explicit.py); docs/scipy.md lists them. A function
without a rule is not here."""
from adsim._scipy.explicit import fill

__all__, __getattr__ = fill(globals(), "scipy.fftpack")
