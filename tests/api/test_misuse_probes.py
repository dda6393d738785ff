"""Mistakes a new user makes with what ``import adsim`` offers, each hit as
the user hits it: a typed adsim error naming the argument, what was given
and what is accepted, never a hang, a silently ignored argument or a result
made from nonsense."""
import io

import numpy as np
import pytest

import adsim
import adsim.checkpoint
import adsim.integrate
from adsim.errors import (AdsimError, FinishedRecording, InvalidArgnums, InvalidArgument,
                          InvalidArgumentValue, PrimitiveRuleError, UnsupportedOperation)
from fdcheck import assert_close, fd_jacobian

X = np.array([0.5, -0.3, 0.2])


def twice(a):
    return a * 2.0


def test_nondiff_argnums_past_the_arguments_of_a_call_are_refused_not_ignored():
    p = adsim.primitive(twice, vjp=lambda args, out, g: (2.0 * g,), nondiff_argnums=(5,))
    for x in (1.0, X):                       # plain and inside a recording
        with pytest.raises(InvalidArgnums, match=r"nondiff_argnums=5 .* 1 positional argument"):
            adsim.grad(lambda z: np.sum(p(z)))(x) if x is X else p(x)


def test_negative_nondiff_argnums_are_refused_when_the_primitive_is_made():
    with pytest.raises(InvalidArgument, match=r"nondiff_argnums must be a tuple of ints >= 0.*"
                                              r"\(-1,\)"):
        adsim.primitive(np.sin, nondiff_argnums=(-1,))


def test_a_primitive_name_that_is_not_text_names_the_argument():
    with pytest.raises(InvalidArgument, match=r"adsim.primitive: name must be a non-empty "
                                              r"string, got 3 \(int\)"):
        adsim.primitive(np.sin, name=3)


@pytest.mark.parametrize("kind", ["vjp", "jvp"])
def test_a_rule_of_the_wrong_form_names_the_primitive_and_the_form(kind):
    p = adsim.primitive(twice, name="twice", **{kind: lambda g: g})
    f = lambda z: np.sum(p(z))                                   # noqa: E731
    with pytest.raises(PrimitiveRuleError, match=rf"{kind} rule of primitive `twice` cannot be "
                                                 rf"called as {kind}\(args, out, .*write it as"):
        adsim.grad(f)(X) if kind == "vjp" else adsim.jvp(f, X, X)


def test_a_type_error_inside_a_rule_stays_the_rules_own():
    p = adsim.primitive(twice, vjp=lambda args, out, g: (len(1),))
    with pytest.raises(TypeError, match="has no len") as err:
        adsim.grad(lambda z: np.sum(p(z)))(X)
    assert not isinstance(err.value, AdsimError)


@pytest.mark.parametrize("call", [lambda: adsim.checkpoint.repetition_number(5, 0),
                                  lambda: adsim.checkpoint.binomial_cost(5, 0)])
def test_zero_snapshots_are_refused_not_searched_for_ever(call):
    with pytest.raises(InvalidArgumentValue, match="snapshots must be >= 1, got 0"):
        call()


@pytest.mark.parametrize("args, error, words", [
    ((-1, 2), InvalidArgumentValue, "n_steps must be >= 0, got -1"),
    (("a", 2), InvalidArgument, r"n_steps must be an integer >= 0 .* got 'a' \(str\)"),
    ((5, 1.5), InvalidArgument, r"snapshots must be an integer >= 1 .* got 1.5 \(float\)")])
def test_schedule_counts_name_the_argument(args, error, words):
    with pytest.raises(error, match=words):
        adsim.checkpoint.binomial_cost(*args)
    assert adsim.checkpoint.binomial_cost(100, 5) == 316          # valid calls unchanged
    assert adsim.checkpoint.repetition_number(100, 5) == 4


@pytest.mark.parametrize("call, error, words", [
    (lambda: adsim.checkpoint.simulate("a"), InvalidArgument, "not a schedule"),
    (lambda: adsim.checkpoint.format_bytes("a"), InvalidArgument, "count must be a number"),
    (lambda: adsim.checkpoint.MemoryStore(-1), InvalidArgumentValue, "slots must be >= 0"),
    (lambda: adsim.checkpoint.parse_bytes("abc"), InvalidArgumentValue, "cannot read 'abc'"),
    (lambda: adsim.checkpoint.parse_bytes(float("nan")), InvalidArgumentValue, "finite")])
