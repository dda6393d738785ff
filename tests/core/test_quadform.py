"""Quadratic forms x^T C x of a constant matrix (QUADFORM, _ops/quadform.pxi):
made at finish from a product C @ x (or x @ C) read only by a dot with the
same x, so that a gradient reads C once. Each form is checked against
central differences in every mode and against the same recording left
unoptimised (two products); where the pattern does not hold exactly the
tape keeps its products."""
import io

import numpy as np
import pytest

import adsim as ad
from adsim import _program, tapefile
from adsim._opcodes import Opcode
from adsim.sparse.pattern import hessian_pattern, jacobian_pattern
from fdcheck import check_tape

RNG = np.random.default_rng(21)
N = RNG.standard_normal((6, 6))          # not symmetric
S = N + N.T                              # exactly symmetric
X = RNG.uniform(-1.0, 1.0, 6)


def codes(tape):
    return [int(c) for c in tape.op_codes()]


def unoptimised(f, *xs):
    previous = _program.set_optimise(False)
    try:
        return ad.record(f, *xs)
    finally:
        _program.set_optimise(previous)


FORMS = {
    "x @ (C @ x)": lambda C: lambda x: x @ (C @ x),
    "(C @ x) @ x": lambda C: lambda x: (C @ x) @ x,
    "np.dot(x, C @ x)": lambda C: lambda x: np.dot(x, np.dot(C, x)),
    "np.inner(C @ x, x)": lambda C: lambda x: np.inner(C @ x, x),
    "x.dot(np.dot(C, x))": lambda C: lambda x: x.dot(np.dot(C, x)),
    "x @ C @ x": lambda C: lambda x: x @ C @ x,
    "(x @ C) @ x, then nonlinear": lambda C: lambda x: np.sin((x @ C) @ x) * x,
}


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_is_one_op_in_every_mode(form, symmetric):
    f = FORMS[form](S if symmetric else N)
    tape = ad.record(f, X)
    assert codes(tape).count(int(Opcode.QUADFORM)) == 1
    assert int(Opcode.MATMUL) not in codes(tape), "the product is still read"
    check_tape(f, [X], order=2)


