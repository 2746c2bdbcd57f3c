"""A list of bound methods that holds their objects (``held_methods.py``, ``_listed``): the
reads of it that are allowed.

Requires: the inlined function after ``Receivers`` marked the statements that take an item of
such a list to call it (``method_of``) and those that append to it (``method_list``).
Guarantees: nothing is changed; a read of such a list otherwise than by ``len``, by appending
to it or by taking an item to call is an error at transform time.
"""

from __future__ import annotations

import gast

from ..astutil import walk
from ..errors import UnsupportedSyntaxError


def refuse_other_uses(fn_node, listed, location):
    """A list of bound methods that holds their objects (``_listed``) read otherwise than by
    ``len``, by appending to it, or by taking an item to call (returned, passed, looped over
    as a value) would give the objects: an error at transform time."""
    if not listed:
        return
    allowed = _allowed_reads(fn_node)
    for stmt in walk(fn_node.body):
        if not isinstance(stmt, gast.stmt) or isinstance(stmt, (gast.If, gast.For, gast.While)):
            continue
        for n in walk(stmt):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and (
                    n.id in listed) and id(n) not in allowed:
                raise location.error(UnsupportedSyntaxError, stmt, (
                    f"srcgrad does not support the list `{n.id}` of bound methods here: its "
                    f"items must be methods of one name (`fs.append(self.a.scale)`, "
                    f"`fs.append(self.b.scale)`), and it must only be appended to, counted "
                    f"(`len`) or have its items called; call each method where it is named "
                    f"(`self.layer.scale(x)`)"))


def _allowed_reads(fn_node):
    """The ids of the reads of a name that a list of bound methods' objects allows: the list
    an item is taken from to call, appended to, or given to ``len``."""
    allowed = set()
    for node in walk(fn_node):
        if isinstance(node, gast.Assign) and getattr(node, "method_of", None) is not None and (
                isinstance(node.value, gast.Subscript)):
            allowed.add(id(node.value.value))
        elif isinstance(node, gast.Assign) and getattr(node, "method_list", False):
            allowed |= {id(a) for a in getattr(node.value, "args", ())[:1]}
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and (
                node.func.id == "len") and len(node.args) == 1:
            allowed.add(id(node.args[0]))
    return allowed
