"""scipy.ndimage.map_coordinates at active coordinates (a warp by a
displacement field, as image registration writes it): every sweep against
central differences and SciPy's values, for every order and boundary mode
adsim records, replays that leave their cells, and clear refusals."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import adsim as ad
from fdcheck import assert_close, check_tape

rng = np.random.default_rng(11)
IMAGE = rng.standard_normal((9, 11))
INSIDE = np.array([[2.3, 4.7, 5.1], [3.2, 6.6, 7.4]])
NEAR_EDGES = np.array([[0.3, 8.6, -0.4, 4.2], [0.2, 10.4, 5.3, 11.3]])
MAPPED = ["nearest", "reflect", "grid-mirror", "mirror", "grid-wrap"]


@pytest.mark.parametrize("order", [1, 2, 3, 5])
@pytest.mark.parametrize("mode", MAPPED + ["constant", "grid-constant", "wrap"])
def test_every_sweep_inside(order, mode):
    points = INSIDE if order < 5 else INSIDE * [[1.0], [0.8]]
    check_tape(lambda c: ndi.map_coordinates(IMAGE, c, order=order, mode=mode), [points],
               rtol=1e-6, atol=1e-8, value_rtol=1e-10)


@pytest.mark.parametrize("order", [1, 3])
@pytest.mark.parametrize("mode", MAPPED)
def test_every_sweep_near_and_past_the_edges(order, mode):
    check_tape(lambda c: ndi.map_coordinates(IMAGE, c, order=order, mode=mode), [NEAR_EDGES],
               rtol=1e-6, atol=1e-8, value_rtol=1e-10)


def test_grid_constant_pads_as_scipy_does():
    check_tape(lambda c: ndi.map_coordinates(IMAGE, c, order=3, mode="grid-constant", cval=0.7),
               [NEAR_EDGES], rtol=1e-6, atol=1e-8, value_rtol=1e-10)


def test_an_active_image_and_a_displacement_field():
    """A registration loss: the warped moving image against a fixed one, in
    both the displacement field and the image; 3-d points, no prefilter."""
    fixed = ndi.gaussian_filter(rng.standard_normal((8, 8)), 1.0)
    grid = np.mgrid[1:7, 1:7].astype(float)

    def loss(moving, displacement):
        warped = ndi.map_coordinates(moving, grid + displacement, order=3, mode="nearest")
        return np.sum((warped - fixed[1:7, 1:7]) ** 2)
    moving = np.roll(fixed, 1, axis=0)
    check_tape(loss, [moving, 0.2 * rng.standard_normal((2, 6, 6))], rtol=1e-6, atol=1e-8,
               value_rtol=1e-10)
    volume = rng.standard_normal((5, 6, 7))
    # (order 2: knots at half-integers, where differences would straddle one)
    check_tape(lambda c: ndi.map_coordinates(volume, c, order=2, prefilter=False),
               [np.array([[1.2, 2.6], [2.4, 3.1], [3.3, 4.4]])], rtol=1e-6, atol=1e-8,
               value_rtol=1e-10)


def test_a_replay_whose_points_leave_their_cells_raises():
    tape = ad.record(lambda c: np.sum(ndi.map_coordinates(IMAGE, c, order=3) ** 2), INSIDE)
    moved = INSIDE + 0.05
    want = ad.grad(lambda c: np.sum(ndi.map_coordinates(IMAGE, c, order=3) ** 2))(moved)
    assert_close(tape.gradient(moved), want, rtol=1e-12)
    assert_close(tape.forward(moved), np.sum(ndi.map_coordinates(IMAGE, moved, order=3) ** 2),
                 rtol=1e-12)
    with pytest.raises(ad.BranchChanged):
        tape.gradient(INSIDE + 0.5)


@pytest.mark.parametrize("kwargs, words", [
    (dict(order=0), "order=0"),
    (dict(order=3, mode="constant"), "leaves the array"),
    (dict(order=1, mode="wrap"), "leaves the array"),
    (dict(order=1, output=np.zeros(4)), "output"),
])
def test_clear_refusals(kwargs, words):
    with pytest.raises(ad.UnsupportedOperation, match=words):
        ad.grad(lambda c: np.sum(ndi.map_coordinates(IMAGE, c, **kwargs)))(NEAR_EDGES)


def test_plain_coordinates_keep_the_linear_map_in_the_image():
    g = ad.grad(lambda m: np.sum(ndi.map_coordinates(m, INSIDE, order=3) ** 2))(IMAGE)
    h = 1e-6
    e = np.zeros_like(IMAGE)
    e[3, 5] = h
    f = lambda m: np.sum(ndi.map_coordinates(m, INSIDE, order=3) ** 2)
    assert_close(g[3, 5], (f(IMAGE + e) - f(IMAGE - e)) / (2 * h), rtol=1e-6)
