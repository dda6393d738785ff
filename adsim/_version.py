"""The version of adsim (one place: the package and the tape files read it)."""
__version__ = "0.1.0"
