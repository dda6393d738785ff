"""SciPy functions on active arrays: the rules (linalg, special, stats, ...),
their tables (hooks.py), from which both the hooks that route calls of the
unchanged SciPy functions (adsim/_record/interpose.py) and the explicit namespace
``adsim.scipy`` (explicit.py) are made."""
