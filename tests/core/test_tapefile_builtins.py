"""adsim's own primitives made per call from parameters in tape files:
numpy.fft's transforms (one per plan), scipy.fft's DCT and DST (one per
plan), scipy.linalg.lu_factor (one per
pivoting), numpy.linalg.pinv and lstsq (one per cutoff), the collocation
solves of interpolating splines (one per knots and end conditions), the
guards of scipy.signal's peak finding (one per options, peaks and bases). A file saves each
by its family's name, the version of the family's rules and the call's
parameters, and the reader makes it again: loaded and unpickled tapes replay
bitwise like the original, in this process and in a fresh one; files naming
another version of the rules, an unknown family or parameters no call makes
are refused."""
import json
import pickle
import subprocess
import sys

import numpy as np
import pytest
import scipy.fft as sf
import scipy.fftpack as fp
import scipy.interpolate as si
import scipy.linalg as sla
import scipy.signal as ss

import adsim as ad
from adsim import tapefile
from adsim.errors import TapeCopyError, TapeFileError
from paths import ROOT
from tapefile_bytes import replace_section, section
from tapefile_replays import assert_same_replays, copies, nearby

RNG = np.random.default_rng(3)
X = np.array([0.3, 0.7, 1.1, 0.5, -0.4, 0.9])


def spectra(x):
    z = np.fft.fft(x) * np.exp(0.3j * np.arange(6))
    r = np.fft.irfft(np.fft.rfft(x, norm="ortho") * np.linspace(1.0, 2.0, 4), n=6, norm="ortho")
    m = np.fft.fftn(x.reshape(2, 3), s=(2, 4), axes=(0, 1))
    return (np.sum(np.abs(np.fft.ifft(z)) ** 2) + r @ x + np.sum(m.real * m.imag)
            + np.sum(np.fft.irfft2(np.fft.rfft2(x.reshape(3, 2))) ** 3))


def factorized(x):
    a = x[:4].reshape(2, 2) + np.array([[0.1, 3.0], [2.0, 0.2]])
    lu_piv = sla.lu_factor(a)
    return np.sum(sla.lu_solve(lu_piv, x[4:]) ** 2) + np.sum(lu_piv[0] ** 2)


def pseudo_inverses(x):
    a = x.reshape(3, 2)
    return (np.sum(np.linalg.pinv(a) ** 2) + np.sum(np.linalg.lstsq(a, x[:3], rcond=None)[0] ** 2)
            + np.sum(np.linalg.pinv(a, rcond=1e-10) * a.T))


def splines(x):
    knots = np.array([0.0, 0.4, 0.9, 1.3, 2.0, 2.4])
    clamped = si.CubicSpline(knots, x, bc_type="clamped")
    return np.sum(clamped(np.array([0.2, 1.1, 2.2])) ** 2) + si.make_interp_spline(
        knots, x ** 2, k=5)(1.7)


def cosine_transforms(x):
    c = sf.dctn(x.reshape(2, 3), type=1, s=(3, 4), norm="ortho")
    return (np.sum(c ** 2) + np.sum(sf.idst(x, type=3, orthogonalize=True) * x)
            + np.sum(fp.idct(x[:4], type=4) ** 3) + np.sum(np.fft.hfft(x[:3]) ** 2))


def peaks(x):
    s = np.concatenate([x, x[::-1] * 0.8])
    found, props = ss.find_peaks(s, height=(0.1, None), prominence=0.05, width=0.5,
                                 threshold=np.full(12, -1.0))
    return (np.sum(props["prominences"] ** 2) + np.sum(ss.peak_prominences(s, found, wlen=5)[0])
            + np.sum(ss.peak_widths(s, found, rel_height=0.4)[0]) + np.sum(s[found] ** 2)
            + np.sum(s[ss.find_peaks(s, height=0.5 * np.max(s))[0]]))


CASES = {"fft": spectra, "lu": factorized, "pinv": pseudo_inverses, "splines": splines,
         "dct": cosine_transforms, "peaks": peaks}


