"""Mistakes at adsim's entry points, made as a user makes them: each raises
a typed adsim error (a subclass of the matching builtin) whose message
names what happened, the argument and value given, and what to do."""
import copy
import inspect
import pickle
import warnings

import numpy as np
import pytest
from scipy import optimize

import adsim
from adsim import integrate
import adsim.testing
from adsim.errors import (AdsimError, InvalidArgnums, InvalidArgument, InvalidArgumentValue,
                          InvalidInput, NotCallable, NotPicklable, UnsupportedOperation)
from fdcheck import assert_close, central

X = np.array([0.5, 0.2, 0.1])
Y = np.array([1.5, -0.4, 0.3])


def F(z):
    return 2.0 * z * z


def f(z):
    return np.sum(z ** 3)


def two(a, b):
    return a * np.sin(b) + b ** 2


@pytest.mark.parametrize("cls, builtin", [
    (InvalidArgument, TypeError), (InvalidArgumentValue, ValueError), (NotCallable, TypeError),
    (NotPicklable, TypeError)])
def test_new_error_classes_subclass_the_matching_builtins_and_say_the_fix(cls, builtin):
    assert issubclass(cls, AdsimError) and issubclass(cls, builtin)
    assert "Fix" in cls.__doc__
    assert getattr(adsim.errors, cls.__name__) is cls


# ---------------------------------------------------------- 1. primals of jvp and vjp

def test_a_list_of_primals_is_a_tuple_of_arguments_as_in_jax():
    """jvp(f, [x1, x2], [v1, v2]) is jvp(f, (x1, x2), (v1, v2)), and both
    match central differences."""
    want = central(two, [X, Y], [Y, X])
    for primals, tangents in (([X, Y], [Y, X]), ((X, Y), (Y, X)), ([X, Y], (Y, X))):
        y, t = adsim.jvp(two, primals, tangents)
        assert_close(y, two(X, Y), 0, 0)
        assert_close(t, want)
    w = np.array([1.0, -2.0, 0.5])
    for primals in ([X, Y], (X, Y)):
        y, (ga, gb) = adsim.vjp(two, primals, w)
        for i, e in enumerate(np.eye(3)):
            assert_close(ga[i], central(lambda a: w @ two(a, Y), [X], [e]))
            assert_close(gb[i], central(lambda b: w @ two(X, b), [Y], [e]))


def test_an_argument_that_is_a_list_goes_in_a_tuple_and_matches_differences():
    def g(pair):                          # one argument: a list of two arrays
        a, b = pair
        return np.sum(a * b ** 2)
    y, t = adsim.jvp(g, ([X, Y],), ([Y, X],))
    assert_close(t, central(lambda a, b: g([a, b]), [X, Y], [Y, X]))
    y, (grads,) = adsim.vjp(g, ([X, Y],), 1.0)
    assert_close(grads[0], Y ** 2, 1e-14, 0)
    assert_close(grads[1], 2 * X * Y, 1e-14, 0)
    # a list of numbers in a tuple is one array argument
    y, t = adsim.jvp(f, ([0.5, 0.2, 0.1],), ([1.0, 0.0, 0.0],))
    assert_close(t, 3 * 0.5 ** 2, 1e-14, 0)


def test_list_primals_inside_a_recording_match_differences():
    def outer(p):
        return np.sum(adsim.jvp(two, [p, Y], [Y, X])[1])
    g = adsim.grad(outer)(X)
    for i, e in enumerate(np.eye(3)):
        assert_close(g[i], central(outer, [X], [e]))


@pytest.mark.parametrize("call, entry", [
    (lambda: adsim.jvp(f, [0.5, 0.2, 0.1], [1.0, 0.0, 0.0]), "jvp"),
    (lambda: adsim.vjp(f, [0.5, 0.2, 0.1], 1.0), "vjp"),
    (lambda: adsim.jvp(lambda m: np.sum(m @ m), [[1.0, 2.0], [3.0, 4.0]],
                       [[1.0, 0.0], [0.0, 0.0]]), "jvp"),
    (lambda: adsim.vjp(lambda m: np.sum(m @ m), [[1.0, 2.0], [3.0, 4.0]], 1.0), "vjp"),
    (lambda: adsim.grad(lambda p: adsim.jvp(f, [p[0], p[1], p[2]], [1.0, 0.0, 0.0])[1])(X),
     "jvp"),
])
def test_a_list_meant_as_one_array_names_the_accepted_forms(call, entry):
    with pytest.raises(InvalidArgument) as info:
        call()
    message = str(info.value)
    assert f"adsim.{entry}: the primals are a list of" in message
    assert "cannot take" in message and "positional arguments" in message
    assert f"{entry}(f, x," in message and f"{entry}(f, (x1, ..., xn)" in message
    assert f"{entry}(f, (x,)" in message
    assert isinstance(info.value.__cause__, TypeError)


