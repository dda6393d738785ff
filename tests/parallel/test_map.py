"""adsim.parallel.map and sum_gradients on thread and process pools: results
bitwise equal to serial calls, in order, for every replay method; tapes
shipped to processes as tape files (primitives by name); loops shared by
threads; progress reported; errors raised with the point that raised them.
Dask: tests/parallel/test_dask.py."""
import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import adsim as ad
from adsim import parallel
from adsim.errors import BranchChanged, TapeCopyError, TapeFileError
from parallel_models import adaptive_misfit, lorenz_misfit, model, pairs_loss

RNG = np.random.default_rng(5)
X0 = np.linspace(0.2, 1.0, 6)
POINTS = [X0 + 0.05 * RNG.uniform(0.0, 1.0, 6) * (np.arange(6) < 5) for _ in range(13)]
V = RNG.standard_normal(6)
KWARGS = {"jvp": {"v": V}, "vjp": {"w": 1.5}, "hvp": {"v": V}, "gradient_and_hvp": {"v": V}}


def bits(result):
    if isinstance(result, tuple):
        return tuple(bits(r) for r in result)
    return np.asarray(result).tobytes()


def serial(method, tape, points, **kwargs):
    call = getattr(tape, method)
    return [bits(call(*p, **kwargs) if isinstance(p, tuple) and method in
                 ("forward", "gradient", "value_and_gradient", "jacobian") else call(p, **kwargs))
            for p in points]


@pytest.fixture(scope="module")
def tape():
    return ad.record(model, X0)


@pytest.fixture(scope="module")
def processes():
    """Two spawned worker processes (nothing inherited: the tape must travel
    as bytes), which make the tests' named primitive when they start."""
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"),
                             initializer=__import__, initargs=("parallel_models",)) as pool:
        yield pool


@pytest.mark.parametrize("method", parallel.METHODS)
def test_map_on_threads_equals_serial_calls(tape, method):
    kwargs = KWARGS.get(method, {})
    want = serial(method, tape, POINTS, **kwargs)
    assert [bits(r) for r in parallel.map(method, tape, POINTS, **kwargs)] == want
    with ThreadPoolExecutor(3) as pool:
        for size in (1, 4, 100):
            got = parallel.map(method, tape, POINTS, executor=pool, chunk_size=size, **kwargs)
            assert [bits(r) for r in got] == want


@pytest.mark.parametrize("method", ["gradient", "hvp", "jacobian"])
def test_map_on_processes_equals_serial_calls(tape, processes, method):
    kwargs = KWARGS.get(method, {})
    got = parallel.map(method, tape, POINTS, executor=processes, **kwargs)
    assert [bits(r) for r in got] == serial(method, tape, POINTS, **kwargs)


def test_tapes_of_several_inputs_take_tuples(processes):
    data = [np.linspace(-1.0, 1.0, 4) * k for k in range(1, 6)]
    p = np.array([0.7, 0.2])
    tape = ad.record(pairs_loss, p, data[0])
    points = [(p + 0.01 * k, d) for k, d in enumerate(data)]
    for method, kwargs in [("value_and_gradient", {}), ("forward", {}),
                           ("hvp", {"v": (np.ones(2), np.zeros(4))})]:
        want = serial(method, tape, points, **kwargs)
        assert [bits(r) for r in parallel.map(method, tape, points, **kwargs)] == want
        got = parallel.map(method, tape, points, executor=processes, **kwargs)
        assert [bits(r) for r in got] == want


def test_checkpointed_loops_run_on_copies_in_threads_and_travel_to_processes(processes):
    p = np.array([10.0, 28.0, 8.0 / 3.0])
    tape = ad.record(lorenz_misfit, p)
    points = [p * (1.0 + 0.01 * k) for k in range(8)]
    want = serial("gradient", tape, points)
    op = tape.callbacks[0]
    before = dict(op.stats)
    assert [bits(g) for g in parallel.map("gradient", tape, points, chunk_size=1)] == want
    assert op.stats == before            # the workers replayed copies of the loop
    got = parallel.map("gradient", tape, points, executor=processes)
    assert [bits(g) for g in got] == want


