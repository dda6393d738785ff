"""Tapes of scipy.integrate.quad and quad_vec in tape files: an integral is
one op holding the recorded tapes of its integrand (one per branch path
met), on which SciPy's routine runs in the process that recorded it and in
one that loaded it, so saved, loaded and unpickled tapes replay bitwise
like the original, with derivatives that agree with central differences of
SciPy's own quadrature; an integrand that takes a branch no recorded tape
holds raises BranchChanged in a loaded tape; an integrand that cannot be
recorded (float() of its argument) keeps its own values and refuses to be
saved, naming why; altered descriptions are refused with TapeFileError."""
import json

import numpy as np
import pytest
import scipy.integrate as si

import adsim
from adsim import tapefile
from adsim.errors import TapeCopyError
from tapefile_bytes import replace_section, section
from tapefile_replays import assert_same_replays, callback_kinds, copies

P0 = np.array([0.7, 1.3])
NEAR = [P0, P0 * (1 + 1e-6), np.array([0.9, 1.1])]


def wave(p):
    """A parameter in args=, another in the closure and in the upper limit."""
    return si.quad(lambda s, k: np.sin(k * s) * np.exp(-p[1] * s), 0.0, p[1], args=(p[0],))[0]


def tail(p):
    """A moving lower limit and an infinite upper one."""
    return si.quad(lambda x: np.exp(-p[1] * x * x), p[0], np.inf)[0]


def moments(p):
    """A vector integrand by quad_vec, with break points."""
    return si.quad_vec(lambda x: np.array([1.0, x, x * x]) * np.exp(-p[0] * x) * p[1], 0.0,
                       2.0, points=[0.5, 1.0])[0]


def nested(p):
    """A quad inside the integrand of a quad: tapes owning tapes."""
    return si.quad(lambda x: si.quad(lambda y: np.exp(-p[0] * x * y), 0.0, p[1])[0],
                   0.0, 1.0, epsabs=1e-12, epsrel=1e-12)[0]


def program(p):
    return wave(p) + 2.0 * tail(p) + moments(p) @ [1.0, -0.5, 0.25]


CASES = {"wave": wave, "tail": tail, "moments": lambda p: moments(p) @ [1.0, -0.5, 0.25],
         "nested": nested}


def test_tapes_of_integrals_replay_bitwise_after_saving(tmp_path):
    tape = adsim.record(program, P0)
    assert "adsim.integral" in callback_kinds(tape)
    # SciPy's routines run on the recorded integrand: its values to rounding
    assert tape.forward(P0) == pytest.approx(program(P0), rel=1e-14)
    assert_same_replays(tape, copies(tape, tmp_path), [(P0,), (NEAR[2],)])
    # second-order sweeps of a quad inside a quad take seconds: first order only
    tape = adsim.record(nested, P0)
    assert_same_replays(tape, copies(tape), [(P0,), (NEAR[2],)],
                        methods=["forward", "gradient", "jvp", "vjp"])


@pytest.mark.parametrize("name", CASES)
def test_derivatives_of_loaded_integrals_match_differences(name):
    f = CASES[name]
    loaded = tapefile.loads(tapefile.dumps(adsim.record(f, P0)))
    for p in (P0, np.array([1.2, 0.8])):
        want = [(f(p + 1e-6 * e) - f(p - 1e-6 * e)) / 2e-6 for e in np.eye(2)]
        np.testing.assert_allclose(loaded.gradient(p), want, rtol=1e-6, atol=1e-8)
        assert loaded.forward(p) == pytest.approx(f(p), rel=1e-13)
        if name == "nested":            # its second order takes seconds
            continue
        v = np.array([0.3, -0.7])
        g = lambda q: loaded.gradient(q)                         # noqa: E731
        hv = (g(p + 1e-5 * v) - g(p - 1e-5 * v)) / 2e-5
        np.testing.assert_allclose(loaded.gradient_and_hvp(p, v)[1], hv, rtol=1e-5, atol=1e-7)


