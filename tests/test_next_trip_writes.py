"""A list holds an array that the next trip of the loop writes into (issue 13).

``g[0] = z[1]; L.append(g)`` in a loop: the next trip writes into the array ``L`` already holds,
so ``L[0]`` is the last ``g`` in Python, where srcgrad's derivative took the value ``g`` had
when it was appended: after ``L[0] *= x``, d/dx[1] was 6.48 where Python gives 6.26, with no
error (the value was right). The write comes before the append in the loop's text, so the check
of a write after a container takes the array missed it; it is now refused at the line, as the
same code without a loop was. A loop that binds the array afresh each trip is not refused.
"""

import numpy as np
import pytest
from gradcheck import numeric_grad

import srcgrad
from srcgrad import UnsupportedSyntaxError


def appended_then_written_next_trip(x, a):
    g = x * 2.0
    z = x.copy()
    L = []
    for _ in range(2):
        z = z * a + g
        g[0] = z[1]
        L.append(g)
    L[0] *= x
    return np.sum(g ** 2) + np.sum(z)


def held_by_a_dict_then_written_next_trip(x, a):
    g = x * 2.0
    z = x.copy()
    d = {}
    i = 0
    while i < 3:
        z = z * a + g
        g[0] = z[1]
        d[i] = g
        i += 1
    return np.sum(d[0] ** 2) + np.sum(z)


@pytest.mark.parametrize("f", [appended_then_written_next_trip,
                               held_by_a_dict_then_written_next_trip])
def test_an_array_a_container_holds_written_by_the_next_trip_is_refused(f):
    x = np.array([0.3, -0.2, 0.5])
    with pytest.raises(UnsupportedSyntaxError, match="refers to the array in `g`") as raised:
        srcgrad.grad(f)(x, 0.8)
    assert raised.value.filename == __file__


def made_afresh_each_trip(x, a):
    z = x.copy()
    L = []
    for _ in range(2):
        g = x * 2.0
        z = z * a + g
        g[0] = z[1]
        L.append(g)
    L[0] *= x
    return np.sum(L[0] ** 2) + np.sum(L[1]) + np.sum(z)


def test_an_array_made_afresh_each_trip_then_written_is_followed():
    x = np.array([0.3, -0.2, 0.5])
    value, g = srcgrad.value_and_grad(made_afresh_each_trip)(x, 0.8)
    assert value == made_afresh_each_trip(x.copy(), 0.8)
    np.testing.assert_allclose(g, numeric_grad(made_afresh_each_trip, (x, 0.8), 0), rtol=1e-6)
