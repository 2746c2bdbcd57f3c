"""Tests that kill surviving mutants of srcgrad/rules/structures.py (the rule of calling a
dataclass or namedtuple class, made per class): a class whose call is not a plain pack of its
fields gets no such rule, and its ``__init__`` is differentiated instead.

Each test fails under the mutant it names (re-planted with ``tests/mutate_code.py --code
srcgrad.rules.structures --rerun``) and passes on main."""

import dataclasses

import numpy as np

from srcgrad import grad, jvp

X = np.array([0.5, -1.0])
T = np.array([1.0, 0.5])


@dataclasses.dataclass(init=False)
class Doubled:
    w: np.ndarray

    def __init__(self, v):  # (a parameter that is no field: not a pack of the fields)
        self.w = 2.0 * v


class Fielded:
    _fields = ("a",)  # (a class with `_fields` that is no tuple: no namedtuple)

    def __init__(self, a):
        self.a = 3.0 * a


def through_own_init(x):
    return np.sum(Doubled(x).w ** 2)


def through_fields_attribute(x):
    return np.sum(Fielded(x).a ** 2)


def test_a_dataclass_with_an_init_of_its_own_is_no_pack_of_its_fields():
    # structures:51 `or` -> `and`: Doubled(v) was taken for a pack of the field `v`
    np.testing.assert_allclose(grad(through_own_init)(X), 8.0 * X)
    np.testing.assert_allclose(jvp(through_own_init)(X, T)[1], 8.0 * X @ T)


def test_a_class_with_fields_that_is_no_tuple_is_no_namedtuple():
    # structures:33 `and` -> `or`: any class with `_fields` was taken for a namedtuple
    np.testing.assert_allclose(grad(through_fields_attribute)(X), 18.0 * X)
    np.testing.assert_allclose(jvp(through_fields_attribute)(X, T)[1], 18.0 * X @ T)