def _calls(data, tape=0):
    _, count, at = section(data, "CALL", tape)
    return json.loads(bytes(data[at:at + count]).decode())


@pytest.mark.parametrize("name", CASES)
def test_tapes_of_builtin_primitives_replay_bitwise_after_saving_and_pickling(name, tmp_path):
    tape = ad.record(CASES[name], X)
    assert_same_replays(tape, copies(tape, tmp_path), [(X,), (nearby(X, RNG),)])
    data = tapefile.dumps(tape)
    assert tapefile.dumps(tapefile.loads(data)) == data
    kinds = {c["kind"] for c in _calls(data)}
    assert "adsim.builtin_primitive" in kinds


def test_a_builtin_primitive_is_saved_by_family_version_and_parameters():
    tape = ad.record(lambda x: np.sum(np.fft.rfft(x, n=4).real), X[:3])
    (call,) = _calls(tapefile.dumps(tape))
    assert call == {"kind": "adsim.builtin_primitive", "tapes": [], "state": {
        "family": "numpy.fft", "version": 1, "in_shapes": [[3]], "out_shape": [2, 3],
        "parameters": {"kind": "rfftn", "name": "numpy.fft.rfft", "in_shape": [3], "s": [4],
                       "axes": [0], "norm": None, "complex_input": False}}}


LOAD = """
import pickle, sys
import numpy as np
tapes = pickle.loads(sys.stdin.buffer.read())
x = np.array([0.3, 0.7, 1.1, 0.5, -0.4, 0.9])
sys.stdout.write("".join(t.gradient(x).tobytes().hex() for t in tapes))
"""


def test_a_fresh_process_makes_the_builtin_primitives_a_file_names():
    tapes = [ad.record(f, X) for f in CASES.values()]
    run = subprocess.run([sys.executable, "-c", LOAD], input=pickle.dumps(tapes),
                         capture_output=True, timeout=120, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1", "PATH": ""})
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    assert run.stdout.decode() == "".join(t.gradient(X).tobytes().hex() for t in tapes)


def _altered(data, edit):
    calls = _calls(data)
    edit(calls[0]["state"])
    return replace_section(data, "CALL", json.dumps(calls).encode())


@pytest.mark.parametrize("f,edit,why", [
    (spectra, lambda s: s.update(version=9), "rules of version 9; this adsim has version 1"),
    (spectra, lambda s: s.update(family="numpy.fft.v2"), "does not have"),
    (spectra, lambda s: s["parameters"].update(kind="system"), "not one numpy.fft makes"),
    (spectra, lambda s: s["parameters"].update(axes=["0"]), "not one numpy.fft makes"),
    (spectra, lambda s: s["parameters"].update(norm=["x"]), "unhashable|norm"),
    (spectra, lambda s: s["parameters"].update(shell="rm"), "unexpected keyword"),
    (factorized, lambda s: s["parameters"].update(perm=[0, 0]), "not a permutation"),
    (pseudo_inverses, lambda s: s["parameters"].update(cut="big"), "not a number"),
    (cosine_transforms, lambda s: s["parameters"].update(type=5), "not one scipy.fft makes"),
    (cosine_transforms, lambda s: s["parameters"].update(axes=[2]), "not one scipy.fft makes"),
    (cosine_transforms, lambda s: s["parameters"].update(s=[1, 4]), "not one scipy.fft makes"),
    (peaks, lambda s: s["parameters"].update(kind="shell"), "no peak structure"),
])
def test_files_naming_other_rules_or_parameters_are_refused(f, edit, why):
    data = tapefile.dumps(ad.record(f, X))
    with pytest.raises(TapeFileError, match=why):
        tapefile.loads(_altered(data, edit))


def test_parameters_a_file_cannot_keep_are_refused_when_saving():
    tape = ad.record(lambda x: np.sum(np.linalg.pinv(x.reshape(3, 2), rcond=np.inf)), X)
    with pytest.raises(TapeCopyError, match="numpy.linalg.pinv.*inf.*finite"):
        pickle.dumps(tape)