def test_a_type_error_inside_the_function_is_not_mistaken_for_the_primals():
    def broken(a, b):
        raise TypeError("a mistake in the function itself")
    with pytest.raises(TypeError, match="a mistake in the function itself") as info:
        adsim.jvp(broken, [X, Y], [X, Y])
    assert not isinstance(info.value, AdsimError)


@pytest.mark.parametrize("tangents, count", [(X, 1), ((X, Y, X), 3), ([X], 1)])
def test_tangents_not_one_per_primal_are_counted(tangents, count):
    with pytest.raises(InvalidArgumentValue, match=rf"adsim.jvp: {count} tangents? for 2 "
                                                   rf"primals; pass one tangent per argument"):
        adsim.jvp(two, (X, Y), tangents)
    with pytest.raises(InvalidArgumentValue, match=f"{count} tangents? for 2 primals"):
        adsim.grad(lambda p: np.sum(adsim.jvp(two, (p, Y), tangents)[1]))(X)


# ------------------------------------------------------ 2. a function is expected

TRANSFORMS = {
    "grad": lambda g: adsim.grad(g)(X),
    "value_and_grad": lambda g: adsim.value_and_grad(g)(X),
    "jacobian": lambda g: adsim.jacobian(g)(X),
    "hessian": lambda g: adsim.hessian(g)(X),
    "hessp": lambda g: adsim.hessp(g)(X, X),
    "laplacian": lambda g: adsim.laplacian(g)(X),
    "jvp": lambda g: adsim.jvp(g, X, X),
    "vjp": lambda g: adsim.vjp(g, X, X),
    "hvp": lambda g: adsim.hvp(g, X, X),
    "grad_and_hvp": lambda g: adsim.grad_and_hvp(g, X, X),
    "hvp_operator": lambda g: adsim.hvp_operator(g, X),
    "checkpoint_loop": lambda g: adsim.checkpoint_loop(g, X, 3),
    "checkpoint_while": lambda g: adsim.checkpoint_while(g, F, X),
    "primitive": lambda g: adsim.primitive(g),
    "integrate.solve_ivp": lambda g: integrate.solve_ivp(g, (0.0, 1.0), X),
    "sparse_jacobian": lambda g: adsim.sparse_jacobian(g, X),
    "sparse_hessian": lambda g: adsim.sparse_hessian(g, X),
    "jacobian_sparsity": lambda g: adsim.jacobian_sparsity(g, X),
    "hessian_sparsity": lambda g: adsim.hessian_sparsity(g, X),
    "record": lambda g: adsim.record(g, X),
}


@pytest.mark.parametrize("entry", list(TRANSFORMS))
@pytest.mark.parametrize("value, shown", [(3, r"got 3 \(int\)"), (None, r"got None \(NoneType\)"),
                                          (f(X), r"got np.float64\(.*\) \(float64\)")])
def test_a_value_where_a_function_is_expected_says_so(entry, value, shown):
    with pytest.raises(NotCallable, match=rf"adsim.{entry}: \w+ must be a callable \(a "
                                          rf"function\), {shown}. Pass the function itself"):
        TRANSFORMS[entry](value)


def test_grad_of_a_value_shows_how_grad_is_called():
    with pytest.raises(NotCallable, match=r"adsim.grad\(f\)\(x\), not adsim.grad\(f\(x\)\)"):
        adsim.grad(3)


# ----------------------------------------------------- 3. the count of a checkpointed loop

def test_n_steps_none_names_the_accepted_forms_and_checkpoint_while():
    def loss(x):
        return np.sum(adsim.checkpoint_loop(lambda u: 0.9 * u, x, None))
    for call in (lambda: adsim.grad(loss)(X), lambda: loss(X)):
        with pytest.raises(InvalidArgument) as info:
            call()
        message = str(info.value)
        assert "adsim.checkpoint_loop: n_steps must be an integer >= 0" in message
        assert "got None (NoneType)" in message
        assert "adsim.checkpoint_while(cond, step, state, args)" in message


