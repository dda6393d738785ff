"""The functions the transformations return (``adsim.grad(f)``,
``jacobian(f)``, ``hessian(f)``, ...).

Each is a :class:`Transformed`: a callable object that behaves as the
function it wraps (calls, binding as a method in a class body,
``inspect.signature`` through ``__wrapped__``, ``copy`` giving the same
object, as for functions) and refuses to be pickled with
:class:`adsim.errors.NotPicklable`, which says what to send to another
process instead. A plain closure would be pickled by name and fail with
Python's "Can't pickle local object".
"""
import inspect
import types

from ._validate import name_of
from .errors import InvalidArgument, NotPicklable

# transformation -> the tape method that computes its derivatives in another process
_TAPE_METHOD = {"grad": "gradient", "value_and_grad": "value_and_gradient",
                "jacobian": "jacobian", "hessian": "hvp", "hessp": "hvp", "laplacian": "hvp",
                "hvp_operator": "hvp"}


def not_picklable(transform, f):
    """The error pickling the result of ``adsim.<transform>(f)`` raises."""
    name = name_of(f)
    name = name if name.isidentifier() else "f"
    made = f"adsim.{transform}({name}{', x' if transform == 'hvp_operator' else ''})"
    method = _TAPE_METHOD.get(transform, "gradient")
    return NotPicklable(
        f"adsim: {made} cannot be pickled: it lives in the process that made it (it holds "
        f"{name} and its tapes), and pickle sends functions by name. To compute derivatives "
        f"in another process, send a tape instead: tape = adsim.record({name}, x), then "
        f"tape.save(path) and adsim.load_tape(path) there (or pickle.dumps(tape)); "
        f"adsim.parallel.map({method!r}, tape, points, executor=...) ships it for you. Or send "
        f"a function defined at module level that calls {made}: pickle sends it by name")


class Transformed:
    """``adsim.<transform>(f)``: calls ``call`` (the transformed function)."""

    def __init__(self, call, transform, f, tapes):
        self._call = call
        self._transform = transform
        self.__wrapped__ = f
        self.tapes = tapes
        self.__name__ = call.__name__
        self.__qualname__ = call.__qualname__
        self.__doc__ = call.__doc__

    def __call__(self, *args, **kwargs):
        try:
            return self._call(*args, **kwargs)
        except TypeError as err:
            if err.__traceback__.tb_next is not None:      # raised inside the call
                raise
            raise self._misfit(err) from None

    def _misfit(self, err):
        """The call did not fit the signature of the function made."""
        try:
            form = f"{self.__name__}{inspect.signature(self._call)}"
        except (TypeError, ValueError):
            form = self.__name__
        why = str(err).split("() ", 1)[-1]          # without Python's name of the function
        return InvalidArgument(f"adsim.{self._transform}({name_of(self.__wrapped__)}) made "
                               f"{form}: {why}; call it with the arguments its signature names")

    def __get__(self, obj, objtype=None):
        """In a class body, a method (as a function would be)."""
        return self if obj is None else types.MethodType(self, obj)

    def __repr__(self):
        return f"<adsim.{self._transform} of {name_of(self.__wrapped__)}>"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise not_picklable(self._transform, self.__wrapped__)


def inner_function(f):
    """The function a :class:`Transformed` calls (its closure holds what it
    reads), or ``f`` itself."""
    return f._call if isinstance(f, Transformed) else f
