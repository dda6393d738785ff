"""Rule registries: for each transformation of a recorded program written in
Python (Jacobian sparsity, the liveness pass of Hessian sparsity, Hessian
interactions, higher-order transcription forward and reverse), one table
naming the rule of every opcode, or ``None`` where the op needs none.

A table lists every op of adsim/ops.py by name. A missing entry is an
error that names the op and the transformation: at use
(``NotImplementedError``) and in tests/core/test_rule_registries.py, which
checks every table against the op table. Nothing is looked up with a silent
default.
"""
from .ops import BY_CODE, BY_NAME, TABLE

REGISTRIES = []          # every table made, for the completeness test


def family(name):
    """The names of the ops of a family, to give them one rule explicitly."""
    return [spec.name for spec in TABLE if spec.family == name]


class RuleTable:
    """The rule of each op for one transformation.

    ``rules`` maps op names (or lists of them, through :func:`family`) to a
    rule: the name of a method of the object that runs the transformation,
    or None (the op needs nothing there).
    """

    def __init__(self, transformation, where, rules):
        self.transformation = transformation
        self.where = where                        # the module holding the rules
        self.rules = {}
        for names, rule in rules:
            for name in [names] if isinstance(names, str) else names:
                if name not in BY_NAME:
                    raise ValueError(f"adsim: {transformation} names {name!r}, not an op "
                                     f"of adsim/ops.py")
                if name in self.rules:
                    raise ValueError(f"adsim: {transformation} gives op {name} two rules")
                self.rules[name] = rule
        REGISTRIES.append(self)

    @property
    def missing(self):
        """Ops of the table without an entry here."""
        return [spec.name for spec in TABLE if spec.name not in self.rules]

    def rule(self, code):
        """The rule of an opcode (a method name or None)."""
        name = BY_CODE[code].name
        try:
            return self.rules[name]
        except KeyError:
            raise NotImplementedError(
                f"adsim: no {self.transformation} rule for op {name}: add one (or None) to "
                f"its table in {self.where}") from None

    def bind(self, runner, codes):
        """{code: bound method or None} for the opcodes in ``codes``."""
        bound = {}
        for code in set(codes):
            rule = self.rule(code)
            bound[code] = None if rule is None else getattr(runner, rule)
        return bound