def test_a_float_count_is_refused_naming_the_value():
    with pytest.raises(InvalidArgument, match=r"n_steps must be an integer >= 0 .*got 3.0 "
                                              r"\(float\)"):
        adsim.grad(lambda x: np.sum(adsim.checkpoint_loop(lambda u: 0.9 * u, x, 3.0)))(X)
    with pytest.raises(InvalidArgumentValue, match="n_steps must be >= 0, got -1"):
        adsim.checkpoint_loop(lambda u: 0.9 * u, X, -1)


@pytest.mark.parametrize("call, words", [
    (lambda: adsim.Revolve(None, 3), r"adsim.Revolve: n_steps must be an integer >= 1 .*got None"),
    (lambda: adsim.Online(2.5), r"adsim.Online: snapshots must be an integer >= 1 .*got 2.5"),
    (lambda: adsim.TwoLevel(10, 2, "a"), r"adsim.TwoLevel: disk_snapshots must be an integer"),
])
def test_schedules_name_themselves(call, words):
    with pytest.raises(InvalidArgument, match=words):
        call()


# ------------------------------------------------------ 4. primitives without a rule

def _square(**rules):
    rules.setdefault("jvp", lambda args, out, tangents: 2 * args[0] * tangents[0])
    rules.setdefault("vjp", lambda args, out, w: (2 * args[0] * w,))
    return adsim.primitive(lambda a: a ** 2, **rules)


def test_a_primitive_made_with_vjp_none_names_itself_in_reverse_mode():
    prim = _square(vjp=None, name="tests.square_forward_only")
    with pytest.raises(UnsupportedOperation, match="primitive `tests.square_forward_only` has "
                                                   "no vjp rule, which reverse mode"):
        adsim.grad(lambda a: np.sum(prim(a)))(X)
    y, t = adsim.jvp(lambda a: prim(a), X, Y)          # forward mode needs only jvp
    assert_close(t, 2 * X * Y, 0, 0)


@pytest.mark.parametrize("part, value", [("value", None), ("value", 3), ("jvp", 3),
                                         ("vjp", "rule")])
def test_a_primitive_made_without_a_usable_function_is_refused_when_made(part, value):
    rules = {"value": lambda a: a ** 2, "jvp": None, "vjp": None}
    rules[part] = value
    with pytest.raises(NotCallable, match=rf"adsim.primitive: {part} must be a callable"):
        adsim.primitive(rules.pop("value"), **rules)


@pytest.mark.parametrize("part, word", [("value", "value function"), ("vjp", "vjp rule"),
                                        ("jvp", "jvp rule")])
@pytest.mark.parametrize("replacement", [None, 3])
def test_a_part_of_a_primitive_set_to_none_names_the_primitive_and_the_part(part, word,
                                                                             replacement):
    prim = _square(name=f"tests.square_{part}")
    if replacement is None and part != "value":
        setattr(prim, part, None)
        error, words = UnsupportedOperation, f"`tests.square_{part}` has no {part} rule"
    else:
        setattr(prim, part, replacement)
        error, words = NotCallable, (f"primitive `tests.square_{part}` has no usable {word}: "
                                     f"its `{part}` is {'None' if replacement is None else '3'}")
    with pytest.raises(error, match=words):
        if part == "jvp":
            adsim.jvp(lambda a: prim(a), X, Y)
        else:
            adsim.grad(lambda a: np.sum(prim(a)))(X)


def test_a_replaced_value_function_is_named_at_replay_and_on_plain_values():
    prim = _square(name="tests.square_replay")
    tape = adsim.record(lambda a: np.sum(prim(a)), X)
    prim.value = None
    for call in (lambda: tape.forward(Y), lambda: prim(X)):
        with pytest.raises(NotCallable, match="`tests.square_replay` has no usable value "
                                              "function: its `value` is None"):
            call()


@pytest.mark.parametrize("given", ["0", 1.5, (0.5,), True])
def test_nondiff_argnums_of_the_wrong_kind(given):
    with pytest.raises(InvalidArgument, match="nondiff_argnums must be a tuple of ints"):
        adsim.primitive(np.sin, nondiff_argnums=given)


# ------------------------------------------------ 5. transformed functions are not pickled

