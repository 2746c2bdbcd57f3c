"""What ``held_methods.py`` reads of the whole function: the names bound to methods of one name
on several paths (``method_bindings``) and those that hold one object all along
(``bound_once``), before its calls are inlined; and, after, the reads allowed of a list of
bound methods that holds their objects (``_listed``).

Requires: for ``refuse_other_uses``, the inlined function after ``Receivers`` marked the
statements that take an item of such a list to call it (``method_of``) and those that append
to it (``method_list``). Guarantees: nothing is changed; a read of such a list otherwise than by
``len``, by appending to it or by taking an item to call is an error at transform time.
"""

from __future__ import annotations

import gast

from ..astutil import store_counts, walk
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


def method_bindings(fn_node):
    """Name -> (attribute, how many times it is assigned) for each name of the function that
    is assigned more than once, each time ``g = obj.attr`` of one attribute name (a bound
    method bound on two paths of a branch, maybe; ``_rebound_method``)."""
    found, counts = {}, store_counts(fn_node)
    for node in walk(fn_node):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], gast.Name) and isinstance(node.value, gast.Attribute) and (
                isinstance(node.value.value, gast.Name)) and counts[node.targets[0].id] > 1:
            found.setdefault(node.targets[0].id, []).append(node.value.attr)
    return {n: (attrs[0], len(attrs)) for n, attrs in found.items()
            if len(set(attrs)) == 1 and len(attrs) == counts[n]}


def bound_once(fn_node):
    """The names the function (before its calls are inlined) binds once, outside any loop, and
    otherwise only writes fields of (``blk.w = v``): each holds one object all along."""
    looped = {n.id for loop in walk(fn_node) if isinstance(loop, (gast.For, gast.While))
              for n in walk(loop) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return {n for n, c in store_counts(fn_node).items() if c == 1 and n not in looped}
