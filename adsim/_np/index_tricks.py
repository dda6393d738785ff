"""``np.r_`` and ``np.c_`` with active pieces.

They are objects, not functions, so NumPy's dispatch never sees active
items: while a function is recorded, adsim/_record/creation.py puts a
:class:`Concatenator` in their place. Given active items it lets NumPy's own
concatenator lay out the element positions of every piece (slices become
their aranges or linspaces, scalars stay scalars, directives such as
``'0,2,1'`` apply unchanged), and records the result as a copy of those
elements (adsim/_np/views.py ``index_map``). Complex items (complex active
values, or complex data beside active ones) are laid out part by part.
Without active items it is NumPy's.
"""
import numpy as np

from .._active import Active
from ..errors import UnsupportedOperation
from . import complex as complex_
from .core import shape_of
from .joins import from_pieces, holds_active, holds_complex, parts_of
from .views import index_map


class Concatenator:
    """Stands for ``np.r_`` or ``np.c_`` (``original``) while recording."""

    def __init__(self, original):
        self.__wrapped__ = original

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        if not holds_active(list(items)):
            return self.__wrapped__[key]
        if holds_complex(list(items)):
            re, im = (self[tuple(_part_of_item(item, k) for item in items)] for k in (0, 1))
            return complex_.make(re, im, shape_of(re))
        return concatenate_items(self.__wrapped__, items)

    def __len__(self):
        return len(self.__wrapped__)

    def __getattr__(self, name):
        return getattr(self.__wrapped__, name)


def _part_of_item(item, k):
    """The real (k = 0) or imaginary (k = 1) part of one item of np.r_/np.c_:
    directives stay, a slice's imaginary part is as many zeros."""
    if isinstance(item, str):
        return item
    if isinstance(item, slice):
        return item if k == 0 else np.zeros(np.r_[item].shape)
    return parts_of(item, k)


def concatenate_items(original, items):
    pieces, layout = [], []          # layout: ("item", x) kept as is, or ("piece", is_scalar)
    for item in items:
        if isinstance(item, str):
            if item in ("r", "c"):
                raise UnsupportedOperation(
                    f"adsim: the directive {item!r} of np.r_/np.c_ makes an np.matrix, which "
                    f"adsim does not record; leave it out (np.r_[...] makes an array)")
            layout.append(("item", item))
            continue
        if isinstance(item, slice):
            piece = np.r_[item]                          # its arange or linspace
        elif isinstance(item, (list, tuple)):
            piece = from_pieces(item)
        else:
            piece = item
        scalar = (isinstance(item, Active) and item.ndim == 0) or type(item) in np.ScalarType
        pieces.append(piece)
        layout.append(("piece", scalar))

    def laid_out(*positions):
        it = iter(positions)
        key = []
        for kind, value in layout:
            if kind == "item":
                key.append(value)
            else:
                p = next(it)
                key.append(np.intp(p) if value else p)
        return original[tuple(key)]
    return index_map(laid_out, pieces)
