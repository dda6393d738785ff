"""Recording: run a function on active inputs and keep the tape."""

import numpy as np

from . import creation, interpose
from .._opcodes import Opcode as Op
from .._active import Active, other_layout, wrap
from .._np.layout import laid_out
from .._containers.tree import LEAF, flatten, is_container, keep_constants, unflatten
from .._validate import entry_point, function, name_of, real_array
from ..errors import InvalidArgument, MixedRecordings


@entry_point
def record(f, *args, **kwargs):
    """``adsim.record`` (:func:`adsim.api.record`) with every NumPy and SciPy
    function interposed: adsim's own recordings of the functions it runs
    (steps of loops and solvers, sparse plans), whose environments it does
    not walk."""
    check_record_call(f, args)
    return record_inputs(f, args, kwargs, len(args))


def check_record_call(f, args):
    """Refuse ``adsim.record`` given no function or no inputs."""
    function(f, "record", usage="adsim.record(f, x), then tape.gradient(x)")
    if not args:
        raise InvalidArgument(f"adsim.record: no inputs were given after the function "
                              f"{name_of(f)}; pass the point to record at, as positional "
                              f"arguments: adsim.record(f, x) or adsim.record(f, x1, x2)")


_classes = []           # adsim.tape.Tape, once imported (see _tape_class)


def _tape_class():
    """The user-facing Tape: adsim/tape.py sits above this layer, so it is
    imported on first use (and kept: an import statement per recording costs
    as much as a small op)."""
    if not _classes:
        from ..tape import Tape
        _classes.append(Tape)
    return _classes[0]


def _new_input(tape, arr, varied):
    """The active input holding ``arr``, laid out in memory as ``arr`` is
    (a Fortran-order input's ufunc results and ``ravel(order="K")`` follow
    its layout, as NumPy's do; the tape checks replays' layouts when the
    function read them)."""
    x = wrap(tape, tape.new_input(arr, varied), arr.shape)
    return laid_out(x, arr) if other_layout(arr) else x


def record_inputs(f, args, kwargs, n_varied, reach=None):
    """:func:`record` with only the first ``n_varied`` inputs differentiated;
    the others are data (replayed with new values, never differentiated).
    ``reach``: the names ``f``'s code and the code it reaches load, when its
    environment walk could see all of it and found no SciPy
    (``Snapshot.reach``): interposition then changes only NumPy's functions
    of those names (adsim/_record/interpose.py)."""
    Tape = _tape_class()
    trees = [LEAF if type(a) is np.ndarray else flatten(a)[1] if a is not None and
             is_container(a) else LEAF for a in args]
    containers = any(not t.is_leaf for t in trees)
    if containers:
        from .._containers.tree_tape import TreeTape
        tape = TreeTape()
    else:
        tape = Tape()
    inputs = []
    for i, a in enumerate(args):
        if trees[i].is_leaf:
            inputs.append(_new_input(tape, real_array(a, f"argument {i}"), i < n_varied))
            continue
        leaves = [_new_input(tape, real_array(leaf, f"argument {i}{path}"), i < n_varied)
                  for path, leaf in zip(trees[i].paths(), flatten(a)[0])]
        inputs.append(unflatten(trees[i], leaves))
    if containers:
        tape._set_trees(trees)
    interposed = interpose.enabled()         # this thread's setting, read once per recording
    try:
        with interpose.installed(interposed, reach), \
                creation.recording(tape, interposed):
            out = f(*inputs, **kwargs)
    except BaseException:
        tape.finish_failed()
        raise
    out = _output_active(tape, out, f)
    tape.finish(out.slot, out.shape)
    return tape


def _output_active(tape, out, f):
    name = getattr(f, "__name__", "the function")
    if isinstance(out, (tuple, list)) or (out is not None and is_container(out)):
        raise InvalidArgument(f"adsim: {name} returned a {type(out).__name__}; a tape has one "
                              f"output array: np.concatenate the pieces, or use the functional "
                              f"API (jvp, vjp, jacobian), which accepts containers of outputs")
    if isinstance(out, Active):
        if out.tape is not tape:
            raise MixedRecordings(f"adsim: {name} returned an active array of another "
                                  f"recording (a value kept from an outer or earlier one); "
                                  f"return values computed from this recording's inputs")
        return out
    arr = real_array(out, f"the return value of {name}")
    # independent of the inputs: a constant output (all derivatives zero)
    return wrap(tape, tape.record_op(int(Op.FILL), arr.size, [tape.const_ref(arr)]), arr.shape)


def flat_output(out, name, opaque=False):
    """(one array, treedef, leaf shapes) of a function's return value: a
    container's leaves raveled and concatenated (constants enter as
    constants), a single array unchanged (treedef LEAF, shapes None).
    ``opaque``: leaves that are not numbers (strings, objects) are kept in
    the treedef, as they are (the auxiliary output of ``has_aux``)."""
    if type(out) is Active:             # the common case, without a walk
        return out, LEAF, None
    leaves, tree = flatten(out)
    if tree.is_leaf or out is None:     # None: refused with the single-array message
        return out, LEAF, None
    if opaque:
        tree, leaves = keep_constants(tree, leaves)
    pieces, shapes = [], []
    for path, leaf in zip(tree.paths(), leaves):
        if not isinstance(leaf, Active):
            leaf = real_array(leaf, f"the return value of {name} at {path}")
        shapes.append(tuple(np.shape(leaf)))
        pieces.append(np.reshape(leaf, -1))
    return (np.concatenate(pieces) if pieces else np.zeros(0)), tree, tuple(shapes)