def test_progress_is_reported_in_the_calling_thread(tape):
    calls = []
    parallel.map("gradient", tape, POINTS, chunk_size=3,
                 progress=lambda done, total: calls.append((done, total, threading.get_ident())))
    assert [c[0] for c in calls] == sorted(c[0] for c in calls) and calls[-1][:2] == (13, 13)
    assert len(calls) == 5 and {c[2] for c in calls} == {threading.get_ident()}


def test_sum_gradients_over_experiments_in_order(processes):
    p = np.array([0.7, 0.2])
    data = [np.linspace(-1.0, 1.0, 4) * k for k in range(1, 8)]
    shared = ad.record(pairs_loss, p, data[0])
    want_value, want_grad = 0.0, np.zeros(2)
    for d in data:
        v, (g, _) = shared.value_and_gradient(p, d)
        want_value, want_grad = want_value + v, want_grad + g
    for executor in (None, processes):
        value, grad = parallel.sum_gradients(shared, [(p, d) for d in data], executor=executor,
                                             chunk_size=2)
        assert value == want_value and grad.tobytes() == want_grad.tobytes()
    # one tape per experiment (experiments of different sizes)
    tapes = [ad.record(pairs_loss, p, np.linspace(0.0, 1.0, n)) for n in (3, 5, 3)]
    inputs = [(p, np.linspace(0.0, 1.0, n) ** 2) for n in (3, 5, 3)]
    value, grad = parallel.sum_gradients(tapes, inputs, executor=processes)
    parts = [t.value_and_gradient(*x) for t, x in zip(tapes, inputs)]
    assert value == parts[0][0] + parts[1][0] + parts[2][0]
    assert grad.tobytes() == (parts[0][1][0] + parts[1][1][0] + parts[2][1][0]).tobytes()
    _, grad_data = parallel.sum_gradients(shared, [(p, d) for d in data], argnum=1)
    assert grad_data.shape == (4,)


def test_sum_gradients_refuses_what_does_not_add_up():
    p = np.array([0.7, 0.2])
    tapes = [ad.record(pairs_loss, p, np.ones(n)) for n in (3, 4)]
    with pytest.raises(ValueError, match="shape"):
        parallel.sum_gradients(tapes, [(p, np.ones(3)), (p, np.ones(4))], argnum=1)
    with pytest.raises(ValueError, match="2 tapes for 1 inputs"):
        parallel.sum_gradients(tapes, [(p, np.ones(3))])
    with pytest.raises(ValueError, match="argnum=2"):
        parallel.sum_gradients(tapes[0], [(p, np.ones(3))], argnum=2)
    with pytest.raises(ValueError, match="no experiments"):
        parallel.sum_gradients(tapes[0], [])


def test_wrong_arguments_are_refused_clearly(tape):
    with pytest.raises(ValueError, match="'hessian' is not a replay.*forward, gradient"):
        parallel.map("hessian", tape, POINTS)
    with pytest.raises(TypeError, match="must be a tape .* or the function"):
        parallel.map("gradient", 3.0, POINTS)
    for size in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="chunk_size"):
            parallel.map("gradient", tape, POINTS, chunk_size=size)
    with pytest.raises(TypeError, match="progress"):
        parallel.map("gradient", tape, POINTS, progress=3)
    with pytest.raises(TypeError, match="Executor or a dask"):
        parallel.map("gradient", tape, POINTS, executor=object())
    assert parallel.map("gradient", tape, []) == []
    for method, name in [("jvp", "v"), ("hvp", "v"), ("gradient_and_hvp", "v"), ("vjp", "w")]:
        with pytest.raises(TypeError, match=f"'{method}' needs {name}="):
            parallel.map(method, tape, POINTS)


