"""Scalars read from small 1-d arrays are shared until the array is written.

``p[k]`` of a 1-d active array is a NumPy scalar (immutable), so a second
read of the same element, with no write in between, returns the same one
and records no second gather. Every way of writing the array (item and
slice assignment, in-place operators, views, ``out=``) must make the next
read see the new contents: these tests replay the tapes at new points and
compare with NumPy and with differences.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adsim as ad
from adsim.testing import check_grads


def n_gathers(f, *xs):
    tape = ad.record(f, *xs)
    return [ad.ops.BY_CODE[int(c)].name for c in tape.op_codes()].count("GATHER")


def rhs(t, z, rates):
    x, y = z[0], z[1]
    return np.array([rates[0] * x - rates[1] * x * y, rates[3] * x * y - rates[2] * y])


def test_repeated_reads_record_one_gather_each():
    def stages(z, rates):
        k1 = rhs(0.0, z, rates)
        k2 = rhs(0.0, z + 0.5 * k1, rates)
        return k1 + k2
    z, rates = np.array([10.0, 5.0]), np.array([1.0, 0.1, 1.5, 0.075])
    # z[0], z[1] of z, of z + 0.5 k1, and rates[0..3] once
    assert n_gathers(stages, z, rates) == 2 + 2 + 4
    check_grads(lambda a: stages(*a), (z, rates))


def test_reads_follow_every_kind_of_write():
    def f(p0):
        p = p0.copy()
        a = p[0]
        p[0] = 3.0 * p[1]                 # item assignment
        b = p[0]
        p[1:] *= p[2]                     # in-place through a slice view
        c = p[1] + p[2]
        p += 1.0                          # in-place on the root
        d = p[0] * p[2]
        q = p[1:]
        e = q[0]
        p[1] = np.sin(a)                  # the view q is now stale
        g = q[0] + q[1]
        np.multiply(p, p, out=p)          # out=
        h = p[0] + p[1]
        return a * b + c * d + e * g + h * a
    x = np.array([0.7, -1.3, 0.4])

    tape = ad.record(f, x)
    for point in (x, np.array([1.1, 0.2, -0.9])):
        assert np.allclose(tape.forward(point), f(point), rtol=1e-14)
    check_grads(f, x)
    check_grads(f, np.array([1.1, 0.2, -0.9]), modes=("rev",), order=2)


def test_views_read_their_root_again():
    def f(p0):
        p = p0.copy()
        v = p[1:]
        a = v[0]
        p[1] = 2.0 * p[0]
        b = v[0]                          # the root was written: not a's
        return a * b
    x = np.array([1.5, 2.5, 3.5])
    g = ad.grad(f)(x)
    assert np.allclose(g, [2.0 * 2.5, 2.0 * 1.5, 0.0])


def test_scalars_are_immutable_like_numpys():
    def item(p):
        s = p[0]
        s[...] = 1.0
        return s

    def out(p):
        s = p[0]
        np.add(p[1], 1.0, out=s)
        return s

    def shape(p):
        s = p[0]
        s.shape = (1,)
        return s[0]
    x = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match="NumPy scalar"):
        ad.grad(item)(x)
    with pytest.raises(TypeError, match="NumPy scalar"):
        ad.grad(out)(x)
    with pytest.raises(AttributeError, match="NumPy scalar"):
        ad.grad(shape)(x)

    def rebinds(p):
        s = p[0]
        s += 1.0                          # a new scalar, as with NumPy's float64
        s *= p[1]
        return s + p[0]
    assert np.allclose(ad.grad(rebinds)(x), [x[1] + 1.0, x[0] + 1.0])


def test_large_arrays_do_not_keep_their_elements():
    def f(p):
        total = 0.0
        for i in range(p.size):
            total = total + p[i] * p[i]
        return total
    x = np.linspace(0.0, 1.0, 300)
    assert np.allclose(ad.grad(f)(x), 2.0 * x)
    tape = ad.record(f, x)
    assert tape.arena_elements < 2 * x.size + 64      # element slots were reused


def test_higher_order_transcription_sees_writes():
    def f(p0):
        p = p0.copy()
        a = p[0] * p[1]
        p[0] = p[1] ** 2
        return a * p[0] + p[0] ** 3
    x = np.array([0.3, 1.7])
    h = ad.hessian(f)(x)

    def numpy_grad(p):
        return ad.grad(f)(p)
    eps = 1e-6
    fd = np.array([(numpy_grad(x + eps * e) - numpy_grad(x - eps * e)) / (2 * eps)
                   for e in np.eye(2)])
    assert np.allclose(h, fd, rtol=1e-6, atol=1e-6)


_STEP = st.tuples(st.sampled_from(["read", "write", "slice", "iadd", "view"]),
                  st.integers(0, 3), st.integers(0, 3))


@settings(max_examples=60, deadline=None)
@given(st.lists(_STEP, min_size=1, max_size=12))
def test_random_reads_and_writes_match_numpy(program):
    def f(p0):
        p = p0.copy()
        acc = p[0] * 0.0
        views = [p[1:], p[::2]]
        for kind, i, j in program:
            if kind == "read":
                acc = acc + p[i] * np.cos(p[j])
            elif kind == "write":
                p[i] = np.sin(p[j]) + acc
            elif kind == "slice":
                p[i:] *= 0.5 + 0.1 * p[j]
            elif kind == "iadd":
                p += 0.25 * p[j]
            else:
                v = views[j % 2]
                acc = acc + v[i % v.size] * p[j]
        return acc + p[0]
    x = np.array([0.3, -0.8, 1.2, 0.5])
    tape = ad.record(f, x)
    point = np.array([-0.4, 0.9, 0.1, -1.1])
    assert np.allclose(tape.forward(point), f(point), rtol=1e-12, atol=1e-12)
    check_grads(f, x)