def test_a_branch_no_recorded_tape_holds_raises_branch_changed_when_loaded():
    """Recorded with the upper limit below the bend, the integrand's tapes
    hold the first branch only: the original records the other one at a
    replay past it, the loaded tape cannot."""
    below = np.array([0.8, 1.2])
    tape = adsim.record(lambda p: si.quad(lambda x: p[0] * x if x < 1.5 else
                                          p[0] * (1.5 + 0.5 * (x - 1.5)), 0.0, p[1])[0], below)
    loaded = tapefile.loads(tapefile.dumps(tape))
    assert loaded.forward(below) == tape.forward(below)
    past = np.array([0.8, 2.0])
    exact = 0.8 * (1.5 ** 2 / 2 + 1.5 * 0.5 + 0.25 * 0.5 ** 2)
    assert tape.forward(past) == pytest.approx(exact, rel=1e-12)
    np.testing.assert_allclose(tape.gradient(past), [exact / 0.8, 0.8 * 1.75], rtol=1e-10)
    with pytest.raises(adsim.BranchChanged, match="integral of `<lambda>`.*loaded from a "
                                                  "tape file"):
        loaded.forward(past)


def test_an_integrand_that_cannot_be_recorded_keeps_its_values_and_refuses_saving(tmp_path):
    def f(p):
        return si.quad(lambda x, k: k * np.exp(-float(x)), 0.0, 1.0, args=(p[0],))[0]
    tape = adsim.record(f, P0)
    assert tape.forward(P0 * 2) == f(P0 * 2)
    with pytest.raises(TapeCopyError, match="could not be recorded .ActiveValueLeak"):
        tape.save(tmp_path / "f.adtape")


def altered_file(change, f=moments):
    """The file of a tape of ``f`` with ``change`` applied to the description
    of its integral."""
    data = tapefile.dumps(adsim.record(lambda p: np.sum(f(p)), P0))
    _, count, at = section(data, "CALL")
    calls = json.loads(data[at:at + count])
    (described,) = [c for c in calls if c["kind"] == "adsim.integral"]
    change(described["state"])
    return replace_section(data, "CALL", json.dumps(calls).encode())


@pytest.mark.parametrize("change,message", [
    (lambda st: st.update(routine="dblquad"), "routine"),
    (lambda st: st["options"].update(limit=-1), "option limit=-1"),
    (lambda st: st["options"].update(epsrel="tight"), "option epsrel"),
    (lambda st: st["options"].update(norm="1"), "option norm"),
    (lambda st: st["options"].update(points=[0.5, None]), "option points"),
    (lambda st: st["options"].update(workers=4), "the options of quad_vec"),
    (lambda st: st["options"].pop("epsabs"), "the options of quad_vec"),
    (lambda st: st["in_shapes"][0].append(2), "two limits"),
    (lambda st: st["in_shapes"].pop(), "a tape of the integrand"),
    (lambda st: st.update(out_shape=[4]), "a tape of the integrand"),
    (lambda st: st.update(integrand=3), "described by"),
    (lambda st: st.update(extra=1), "fields")])
def test_altered_integral_descriptions_are_refused(change, message):
    with pytest.raises(adsim.TapeFileError, match=message):
        tapefile.loads(altered_file(change))


def test_a_quad_file_described_as_a_vector_integral_is_refused():
    with pytest.raises(adsim.TapeFileError, match="to a number"):
        tapefile.loads(altered_file(lambda st: st.update(out_shape=[3]), wave))


def test_options_a_reader_would_refuse_are_refused_when_saving(tmp_path):
    """quad allocates 4 * limit numbers at once: files hold limits up to 2^20."""
    tape = adsim.record(lambda p: si.quad(lambda x: np.exp(-p[0] * x), 0.0, 1.0,
                                          limit=1 << 21)[0], P0)
    with pytest.raises(TapeCopyError, match="option limit=2097152 of quad"):
        tape.save(tmp_path / "quad.adtape")
