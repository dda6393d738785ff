"""SciPy's filters that are linear in their signal or image (savgol_filter,
filtfilt, sosfilt, detrend, resample, the scipy.ndimage filters and
resampling), differentiated as linear maps whose matrices are probed from
SciPy's function (adsim/_scipy/linear_maps.py): every sweep against
central differences, second order through a nonlinear loss, a replay at a
new point, the boundary modes whose responses fold or wrap, a settings
change that must not reuse a kept matrix, and the refusals."""
import numpy as np
import pytest
import scipy.ndimage as nd
import scipy.signal as ss

import adsim
import adsim.scipy.ndimage
from adsim.errors import UnsupportedOperation
from adsim import tapefile
from adsim._scipy.plain_settings import packed, unpacked
from fdcheck import assert_close, central, check_tape

RNG = np.random.default_rng(7)
SIGNAL = RNG.standard_normal(23)
IMAGE = RNG.standard_normal((9, 11))
B, A = ss.butter(3, 0.2)
SOS = ss.butter(4, 0.3, output="sos")

SIGNAL_CASES = {
    "savgol interp": lambda x: ss.savgol_filter(x, 7, 2),
    "savgol derivative nearest": lambda x: ss.savgol_filter(x, 5, 3, deriv=1, delta=0.1,
                                                            mode="nearest"),
    "savgol constant cval (affine)": lambda x: ss.savgol_filter(x, 5, 2, mode="constant",
                                                                cval=0.7),
    "savgol wrap": lambda x: ss.savgol_filter(x, 5, 2, mode="wrap"),
    "filtfilt": lambda x: ss.filtfilt(B, A, x),
    "sosfilt": lambda x: ss.sosfilt(SOS, x),
    "sosfiltfilt": lambda x: ss.sosfiltfilt(SOS, x),
    "detrend": lambda x: ss.detrend(x),
    "resample": lambda x: ss.resample(x, 17),
}
IMAGE_CASES = {
    "gaussian_filter reflect": lambda u: nd.gaussian_filter(u, 1.2),
    "gaussian_filter wrap": lambda u: nd.gaussian_filter(u, 0.8, mode="wrap"),
    "uniform_filter constant": lambda u: nd.uniform_filter(u, 3, mode="constant", cval=0.5),
    "convolve plain weights": lambda u: nd.convolve(u, np.array([[0, 1, 0], [1, -4, 1],
                                                                 [0, 1, 0.0]])),
    "gaussian_filter1d order 1": lambda u: nd.gaussian_filter1d(u, 1.5, axis=0, order=1),
    "laplace": lambda u: nd.laplace(u),
    "sobel": lambda u: nd.sobel(u, axis=1),
    "zoom": lambda u: nd.zoom(u, 1.5, order=3),
    "shift": lambda u: nd.shift(u, (0.3, -1.2), order=1),
    "map_coordinates": lambda u: nd.map_coordinates(u, [[1.5, 3.2, 7.9], [0.5, 6.1, 9.4]],
                                                    order=3),
}


def _loss(filtered):
    return lambda x: np.sum(np.tanh(filtered(x)) ** 2)


@pytest.mark.parametrize("name", sorted(SIGNAL_CASES))
def test_signal_filters_every_sweep(name):
    check_tape(SIGNAL_CASES[name], [SIGNAL], order=1)
    check_tape(_loss(SIGNAL_CASES[name]), [SIGNAL])


@pytest.mark.parametrize("name", sorted(IMAGE_CASES))
def test_image_filters_every_sweep(name):
    check_tape(IMAGE_CASES[name], [IMAGE], order=1)
    check_tape(_loss(IMAGE_CASES[name]), [IMAGE])


def test_a_smoothed_loss_replayed_at_a_new_point():
    def loss(p):
        y = np.exp(-p[0] * np.linspace(0, 3, 40)) + p[1] * np.sin(np.arange(40.0))
        return np.sum(ss.savgol_filter(y, 9, 3) ** 2) + np.sum(nd.gaussian_filter1d(y, 2.0))
    tape = adsim.record(loss, np.array([0.8, 0.3]))
    p2 = np.array([1.1, 0.2])
    want = [central(loss, [p2], [e]) for e in np.eye(2)]
    assert_close(tape.gradient(p2), want, what="replayed gradient")
    assert_close(tape.forward(p2), loss(p2), rtol=1e-13, what="replayed value")


