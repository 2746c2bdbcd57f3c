"""``lst = d.setdefault(k, [])`` made in a loop or a branch and changed or read after it: the
list of the last trip (the branch's), ``d[k]`` at that trip's key, held in a name of its own
(normalize/setdefault_held.py ``_past_block``); against central differences, one at second
order. Where the block or what follows changes ``d``'s items first, it stays refused."""

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x

from srcgrad import UnsupportedSyntaxError, grad

X = np.array([0.7, -1.3, 2.1])
T = np.array([0.3, -0.5, 0.8])


def after_the_loop(c, x):
    d = {}
    for i in range(3):
        lst = d.setdefault(i % 2, [])
        lst.append(x[i] * c)
    lst.append(c * c)
    return d[0][0] * d[0][1] + d[1][0] * d[0][-1] + len(lst)


def keyed_by_the_loop_variable(c, x):
    d = {"a": [x[2]]}
    for k in ("a", "b"):
        lst = d.setdefault(k, [])
        lst.append(x[0] * c)
    lst.append(x[1])
    return d["a"][0] * d["a"][1] + d["b"][0] * d["b"][1] * c


def after_a_branch(c, x):
    d = {}
    if x[0] > 0:
        lst = d.setdefault("k", [x[1]])
        lst.append(x[2] * c)
    lst.append(c)
    return d["k"][0] * d["k"][1] * d["k"][2]


def after_a_loop_that_breaks(c, x):
    d = {}
    for i in range(3):
        lst = d.setdefault(i, [c])
        if x[i] < 0:
            break
        lst.append(x[i])
    lst.append(x[2] * c)
    return d[0][0] * d[0][1] + d[1][0] * d[1][-1]


@pytest.mark.parametrize("f", [after_the_loop, keyed_by_the_loop_variable, after_a_branch,
                               after_a_loop_that_breaks], ids=lambda f: f.__name__)
def test_the_list_of_the_last_trip(f):
    check_both_and_jvp(f, 0.6, X, T)


def test_second_order():
    check_hvp_in_x(after_the_loop, 0.6, X, T)


def changed_in_the_loop_after(c, x):
    d = {}
    for i in range(3):
        lst = d.setdefault(i % 2, [])
        lst.append(x[i] * c)
        d[(i + 1) % 2] = [c]
    lst.append(c)
    return d[0][0] + d[1][0]


def changed_after_the_loop(c, x):
    d = {}
    for i in range(3):
        lst = d.setdefault(i % 2, [])
        lst.append(x[i] * c)
    d[0] = []
    lst.append(c)
    return d[1][0] + len(d[0])


@pytest.mark.parametrize("f", [changed_in_the_loop_after, changed_after_the_loop],
                         ids=lambda f: f.__name__)
def test_refused_where_the_dict_changes_first(f):
    with pytest.raises(UnsupportedSyntaxError, match="writing into `lst`"):
        grad(f, wrt=1)
