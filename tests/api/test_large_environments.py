"""Functions whose environment is large keep their cached tapes, and never
replay a stale one.

A fitted model object, its training data, a long list or dict of
parameters: the tape cache checks them at every call (arrays by a content
digest, long runs of numbers at C speed) instead of recording again. Each
case changes something between calls -- in place, through a view, by
rebinding -- and compares the result with a fresh recording (a
``cache=False`` twin); unchanged environments must reuse one tape.
"""
import numpy as np
import pytest

import adsim
from adsim._tapecache import purity
from adsim._tapecache._digest import BLOCK_WORDS, KERNELS, KEYS, P61, digest
from adsim._tapecache.frozen_array import FrozenArray
from adsim.testing import check_grads


def fresh_equal(f, x):
    """``adsim.grad(f)(x)`` (cached, inline) equals a fresh recording."""
    got, want = adsim.grad(f)(x), adsim.grad(f, cache=False)(x)
    assert np.array_equal(got, want), f"stale tape: {got} != {want}"
    return got


def recordings(f):
    return adsim.api.tapes_of(f).recordings


# ---------------------------------------------------------------- the digest

def reference_digest(a, keys):
    """The digest of _digest.pyx's docstring, in Python integers."""
    nh_key, k0, k1 = keys
    kw = [int(k) for k in nh_key]
    data = np.ascontiguousarray(a).tobytes()
    n = len(data)
    data += b"\0" * (-n % (8 * BLOCK_WORDS))
    words = np.frombuffer(data, "=u8").tolist()
    limbs = []
    for b in range(0, len(words), BLOCK_WORDS):
        for t in range(4):
            lane = sum((((w + kw[i + t]) & 0xFFFFFFFF)
                        * (((w >> 32) + (kw[i + t] >> 32)) & 0xFFFFFFFF))
                       for i, w in enumerate(words[b:b + BLOCK_WORDS])) % 2 ** 64
            limbs += [lane & 0xFFFFFFFF, lane >> 32]
    limbs += [n & 0xFFFFFFFF, n >> 32]
    out = []
    for k in (k0, k1):
        h = 0
        for c in limbs:
            h = (h * k + c) % P61
        out.append(h)
    return (out[0] << 64) | out[1]


@pytest.mark.parametrize("n_bytes", [0, 1, 7, 8, 33, 2047, 2048, 2049, 4100])
def test_digest_of_every_kernel_is_the_documented_hash(n_bytes):
    data = np.random.default_rng(n_bytes).integers(0, 256, n_bytes).astype(np.uint8)
    largest = (np.full(BLOCK_WORDS + 3, 2 ** 64 - 1, dtype=np.uint64), P61 - 1, P61 - 2)
    for keys in (KEYS, largest):
        want = reference_digest(data, keys)
        assert [digest(data, keys, kernel) for kernel in KERNELS] == [want] * len(KERNELS)


def test_digest_reads_strided_arrays_in_c_order():
    M = np.random.default_rng(1).normal(size=(37, 23))
    views = [M.T, M[:, ::3], M[::-2, 1:], np.broadcast_to(M[0], (5, 23)), M[5, 3:4].reshape(()),
             M.astype(np.float32)[:, ::2], (M + 1j * M)[::4]]
    for v in views:
        assert digest(v) == digest(np.ascontiguousarray(v)) == reference_digest(v, KEYS)


def test_digest_sees_one_flipped_bit_and_the_sign_of_zero():
    a = np.zeros(100_000)
    before = digest(a)
    a[77_777] = -0.0
    assert digest(a) != before
    b = np.zeros(100_000)
    b.view(np.uint64)[12_345] ^= 1 << 17
    assert len({before, digest(a), digest(b)}) == 3
    with pytest.raises(TypeError, match="Python objects"):
        digest(np.array([1.0, None]))


# ------------------------------------------------------- large arrays in closures