def test_other_settings_are_other_matrices():
    # the matrices are kept per settings: a second window must not reuse the first
    x = SIGNAL
    for window in (5, 9, 5):
        f = lambda v, w=window: np.sum(ss.savgol_filter(v, w, 2) * np.arange(23.0))
        assert_close(adsim.grad(f)(x), [central(f, [x], [e]) for e in np.eye(23)],
                     what=f"window {window}")


def test_explicit_namespace_and_plain_calls():
    assert adsim.scipy.ndimage.gaussian_filter(IMAGE, 1.0).shape == IMAGE.shape
    f = lambda u: np.sum(adsim.scipy.ndimage.gaussian_filter(u, 1.0) ** 2)
    with adsim.interposition(False):
        g = adsim.grad(f)(IMAGE)
    assert_close(g, adsim.grad(lambda u: np.sum(nd.gaussian_filter(u, 1.0) ** 2))(IMAGE),
                 rtol=1e-14, what="explicit")


def test_active_weights_and_output_arrays_are_refused():
    with pytest.raises(UnsupportedOperation, match="in its argument `input` only"):
        adsim.grad(lambda w: np.sum(nd.convolve(IMAGE, w.reshape(3, 3))))(np.ones(9))
    out = np.empty_like(IMAGE)
    with pytest.raises(UnsupportedOperation, match="output=array"):
        adsim.grad(lambda u: np.sum(nd.gaussian_filter(u, 1.0, output=out)))(IMAGE)


def test_a_map_not_linear_in_its_input_is_refused():
    # median filtering is no linear map: probing it must not pass for one
    from adsim._scipy.linear_maps import linear_in
    rule = linear_in(nd.median_filter, "input", "scipy.ndimage.median_filter")
    with pytest.raises(UnsupportedOperation, match="not linear"):
        adsim.grad(lambda x: np.sum(rule(x, size=3) ** 2))(SIGNAL[:12])


def test_region_means_of_an_active_image_and_cumulative_simpson():
    labels = np.where(IMAGE > 0, 1, 2)
    labels[0] = 0
    check_tape(lambda u: nd.mean(u, labels, [1, 2]) ** 2, [IMAGE])
    import scipy.integrate
    check_tape(lambda y: np.tanh(scipy.integrate.cumulative_simpson(y, x=np.cumsum(
        np.linspace(0.5, 1.5, 23)), initial=0.0)), [SIGNAL])


# ---- tape files: the probed matrix saved beside SciPy's settings -------------------

FILE_CASES = {**SIGNAL_CASES, **IMAGE_CASES,
              "lfilter": lambda x: ss.lfilter(B, A, x),
              "decimate": lambda x: ss.decimate(x, 2, ftype="fir"),
              "resample_poly": lambda x: ss.resample_poly(x, 3, 2),
              "upfirdn": lambda x: ss.upfirdn(np.array([0.25, 0.5, 0.25]), x, 2),
              "gaussian_filter output type": lambda u: nd.gaussian_filter(
                  u, 1.0, output=np.float64, cval=0.25, mode="constant"),
              "uniform_filter1d integer size": lambda u: nd.uniform_filter1d(
                  u, np.int64(3), axis=1, mode="nearest"),
              "correlate1d float32 weights": lambda u: nd.correlate1d(
                  u, np.array([1, -2, 1], np.float32), axis=0),
              "sum_labels": lambda u: nd.sum_labels(u, np.arange(99).reshape(9, 11) % 3,
                                                    index=[0, 2]),
              "cumulative_simpson": lambda y: __import__("scipy.integrate").integrate
              .cumulative_simpson(y, dx=0.1, initial=0.0)}


_IMAGE_FILE_CASES = {*IMAGE_CASES, "gaussian_filter output type",
                     "uniform_filter1d integer size", "correlate1d float32 weights",
                     "sum_labels"}


def _file_point(name):
    return IMAGE if name in _IMAGE_FILE_CASES else SIGNAL


