"""A solver's state as one flat vector: the state of the checkpointed loops.

Inside a recording the attempts of an integration with ``t_eval`` are
checkpointed loops (one in all, or one per interval between output times),
whose state is one vector. A step reads a field of it only when it asks for
it, with one gather (a scalar by an integer index, an array by an index
array of its shape: a copy, with no reshape recorded). The new state is
written field by field into one fill that already holds its plain fields,
or, when most fields pass on unchanged, over the old vector itself (the
step's input, whose fields were read before). A step tape then spends its
ops on the method, not on taking the state apart and putting it together.
"""
from math import prod

import numpy as np

from .._np.core import as_active, shape_of
from .._active import Active

__all__ = ["FlatLayout", "FlatView", "FlatRows"]

_UNREAD = object()


class FlatLayout:
    """Where each field of a state lies in the flat vector: ``fields`` names
    them, ``values`` (floats and arrays, active or not) give their shapes;
    the properties of the class ``State`` (a method's state type) are read
    from views as from its instances."""

    def __init__(self, fields, values, State):
        self.State = State
        self.fields = tuple(fields)
        self.index = {name: i for i, name in enumerate(self.fields)}
        self.shapes = [tuple(shape_of(v)) for v in values]
        self.offsets = [0]
        for shape in self.shapes:
            self.offsets.append(self.offsets[-1] + prod(shape))
        self.size = self.offsets.pop()
        # arrays are read and written through index arrays of their shape:
        # reading makes a copy (a slice would be a view, which a later write
        # into the vector would change)
        self.places = [o if not s else o + np.arange(prod(s)).reshape(s)
                       for o, s in zip(self.offsets, self.shapes)]

    def view(self, z):
        """The state held in the flat vector ``z``, its fields read when asked for."""
        return FlatView(self, z)

    def rows(self, vectors):
        """Several states at once: ``vectors`` is a 2-d array whose rows are
        flat vectors of this layout (see :class:`FlatRows`)."""
        return FlatRows(self, vectors)

    def vector(self, state, base=None):
        """The flat vector of ``state`` (a State or a :class:`FlatView`). With
        ``base``, the view of the vector ``state`` was computed from, the
        fields ``state`` passes on unchanged are copied from it."""
        n = len(self.fields)
        same = [base is not None and _unchanged(state, base, i) for i in range(n)]
        values = [None if same[i] else _field(state, i) for i in range(n)]
        for i, v in enumerate(values):
            if v is not None and tuple(shape_of(v)) != self.shapes[i]:
                raise ValueError(f"adsim.integrate: the solver state's field "
                                 f"{self.fields[i]!r} has shape {tuple(shape_of(v))}; the "
                                 f"state's layout holds {self.shapes[i]}")
        recorded = [i for i, v in enumerate(values) if isinstance(v, Active)]
        plain = [i for i, v in enumerate(values) if v is not None and not isinstance(v, Active)]
        if any(same) and len(plain) <= sum(same):
            # most fields pass on: write the others over the old vector, in
            # place when it is recorded (a step's input, read only through
            # the fields already gathered: no copy is recorded)
            out = base._z if isinstance(base._z, Active) else np.copy(base._z)
            written = recorded + plain
        else:
            filled = np.zeros(self.size)
            for i in plain:
                filled[self.places[i]] = values[i]
            if not recorded and not any(same):
                return filled
            tape = (values[recorded[0]] if recorded else base._z).tape
            out = as_active(tape, filled)
            written = recorded + [i for i in range(n) if same[i]]
            values = [base._field(i) if same[i] else v for i, v in enumerate(values)]
        for i in written:
            out[self.places[i]] = values[i]
        return out

    def push_rows(self, view, name, rows):
        """Shift the rows of the 2-D field ``name`` of the recorded vector
        of ``view`` forward by ``len(rows)`` and write ``rows`` (a list)
        behind them, in place: one gather and one scatter for the kept rows
        and one scatter per new row, whatever the field's size. The vector
        must be a step's input, whose other fields this does not touch."""
        i = self.index[name]
        place, k, z = self.places[i], len(rows), view._z
        assert isinstance(z, Active) and view._values[i] is _UNREAD
        view._read[i] = _UNREAD         # a copy read before is out of date
        if k < place.shape[0]:
            z[place[:-k]] = z[place[k:]]
        for j, row in enumerate(rows, start=place.shape[0] - k):
            z[place[j]] = row


class FlatView:
    """A state held in a flat vector, with a namedtuple's interface (fields
    as attributes, ``_replace``, iteration). Views made by ``_replace`` share
    the fields read from the vector, so a field is gathered once."""

    __slots__ = ("_layout", "_z", "_read", "_values")

    def __init__(self, layout, z, read=None, values=None):
        n = len(layout.fields)
        self._layout = layout
        self._z = z
        self._read = [_UNREAD] * n if read is None else read
        self._values = [_UNREAD] * n if values is None else values

    @property
    def pristine(self):
        """No field replaced: the view is its vector."""
        return all(v is _UNREAD for v in self._values)

    def _field(self, i):
        v = self._values[i]
        if v is _UNREAD:
            v = self._read[i]
            if v is _UNREAD:
                v = self._read[i] = self._z[self._layout.places[i]]
        return v

    def __getattr__(self, name):
        i = self._layout.index.get(name)
        if i is not None:
            return self._field(i)
        derived = getattr(self._layout.State, name, None)
        if isinstance(derived, property):
            return derived.fget(self)
        raise AttributeError(f"{self._layout.State.__name__} has no field {name!r}")

    def _replace(self, **changes):
        values = list(self._values)
        for name, v in changes.items():
            if name not in self._layout.index:
                raise ValueError(f"{self._layout.State.__name__} has no field {name!r}")
            values[self._layout.index[name]] = v
        return FlatView(self._layout, self._z, self._read, values)

    def __iter__(self):
        return (self._field(i) for i in range(len(self._values)))

    def __len__(self):
        return len(self._values)


class FlatRows:
    """Several states held in the rows of a 2-d array: each field read with
    one gather, the states along a first axis (a scalar field has shape
    ``(m,)``, an array field ``(m,) + shape``). Only stored fields: the
    properties a state type derives from them (``RKState.f``, ...) index
    one state and are not defined here."""

    __slots__ = ("_layout", "_vectors")

    def __init__(self, layout, vectors):
        self._layout, self._vectors = layout, vectors

    def __getattr__(self, name):
        i = self._layout.index.get(name)
        if i is None:
            raise AttributeError(f"{self._layout.State.__name__} has no stored field {name!r}")
        return self._vectors[:, self._layout.places[i]]


def _field(state, i):
    return state._field(i) if isinstance(state, FlatView) else state[i]


def _unchanged(state, base, i):
    """Does ``state`` hold the field ``i`` of ``base`` (at the same place)?"""
    if isinstance(state, FlatView):
        if state._z is not base._z:
            return False
        v = state._values[i]
        if v is _UNREAD:
            return True
    else:
        v = state[i]
    read = base._read[i]
    return read is not _UNREAD and v is read
