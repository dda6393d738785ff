"""The result of ``solve_ivp``: SciPy's ``OdeResult`` fields, with counts
that become guarded integers only when read."""
from .._active import Active

__all__ = ["OdeResult", "Count"]


class Count:
    """A count computed from a run's state: a recorded value inside a
    recording (it changes with the steps a replay takes). Reading it makes
    it an ``int`` under a guard, so a replay whose count differs records
    again; a count never read constrains nothing."""

    def __init__(self, compute):
        self._compute = compute

    def resolve(self):
        value = self._compute()
        return int(value) if isinstance(value, Active) else int(round(float(value)))


class OdeResult(dict):
    """``t``, ``y`` (shape ``(n, len(t))``), ``sol``, ``t_events``,
    ``y_events``, ``nfev``, ``njev``, ``nlu``, ``status``, ``message``,
    ``success``, readable as attributes or keys, as SciPy's ``OdeResult``."""

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        if isinstance(value, Count):
            value = value.resolve()
            dict.__setitem__(self, key, value)
        return value

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, key, default=None):
        return self[key] if key in self else default

    def values(self):
        return [self[k] for k in self]

    def items(self):
        return [(k, self[k]) for k in self]

    def __repr__(self):
        width = max(map(len, self), default=0) + 1
        return "\n".join(f"{k.rjust(width)}: {self[k]!r}" for k in self)

    def __dir__(self):
        return list(self.keys())