def _module_level_gradient(x):
    return adsim.grad(f)(x)


MADE = {
    "grad": lambda: adsim.grad(f),
    "value_and_grad": lambda: adsim.value_and_grad(f),
    "jacobian": lambda: adsim.jacobian(F),
    "hessian": lambda: adsim.hessian(f),
    "hessp": lambda: adsim.hessp(f),
    "laplacian": lambda: adsim.laplacian(f),
    "hvp_operator": lambda: adsim.hvp_operator(f, X),
}


@pytest.mark.parametrize("transform", list(MADE))
def test_pickling_a_transformed_function_says_what_to_send_instead(transform):
    made = MADE[transform]()
    with pytest.raises(NotPicklable) as info:
        pickle.dumps(made)
    message = str(info.value)
    assert f"adsim.{transform}(" in message and "cannot be pickled" in message
    for fix in ("adsim.record(", "tape.save(path)", "adsim.load_tape(path)",
                "adsim.parallel.map(", "module level"):
        assert fix in message
    assert copy.copy(made) is made and copy.deepcopy(made) is made


def test_transformed_functions_still_behave_as_functions():
    g = adsim.grad(two, argnums=1)
    assert g.__name__ == "grad_f" and g.__wrapped__ is two
    assert list(inspect.signature(g).parameters) == ["a", "b"]
    assert g.tapes is not None and "adsim.grad of two" in repr(g)

    class Model:
        gradient = adsim.grad(lambda self, x: np.sum(x ** 2), argnums=1)   # a method
    assert_close(Model().gradient(X), 2 * X, 0, 0)
    # a module-level function calling the transformation pickles by name
    assert pickle.loads(pickle.dumps(_module_level_gradient)) is _module_level_gradient


def test_transformed_functions_read_active_values_from_their_closures():
    """jacobian(grad(lambda w: k * w)) inside a recording sees the active k
    through the gradient function (now an object, not a closure)."""
    def outer(k):
        g = adsim.grad(lambda w: np.sum(k * w ** 2))
        return np.sum(adsim.jacobian(g)(X))
    got = adsim.grad(outer)(Y)
    for i in range(3):
        assert_close(got[i], central(outer, [Y], [np.eye(3)[i]]))


# --------------------------------------------- 6. SciPy solvers on active values

def _solvers():
    """Solvers adsim does not differentiate (the root finders and minimisers
    it does are tested in tests/scipy/test_implicit_*.py)."""
    return {
        "basinhopping": lambda p: optimize.basinhopping(lambda z: np.sum((z - p) ** 2),
                                                        np.zeros(3), niter=1).x,
        "differential_evolution": lambda p: optimize.differential_evolution(
            lambda z: np.sum((z - p) ** 2), [(0.0, 2.0)] * 3, maxiter=2, seed=0).x,
    }


@pytest.mark.parametrize("solver", list(_solvers()))
def test_solvers_on_active_values_raise_adsims_error_naming_the_solver(solver, capfd):
    call = _solvers()[solver]
    with pytest.raises(UnsupportedOperation) as info:
        adsim.grad(lambda p: np.sum(call(p)))(Y ** 2 + 0.5)
    message = str(info.value)
    assert f"cannot differentiate through scipy.optimize.{solver}: the function it calls " \
           f"(<lambda>) returned a value that depends on the inputs" in message
    assert "implicit function theorem" in message and "adsim.primitive" in message
    assert "adsim.value(p)" in message
    assert capfd.readouterr().err == ""            # nothing printed by SciPy's C code


def test_the_fsolve_of_the_issue_with_args_and_a_closure():
    """Differentiated through its solution: d sqrt(p) / dp = 1 / (2 sqrt(p))."""
    def with_closure(p):
        return np.sum(optimize.fsolve(lambda z: z ** 2 - p, 1.0))

    def with_args(p):
        return np.sum(optimize.fsolve(lambda z, q: z ** 2 - q, 1.0, args=(p,)))
    for g in (with_closure, with_args):
        assert_close(adsim.grad(g)(2.0), 0.5 / np.sqrt(2.0), 1e-8, 1e-10)


def test_solvers_on_plain_values_inside_a_recording_are_unchanged():
    want = optimize.fsolve(lambda z: z ** 2 - 2.0, 1.0)[0]

    def scaled(p):
        root = optimize.fsolve(lambda z: z ** 2 - adsim.value(p), 1.0)[0]
        res = optimize.minimize(lambda z: np.sum((z - 1.0) ** 2), np.zeros(2),
                                callback=lambda intermediate_result: None)
        return root * p + np.sum(res.x) * 0.0
    assert_close(adsim.grad(scaled)(2.0), want, 0, 0)


