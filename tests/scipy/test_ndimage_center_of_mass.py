"""scipy.ndimage.center_of_mass of an active image (the centroid of a blob
whose position and width are parameters): SciPy's values for every form of
labels and index, derivatives against differences and across modes; it
was refused as turning its active argument into a plain array."""
import numpy as np
import pytest
from scipy import ndimage

import adsim
from fdcheck import assert_close

YY, XX = np.mgrid[0:12, 0:12].astype(float)
LABELS = (XX > 3).astype(int) + (YY > 6)


def blob(p):
    return np.exp(-((XX - p[0]) ** 2 + (YY - 5.0) ** 2) / (2 * p[1] ** 2))


FORMS = {
    "whole image": lambda img: ndimage.center_of_mass(img),
    "labels > 0": lambda img: ndimage.center_of_mass(img, LABELS),
    "one index": lambda img: ndimage.center_of_mass(img, LABELS, 2),
    "index list": lambda img: ndimage.center_of_mass(img, labels=LABELS, index=[1, 2]),
}


def _numbers(out):
    return np.array(out, dtype=float).ravel() if not isinstance(out, list) else \
        np.array([[float(adsim.value(v)) for v in t] for t in out]).ravel()


@pytest.mark.parametrize("form", sorted(FORMS))
def test_values_and_derivatives(form):
    centre = FORMS[form]
    x = np.array([5.3, 2.0])
    w = np.array([0.7, -1.1, 0.4, 0.9])

    def f(p):
        out = centre(blob(p))
        flat = [c for t in out for c in t] if isinstance(out, list) else list(out)
        return sum(wi * c for wi, c in zip(w, flat)) + flat[0] ** 2

    plain = centre(blob(x))
    recorded = adsim.record(lambda p: np.stack([c for t in centre(blob(p)) for c in t])
                            if isinstance(plain, list) else np.stack(centre(blob(p))), x)
    assert_close(recorded.forward(x), np.ravel(np.array(plain, dtype=float)), rtol=1e-14,
                 atol=1e-14, what="value")
    h = 1e-5
    g = adsim.grad(f)(x)
    want = np.array([(f(x + e) - f(x - e)) / (2 * h) for e in np.eye(2) * h])
    assert_close(g, want, rtol=1e-7, atol=1e-10, what="gradient")
    v = np.array([0.3, -0.8])
    _, jv = adsim.jvp(f, (x,), (v,))
    assert_close(jv, g @ v, rtol=1e-12, atol=1e-15, what="jvp vs grad")
    want = (adsim.grad(f)(x + h * v) - adsim.grad(f)(x - h * v)) / (2 * h)
    assert_close(adsim.hvp(f, x, v), want, rtol=1e-6, atol=1e-9, what="hvp")


def test_active_labels_are_refused_by_name():
    with pytest.raises(adsim.UnsupportedOperation, match="center_of_mass.*labels or index"):
        adsim.grad(lambda p: ndimage.center_of_mass(blob(p), labels=p[0] * LABELS)[0])(
            np.array([5.3, 2.0]))