@pytest.mark.parametrize("symmetric", [False, True])
def test_agrees_with_the_two_products(symmetric):
    """Values, gradients, tangents and Hessian-vector products of the fused
    tape against the unoptimised one, at a new point; with a symmetric C the
    value is computed by the same kernels, bit for bit."""
    C = S if symmetric else N
    f = lambda x: np.exp(x @ (C @ x) / 10) * np.cos(x)  # noqa: E731
    fused, plain = ad.record(f, X), unoptimised(f, X)
    x, v, w = RNG.uniform(-1, 1, 6), RNG.standard_normal(6), RNG.standard_normal(6)
    if symmetric:
        assert np.array_equal(fused.forward(x), plain.forward(x))
    np.testing.assert_allclose(fused.forward(x), plain.forward(x), rtol=1e-14)
    np.testing.assert_allclose(fused.vjp(x, w), plain.vjp(x, w), rtol=1e-12)
    np.testing.assert_allclose(fused.jvp(x, v), plain.jvp(x, v), rtol=1e-12)
    g = lambda x: x @ (C @ x)  # noqa: E731
    fused, plain = ad.record(g, X), unoptimised(g, X)
    np.testing.assert_allclose(fused.gradient(x), (C + C.T) @ x, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(fused.hvp(x, v), (C + C.T) @ v, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(fused.hvp(x, v), plain.hvp(x, v), rtol=1e-13, atol=1e-14)


def test_product_read_elsewhere_keeps_the_products():
    """y = C @ x read by another op too: no QUADFORM, results bit for bit
    those of the unoptimised tape."""
    f = lambda x: x @ (y := N @ x) + np.sum(y ** 2)  # noqa: E731
    tape = ad.record(f, X)
    assert int(Opcode.QUADFORM) not in codes(tape)
    plain = unoptimised(f, X)
    x = RNG.uniform(-1, 1, 6)
    assert np.array_equal(tape.forward(x), plain.forward(x))
    assert np.array_equal(tape.gradient(x), plain.gradient(x))
    check_tape(f, [X], order=2)


def test_product_that_is_the_output_stays():
    def f(x):
        y = N @ x
        _ = x @ y
        return y
    assert int(Opcode.QUADFORM) not in codes(ad.record(lambda x: (N @ x) + 0 * (x @ (N @ x)), X))
    tape = ad.record(f, X)
    np.testing.assert_allclose(tape.forward(X), N @ X)


def test_not_made_without_the_pattern():
    """A matrix that is an input, a dot with another vector, a matrix with an
    infinite entry, a 1 x 1 matrix: the products stay, the results are right."""
    cases = [
        (lambda x, C: x @ (C @ x), (X, N)),                       # C not constant
        (lambda x: (2.0 * x) @ (N @ x), (X,)),                    # another x
        (lambda x: x[::-1] @ (N @ x), (X,)),
        (lambda x: x[:1] @ (np.ones((1, 1)) @ x[:1]), (X,)),
    ]
    for f, xs in cases:
        tape = ad.record(f, *xs)
        assert int(Opcode.QUADFORM) not in codes(tape)
        check_tape(f, list(xs), order=2)
    Cinf = N.copy()
    Cinf[2, 3] = np.inf
    tape = ad.record(lambda x: x @ (Cinf @ x), X)
    assert int(Opcode.QUADFORM) not in codes(tape)


def test_x_used_elsewhere_and_x_written_between():
    f = lambda x: (x @ (S @ x)) * np.sum(np.sin(x)) + x @ x  # noqa: E731
    assert int(Opcode.QUADFORM) in codes(ad.record(f, X))
    check_tape(f, [X], order=2)

    def g(x):
        y = N @ x
        x = x * 2.0               # a new x: the dot reads another value
        return x @ y
    assert int(Opcode.QUADFORM) not in codes(ad.record(g, X))
    check_tape(g, [X], order=2)

    def h(x):
        x = x * 1.0
        y = N @ x
        x[0] = x[1] ** 2          # written in place: another value in the same slot
        return x @ y
    assert int(Opcode.QUADFORM) not in codes(ad.record(h, X))
    check_tape(h, [X], order=2)


def test_two_forms_of_one_matrix_and_one_x():
    f = lambda x: np.tanh(x @ (N @ x)) + (x @ N) @ x * x  # noqa: E731
    tape = ad.record(f, X)
    assert codes(tape).count(int(Opcode.QUADFORM)) == 2
    check_tape(f, [X], order=2)


def test_at_special_points():
    """A zero x (zero gradient), and an infinite x against the two products."""
    f = lambda x: np.sqrt(x @ (S @ x) + 1.0)  # noqa: E731
    tape, plain = ad.record(f, X), unoptimised(f, X)
    z = np.zeros(6)
    assert np.array_equal(tape.gradient(z), np.zeros(6))
    x = X.copy()
    x[1] = np.inf
    with np.errstate(all="ignore"):
        np.testing.assert_equal(np.isnan(tape.forward(x)), np.isnan(plain.forward(x)))


def test_tape_file_bitwise():
    f = lambda x: np.log1p((x @ N @ x) ** 2) + x @ (S @ x)  # noqa: E731
    tape = ad.record(f, X)
    buf = io.BytesIO()
    tape.save(buf)
    loaded = tapefile.loads(buf.getvalue())
    assert codes(loaded) == codes(tape)
    x, v = RNG.uniform(-1, 1, 6), RNG.standard_normal(6)
    assert np.array_equal(loaded.forward(x), tape.forward(x))
    assert np.array_equal(loaded.gradient(x), tape.gradient(x))
    assert np.array_equal(loaded.hvp(x, v), tape.hvp(x, v))


def _program_with(tape, edit):
    """The buffers of ``tape`` with its first QUADFORM's operands edited,
    loaded into a new tape (ValueError when a check refuses them)."""
    b = _program.program_buffers(tape)
    k = codes(tape).index(int(Opcode.QUADFORM))
    opnd = b["opnd"].copy()
    edit(opnd, int(b["start"][k]))
    new = ad.Tape()
    _program.load_program(new, b["code"], b["start"], b["flags"], opnd, b["consts"],
                          b["const_off"], b["const_size"], b["ints"], b["branches"],
                          b["slot_size"], b["input_slots"], b["input_shapes"],
                          b["input_varied"], b["out_slot"], b["output_shape"], [],
                          b["chunked"])
    return new


def test_malformed_files_are_refused():
    tape = ad.record(lambda x: np.sin(x @ (N @ x)), X)

    def claim_symmetric(opnd, s):
        opnd[s + 5] |= 2

    with pytest.raises(ValueError, match="symmetric"):
        _program_with(tape, claim_symmetric)

    def gradient_in_the_input(opnd, s):
        opnd[s + 3] = opnd[s + 2]

    with pytest.raises(ValueError):
        _program_with(tape, gradient_in_the_input)
    assert _program_with(tape, lambda opnd, s: None).gradient(X) is not None


def test_gradient_slot_read_by_another_op_is_refused():
    tape = ad.record(lambda x: np.sin(x @ (N @ x)), X)
    b = _program.program_buffers(tape)
    k = codes(tape).index(int(Opcode.QUADFORM))
    g = int(b["opnd"][b["start"][k] + 3])
    later = k + 1                     # the sin reads the form's result: make it read g
    opnd = b["opnd"].copy()
    opnd[b["start"][later] + 1] = g
    slot_size = b["slot_size"].copy()
    new = ad.Tape()
    with pytest.raises(ValueError):
        _program.load_program(new, b["code"], b["start"], b["flags"], opnd, b["consts"],
                              b["const_off"], b["const_size"], b["ints"], b["branches"],
                              slot_size, b["input_slots"], b["input_shapes"],
                              b["input_varied"], b["out_slot"], b["output_shape"], [],
                              b["chunked"])


def test_batched_replay():
    """One QUADFORM op per form for all members (not a loop over them), equal
    to separate replays to rounding in every sweep."""
    f = lambda x: np.exp(x @ (N @ x) / 10) + x @ S @ x  # noqa: E731
    tape = ad.record(f, X)
    assert tape.batched.is_native(5), tape.batched.why_not_native(5)
    assert codes(tape.batched.program(5)).count(int(Opcode.QUADFORM)) == 2
    Xs, Vs = RNG.uniform(-1, 1, (5, 6)), RNG.standard_normal((5, 6))
    close = dict(rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(tape.batched.forward(Xs), [tape.forward(x) for x in Xs], **close)
    np.testing.assert_allclose(tape.batched.gradient(Xs), [tape.gradient(x) for x in Xs],
                               **close)
    np.testing.assert_allclose(tape.batched.jvp(Xs, Vs),
                               np.transpose([tape.jvp(x, v) for x, v in zip(Xs, Vs)]), **close)
    np.testing.assert_allclose(tape.batched.hvp(Xs, Vs),
                               [tape.hvp(x, v) for x, v in zip(Xs, Vs)], **close)


def test_sparsity_patterns():
    """A tridiagonal C: the Hessian pattern is C + C^T's, the Jacobian of the
    form reads the columns some term reads."""
    C = np.diag(np.arange(1.0, 7.0)) + np.diag(np.ones(5), 1)
    C[5, 5] = 0.0
    C[4, 5] = 0.0                     # x[5] appears in no term
    tape = ad.record(lambda x: x @ (C @ x), X)
    assert int(Opcode.QUADFORM) in codes(tape)
    H = hessian_pattern(tape).toarray()
    np.testing.assert_array_equal(H, (C + C.T) != 0)
    J = jacobian_pattern(tape).toarray()
    np.testing.assert_array_equal(J, [[True] * 5 + [False]])


def test_third_order_through_a_form():
    f = lambda x: np.tanh(x @ (N @ x) / 4) * np.sum(x)  # noqa: E731
    w, v = RNG.standard_normal(6), RNG.standard_normal(6)
    grad_w = lambda y: ad.grad(f)(y) @ w  # noqa: E731
    by_hvp = ad.hvp(grad_w, X, v)
    h = 1e-5
    g2 = ad.grad(grad_w)
    reference = (g2(X + h * v) - g2(X - h * v)) / (2 * h)
    np.testing.assert_allclose(by_hvp, reference, rtol=1e-6, atol=1e-6)
    by_grads = ad.grad(lambda y: ad.grad(grad_w)(y) @ v)(X)
    np.testing.assert_allclose(by_grads, by_hvp, rtol=1e-10, atol=1e-12)


def test_gradient_slot_is_no_repeat_of_the_value_before():
    """A batched program makes a QUADFORM's gradient slot with a FILL: a later
    FILL of the same constant is not the value the QUADFORM wrote over, so
    the optimisation must not read the gradient slot for it."""
    t = ad.Tape()
    x0 = RNG.uniform(-1, 1, 3)
    C = RNG.standard_normal((3, 3))
    x = t.new_input(x0, True)
    g = t.record_op(int(Opcode.FILL), 3, [t.const_ref(np.zeros(1))])
    q = t.record_op(int(Opcode.QUADFORM), 1, [t.const_ref(C), x, g, 3, 0])
    z = t.record_op(int(Opcode.FILL), 3, [t.const_ref(np.zeros(1))])
    total = t.record_op(int(Opcode.SUM), 1, [t.record_op(int(Opcode.ADD), 3, [z, x]), 1, 3, 1])
    t.finish(t.record_op(int(Opcode.MUL), 1, [total, q]), ())
    x1 = RNG.uniform(-1, 1, 3)
    np.testing.assert_allclose(t.forward(x1), np.sum(x1) * (x1 @ C @ x1), rtol=1e-14)
    np.testing.assert_allclose(t.gradient(x1), (x1 @ C @ x1) + np.sum(x1) * ((C + C.T) @ x1),
                               rtol=1e-13)

