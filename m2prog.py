
import numpy as np
def f(x, a, M, P):
    for i3 in reversed(range(3)):
        if ((x).sum() < -0.2):
            break
        d5 = {"p": np.cos(x), "q": np.maximum(np.cumsum(M[-1]), (x)[::-1]), "p": np.array(x)}
        d5["q"] += x
        x = np.zeros(5) + ((a * P[-1]))
        a = 0.5
    return np.sum(x) + a
