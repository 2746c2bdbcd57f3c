"""Every rule row of ``tests/test_rules.py`` again, at the shapes where broadcasting bugs hide.

The rows in ``test_rules.py`` are written at one or two shapes each. Here the shapes are
generated, not written by hand, from what each rule declares:

- a rule registered as elementwise (``rule.broadcast``: contributions are unbroadcast) gets a
  fixed set of broadcast patterns for its number of array operands: size-1 axes in every
  position, broadcasting in both directions (``(2, 1)`` against ``(1, 3)``), 0-d operands and
  3-D/4-D operands (``ELEMENTWISE_PATTERNS``);
- every other row gets, for each array input, each axis set to 1 in turn, one rank less, 0-d,
  and a batch axis in front (3-D, and 4-D with a size-1 batch axis that broadcasts); for the
  first two array inputs also their combinations (lower rank against batched, batched against
  batched), which is where ``(3,) @ (2, 3, 4)`` and 3-D by 3-D products come from.

A variant is kept where NumPy accepts it: the call runs without error or warning and gives a
finite float result. Each kept variant is checked like a row: the gradient of every input against
central differences in float64, and ``jvp`` against the gradient (forward mode). Variants that
repeat a row's own shapes are dropped.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import test_rules as table
from gradcheck import check_grad

import srcgrad
from srcgrad.rules import lookup

MAX_SIZE = 64  # elements per input, so that central differences stay cheap

# Operand shapes per number of array operands of an elementwise rule.
ELEMENTWISE_PATTERNS = {
    1: [(1,), (1, 1), (2, 1, 3), (1, 2, 1, 2)],
    2: [
        ((2, 3), (1, 1)),
        ((1, 1), (2, 3)),
        ((2, 1), (1, 3)),
        ((1, 3), (2, 1)),
        ((3,), (2, 1, 1)),
        ((2, 1, 3), (4, 1)),
        ((1, 2, 1, 3), (2, 1, 2, 1)),
        ((), (1, 1)),
        ((2, 1, 3), ()),
    ],
    3: [
        ((2, 3), (1, 1), (3,)),
        ((1, 3), (2, 1), ()),
        ((1, 1), (2, 1, 3), (1, 3)),
        ((2, 1, 3), (1, 2, 1), (2, 2, 1)),
        ((), (1, 2, 1, 3), (2, 1, 1, 1)),
    ],
}


def _arrays(r):
    """The names of a row's generated inputs (constants are globals, not inputs)."""
    return [k for k, v in r.inputs.items() if isinstance(v, tuple)]


def _options(shape):
    """Shapes to try for one input of a general row."""
    out = [shape[:i] + (1,) + shape[i + 1:] for i in range(len(shape)) if shape[i] != 1]
    if shape:
        out += [shape[1:], ()]
    out.append((2,) + shape)
    if len(shape) >= 2:
        out.append((2, 1) + shape)
    return out


def _pair_options(shape):
    out = [shape]
    if shape:
        out.append(shape[1:])
    out.append((2,) + shape)
    if len(shape) >= 2:
        out.append((2, 1) + shape)
    return out


def _shape_sets(r):
    names = _arrays(r)
    base = {k: r.inputs[k][0] for k in names}
    rule = lookup(r.fn)
    if rule is not None and rule.broadcast:
        for pattern in ELEMENTWISE_PATTERNS.get(len(names), []):
            if len(names) == 1:
                pattern = (pattern,)
            yield dict(zip(names, pattern))
        return
    for k in names:
        for shape in _options(base[k]):
            yield {**base, k: shape}
    if len(names) >= 2:
        a, b = names[:2]
        for sa in _pair_options(base[a]):
            for sb in _pair_options(base[b]):
                yield {**base, a: sa, b: sb}