def test_a_closure_over_a_large_matrix_reuses_its_tape_and_sees_changes():
    """The Helmholtz benchmark's case: a quadratic form over a large matrix."""
    n = 1000
    A = np.eye(n)
    A[0, 1] = A[1, 0] = 0.5
    x = np.linspace(0.1, 1.0, n)

    def energy(z):
        return 0.5 * z @ (A @ z)
    assert np.allclose(fresh_equal(energy, x), A @ x)
    fresh_equal(energy, x + 1.0)
    assert recordings(energy) == 1
    A[n - 1, n - 2] = 3.0                     # one element, in place
    assert np.allclose(fresh_equal(energy, x), 0.5 * (A + A.T) @ x)
    A.T[5, 6] = -2.0                          # through a transposed view: A[6, 5]
    assert np.allclose(fresh_equal(energy, x), 0.5 * (A + A.T) @ x)
    assert recordings(energy) == 3
    fresh_equal(energy, x)
    assert recordings(energy) == 3


def test_more_array_data_than_the_old_64_mb_limit_is_checked_not_copied():
    table = np.zeros((3000, 3000))                # 72 MB
    x = np.linspace(0.0, 1.0, 3000)

    def f(z):
        return np.sum(np.sin(table @ z)) + np.sum(z ** 2)
    fresh_equal(f, x)
    fresh_equal(f, x)
    assert recordings(f) == 1, adsim.api.tapes_of(f).reuse_blocked_by
    tokens = adsim.api.tapes_of(f)._last.tokens
    assert not any(isinstance(t, np.ndarray) for t in tokens)       # no copy kept: a digest
    assert [t.raw for t in tokens if type(t) is FrozenArray and t.shape == table.shape] \
        == [None]
    table[1500, 7] = 0.5
    assert np.allclose(fresh_equal(f, x), table.T @ np.cos(table @ x) + 2 * x)
    assert recordings(f) == 2


def test_writes_through_views_and_rebinding_of_a_large_global():
    global TABLE
    TABLE = np.linspace(0.0, 1.0, 50_000)
    block = TABLE.reshape(500, 100)[::5, 2:]             # a strided view of it

    def weighted(z):
        return np.sum(TABLE[:3] * z ** 2)
    try:
        x = np.array([1.0, 2.0, 3.0])
        fresh_equal(weighted, x)
        block[0, 0] = 7.0                                 # TABLE[2]
        assert np.allclose(fresh_equal(weighted, x), 2 * TABLE[:3] * x)
        TABLE = TABLE * 2.0                               # rebound
        assert np.allclose(fresh_equal(weighted, x), 2 * TABLE[:3] * x)
        assert recordings(weighted) == 3
    finally:
        del TABLE


def test_non_contiguous_arrays_in_the_environment():
    base = np.random.default_rng(2).normal(size=(400, 300))
    columns = base[:, ::2]                       # a view: strided rows
    fortran = np.asfortranarray(base[:100])      # column-major, 240 kB
    x = np.linspace(-1.0, 1.0, 150)

    def f(z):
        return np.sum(np.sin(columns[:3] @ z)) + np.sum(fortran[:2, :150] @ z ** 2)
    fresh_equal(f, x)
    base[7, 1] = 5.0                             # a column the view does not hold
    fresh_equal(f, x)
    assert recordings(f) == 1
    base[1, 4] = 5.0                             # seen through the view: columns[1, 2]
    fresh_equal(f, x)
    fortran[1, 3] = -4.0
    fresh_equal(f, x)
    assert recordings(f) == 3


def test_a_recorded_tape_of_a_large_closure_replays_at_new_points():
    rng = np.random.default_rng(3)
    K = rng.normal(size=(300, 300)) / 30
    x = rng.normal(size=300)

    def f(z):
        return np.sum(np.tanh(K @ z) ** 2)
    tape = adsim.record(f, x)
    x2 = x + 0.3
    assert np.allclose(tape.gradient(x2), adsim.grad(f)(x2), rtol=1e-13)
    check_grads(f, x, modes=("fwd", "rev"), order=2)


# -------------------------------------------------------------- a fitted model

