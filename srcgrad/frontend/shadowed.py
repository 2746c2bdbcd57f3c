"""A builtin srcgrad's generated code reads by its bare name must be the builtin.

Requires: the finished generated function, its context (the namespace of the function it
differentiates) and the names that function's own source reads. Guarantees: no bare read in
generated code of a builtin srcgrad writes (``list``, ``len``, ``set``, ``sorted``, ``range``,
``zip``, ...) finds the module's own object of that name, unless the user's function reads the
name itself (then it is the user's, resolved as every call is). The normal form writes those
builtins under a name bound to the builtin where the module binds the name (``ctx.global_name``,
b07a783), but not everywhere: an inlined helper's starred unpacking, ``del L[a:b]`` or set
display still wrote ``list``/``len``/``set``/``sorted``, and generated code runs in the user's
module, so a module with its own ``list`` got a silently wrong gradient. Such a read is refused
at transform time with a located ``UnsupportedSyntaxError`` naming the builtin and what to
write instead.
"""

from __future__ import annotations

import builtins

import gast

from ..astutil import walk
from ..errors import UnsupportedSyntaxError

# builtins the normal form writes into generated code by their names
WRITTEN = frozenset({
    "list", "len", "set", "sorted", "range", "zip", "enumerate", "min", "max", "slice", "bool",
    "tuple", "dict", "reversed", "iter", "next", "map", "isinstance", "ValueError", "float",
    "int", "abs", "sum",
})


def check(node, ctx, user_reads=frozenset()):
    """Raise where a bare read in ``node`` of a name of ``WRITTEN`` that the user's function
    (``user_reads``) does not read finds something other than the builtin."""
    namespace = getattr(ctx, "namespace", None)
    if namespace is None:
        return
    reads = [n for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
             and n.id in WRITTEN and n.id not in user_reads]
    if not reads:
        return
    bound = {n.id for n in walk(node) if isinstance(n, gast.Name)
             and not isinstance(n.ctx, gast.Load)}
    bound |= {a.id for a in walk(node.args) if isinstance(a, gast.Name)}
    for n in reads:
        name = n.id
        if name in bound or name in ctx.extras or name in namespace.extras:
            continue
        found = namespace._lookup(name)  # (not recorded: not a read of the user's world)
        if found is getattr(builtins, name):
            continue
        what = getattr(found, "__module__", None)
        what = f"{what}.{getattr(found, '__name__', name)}" if what else type(found).__name__
        raise ctx.location.error(
            UnsupportedSyntaxError, n if getattr(n, "lineno", None) else node,
            f"srcgrad does not support a module that binds the builtin's name `{name}` to "
            f"something else ({what}) here: the code srcgrad generates for a helper it inlines "
            f"calls `{name}` meaning the builtin (a starred unpacking, `del L[a:b]`, a set); "
            f"rename yours, or import it under another name",
        )
