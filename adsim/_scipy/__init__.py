"""SciPy functions on active arrays: the rules (linalg, special, stats) and
the hooks that route calls of the unchanged SciPy functions to them."""
