"""Random variates of scipy.stats' continuous distributions with an active
location or scale: the pathwise derivative, as adsim/_np/draws.py gives
NumPy's draws.

SciPy's ``rv_generic.rvs`` draws the standard variates ``vals`` from the
shape parameters alone and returns ``vals * scale + loc``. adsim makes
SciPy's own call with the plain values (its checks, its shape, its
numbers), puts the random state back, draws the standard variates again
at ``loc=0, scale=1`` (``vals * 1 + 0`` is ``vals``) with that shape, and
records ``vals * scale + loc``: SciPy's value bit for bit, ``d/dloc = 1``
and ``d/dscale = vals`` with the random numbers held fixed, and the same
numbers on replay. Active shape parameters, and discrete distributions,
stay refused (their variates move with the parameters by jumps of a
rejection sampler or a count)."""
import numpy as np

from .._np import joins
from .._np.draws import generator_state, set_generator_state
from .._np.integers import current
from ..errors import UnsupportedOperation


def rvs(self, *args, **kwds):
    """``dist.rvs(*shapes, loc=, scale=, size=, random_state=)`` with an
    active loc or scale."""
    import scipy.stats
    kwds = dict(kwds)
    rndm = kwds.pop("random_state", None)
    shapes, loc, scale, size = self._parse_args_rvs(*args, **kwds)
    name = f"scipy.stats.{self.name}.rvs"
    if not isinstance(self, scipy.stats.rv_continuous) or \
            any(joins.holds_active(s) for s in shapes):
        raise UnsupportedOperation(
            f"adsim: {name} is differentiated in loc and scale only, of continuous "
            f"distributions (the pathwise derivative); its variates move with the shape "
            f"parameters by jumps. Pass those as plain values, or call it on adsim.value(x) "
            f"if no derivative is wanted")
    loc, scale = joins.from_pieces(loc), joins.from_pieces(scale)
    plain_loc, plain_scale = _plain(loc), _plain(scale)
    source = _source(rndm)
    before = None if source is None else generator_state(source)
    drawn = self.rvs(*shapes, loc=plain_loc, scale=plain_scale, size=size, random_state=rndm)
    if np.all(plain_scale == 0):        # SciPy returns loc without drawing
        return loc + 0.0 * scale + np.zeros(np.shape(drawn))
    if source is not None:
        after = generator_state(source)
        set_generator_state(source, before)
    standard = self.rvs(*shapes, loc=0.0, scale=1.0, size=np.shape(drawn), random_state=rndm)
    if source is not None:
        set_generator_state(source, after)
    result = standard * scale + loc
    assert np.shape(result) == np.shape(drawn) and np.allclose(
        current(result), drawn, rtol=1e-12, atol=0.0, equal_nan=True), \
        f"adsim: the pathwise draw of {name} differs from SciPy's"
    return result


def _plain(v):
    return current(v) if hasattr(v, "slot") else v


def _source(rndm):
    """The generator whose state the draw advances (None: a fresh one made
    from an integer seed, drawn the same both times)."""
    if rndm is None:
        return np.random.mtrand._rand
    if isinstance(rndm, (np.random.Generator, np.random.RandomState)):
        return rndm
    return None
