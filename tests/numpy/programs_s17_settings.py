"""Settings of a model in programs_s17.py, kept in a module of their own as
projects keep a ``config.py``: the model imports it inside its body."""
R_GAS = 8.314
REFERENCE_T = 298.15
ACTIVATION = 5.0e4
