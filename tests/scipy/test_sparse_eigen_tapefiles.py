"""Tapes of eigsh and svds of a sparse matrix of active values in tape
files: the eigenpairs are one of adsim's built-in primitives, saved by its
family with the matrix's pattern, SciPy's options and the eigenvectors
whose signs replays keep, so saved, loaded and unpickled tapes replay
bitwise like the original (with a starting vector ``v0``, or without one:
adsim then starts ARPACK from a fixed vector rather than SciPy's random one),
with derivatives that agree with central differences; altered
parameters raise TapeFileError."""
import json

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import adsim
from adsim import tapefile
from tapefile_bytes import replace_section, section
from tapefile_replays import assert_same_replays, callback_kinds, copies

N = 12
LAPLACIAN = sp.diags([-np.ones(N - 1), 2.0 * np.ones(N), -np.ones(N - 1)], [-1, 0, 1]) * 4.0
P = 5.0 * np.linspace(0.0, 1.0, N) ** 2
FIRST_ORDER = ["forward", "gradient", "jvp", "vjp"]


def spectrum(p):
    """Two eigenpairs of a Hamiltonian and two singular triplets of a
    rectangular block of it."""
    H = (LAPLACIAN + sp.diags(p)).tocsr()
    w, V = spla.eigsh(H, k=2, which="SA", tol=1e-13, v0=np.linspace(1.0, 2.0, N))
    u, s, vt = spla.svds(H[:, :N - 2], k=2, tol=1e-13, v0=np.linspace(1.0, 2.0, N - 2))
    return (w[0] + 10.0 * np.sum(V[:N // 2, 0] ** 2) + 0.1 * w[1] + np.sum(s)
            + np.sum(u[:, 0] ** 2 * p) + vt[1] @ p[:N - 2] ** 2)


def test_tapes_of_eigenpairs_replay_bitwise_after_saving(tmp_path):
    tape = adsim.record(spectrum, P)
    assert "adsim.builtin_primitive" in callback_kinds(tape)
    assert_same_replays(tape, copies(tape, tmp_path), [(P,), (P * 1.3 + 0.1,)],
                        methods=FIRST_ORDER)


def test_derivatives_of_loaded_eigenpairs_match_differences():
    loaded = tapefile.loads(tapefile.dumps(adsim.record(spectrum, P)))
    for p in (P, P * 1.3 + 0.1):
        g = loaded.gradient(p)
        for i in (0, 3, N - 1):
            e = np.zeros(N)
            e[i] = 1e-5
            assert g[i] == pytest.approx((spectrum(p + e) - spectrum(p - e)) / 2e-5,
                                         rel=1e-6, abs=1e-8)


def altered_file(change):
    """The file of a tape of eigsh with ``change`` applied to its family's
    parameters."""
    def lowest(p):
        return spla.eigsh((LAPLACIAN + sp.diags(p)).tocsr(), k=1, which="SA",
                          v0=np.ones(N))[0][0]
    data = tapefile.dumps(adsim.record(lowest, P))
    _, count, at = section(data, "CALL")
    calls = json.loads(data[at:at + count])
    (described,) = [c for c in calls if c["kind"] == "adsim.builtin_primitive"
                    and c["state"]["family"] == "scipy.sparse.linalg.eigen_pairs"]
    change(described["state"]["parameters"])
    return replace_section(data, "CALL", json.dumps(calls).encode())


@pytest.mark.parametrize("change,message", [
    (lambda st: st.update(kind="eig"), "not the parameters"),
    (lambda st: st["rows"].__setitem__(0, N), "not the parameters"),
    (lambda st: st["cols"].pop(), "not the parameters"),
    (lambda st: st.update(k=N), "not the parameters"),
    (lambda st: st["options"].update(OPinv=1), "not the parameters"),
    (lambda st: st["reference"].pop(), "eigenvectors of reference"),
    (lambda st: st.update(extra=1), "extra")])
def test_altered_eigen_parameters_are_refused(change, message):
    with pytest.raises(adsim.TapeFileError, match=message):
        tapefile.loads(altered_file(change))


def unstarted(p):
    """eigsh and svds without v0: ARPACK starts from adsim's fixed vector."""
    H = (LAPLACIAN + sp.diags(p)).tocsr()
    w, V = spla.eigsh(H, k=2, which="SA", tol=1e-10)
    u, s, vt = spla.svds(H[:, :N - 2], k=2, tol=1e-10)
    return w[0] + np.sum(V[:, 1] ** 3) + np.sum(s) + np.sum(u[:, 0] ** 3) + vt[1] @ p[:N - 2]


def test_without_a_start_vector_replays_and_loaded_tapes_are_bitwise_alike(tmp_path):
    tape = adsim.record(unstarted, P)
    again = adsim.record(unstarted, P)
    recorded = adsim.value_and_grad(unstarted)(P)
    for t in (tape, again, *copies(tape, tmp_path)):
        assert t.forward(P) == tape.forward(P) == recorded[0]
        assert t.gradient(P).tobytes() == recorded[1].tobytes()
    assert_same_replays(tape, copies(tape, tmp_path), [(P,), (P * 1.3 + 0.1,)],
                        methods=FIRST_ORDER)
    # differences of the tape's values (plain SciPy calls would start ARPACK
    # at random, each eigenvector's sign with it)
    q = P * 1.3 + 0.1
    e = np.zeros(N)
    e[3] = 1e-5
    want = (tape.forward(q + e) - tape.forward(q - e)) / 2e-5
    assert tape.gradient(q)[3] == pytest.approx(want, rel=1e-5, abs=1e-7)


def test_a_users_generator_still_reaches_eigsh():
    def H(p):
        return (LAPLACIAN + sp.diags(p)).tocsr()

    def f(p):
        return spla.eigsh(H(p), k=1, which="SA", rng=7)[0][0]
    assert adsim.value_and_grad(f)(P)[0] == pytest.approx(
        spla.eigsh(H(P), k=1, which="SA")[0][0], rel=1e-10)
