"""A module whose helpers read its own global array (tests/test_outside_sharing.py)."""

import numpy as np

H = np.array([1.0, 2.0, 3.0])


def reads_h(v):
    return np.sum(H * v)
