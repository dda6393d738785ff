"""Ufuncs given active values inside lists or tuples only (``np.exp([a, b])``,
``np.add.reduce([a, b])``): NumPy would convert the lists before asking any
override, so adsim's stand-ins of NumPy's ufunc names (adsim/_record/listed.py)
convert them first. Every ufunc adsim records gives with lists what it gives
with the stacked array, in value and derivative; nothing becomes an object
array; a ufunc reached past the stand-ins refuses with an error."""
import pickle

import numpy as np
import pytest

import scipy.special as sc
from scipy.special import gammaln

import adsim as ad
from adsim.testing import check_grads

X = np.array([0.3, 0.7, 0.55, 0.45])
EXP = np.exp                    # NumPy's own ufunc, taken before any recording
UFUNCS = sorted((v for v in vars(np).values() if isinstance(v, np.ufunc)),
                key=lambda uf: uf.__name__)


def _listed(uf):
    """uf of lists of 0-d active values, and of the stacked arrays; called by
    its name in numpy, as users call it (a variable holding NumPy's ufunc,
    taken before the recording, is NumPy's own)."""
    def listed(x):
        return getattr(np, uf.__name__)(*[[x[2 * k], x[2 * k + 1]] for k in range(uf.nin)])

    def stacked(x):
        return uf(*[np.stack([x[2 * k], x[2 * k + 1]]) for k in range(uf.nin)])
    return listed, stacked


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def _outcome(f, x):
    """(value, gradient) of sum(f(x)) through adsim, or the adsim error's type."""
    try:
        value = ad.record(lambda x: np.sum(_first(f(x)) * 1.0), x).forward(x)
        return value, ad.grad(lambda x: np.sum(_first(f(x)) * 1.0))(x)
    except (ad.errors.AdsimError, TypeError) as e:
        return type(e)


@pytest.mark.parametrize("uf", [uf for uf in UFUNCS if uf.nin <= 2 and uf.signature is None],
                         ids=lambda uf: uf.__name__)
def test_every_ufunc_takes_lists_as_the_stacked_array(uf):
    listed, stacked = _listed(uf)
    with np.errstate(all="ignore"):
        expected, got = _outcome(stacked, X), _outcome(listed, X)
    if isinstance(expected, type):          # refused as the stacked array is
        assert got is expected
        return
    assert not isinstance(got, type), f"{uf.__name__} of lists raised {got}"
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])


def test_the_sweep_reaches_the_ufuncs_adsim_records():
    working = [uf.__name__ for uf in UFUNCS if uf.nin <= 2 and uf.signature is None and
               not isinstance(_outcome(_listed(uf)[1], X), type)]
    assert len(working) >= 70 and {"exp", "add", "hypot", "arctan2", "logaddexp"} <= set(working)


@pytest.mark.parametrize("name, f", [
    ("square", lambda x: np.square([x[0], x[1] * x[2]])),
    ("exp of a tuple", lambda x: np.exp((x[0], x[1]))),
    ("hypot of two lists", lambda x: np.hypot([x[0], x[1]], [x[2], 1.5])),
    ("power, nested", lambda x: np.power([[x[0], 2.0], [x[1], x[2]]], [x[3], 0.5])),
    ("add.reduce", lambda x: np.add.reduce([x[0], x[1] ** 2, 3.0])),
    ("multiply.accumulate", lambda x: np.multiply.accumulate([x[0], x[1], x[2]])),
    ("maximum.reduceat", lambda x: np.maximum.reduceat([x[0], x[1], x[2], x[3]], [0, 2])),
    ("subtract.outer", lambda x: np.subtract.outer([x[0], x[1]], [x[2], x[3]])),
    ("logaddexp.reduce", lambda x: np.logaddexp.reduce([x[0], x[1], x[2]])),
    ("arrays in the list", lambda x: np.sin([x[:2], x[2:]])),
    ("a ufunc of np.frompyfunc", lambda x: np.frompyfunc(lambda a, b: a * np.sin(b), 2, 1)(
        [x[0], x[1]], (x[2], 2.0)).astype(float)),
    ("scipy.special's", lambda x: sc.gammaln([x[0] + 1.0, x[1]]) * sc.erf((x[2], 0.5))),
    ("scipy.special's, imported by name", lambda x: gammaln([x[0] + 1.0, 2.5])),
    ("where= into out=", lambda x: np.divide([x[0], x[1]], [x[2], 0.0],
                                             out=np.zeros_like(x[:2]), where=[True, False])),
])
def test_listed_ufunc_calls_against_differences(name, f):
    check_grads(lambda x: f(x) * 1.0, X, modes=("fwd", "rev"), order=2)