def test_solvers_written_in_python_are_still_recorded_through():
    def root(p):
        return optimize.root_scalar(lambda z: z ** 2 - p, x0=1.0, method="newton",
                                    fprime=lambda z: 2 * z).root
    assert_close(adsim.grad(root)(2.0), central(root, [np.array(2.0)], [np.array(1.0)]))

    def argmin(p):
        return optimize.fminbound(lambda z: (z - p) ** 2, 0.0, 5.0)
    assert_close(adsim.grad(argmin)(2.0), 1.0, 1e-6, 1e-6)


# ----------------------------------------------- 7. arguments of the entry points

@pytest.mark.parametrize("call, error, words", [
    # the functional API
    (lambda: adsim.grad(f, has_aux="yes"), InvalidArgument,
     r"adsim.grad: has_aux must be True or False, got 'yes' \(str\)"),
    (lambda: adsim.value_and_grad(f, cache="no"), InvalidArgument,
     r"adsim.value_and_grad: cache must be True or False, got 'no' \(str\)"),
    (lambda: adsim.jacobian(F, mode=3), InvalidArgumentValue,
     r"adsim.jacobian: mode must be None .*'forward' \(or 'fwd'\) or 'reverse' \(or 'rev'\), "
     r"got 3 \(int\)"),
    (lambda: adsim.hessian(f, argnums=(0,)), InvalidArgnums,
     r"hessian takes one argnum .*got argnums=\(0,\) \(tuple\)"),
    # checkpointed loops
    (lambda: adsim.checkpoint_loop(lambda u: u, None, 3), InvalidArgument,
     r"state must be an array of real numbers .*got None \(NoneType\)"),
    (lambda: adsim.checkpoint_loop(lambda u, k: u, X, 3, args=X), InvalidArgument,
     r"args must be a tuple .*got an array of shape \(3,\) \(float64\); write args=\(value,\)"),
    (lambda: adsim.grad(lambda x: np.sum(adsim.checkpoint_loop(lambda u: u, x, 2,
                                                               progress="yes")))(X),
     InvalidArgument, r"progress must be True, False, None or a callable .*got 'yes' \(str\)"),
    # integrate.solve_ivp
    (lambda: integrate.solve_ivp(lambda t, y: -y, (0.0, "a"), X), InvalidArgument,
     r"solve_ivp: t_span\[1\] must be a real number, got 'a' \(str\)"),
    (lambda: integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), X, events=3), InvalidArgument,
     r"solve_ivp: events must be a callable event\(t, y, \*args\) or a list or tuple of them, "
     r"got 3 \(int\)"),
    (lambda: integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), X, rtol="a"), InvalidArgument,
     r"solve_ivp: rtol must be a real number or an array of 3 .*got 'a' \(str\)"),
    (lambda: integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), X, max_step="a"),
     InvalidArgument, r"solve_ivp: max_step must be a real number, got 'a' \(str\)"),
    (lambda: integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), X, t_eval=[1.0], stats={}),
     InvalidArgument, r"solve_ivp: stats must be a list .*got \{\} \(dict\); pass stats=\[\]"),
    (lambda: integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), None), InvalidArgument,
     r"solve_ivp: y0 must hold real numbers, got None \(NoneType\)"),
    (lambda: integrate.solve_ivp(lambda t, y: -y, 1.0, X, dense_output=True), InvalidArgument,
     r"solve_ivp: t_span must be a pair \(t0, tf\) of real numbers, got 1.0 \(float\)"),
    (lambda: integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), X, method="Euler"),
     InvalidArgumentValue, r"solve_ivp: `method` must be one of RK23, RK45, DOP853, Radau, BDF, "
     r"LSODA .*got 'Euler' \(str\)"),
    (lambda: integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), np.ones((2, 2)), method="LSODA"),
     InvalidArgumentValue, r"solve_ivp: `y0` must be 1-dimensional .*got an array of shape "
     r"\(2, 2\)"),
    (lambda: integrate.solve_ivp(lambda y: -y, (0.0, 1.0), X), InvalidArgument,
     r"solve_ivp: fun is called as fun\(t, y, \*args\) with 0 extra arguments .*takes 1 "
     r"positional argument but 2 were given"),
    # integrate.odeint, on plain values as SciPy's odeint would see them
    (lambda: integrate.odeint(lambda y, t: -y, X, 1.0), InvalidArgumentValue,
     r"odeint: t must be a 1-D array \(the output times, t\[0\] the initial time\), got 0 "
     r"dimensions"),
    (lambda: integrate.odeint(lambda y, t: -y, X, [0.0, 1.0, 0.5]), InvalidArgumentValue,
     r"odeint: the values in t must be monotonically increasing or monotonically decreasing"),
    (lambda: integrate.odeint(lambda y, t: -y, np.ones((2, 2)), [0.0, 1.0]),
     InvalidArgumentValue, r"odeint: y0 must be a number or a 1-D array .*got 2 dimensions"),
    (lambda: integrate.odeint(lambda y, t: -y, "abc", [0.0, 1.0]), InvalidArgument,
     r"odeint: y0 must be a number or a 1-D array \(the initial state\) of real numbers, "
     r"got 'abc' \(str\)"),
    (lambda: integrate.odeint(lambda y, t: -y, X, [0.0, 1.0], Dfun=X), InvalidArgument,
     r"odeint: Dfun must be None or a callable Dfun\(y, t, \*args\)"),
    (lambda: integrate.odeint(lambda y, t, k: -k * y, X, [0.0, 1.0], args=[2.0]),
     InvalidArgument, r"odeint: extra arguments must be in a tuple, got \[2.0\] \(list\)"),
    (lambda: adsim.grad(lambda x: np.sum(integrate.odeint(lambda y, t: -y, x, [1.0, 0.0, 2.0])))(
        X), InvalidArgumentValue, r"odeint: the values in t must be monotonically"),
    # fusion
    (lambda: adsim.set_fusion("sometimes"), InvalidArgumentValue,
     r"set_fusion: mode must be one of 'auto', 'always', 'never', got 'sometimes' \(str\)"),
    (lambda: adsim.set_fusion(None), InvalidArgument,
     r"set_fusion: mode must be one of .*got None \(NoneType\)"),
    # sparse
    (lambda: adsim.sparse_jacobian_plan(F, X, orders="natural"), InvalidArgument,
     r"adsim.sparse_jacobian_plan: orders must be a non-empty tuple or list .*got 'natural' "
     r"\(str\); for one ordering write orders=\('natural',\)"),
    (lambda: adsim.sparse_hessian_plan(f, X, orders=["bogus"]), InvalidArgumentValue,
     r"adsim.sparse_hessian_plan: orders holds the unknown ordering 'bogus'"),
    # parallel
    (lambda: adsim.parallel.map("gradient", adsim.record(f, X), 3), InvalidArgument,
     r"adsim.parallel.map: points must be an iterable of input points .*got 3 \(int\)"),
    (lambda: adsim.parallel.map("gradient", 3.0, [X]), InvalidArgument,
     r"map: tape must be a tape \(adsim.record\) or the function to record, got 3.0 \(float\)"),
    (lambda: adsim.parallel.sum_gradients(f, [X]), InvalidArgument,
     r"sum_gradients: tapes must be one tape \(adsim.record\), or a list .*got the function f"),
    (lambda: adsim.parallel.sum_gradients(adsim.record(f, X), 3), InvalidArgument,
     r"sum_gradients: inputs must be an iterable .*got 3 \(int\)"),
    (lambda: adsim.parallel.sum_gradients(adsim.record(f, X), [X], argnum="0"), InvalidArgument,
     r"sum_gradients: argnum must be an int .*got '0' \(str\)"),
])
def test_argument_errors_name_the_argument_the_value_and_what_is_accepted(call, error, words):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=words):
            call()