class GaussianMixture:
    """A diagonal Gaussian mixture, fitted by EM from random starting means."""

    def __init__(self, n_components=3, n_iter=20, seed=0):
        self.n_components, self.n_iter, self.seed = n_components, n_iter, seed

    def log_joint(self, X, means, log_var):
        diff = X[:, None, :] - means[None]
        return (self.log_weights_ - 0.5 * np.sum(log_var, axis=1)
                - 0.5 * np.sum(diff ** 2 / np.exp(log_var)[None], axis=2))

    def fit(self, X):
        rng = np.random.default_rng(self.seed)          # never run by the likelihood
        means = X[rng.choice(len(X), self.n_components, replace=False)]
        log_var = np.zeros_like(means)
        self.log_weights_ = np.full(self.n_components, -np.log(self.n_components))
        self.history_ = []
        for _ in range(self.n_iter):
            lj = self.log_joint(X, means, log_var)
            norm = np.logaddexp.reduce(lj, axis=1)
            self.resp_ = np.exp(lj - norm[:, None])
            nk = self.resp_.sum(axis=0)
            means = self.resp_.T @ X / nk[:, None]
            log_var = np.log(self.resp_.T @ X ** 2 / nk[:, None] - means ** 2 + 1e-6)
            self.log_weights_ = np.log(nk / len(X))
            self.history_.append(float(np.mean(norm)))
        self.means_, self.log_var_, self.X_ = means, log_var, X
        return self

    def log_likelihood(self, X, means, log_var):
        lj = self.log_joint(X, means, log_var)
        m = np.max(lj, axis=1, keepdims=True)
        return np.sum(m[:, 0] + np.log(np.sum(np.exp(lj - m), axis=1)))


def fitted_mixture(n=4000, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) + rng.choice([-3.0, 0.0, 3.0], size=(n, 1))
    model = GaussianMixture().fit(X)

    def nll(theta):
        half = theta.size // 2
        return -model.log_likelihood(X, theta[:half].reshape(3, 2), theta[half:].reshape(3, 2))
    return nll, model, np.concatenate([model.means_.ravel(), model.log_var_.ravel()])


def test_a_likelihood_closing_over_a_fitted_model_replays_and_sees_its_changes():
    nll, model, theta = fitted_mixture()
    for _ in range(3):
        fresh_equal(nll, theta)
    assert recordings(nll) == 1, adsim.api.tapes_of(nll).reuse_blocked_by
    model.log_weights_[0] += 0.1                 # an attribute changed in place
    fresh_equal(nll, theta)
    model.log_weights_ = np.log(np.full(3, 1 / 3))   # rebound
    fresh_equal(nll, theta)
    model.X_[0, 0] = 9.0                         # the training data (also the closure's X)
    fresh_equal(nll, theta)
    model.history_[3] = 0.0                      # a long list of floats: still a change
    fresh_equal(nll, theta)
    assert recordings(nll) == 5


def test_a_method_that_draws_from_a_new_generator_is_impure_when_called():
    nll, model, theta = fitted_mixture(n=300)

    def refit_then_nll(t):
        model.fit(model.X_)                      # default_rng inside: impure
        return nll(t)
    g = adsim.grad(refit_then_nll)
    g(theta)
    assert "default_rng" in g.tapes.reuse_blocked_by


def test_impure_code_shared_with_the_function_counts():
    """A helper called both by an uncalled method and by the function."""
    def seeded_noise(n):
        return np.random.default_rng().normal(size=n)

    class Model:
        scale = 2.0

        def refresh(self):
            return seeded_noise(3)
    m = Model()
    f = lambda z: np.sum(z * seeded_noise(3)) * m.scale  # noqa: E731
    assert "default_rng" in purity.Snapshot(f).blocked
    g = lambda z: np.sum(z ** 2) * m.scale  # noqa: E731
    assert purity.Snapshot(g).blocked is None
    h = lambda z: np.sum(z ** 2) * m.scale + np.sum(m.refresh())  # noqa: E731
    assert "default_rng" in purity.Snapshot(h).blocked


# ------------------------------------------------------ many small values

