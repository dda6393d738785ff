"""Nested derivatives (grad, jacobian, jvp, vjp, hvp called inside a
recording) in tape files. A file keeps the recorded variants of the inner
function (one tape per branch path met) and where the op's arguments go
among their inputs; a loaded tape replays bitwise like the original in every
sweep, Hessian-vector products (third derivatives of the inner function)
included. With no code to record the function again, a loaded nested
derivative at a point where none of its variants holds raises
BranchChanged, never a value of another branch. (A fresh process replaying
them: tests/integrate/test_solve_ivp_tapefiles.py, whose stiff methods
take their Jacobian so.)"""
import json
import pickle

import numpy as np
import pytest

import adsim as ad
from adsim import tapefile
from adsim.errors import BranchChanged, TapeFileError
from tapefile_bytes import replace_section, section
from tapefile_replays import assert_same_replays, copies, nearby, outcomes

RNG = np.random.default_rng(17)
X = np.array([0.3, 0.7, 1.1])


def energy(y, k, scale=1.0):
    return scale * np.sum(np.sin(y) * k * y) + np.sum(np.exp(-y * y))


def transforms(x):
    k = 2.0 * x[1]                                       # read from the closure: lifted
    g = ad.grad(lambda y: energy(y, k))(x)
    J = ad.jacobian(energy, argnums=1)(x, x[::-1], scale=0.5)
    _, jv = ad.jvp(np.tanh, (x,), (x ** 2,))
    _, wj = ad.vjp(lambda y: np.cos(y) * y[0], x, np.array([1.0, -0.5, 2.0]))
    weights = np.array([0.5, 1.5, -1.0])                 # a plain float argument
    d = ad.grad(lambda y, w, n: np.sum(w * y ** n))(x, weights, 3)
    return np.sum(g ** 2) + np.sum(J * x) + jv @ wj + d @ x


def higher(x):
    """A nested derivative of a nested derivative (its inner tape holds
    one), as a Hessian-vector product inside the recording makes."""
    H = ad.jacobian(ad.grad(lambda y: np.sum(np.cos(y) * y ** 3)))(x)
    return np.sum(H * np.outer(x, x))


@pytest.mark.parametrize("f,x", [(transforms, X), (higher, X[:2])])
def test_nested_derivatives_replay_bitwise_after_saving_and_pickling(f, x, tmp_path):
    tape = ad.record(f, x)
    points = [(x,), (nearby(x, RNG),)]
    assert_same_replays(tape, copies(tape, tmp_path), points)
    data = tapefile.dumps(tape)
    assert tapefile.dumps(tapefile.loads(data)) == data
    assert "adsim.nested_derivative" in {c["kind"] for c in _calls(data)}


def _calls(data, tape=0):
    _, count, at = section(data, "CALL", tape)
    return json.loads(bytes(data[at:at + count]).decode())


def kinked(x):
    """The Jacobian of a function with a branch (no branch of its own)."""
    J = ad.jacobian(lambda y: np.abs(y - 0.5) * y * np.sin(y))(x)
    return np.sum(J * J) * x[0]


def test_a_loaded_nested_derivative_raises_where_none_of_its_variants_holds():
    tape = ad.record(kinked, X)
    loaded = pickle.loads(pickle.dumps(tape))
    other_side = np.array([0.3, 0.2, 1.1])               # y[1] crosses 0.5
    with pytest.raises(BranchChanged, match="nested derivative `derivative of <lambda>` loaded "
                                            "from a tape file.*1 recorded function variants"):
        loaded.gradient(other_side)
    # the original records the other branch; saved again, both variants travel
    want = tape.gradient(other_side)
    again = pickle.loads(pickle.dumps(tape))
    assert again.gradient(other_side).tobytes() == want.tobytes()
    assert again.gradient(X).tobytes() == tape.gradient(X).tobytes()
    assert_same_replays(tape, again, [(X,), (other_side,)])
    assert outcomes(loaded, (other_side,))["hvp"] == "BranchChanged"


def _altered(data, edit):
    calls = _calls(data)
    nested = next(c for c in calls if c["kind"] == "adsim.nested_derivative")
    edit(nested)
    return replace_section(data, "CALL", json.dumps(calls).encode())


@pytest.mark.parametrize("edit,why", [
    (lambda c: c["state"].update(operands=[0, 0]), "do not number"),
    (lambda c: c["state"].update(argnum=5), "do not number"),
    (lambda c: c["state"].update(out_shape=[3, 4]), "the nested derivative has arguments"),
    (lambda c: c["state"]["in_shapes"].__setitem__(0, [4]), "callback 0 with arguments|maps"),
    (lambda c: c["state"].update(function=None), "function's name"),
    (lambda c: c["state"].update(extra=1), "fields"),
])
def test_altered_nested_derivatives_are_refused(edit, why):
    data = tapefile.dumps(ad.record(kinked, X))
    with pytest.raises(TapeFileError, match=why):
        tapefile.loads(_altered(data, edit))
