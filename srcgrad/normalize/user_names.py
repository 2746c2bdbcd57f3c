"""What a helper's locals are called in its own source, for the messages that name them.

Requires: a helper's ``FunctionDef`` before ``inline`` renames its locals apart
(``renames``: its name -> the fresh one). Guarantees: ``names[fresh] = (name, where)`` for each
renamed local, ``where`` the helper and the line that first binds it; an error raised later
names ``b`` where it would have named ``b_2`` (``LocatedError.named_as_written``):

    writing into `b_2`, ...   ->   writing into `b`, ... (`b`: a variable of `helper`, line 7
                                   of model.py)
"""

from __future__ import annotations

import os

import gast

from ..astutil import walk


def record(names, node, renames, location):
    """Add the locals of ``node`` that ``renames`` renames to ``names`` (see above)."""
    first = {}
    for n in walk(node):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load) and (
                n.id not in first or _at(n) < _at(first[n.id])):
            first[n.id] = n
    for old, new in renames.items():
        if new == old:
            continue
        filename, lineno, _, _ = location.of(first.get(old, node))
        where = f"a variable of `{node.name}`"
        if lineno is not None:
            where += f", line {lineno} of {os.path.basename(filename or '')}"
        names[new] = (old, where)


def _at(node):
    return getattr(node, "lineno", 0) or 0, getattr(node, "col_offset", 0) or 0
