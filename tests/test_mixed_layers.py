"""A loop over a list holding objects of two or more classes, calling each (issue 14):
``for layer in self.layers: h = layer(h)`` with ``Dense`` and ``Act`` layers. Each call is a
branch on the item's class, calling that class's method. Values equal Python's; gradients are
checked against central differences in float64 in reverse and forward mode, and at second order.
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad
from second_order_check import hessian_by_differences

import srcgrad

X = np.array([0.3, -0.7, 1.1, 0.5])


class Dense:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.tanh(self.w * x + 0.1)

    def affine(self, x):
        return self.w * x

    @property
    def gain(self):
        return 2.0 * self.w


class Act:
    def __init__(self, a):
        self.a = a

    def __call__(self, x):
        return np.sin(x) * self.a

    def affine(self, x):
        return x + self.a

    @property
    def gain(self):
        return self.a * self.a


class Net:
    def __init__(self, layers):
        self.layers = layers

    def loss(self, x):
        h = x
        for layer in self.layers:
            h = layer(h)
        return np.sum(h ** 2)


NET = Net([Dense(0.5), Act(2.0), Dense(1.5), Act(-0.5)])


def through_a_global(x):
    h = x
    for layer in NET.layers:
        h = layer(h)
    return np.sum(h)


def through_an_argument(x, net):
    h = x
    for layer in net.layers:
        h = layer.affine(h) * layer(h)
    return np.sum(h)


def by_index(x):
    h = x
    layers = NET.layers
    for i in range(len(layers)):
        h = layers[i](h) * x
    return np.sum(h)


def built_here(x):
    layers = [Dense(x[0]), Act(0.5), Dense(-1.2)]
    h = x
    for layer in layers:
        h = layer(h) + layer.affine(h)
    return np.sum(h)


@pytest.mark.parametrize("f", [through_a_global, by_index, built_here], ids=lambda f: f.__name__)
def test_a_loop_over_objects_of_two_classes(f):
    value, _ = srcgrad.value_and_grad(f)(X)
    np.testing.assert_allclose(value, f(X), rtol=1e-13)
    check_grad(f, (X,))
    _, t = srcgrad.jvp(f)(X, np.ones(4))
    np.testing.assert_allclose(t, np.sum(numeric_grad(f, (X,), 0)), rtol=1e-6, atol=1e-8)


def test_a_loop_over_an_arguments_objects_of_two_classes_per_classes_passed():
    for layers in ([Dense(0.5), Act(2.0), Dense(1.5)], [Act(0.3), Act(1.2), Dense(-0.7)]):
        net = Net(layers)
        value, g = srcgrad.value_and_grad(through_an_argument)(X, net)
        np.testing.assert_allclose(value, through_an_argument(X, net), rtol=1e-13)
        np.testing.assert_allclose(g, numeric_grad(through_an_argument, (X, net), 0),
                                   rtol=1e-6, atol=1e-8)
        _, t = srcgrad.jvp(through_an_argument)(X, net, np.ones(4))
        np.testing.assert_allclose(t, np.sum(g), rtol=1e-6)
    # the gradient of the objects' fields: a difference of the last layer's number
    _, (_, gnet) = srcgrad.value_and_grad(through_an_argument, wrt=(0, 1))(X, net)
    w = net.layers[2].w

    def of_w(v):
        net.layers[2].w = v
        return through_an_argument(X, net)

    difference = (of_w(w + 1e-6) - of_w(w - 1e-6)) / 2e-6
    net.layers[2].w = w
    np.testing.assert_allclose(gnet.layers[2].w, difference, rtol=1e-6)


def test_a_bound_method_over_layers_of_two_classes_at_second_order():
    np.testing.assert_allclose(srcgrad.grad(NET.loss)(X), numeric_grad(NET.loss, (X,), 0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(srcgrad.hessian(through_a_global)(X),
                               hessian_by_differences(through_a_global, (X,)),
                               rtol=1e-5, atol=1e-6)


class Head:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def loss(self, x):
        s = 0.0
        for f in [self.a.affine, self.b.__call__]:
            s = s + np.sum(np.sin(f(x)))
        return s


def bound_methods_in_a_tuple(x):
    s = 0.0
    fs = (NET.layers[0].affine, NET.layers[1].affine, NET.layers[2].__call__)
    for f in fs:
        s = s + np.sum(f(x) * x)
    return s


def test_bound_methods_held_in_a_list_or_a_tuple_looped_over_and_called():
    head = Head(Dense(0.5), Act(-1.5))
    for f in (head.loss, bound_methods_in_a_tuple):
        value, g = srcgrad.value_and_grad(f)(X)
        np.testing.assert_allclose(value, f(X), rtol=1e-13)
        np.testing.assert_allclose(g, numeric_grad(f, (X,), 0), rtol=1e-6, atol=1e-8)
        _, t = srcgrad.jvp(f)(X, np.ones(4))
        np.testing.assert_allclose(t, np.sum(g), rtol=1e-6)
    np.testing.assert_allclose(srcgrad.hessian(head.loss)(X),
                               hessian_by_differences(head.loss, (X,)), rtol=1e-5, atol=1e-6)


def branch_assigned(x, c):
    if c > 0:
        layer = Dense(x[0])
    else:
        layer = Act(x[1])
    h = layer.affine(x)
    return np.sum(layer(h) * h)


def branch_expression(x, c):
    layer = Dense(x[0]) if c > 0 else Act(x[1])
    h = x
    for lay in [layer, Dense(-1.2)]:
        h = lay(h) * lay.gain
    return np.sum(h ** 2)


def appended(x, c):
    layers = []
    layers.append(Dense(x[0]))
    layers.append(Act(c))
    layers.append(Dense(-1.2))
    h = x
    for layer in layers:
        h = layer(h) + 0.5 * h
    return np.sum(h)


def appended_in_a_loop(x, c):
    layers = []
    for i in range(3):
        if x[i] > 0:
            layers.append(Dense(x[i] * c))
        else:
            layers.append(Act(0.5))
    h = x
    for i in range(len(layers)):
        h = layers[i].affine(h) * layers[i](h)
    return np.sum(h)


class Matrix:
    def __init__(self, W):
        self.W = W

    def affine(self, x):
        return self.W @ x


def branch_with_a_constant_matrix(x, c):
    # (the tangent of `W`, which carries none, was a number: `0.0 @ x` failed in jvp)
    layer = Matrix(np.eye(4) * 2.0) if c > 0 else Act(x[1])
    return np.sum(np.sin(layer.affine(x)))


def _make_layer(i, x, c):
    if i % 2 == 0:
        return Dense(x[i] * c)
    return Act(0.5 * i)


def given_by_a_helper_in_a_loop(x, c):
    # the helper's result may be of either class (its body inlined on a copy at the loop's
    # head: Receivers.widen; was the run-time class check's error)
    layer = Dense(x[0])
    h = x
    for i in range(3):
        h = layer.affine(h) * layer(h)
        layer = _make_layer(i + 1, x, c)
    return np.sum(h)


class _Holder:
    pass


def held_in_a_dict_and_a_field(x, c):
    # a variable of two classes put into a dict literal and an object's field, then called
    # from there (was refused: "does not support the method `.affine()`", "`.lay()`"); an
    # object written into a dict by a key (its gradient was refused when it ran: "an
    # arithmetic operator given an object of class Act")
    layer = Dense(x[0]) if c > 0 else Act(x[1])
    held = {"a": layer, "b": Dense(2.0)}
    held["b"] = Act(x[2])
    held["c"] = layer
    box = _Holder()
    box.lay = layer
    return np.sum(held["a"].affine(x) * held["b"](x) + box.lay(x) * box.lay.gain
                  + held["c"](x))


def read_by_a_key_known_when_it_runs(x, c):
    # a dict built here read by the keys of a loop over it: each call a branch on the class
    # (was refused at transform time: "does not support the method `.affine()`")
    layer = Dense(x[0]) if c > 0 else Act(x[1])
    held = {"a": layer, "b": Act(c)}
    h = x
    for k in held:
        h = held[k].affine(h) * held[k](h)
    return np.sum(h)


def written_into_a_list_by_an_index(x, c):
    # objects written into a list by an index and read back (was refused at transform time;
    # the write's gradient was refused when it ran: "an arithmetic operator given an object")
    layers = [None, None, None]
    for i in range(3):
        if x[i] * c > 0:
            layers[i] = Dense(x[i] * c)
        else:
            layers[i] = Act(x[i] + 0.5)
    layers[1] = Dense(c)
    h = x
    for i in range(len(layers)):
        h = layers[i].affine(h) * layers[i](h)
    return np.sum(h + layers[2].gain)


def _written_by_an_index(x):
    layers = [None, None]
    for i in range(2):
        layers[i] = Dense(x[i])
    return np.sum(layers[1](layers[0].affine(x)))


def replaced_by_a_constant_index(x, c):
    # an item of a literal of one class replaced by an object of another, then read by a
    # run-time index (raised "inlined the methods of Dense for an object that is now a Act"
    # when it ran)
    layers = [Dense(c), Dense(x[0])]
    layers[0] = Act(x[1])
    k = 1 if c > 0 else 0
    h = layers[k].affine(x) + layers[0](x)
    for i in range(len(layers)):
        h = layers[i].affine(h) * layers[i](h)
    return np.sum(h)


def test_objects_written_into_a_list_by_an_index_at_second_order():
    f, v = _written_by_an_index, np.array([0.2, -0.4, 0.1, 0.3])
    np.testing.assert_allclose(srcgrad.hvp(f)(X, v), hessian_by_differences(f, (X,)) @ v,
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", [branch_assigned, branch_expression, appended, appended_in_a_loop,
                               branch_with_a_constant_matrix, given_by_a_helper_in_a_loop,
                               held_in_a_dict_and_a_field, read_by_a_key_known_when_it_runs,
                               written_into_a_list_by_an_index, replaced_by_a_constant_index],
                         ids=lambda f: f.__name__)
def test_a_variable_or_a_list_appended_to_given_objects_of_two_classes(f):
    # a call or a property read on it is a branch on the object's class (normalize/methods.py
    # Receivers.join and _appended, inline.py _by_class; these were refused at transform time:
    # "cannot resolve", "does not support the method")
    for c in (0.8, -0.6):
        value, g = srcgrad.value_and_grad(f)(X, c)
        np.testing.assert_allclose(value, f(X, c), rtol=1e-13)
        np.testing.assert_allclose(g, numeric_grad(f, (X, c), 0), rtol=1e-6, atol=1e-8)
        _, t = srcgrad.jvp(f)(X, c, np.ones(4))
        np.testing.assert_allclose(t, np.sum(g), rtol=1e-6)
        if f in (branch_assigned, appended_in_a_loop):
            np.testing.assert_allclose(srcgrad.hessian(f)(X, c),
                                       hessian_by_differences(f, (X, c)), rtol=1e-5, atol=1e-6)


MODE = "double"


class _Switched:
    """A layer chosen by a str field, a scale by a module constant: the branches stay in the
    derivative (not folded), so a change between calls is seen."""

    def __init__(self, kind):
        self.kind = kind
        self.lin = Dense(np.array([0.5, -1.0, 2.0, 0.3]))
        self.act = Act(1.5)
        self.scale = 2.0

    def loss(self, x):
        if self.kind == "lin":
            layer = self.lin
        else:
            layer = self.act
        h = layer(x)  # (was refused: "a method or object taken out of a list ... held by")
        if MODE == "double":
            h = h * self.scale
        return np.sum(h ** 2)


def test_a_branch_on_a_str_field_or_a_global_follows_their_changes(monkeypatch):
    model = _Switched("lin")
    by_x = srcgrad.grad(model.loss)
    by_self = srcgrad.grad(_Switched.loss, wrt="self")
    for kind, mode in (("lin", "double"), ("act", "double"), ("act", "single")):
        model.kind = kind
        monkeypatch.setattr(f"{__name__}.MODE", mode)
        np.testing.assert_allclose(by_x(X), numeric_grad(model.loss, (X,), 0), rtol=1e-6)
        g = by_self(model, X)
        up, down = _Switched(kind), _Switched(kind)
        up.scale, down.scale = 2.0 + 1e-6, 2.0 - 1e-6
        np.testing.assert_allclose(g.scale, (up.loss(X) - down.loss(X)) / 2e-6, rtol=1e-6,
                                   atol=1e-9)