def test_an_error_at_one_point_is_raised_with_that_point(tape, processes):
    points = list(POINTS)
    points[7] = -X0                      # other signs: the branch abs recorded does not hold
    for executor in (None, processes):
        with pytest.raises(BranchChanged) as err:
            parallel.map("gradient", tape, points, executor=executor, chunk_size=2)
        assert "adsim.parallel: raised by gradient at point 7" in getattr(err.value,
                                                                           "__notes__", [""])


unnamed = ad.primitive(lambda x: 2.0 * x, vjp=lambda a, o, w: (2.0 * w,))
local = ad.primitive(lambda x: 2.0 * x, vjp=lambda a, o, w: (2.0 * w,), name="tests.parallel.local")


def test_primitives_must_be_named_and_made_in_the_worker_processes(processes):
    tape = ad.record(lambda x: np.sum(unnamed(x) ** 2), X0)
    assert len(parallel.map("gradient", tape, POINTS[:3])) == 3      # threads share the tape
    with pytest.raises(TapeCopyError, match="without name="):
        parallel.map("gradient", tape, POINTS[:3], executor=processes)
    tape = ad.record(lambda x: np.sum(local(x) ** 2), X0)
    with pytest.raises(TapeFileError, match="`tests.parallel.local`.*not registered"):
        parallel.map("gradient", tape, POINTS[:3], executor=processes)


def test_threads_share_a_loop_tape_that_could_not_be_copied(processes):
    """A loop's sweeps keep their state for themselves, so threads replay
    one tape (no tape file is made: its unnamed primitive could not be
    saved); processes still need the primitive's name."""
    def f(p):
        return np.sum(ad.checkpoint_loop(lambda u, p: u + 0.1 * unnamed(p * u), np.ones(6), 5,
                                         args=(p,)))
    tape = ad.record(f, X0)
    with ThreadPoolExecutor(2) as threads:
        got = parallel.map("gradient", tape, POINTS, executor=threads, chunk_size=1)
    assert [bits(g) for g in got] == serial("gradient", tape, POINTS)
    with pytest.raises(TapeCopyError, match="without name="):
        parallel.map("gradient", tape, POINTS[:3], executor=processes)


def test_a_function_is_recorded_again_where_its_tape_leaves_its_path(processes):
    """An ensemble of adaptive ODE solves: at other parameters the solver
    takes other steps, so one tape raises BranchChanged; mapping the
    function records it again there, in each worker, and gives what
    adsim.grad gives."""
    points = [np.array([1.0 + 0.1 * k, 0.5]) for k in range(6)]
    with pytest.raises(BranchChanged):
        parallel.map("gradient", ad.record(adaptive_misfit, points[0]), points)
    want = [ad.grad(adaptive_misfit)(p) for p in points]
    for executor in (None, processes):
        got = parallel.map("gradient", adaptive_misfit, points, executor=executor, chunk_size=3)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0.0)
    h = 1e-6
    e = np.array([1.0, 0.0])
    fd = (adaptive_misfit(points[2] + h * e) - adaptive_misfit(points[2] - h * e)) / (2 * h)
    assert abs(want[2][0] - fd) <= 1e-6 * abs(fd)


def test_a_function_of_several_inputs_takes_tuples():
    data = [np.linspace(-1.0, 1.0, 4) * k for k in range(1, 6)]
    p = np.array([0.7, 0.2])
    points = [(p + 0.01 * k, d) for k, d in enumerate(data)]
    for method, kwargs in [("value_and_gradient", {}), ("hvp", {"v": (np.ones(2), np.zeros(4))})]:
        want = serial(method, ad.record(pairs_loss, *points[0]), points, **kwargs)
        assert [bits(r) for r in parallel.map(method, pairs_loss, points, **kwargs)] == want


def test_a_function_a_process_pool_cannot_send_is_refused_at_once(processes):
    with pytest.raises(ad.InvalidArgument, match="defined at module level"):
        parallel.map("gradient", lambda x: model(x), POINTS, executor=processes)
    got = parallel.map("gradient", lambda x: model(x), POINTS[:3])     # threads share it
    assert [bits(g) for g in got] == serial("gradient", ad.record(model, X0), POINTS[:3])
