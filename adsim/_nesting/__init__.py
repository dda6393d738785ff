"""Derivatives inside derivatives: transformations called on active values
(nested.py), and a finished tape's Jacobian written out as recorded ops for
orders beyond two (transcribe.py)."""
