"""Krylov solves with a LinearOperator of Python code in tape files: the
operator's products are recorded as tapes, on which SciPy's method runs in
the recording process and in one that loaded them, so saved, loaded and
unpickled tapes replay bitwise like the original, with derivatives that
agree with central differences; a product taking a branch none of its
tapes holds raises BranchChanged once loaded; altered descriptions raise
TapeFileError."""
import json

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import adsim
from adsim import tapefile
from tapefile_bytes import replace_section, section
from tapefile_replays import assert_same_replays, callback_kinds, copies

N = 8
KERNEL = np.array([-1.0, 4.0, -1.5])
B0 = np.linspace(-1.0, 1.3, N)


def convolution(v):
    """A banded, non-symmetric operator written with NumPy."""
    return np.convolve(v, KERNEL, mode="same")


def correlation(w):
    return np.convolve(w, KERNEL[::-1], mode="same")


OPERATOR = spla.LinearOperator((N, N), matvec=convolution, rmatvec=correlation)
SYMMETRIC = spla.LinearOperator((N, N), matvec=lambda v: 3.0 * v + convolution(v)
                                + correlation(v))


def solved(b):
    x = spla.gmres(OPERATOR, b, rtol=1e-12, atol=1e-14)[0]
    y = spla.cg(SYMMETRIC, np.sin(b), rtol=1e-12, atol=1e-14)[0]
    z = spla.bicgstab(OPERATOR, x * b, rtol=1e-12, atol=1e-14)[0]
    return np.sum(np.sin(x)) + np.sum(y ** 2) + z @ b


def test_tapes_of_operator_solves_replay_bitwise_after_saving(tmp_path):
    tape = adsim.record(solved, B0)
    assert "adsim.operator_solve" in callback_kinds(tape)
    assert_same_replays(tape, copies(tape, tmp_path), [(B0,), (B0 * 1.3 - 0.2,)])


def test_derivatives_of_loaded_operator_solves_match_differences():
    loaded = tapefile.loads(tapefile.dumps(adsim.record(solved, B0)))
    for b in (B0, B0 * 1.3 - 0.2):
        want = [(solved(b + 1e-6 * e) - solved(b - 1e-6 * e)) / 2e-6 for e in np.eye(N)]
        np.testing.assert_allclose(loaded.gradient(b), want, rtol=1e-6, atol=1e-8)
        assert loaded.forward(b) == pytest.approx(solved(b), rel=1e-10)


def test_a_branch_no_recorded_tape_holds_raises_branch_changed_when_loaded():
    """A product that clips large entries: recorded where none is large."""
    def clipped(v):
        if np.max(np.abs(v)) < 50.0:
            return convolution(v) + 6.0 * v
        return convolution(v) + 6.0 * v + 0.0 * np.abs(v)
    op = spla.LinearOperator((N, N), matvec=clipped, rmatvec=lambda w: correlation(w) + 6.0 * w)

    def f(b):
        return np.sum(spla.gmres(op, b, rtol=1e-12, atol=1e-14)[0] ** 2)
    tape = adsim.record(f, B0)
    loaded = tapefile.loads(tapefile.dumps(tape))
    assert loaded.forward(B0) == tape.forward(B0)
    tape.forward(B0 * 1000.0)
    with pytest.raises(adsim.BranchChanged, match="loaded from a tape file"):
        loaded.forward(B0 * 1000.0)


def altered_file(change):
    data = tapefile.dumps(adsim.record(
        lambda b: np.sum(spla.gmres(OPERATOR, b, rtol=1e-10)[0]), B0))
    _, count, at = section(data, "CALL")
    calls = json.loads(data[at:at + count])
    (described,) = [c for c in calls if c["kind"] == "adsim.operator_solve"]
    change(described["state"])
    return replace_section(data, "CALL", json.dumps(calls).encode())


@pytest.mark.parametrize("change,message", [
    (lambda st: st.update(method="qmr"), "described by its method"),
    (lambda st: st.update(n=N + 1), "operator maps a vector"),
    (lambda st: st.update(matvecs=0), "counts of its matvec"),
    (lambda st: st.update(rmatvec=False), "counts of its matvec"),
    (lambda st: st.update(transposed=1), "direction"),
    (lambda st: st.update(out_shape=[N, 1]), "operator maps a vector"),
    (lambda st: st.update(extra=1), "fields")])
def test_altered_operator_solve_descriptions_are_refused(change, message):
    with pytest.raises(adsim.TapeFileError, match=message):
        tapefile.loads(altered_file(change))
