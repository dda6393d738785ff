"""Gradients taken inside a recording answer as gradients at the top level:
of a container of parameters (a dict of layers, a list, a tuple) in its
structure, and shaped as the argument when the output has one element but
more than zero axes; a vector output is refused as at the top level. Each is
checked against finite differences in forward and reverse mode, Hessian-vector
products, and replays at a new point."""
import numpy as np
import pytest

import adsim
from adsim.testing import check_grads

RNG = np.random.default_rng(11)
X = RNG.standard_normal(4)


def data_misfit(params):
    """A two-parameter-group model's loss, written with a dict of parameters."""
    t = np.linspace(0.0, 1.0, 4)
    model = params["amplitude"] * np.sin(params["rates"][0] * t) + params["rates"][1]
    return 0.5 * np.sum((model - np.cos(t)) ** 2)


def gradient_norm(x):
    """A quantity of the loss's gradient (as in a sensitivity of a
    steepest-descent step): the gradient is taken inside the recording."""
    g = adsim.grad(data_misfit)({"amplitude": x[0], "rates": [x[1], x[2] * x[3]]})
    return g["amplitude"] ** 2 + np.sum(np.stack(g["rates"]) ** 2)


def one_step_of_descent(x):
    params = (x[:2], x[2:])
    g = adsim.grad(lambda p: np.sum(np.sin(p[0]) * p[1] ** 2))(params)
    return np.sum((params[0] - 0.1 * g[0]) ** 2) + np.sum(np.cos(params[1] - 0.1 * g[1]))


@pytest.mark.parametrize("f", [gradient_norm, one_step_of_descent])
def test_container_gradients_inside_a_recording(f):
    check_grads(f, X, order=2)


def test_structure_and_values_match_the_top_level():
    params = {"amplitude": 0.7, "rates": [1.3, -0.4]}
    top = adsim.grad(data_misfit)(params)

    def inner_amplitude_gradient(x):
        g = adsim.grad(data_misfit)({"amplitude": x[0], "rates": [x[1], x[2]]})
        assert set(g) == {"amplitude", "rates"} and len(g["rates"]) == 2
        return np.stack([g["amplitude"], g["rates"][0], g["rates"][1]])

    inner = adsim.record(inner_amplitude_gradient, np.array([0.7, 1.3, -0.4]))
    np.testing.assert_allclose(inner.forward(np.array([0.7, 1.3, -0.4])),
                               [top["amplitude"], *top["rates"]], rtol=1e-13)


def test_one_element_outputs_give_gradients_shaped_as_the_argument():
    def log_partition(a):                  # keepdims leaves shape (1, 1)
        m = np.max(a, axis=1, keepdims=True)
        return m + np.log(np.sum(np.exp(a - m), axis=1, keepdims=True))

    def softmax_energy(a):
        p = adsim.grad(log_partition)(a)   # the softmax, shaped as a
        assert np.shape(p) == np.shape(a)
        return np.sum(p ** 2 * np.arange(1.0, 6.0))

    a = RNG.standard_normal((1, 5))
    check_grads(softmax_energy, a, order=2)
    tape = adsim.record(softmax_energy, a)
    a2 = a + 0.01
    np.testing.assert_allclose(tape.gradient(a2), adsim.grad(softmax_energy)(a2), rtol=1e-12)


def test_a_vector_output_is_refused_inside_a_recording_too():
    with pytest.raises(ValueError, match="scalar output"):
        adsim.grad(lambda x: np.sum(adsim.grad(lambda y: y ** 2)(x)))(X)


def test_replay_at_a_new_point_matches_a_new_recording():
    tape = adsim.record(gradient_norm, X)
    x2 = X + 0.05
    np.testing.assert_allclose(tape.forward(x2), gradient_norm(x2), rtol=1e-13)
    np.testing.assert_allclose(tape.gradient(x2), adsim.grad(gradient_norm)(x2), rtol=1e-11)
