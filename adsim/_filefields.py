"""Checks of the fields of saved states (tape files): one place for the
tape reader and the callback ops that describe themselves in a file."""
import math


def count_field(state, key, minimum=0, optional=False):
    """``state[key]`` as an int >= ``minimum`` (None allowed when ``optional``)."""
    v = state.get(key)
    if v is None and optional and key in state:
        return None
    if type(v) is not int or v < minimum:
        raise ValueError(f"{key} is {v!r}, not an integer >= {minimum}")
    return v


def shape_field(value, what):
    """A shape given as a list of non-negative ints."""
    if not isinstance(value, list) or len(value) > 64 or \
            any(type(d) is not int or d < 0 for d in value):
        raise ValueError(f"{what} is {value!r}, not a shape")
    return tuple(value)


def expect_keys(state, keys):
    if set(state) != set(keys):
        raise ValueError(f"the state has fields {sorted(state)}, not {sorted(keys)}")


def size_of(shape):
    return math.prod(shape)