@pytest.mark.parametrize("name", sorted(FILE_CASES))
def test_a_tape_of_a_filter_saves_and_loads_bitwise(name, tmp_path):
    from tapefile_replays import assert_same_replays, copies
    f = _loss(FILE_CASES[name])
    x = _file_point(name)
    tape = adsim.record(f, x)
    copied = copies(tape, tmp_path)
    rng = np.random.default_rng(3)
    assert_same_replays(tape, copied, [(x,), (x + 0.1 * rng.standard_normal(x.shape),)])
    loaded = copied[0]
    v = rng.standard_normal(x.shape)
    rtol = 1e-3 if "float32" in name else 1e-6          # SciPy's float32 results
    assert_close(loaded.gradient(x).ravel() @ v.ravel(), central(f, [x], [v]), rtol=rtol,
                 what="loaded gradient . v")


def _filter_file():
    return tapefile.dumps(adsim.record(_loss(SIGNAL_CASES["sosfilt"]), SIGNAL))


def _altered(change):
    import json
    from tapefile_bytes import replace_section, section
    data = _filter_file()
    _, count, at = section(data, "CALL")
    calls = json.loads(bytes(data[at:at + count]))
    state = [c["state"] for c in calls if c["kind"] == "adsim.builtin_primitive"][0]
    change(state["parameters"], state)
    return replace_section(data, "CALL", json.dumps(calls).encode())


def _parameter_replaced(key, value):
    return lambda parameters, state: parameters.__setitem__(key, value)


def _scaled_matrix(parameters, state):
    data = unpacked(parameters["data"], "<f8", (parameters["nnz"],), True)
    parameters["data"] = packed(data * 1.01, True)


def _other_window(parameters, state):
    from adsim._scipy.plain_settings import encoded
    parameters["settings"] = encoded({"sos": ss.butter(4, 0.2, output="sos")})


@pytest.mark.parametrize("change, match", [
    (_parameter_replaced("indptr", "AAAA"), "damaged"),
    (_parameter_replaced("indices", packed(np.zeros(10 ** 6, "<i4"), True)), "not more"),
    (_parameter_replaced("nnz", 7), "of shape"),
    (_parameter_replaced("settings", {"dict": [["sos", {"pickle": "x"}]]}), "not a mark"),
    (_parameter_replaced("shape", [22]), "."),
    (lambda p, s: s.__setitem__("version", 99), "version 99"),
    (lambda p, s: s.__setitem__("family", "scipy.signal.nothing"), "nothing"),
])
def test_an_altered_filter_file_is_refused_on_loading(change, match):
    with pytest.raises(adsim.errors.TapeFileError, match=match):
        tapefile.loads(_altered(change))


@pytest.mark.parametrize("change", [_scaled_matrix, _other_window])
def test_a_matrix_that_is_not_scipys_map_is_refused_before_its_first_value(change):
    loaded = tapefile.loads(_altered(change))            # loading calls no SciPy code
    with pytest.raises(adsim.errors.TapeFileError, match="not the map SciPy computes"):
        loaded.forward(SIGNAL)
    with pytest.raises(adsim.errors.TapeFileError, match="not the map SciPy computes"):
        loaded.gradient(SIGNAL)


def test_settings_a_file_cannot_keep_are_refused_when_saving_and_say_so(tmp_path):
    class Window(float):           # a float subclass: no plain setting
        pass
    tape = adsim.record(lambda x: np.sum(ss.savgol_filter(x, 5, 2, delta=Window(0.5)) ** 2),
                        SIGNAL)
    with pytest.raises(adsim.errors.TapeCopyError, match="scipy.signal.savgol_filter.*Window"):
        tape.save(tmp_path / "t.adsim")


def test_a_compressed_matrix_counts_against_the_memory_bound_of_a_load():
    # 2**22 zero entries compress to some kilobytes: the load counts them
    # inflated (12 bytes each) before inflating them
    nnz = 2 ** 22
    data = _altered(lambda parameters, state: parameters.update(
        nnz=nnz, data=packed(np.zeros(nnz), True), indices=packed(np.zeros(nnz, "<i4"), True)))
    assert 12 * nnz > 100 * len(data)
    with pytest.raises(adsim.errors.TapeFileError, match=rf"need {12 * nnz + 4 * 24} bytes"):
        tapefile.loads(data, max_bytes=2 ** 25)