def test_checkpoint_helpers_raise_typed_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


@pytest.mark.parametrize("option, error, words", [
    (dict(memory_limit="abc"), InvalidArgumentValue, "memory_limit='abc'"),
    (dict(memory_limit=-1), InvalidArgumentValue, "memory_limit=-1"),
    (dict(schedule="x"), InvalidArgument, "schedule='x' is not a schedule"),
    (dict(schedule=adsim.Revolve(3, 2)), InvalidArgumentValue, "schedule is for 3 steps"),
    (dict(save_at=[10]), InvalidArgumentValue, "save_at holds step counts outside"),
    (dict(save_at="a"), InvalidArgument, "save_at must be a sequence"),
    (dict(snapshot_dir=3), InvalidArgument, "snapshot_dir must be a directory path")])
def test_checkpoint_loop_options_raise_typed_errors(option, error, words):
    with pytest.raises(error, match=words):
        adsim.grad(lambda x: np.sum(adsim.checkpoint_loop(np.sin, x, 5, **option)))(X)


def test_a_step_changing_the_state_shape_is_a_typed_error():
    with pytest.raises(InvalidArgumentValue, match=r"loop step returned a state with shapes "
                                                   r"\[\(4,\)\]"):
        adsim.grad(lambda x: np.sum(adsim.checkpoint_loop(lambda s: np.append(s, 1.0), x, 5)))(X)


@pytest.mark.parametrize("tf", [np.nan, np.inf])
def test_solve_ivp_to_a_time_that_is_not_finite_is_refused_not_run_for_ever(tf):
    with pytest.raises(InvalidArgumentValue, match=r"t_span\[1\] must be finite"):
        adsim.integrate.solve_ivp(lambda t, y: -y, (0.0, tf), X)


def test_odeint_from_none_is_refused_not_answered_with_nans():
    with pytest.raises(InvalidArgument, match=r"y0 must be .* got None"):
        adsim.integrate.odeint(lambda y, t: -y, None, [0.0, 1.0])


def test_a_value_kept_from_a_finished_recording_raises_a_typed_error():
    kept = []
    adsim.grad(lambda x: (kept.append(x), np.sum(x))[1])(X)
    with pytest.raises(FinishedRecording, match="finished recording"):
        np.sum(kept[0] * 2.0)
    assert issubclass(FinishedRecording, RuntimeError)


def test_recording_into_a_finished_tape_raises_a_typed_error():
    tape = adsim.record(lambda x: x * 2.0, X)
    with pytest.raises(FinishedRecording, match="finished recording; record a new one"):
        tape.const_ref(np.ones(3))


def test_a_while_loop_past_max_steps_raises_a_typed_error():
    def run(x):
        return np.sum(adsim.checkpoint_while(lambda s: s[0] < 10.0, lambda s: s * 1.0, x,
                                             max_steps=5))
    for call in (run, adsim.grad(run)):          # plain, and recorded
        with pytest.raises(adsim.errors.LoopDidNotStop, match="max_steps=5"):
            call(np.zeros(2))


def test_the_tape_class_called_with_arguments_says_how_tapes_are_made():
    with pytest.raises(InvalidArgument, match=r"Tape\(\) takes no arguments.*adsim.record"):
        adsim.Tape(1, 2, 3)
    assert "empty" in str(adsim.Tape())


def test_saving_to_a_directory_or_a_missing_folder_names_the_users_path(tmp_path):
    tape = adsim.record(lambda x: np.sum(x * x), X)
    with pytest.raises(InvalidArgumentValue, match="is a directory; give the path of a file"):
        tape.save(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"no folder .*missing.* create it first"):
        tape.save(tmp_path / "missing" / "t.adtape")
    assert list(tmp_path.iterdir()) == []                          # nothing left behind


