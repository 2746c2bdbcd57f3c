"""Passes over code that change how it runs, not what it computes: loop-invariant hoisting,
common subexpressions, constant folding, dead code, shape views, returned gradients the caller
owns, early release of values."""
