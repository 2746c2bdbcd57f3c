"""Container suspects: the variables that may hold a tuple, list or dict.

Requires: the :class:`Op` of every assignment. Guarantees: every variable built by a tuple, list
or dict literal, indexed or unpacked (``x[...]``), or passed whole as a sequence argument
(``np.concatenate(xs)``) is a suspect. Everything else is a number or an array. The reverse sweep
adds the adjoints of suspects elementwise (``add(dxs, g)``) instead of with ``+``, and returns
them with the structure of the argument.

    xs = (a, b)            suspects: xs, ys
    z = np.stack(ys)
"""

from __future__ import annotations

import gast

from ..astutil import ordered_walk

# Rule parameters that take a sequence of arrays (np.concatenate's `arrays`, ...).
SEQUENCE_PARAMS = {"arrays", "tup", "items", "iterable", "xs", "operands", "mapping"}


def container_suspects(body, ops):
    out = set()
    for n in ordered_walk(gast.Module(body, [])):
        if not isinstance(n, gast.Assign) or id(n) not in ops:
            continue
        op, value = ops[id(n)], n.value
        if op.kind in ("tuple", "dict"):
            out.add(n.targets[0].id)
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
            out.add(value.value.id)
        if op.kind == "rule":
            for p, a in op.args.items():
                if p in SEQUENCE_PARAMS and isinstance(a, gast.Name):
                    out.add(a.id)
    copies = [(n.targets[0].id, ops[id(n)].args["x"].id)
              for n in ordered_walk(gast.Module(body, []))
              if isinstance(n, gast.Assign) and ops.get(id(n)) is not None
              and ops[id(n)].kind == "copy"]
    while True:  # `seq = xs` and seq holds a container: so does xs
        more = {x for t, x in copies if t in out and x not in out}
        if not more:
            return out
        out |= more