# ---------------------------- 8. tapes, loaded tapes, made functions, switches, checks

def _tapes():
    tape = adsim.record(f, X)
    return {"recorded": tape, "loaded": adsim.tapefile.loads(adsim.tapefile.dumps(tape))}


@pytest.mark.parametrize("kind", ["recorded", "loaded"])
@pytest.mark.parametrize("call, error, words", [
    (lambda t: t.gradient(np.ones(4)), InvalidArgumentValue,
     r"input 0 has shape \(4,\) but the tape was recorded for shape \(3,\); record a new tape"),
    (lambda t: t.forward(None), InvalidInput, r"input 0 is None; pass a float64 array"),
    (lambda t: t.gradient(X.astype(complex)), InvalidInput,
     r"input 0 is complex \(complex128\).*split it into real and imaginary parts"),
    (lambda t: t.value_and_gradient("abc"), InvalidInput,
     r"input 0 has dtype <U3 \(given a str\); pass a float64 array"),
    (lambda t: t.jacobian([[1.0, 2.0], [3.0]]), InvalidInput,
     r"input 0 is not an array of numbers"),
    (lambda t: t.gradient((X, X)), InvalidArgumentValue,        # one input: one array
     r"input 0 has shape \(2, 3\) but the tape was recorded for shape \(3,\)"),
    (lambda t: t.jvp(X, np.ones(2)), InvalidArgumentValue,
     r"tangent 0 has shape \(2,\); expected \(3,\) \(one direction\) or \(3, 'k'\)"),
    (lambda t: t.vjp(X, np.ones((2, 2))), InvalidArgumentValue,
     r"the adjoint weight has shape \(2, 2\); expected \(\) \(one weight\)"),
    (lambda t: t.hvp(X, X, w=np.ones(3)), InvalidArgumentValue,
     r"the output weight has shape \(3,\), expected \(\)"),
    (lambda t: t.jacobian(X, mode="sideways"), InvalidArgumentValue,
     r"jacobian mode must be 'forward' or 'reverse', not 'sideways'"),
    (lambda t: t.save(3), InvalidArgument,
     r"tape.save: file must be a path \(str, bytes or os.PathLike\) or a binary file object "
     r"open for writing, got an object of type int"),
])
def test_tape_methods_name_the_argument(kind, call, error, words):
    with pytest.raises(error, match=words):
        call(_tapes()[kind])