def test_text_file_objects_are_refused_in_both_directions(tmp_path):
    tape = adsim.record(lambda x: np.sum(x * x), X)
    tape.save(tmp_path / "t.adtape")
    with open(tmp_path / "t.adtape") as text, pytest.raises(InvalidArgument, match="'rb'"):
        adsim.load_tape(text)
    with pytest.raises(InvalidArgument, match="'wb'"):
        tape.save(io.StringIO())
    buffer = io.BytesIO()
    tape.save(buffer)
    assert_close(adsim.load_tape(io.BytesIO(buffer.getvalue())).gradient(X), 2 * X)


@pytest.mark.parametrize("with_weights", [False, True])
def test_polyfit_with_list_abscissae_differentiates_like_differences(with_weights):
    w = [1.0, 2.0, 1.0] if with_weights else None

    def f(y):
        return np.sum(np.polyfit([0, 1, 2], y, 1, w=w))
    y = np.array([0.0, 1.0, 3.0])
    assert_close(adsim.grad(f)(y), fd_jacobian(f, [y])[0])


@pytest.mark.parametrize("wrap", [lambda x: [x, x], lambda x: (x, 2.0 * x), lambda x: {"a": x}])
def test_stop_gradient_and_value_of_a_container_stop_each_array(wrap):
    def f(x):
        held = adsim.stop_gradient(wrap(x))
        kept = adsim.value(wrap(x))
        first = held[0] if not isinstance(held, dict) else held["a"]
        other = kept[-1] if not isinstance(kept, dict) else kept["a"]
        return np.sum(first * x + other * x ** 2)
    a = f(X)
    stopped = wrap(X)
    c = stopped[-1] if not isinstance(stopped, dict) else stopped["a"]
    assert_close(adsim.grad(f)(X), X + 2 * c * X)                   # the held arrays: constants
    assert_close(adsim.jvp(f, X, np.ones(3))[1], np.sum(X + 2 * c * X))
    assert np.isfinite(a)
    assert adsim.stop_gradient([1.0, 2.0]) == [1.0, 2.0]           # plain data unchanged


@pytest.mark.parametrize("call", [
    lambda: adsim.grad(lambda T: np.sum(adsim.integrate.solve_ivp(
        lambda t, y: -y, (0.0, T), X).y[:, -1]))(np.nan),
    lambda: adsim.grad(lambda y: np.sum(adsim.integrate.solve_ivp(
        lambda t, y: -y, (0.0, 1.0), y, t_eval=[0.5, np.nan]).y))(X),
    lambda: adsim.grad(lambda y: np.sum(adsim.integrate.solve_ivp(
        lambda t, y: -y, (0.0, 1.0), y, atol=np.nan).y[:, -1]))(X)])
def test_times_and_tolerances_that_are_not_finite_are_refused_inside_a_recording(call):
    with pytest.raises(InvalidArgumentValue, match="must be finite"):
        call()


@pytest.mark.parametrize("call, words", [
    (lambda: adsim.grad(lambda x: np.sum(x))(X, 1), r"<lambda>\(x, x\) raised .*takes 1 "
                                                   r"positional argument.*of <lambda>\(x\)"),
    (lambda: adsim.grad(lambda x, y: np.sum(x * y))(X), r"missing 1 required positional "
                                                        r"argument: 'y'.*<lambda>\(x, y\)"),
    (lambda: adsim.jacobian(lambda x: x)(X, k=1), r"<lambda>\(x, k=...\) raised .*unexpected "
                                                  r"keyword argument 'k'")])
def test_a_made_function_called_off_fs_signature_shows_fs_signature(call, words):
    with pytest.raises(InvalidArgument, match=words):
        call()


def test_an_active_index_is_a_typed_error():
    with pytest.raises(UnsupportedOperation, match="cannot be used as an index"):
        adsim.grad(lambda x: x[x[0]])(np.ones(2))


def test_an_ndarray_method_given_as_f_says_to_pass_a_function():
    with pytest.raises(UnsupportedOperation, match=r"np.ndarray.sum, which takes only NumPy "
                                                   r"arrays.*lambda x: x.sum\(\)"):
        adsim.grad(np.ndarray.sum)(X)