def test_values_are_numpys_and_never_object_arrays():
    seen = {}

    def f(x):
        y = np.exp([x[0], 1.0, x[1]])
        seen["type"], seen["dtype"] = type(y), y.dtype
        return np.sum(y)
    value, g = ad.value_and_grad(f)(X)
    assert seen == {"type": ad.Active, "dtype": np.float64}
    assert value == np.sum(np.exp([X[0], 1.0, X[1]]))
    np.testing.assert_array_equal(g, [np.exp(X[0]), np.exp(X[1]), 0.0, 0.0])


def test_add_at_of_listed_values_into_a_workspace():
    def f(x):
        w = np.zeros(3)
        np.add.at(w, [0, 2, 0], [x[0], x[1] ** 2, x[2]])
        return w
    check_grads(f, X, modes=("fwd", "rev"))


def test_the_stand_ins_pass_for_ufuncs_while_recording():
    seen = {}

    def f(x):
        seen["isinstance"] = isinstance(np.exp, np.ufunc) and np.abs is np.absolute
        seen["equal"] = np.exp == EXP and EXP == np.exp and hash(np.exp) == hash(EXP)
        seen["key"] = {EXP: 1}.get(np.exp) == 1 and np.exp in (np.sin, EXP)
        seen["attributes"] = (np.add.nin, np.add.identity, np.exp.__name__, np.matmul.signature)
        seen["plain"] = np.add.reduce([1.0, 2.0]) == 3.0 and type(np.exp(X)) is np.ndarray
        seen["pickled"] = pickle.loads(pickle.dumps(np.exp)) is np.exp
        seen["repr"] = repr(np.exp)
        seen["doc"] = np.exp.__doc__ == EXP.__doc__
        return np.sum(np.exp([x[0], x[1]]))
    ad.grad(f)(X)
    assert seen == {"isinstance": True, "equal": True, "key": True,
                    "attributes": (2, 0, "exp", "(n?,k),(k,m?)->(n?,m?)"), "plain": True,
                    "pickled": True, "repr": "<ufunc 'exp'>", "doc": True}
    assert np.exp is EXP and type(np.exp) is np.ufunc


def test_names_past_the_stand_ins_and_interposition_off_refuse():
    with pytest.raises(ad.UnsupportedOperation, match="`numpy.exp` received active values"):
        ad.grad(lambda x: np.sum(EXP([x[0], x[1]])))(X)
    with ad.interposition(False):
        with pytest.raises(ad.UnsupportedOperation, match="`numpy.exp` received active values"):
            ad.grad(lambda x: np.sum(np.exp([x[0], x[1]])))(X)
        # a ufunc given an active argument of its own converts its lists either way
        np.testing.assert_allclose(ad.grad(lambda x: np.sum(np.add([x[0], x[1]], x[2:])))(X),
                                   [1.0, 1.0, 1.0, 1.0])


# ---- user-style models --------------------------------------------------------

DATA = np.array([0.2, -0.4, 1.3, 0.8, 2.1, -1.1])


def test_a_log_density_of_listed_terms():
    """Each observation's terms collected in a list, the log taken of the list."""
    def loglik(theta):
        mu, s = theta[0], np.exp(theta[1])
        densities = [np.exp(-0.5 * ((y - mu) / s) ** 2) / s for y in DATA]
        return np.sum(np.log(densities)) - 0.5 * DATA.size * np.log(2 * np.pi)

    theta = np.array([0.4, -0.2])
    mu, s = theta[0], np.exp(theta[1])
    expected = np.sum(-0.5 * ((DATA - mu) / s) ** 2 - np.log(s)) - 0.5 * DATA.size * np.log(2 * np.pi)
    value, g = ad.value_and_grad(loglik)(theta)
    np.testing.assert_allclose(value, expected, rtol=1e-14)
    z = (DATA - mu) / s
    np.testing.assert_allclose(g, [np.sum(z / s), np.sum(z ** 2 - 1.0)], rtol=1e-12)
    check_grads(loglik, theta, order=2)


def test_a_softmax_of_listed_scores():
    def policy(w):
        scores = [w[0] * 1.5, w[1] - w[0], 0.0]
        e = np.exp(np.subtract(scores, np.max(scores)))
        return np.log(e[0] / np.sum(e))
    check_grads(policy, np.array([0.3, -0.8]), modes=("fwd", "rev"), order=2)