def _cond_on_every_element(x):
    return adsim.checkpoint_while(lambda z: z > 0.1, lambda z: 0.5 * z, x)


@pytest.mark.parametrize("call, error, words", [
    (lambda: adsim.set_interposition(np.ones(3)), InvalidArgument,
     r"adsim.set_interposition: enabled must be True or False, got an array of shape \(3,\)"),
    (lambda: adsim.interposition("off"), InvalidArgument,
     r"adsim.interposition: enabled must be True or False, got 'off' \(str\)"),
    (lambda: adsim.load_tape(3), InvalidArgument,
     r"adsim.load_tape: file must be a path .*open for reading, got an object of type int"),
    (lambda: adsim.record(f), InvalidArgument,
     r"adsim.record: no inputs were given after the function f; pass the point"),
    (lambda: adsim.hessp(f)(X), InvalidArgument,
     r"adsim.hessp\(f\) made hessp_f\(x, p, \*args\): missing 1 required positional argument: "
     r"'p'; call it with the arguments its signature names"),
    (lambda: adsim.grad(F)(X), InvalidArgumentValue,
     r"grad needs a function with a scalar output; F returned shape \(3,\)"),
    (lambda: adsim.grad(lambda z: (z, z))(X), InvalidArgument,
     r"grad needs a function with a scalar output; <lambda> returned the container \(\*, \*\)"),
    (lambda: adsim.hessian(lambda z: [z, z])(X), InvalidArgument,
     r"returned the container \[\*, \*\].*must return one array"),
    (lambda: adsim.hvp(f, X, np.ones(2)), InvalidArgumentValue,
     r"direction 0 has shape \(2,\); expected \(3,\)"),
    (lambda: _cond_on_every_element(X), InvalidArgumentValue,
     r"adsim.checkpoint_while: cond\(state, \*args\) must return one truth value .*got an array "
     r"of shape \(3,\); reduce it"),
    (lambda: adsim.grad(lambda x: np.sum(_cond_on_every_element(x)))(X), InvalidArgumentValue,
     r"cond\(state, \*args\) must return one truth value"),
    (lambda: adsim.TwoLevel(10, 0, 0), InvalidArgumentValue,
     r"adsim.TwoLevel: memory_snapshots \+ disk_snapshots must be >= 1, got 0"),
    # adsim.testing.check_grads
    (lambda: adsim.testing.check_grads(f(X), X), NotCallable,
     r"adsim.check_grads: f must be a callable"),
    (lambda: adsim.testing.check_grads(f, X, modes="fwd"), InvalidArgument,
     r"modes must be a non-empty tuple of 'fwd', 'rev', 'cs', got 'fwd' \(str\)"),
    (lambda: adsim.testing.check_grads(f, X, order=3), InvalidArgumentValue,
     r"order must be 1 \(first derivatives\) or 2 .*got 3 \(int\)"),
    (lambda: adsim.testing.check_grads(f, X, rtol=-1e-6), InvalidArgumentValue,
     r"rtol must be a finite number > 0, got -1e-06"),
    (lambda: adsim.testing.check_grads(f, X, eps="small"), InvalidArgument,
     r"eps must be a real number, got 'small' \(str\)"),
    (lambda: adsim.testing.check_grads(f, X, n_directions=0), InvalidArgumentValue,
     r"n_directions must be >= 1, got 0"),
    (lambda: adsim.testing.check_grads(lambda z: np.sum(np.log(z)), -X), InvalidArgumentValue,
     r"f\(x\) is not finite at the point x given \(it holds NaN\)"),
])
def test_more_argument_errors_name_the_argument(call, error, words):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=words):
            call()