def test_an_element_of_a_long_list_and_of_a_dict_of_parameters():
    weights = [1.0] * 10_000
    params = {f"k{i}": 0.5 for i in range(5_000)}
    x = np.array([0.3, -0.2])

    def f(z):
        return weights[9_000] * np.sum(z ** 2) + params["k4321"] * np.sum(np.sin(z))
    fresh_equal(f, x)
    fresh_equal(f, x)
    assert recordings(f) == 1, adsim.api.tapes_of(f).reuse_blocked_by
    weights[9_000] = 3.0
    assert np.allclose(fresh_equal(f, x), 6.0 * x + 0.5 * np.cos(x))
    params["k4321"] = -0.0                       # equal to 0.0 by ==, but a change
    fresh_equal(f, x)
    params["k4321"] = 2
    assert np.allclose(fresh_equal(f, x), 6.0 * x + 2 * np.cos(x))
    params["extra"] = 1.0
    fresh_equal(f, x)
    assert recordings(f) == 5


def test_object_arrays_are_walked_element_by_element():
    table = np.empty(3, dtype=object)
    table[0], table[1], table[2] = 2.0, [1.0, 2.0], np.ones(2)
    x = np.array([0.5, 1.5])

    def f(z):
        return table[0] * np.sum(z ** 2) + table[1][1] * z[0] + np.sum(table[2] * z)
    fresh_equal(f, x)
    fresh_equal(f, x)
    assert recordings(f) == 1
    table[0] = 5.0                               # an element replaced
    fresh_equal(f, x)
    table[1][1] = -1.0                           # a list inside it mutated
    fresh_equal(f, x)
    table[2][0] = 4.0                            # an array inside it mutated
    assert np.allclose(fresh_equal(f, x), 10.0 * x + [-1.0 + 4.0, 1.0])
    assert recordings(f) == 4


# ------------------------------------------------------------------- limits

def test_more_array_data_than_the_limit_records_every_call_and_says_why():
    huge = np.broadcast_to(np.ones(1), (purity.MAX_ARRAY_BYTES // 8 + 1,))   # no memory
    g = adsim.grad(lambda z: np.sum(z) * huge[0])
    g(np.ones(2))
    g(np.ones(2))
    assert g.tapes.recordings == 2
    assert "GB of array data" in g.tapes.reuse_blocked_by


class Component:
    def __init__(self, i):
        self.weight, self.mean, self.label, self.active = 1.0 / (i + 1), float(i), f"c{i}", True


def test_an_environment_dearer_to_check_than_to_record_is_recorded_and_says_why():
    """Thousands of small objects, one of them read: checking them all at
    every call would cost far more than recording the function."""
    adsim.grad(lambda z: np.sum(z ** 2))(np.ones(2))          # recordings warmed up
    components = [Component(i) for i in range(purity.MAX_VALUES // 12)]
    x = np.array([0.5, 2.0])

    def f(z):
        return np.sum(z ** 2) * components[3].weight
    for _ in range(4):
        fresh_equal(f, x)
    assert "longer than recording" in adsim.api.tapes_of(f).reuse_blocked_by
    components[3].weight = 7.0
    assert np.allclose(fresh_equal(f, x), 14.0 * x)


def test_an_environment_of_too_many_values_is_recorded_without_walking_it_each_time():
    components = [Component(i) for i in range(purity.MAX_VALUES // 4)]
    x = np.array([0.5, 2.0])

    def f(z):
        return np.sum(z ** 2) * components[-1].mean
    for k in range(3):
        components[-1].mean = float(k)
        assert np.allclose(fresh_equal(f, x), 2.0 * k * x)
    assert f"more than {purity.MAX_VALUES} values" in adsim.api.tapes_of(f).reuse_blocked_by


def _fresh_means(k):
    return np.random.default_rng().normal(size=k)


class Restarting:
    """Two methods share one impure helper; only `score` is called."""

    def restart(self):
        return _fresh_means(3)

    def score(self, z):
        return np.sum(z * _fresh_means(3))


def test_impure_code_shared_between_an_uncalled_and_a_called_method_counts():
    model = Restarting()
    g = adsim.grad(lambda z: model.score(z))
    first, second = g(np.ones(3)), g(np.ones(3))
    assert not np.array_equal(first, second)
    assert "default_rng" in g.tapes.reuse_blocked_by