def _accepted(r, shapes):
    """Whether NumPy runs the row's call at these shapes, giving a finite float result."""
    if any(int(np.prod(s)) > MAX_SIZE for s in shapes.values()):
        return False
    variant = _with_shapes(r, shapes)
    args = table.materialize(variant.inputs, 7)
    consts = {k: v for k, v in variant.inputs.items() if isinstance(v, np.ndarray)}
    *stmts, result = variant.call.split(";")
    primal = table.define(list(args), stmts + [f"return {result}"], consts)
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            out = np.asarray(primal(*args.values()))
    except Exception:
        return False
    if r.fn is np.std and np.any(out == 0):
        # the deviation of one element is identically 0, but sqrt has no derivative at 0: the
        # gradient is NaN (as in other NumPy-based AD), not the 0 a difference quotient gives
        return False
    kinds = "fc" if _is_fft(r.fn) else "f"  # the transforms' results are complex
    return out.dtype.kind in kinds and out.size > 0 and bool(np.all(np.isfinite(out)))


def _is_fft(fn):
    return getattr(fn, "__module__", "").startswith("numpy.fft")


def _generated_for(r, fft_done):
    """Whether a row gets shape variants: every real row; of the complex rows (test_rules.py
    ``complex_rows``, ``fft_rows``) only the first row of each FFT function, to keep the test
    time down (the complex rows check conventions, which do not depend on the shapes)."""
    if r.marks:
        return False
    complex_inputs = any(len(v[1]) == 3 for v in r.inputs.values() if isinstance(v, tuple))
    if _is_fft(r.fn):
        if r.fn in fft_done:
            return False
        fft_done.add(r.fn)
        return True
    return not complex_inputs


def _refusal(r, shapes):
    """The message of a run-time refusal expected at these shapes, or None."""
    if r.fn is np.linalg.qr and len(shapes["a"]) >= 2 and shapes["a"][-2] < shapes["a"][-1]:
        return "with m >= n"
    square = len(shapes["a"]) >= 2 and shapes["a"][-2] == shapes["a"][-1] if "a" in shapes else True
    if r.fn is np.linalg.svd and "=False" not in r.call and not square:
        return "only with full_matrices=False"
    return None


def _with_shapes(r, shapes):
    inputs = {
        k: (shapes[k], v[1]) if k in shapes else v for k, v in r.inputs.items()
    }
    return dataclasses.replace(r, inputs=inputs)


def _variants():
    seen = set()
    for r in table.ROWS:
        names = _arrays(r)
        seen.add((r.call, tuple(r.inputs[k][0] for k in names)))
    out = []
    fft_done = set()
    for i, r in enumerate(table.ROWS):
        if not _generated_for(r, fft_done):
            continue
        names = _arrays(r)
        for shapes in _shape_sets(r):
            if _is_fft(r.fn) and any(len(s) != 3 for s in shapes.values()):
                continue  # of a transform: the batched (3-D) form
            key = (r.call, tuple(shapes[k] for k in names))
            if key in seen:
                continue
            seen.add(key)
            if _accepted(r, shapes):
                shown = ",".join(f"{k}{shapes[k]}".replace(" ", "") for k in names)
                call = r.call.split(";")[-1].strip()[:50]
                variant = (_with_shapes(r, shapes), _refusal(r, shapes))
                out.append(pytest.param(*variant, id=f"{i}-{call}-{shown}"))
    return out


VARIANTS = _variants()


@pytest.mark.parametrize("r, refused", VARIANTS)
def test_rule_at_generated_shapes(r, refused):
    f, args = table.build(r, 7)
    wrt = tuple(r.wrt) or tuple(args)
    values = list(args.values())
    if refused:
        with pytest.raises(NotImplementedError, match=refused):
            srcgrad.grad(f, wrt=wrt)(*values)
        return
    grads = check_grad(f, values, wrt=wrt, rtol=r.rtol, atol=1e-6)
    table.check_tangent(r, grads)


def test_the_generated_shapes_reach_the_cases_that_matter():
    """The variants include what the planted bugs of issue 20 needed: several size-1 axes in
    one operand of an elementwise rule, a vector times a stack of matrices, 3-D by 3-D."""
    shapes = {(r.fn, tuple(s[0] for s in r.inputs.values() if isinstance(s, tuple)))
              for r in (p.values[0] for p in VARIANTS)}
    assert (np.multiply, ((2, 3), (1, 1))) in shapes
    assert (np.linalg.matmul, ((3,), (2, 3, 4))) in shapes
    assert any(
        fn is np.matmul and len(s) == 2 and len(s[0]) == 3 and len(s[1]) == 3 for fn, s in shapes
    )
    assert len(VARIANTS) > 1000