def test_a_tape_of_two_inputs_counts_them():
    tape = adsim.record(two, X, Y)
    with pytest.raises(InvalidArgumentValue, match=r"the tape has 2 inputs but 3 were given; "
                                                   r"pass one array per input: "
                                                   r"tape.gradient\(x1, x2\), or x=\(x1, x2\)"):
        tape.gradient(X, Y, X)


def test_a_misfit_call_of_a_made_function_is_told_apart_from_a_type_error_inside_f():
    def broken(x):
        return np.sum(x) * (len(x) + None)
    with pytest.raises(TypeError, match="unsupported operand") as info:
        adsim.grad(broken)(X)
    assert not isinstance(info.value, AdsimError)          # the user's own error, untouched
    with pytest.raises(InvalidArgument, match=r"adsim.hessp\(f\) made hessp_f\(x, p, \*args\): "
                                              r"got an unexpected keyword argument 'v'"):
        adsim.hessp(f)(X, v=X)


@pytest.mark.parametrize("call, words", [
    (lambda: adsim.hvp(f, X), r"adsim.hvp\(f, x, v, \*args\): missing 1 required positional "
                              r"argument: 'v'"),
    (lambda: adsim.jvp(f, X, X, X), r"adsim.jvp\(f, x, v\): takes 3 positional arguments but 4 "
                                    r"were given"),
    (lambda: adsim.grad(f, argnum=1), r"adsim.grad\(f, argnums=0, cache=True, has_aux=False\): "
                                      r"got an unexpected keyword argument 'argnum'"),
    (lambda: adsim.record(), r"adsim.record\(f, \*args, \*\*kwargs\): missing 1 required "
                             r"positional argument: 'f'"),
    (lambda: adsim.checkpoint_loop(F, X), r"adsim.checkpoint_loop\(step, state, n_steps, .*\): "
                                          r"missing 1 required positional argument: 'n_steps'"),
    (lambda: adsim.checkpoint_while(lambda u: False, F, X, snapshot=3),
     r"adsim.checkpoint_while\(cond, step, state, .*\): got an unexpected keyword argument "
     r"'snapshot'"),
    (lambda: adsim.primitive(np.sin, vjpp=None),
     r"adsim.primitive\(value, \*, jvp=None, .*\): got an unexpected keyword argument 'vjpp'"),
])
def test_calls_off_the_signature_show_it(call, words):
    with pytest.raises(InvalidArgument, match=words + r"; call it as its signature says"):
        call()


@pytest.mark.parametrize("entry, words", [
    (adsim.hvp, r"use adsim.hessp\(f\)"),
    (adsim.grad_and_hvp, r"use adsim.hessp\(f\) and adsim.grad\(f\)"),
    (adsim.jvp, r"lambda x, v: adsim.jvp\(f, x, v\)"),
    (adsim.vjp, r"lambda x, w: adsim.vjp\(f, x, w\)"),
])
def test_a_point_entry_given_the_function_alone_says_what_gives_a_function(entry, words):
    """autograd's hessian_vector_product(f) and make_jvp(f) return functions;
    adsim's hvp, jvp and vjp take the point: the error names the form that
    makes a function."""
    with pytest.raises(InvalidArgument, match=words):
        entry(f)
    assert adsim.hessp(f)(X, X).shape == X.shape
