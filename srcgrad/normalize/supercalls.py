"""``super()`` in an inlined method, resolved at transform time to the function it finds.

Requires: the parsed body of a method being inlined (its locals renamed), the method's function
object, the name of its first parameter (``self``) and what is known of the class of the object
it is called on (``methods.Known``). Guarantees: ``super().m(args)`` and ``super(C, self).m(args)``
become a call of the plain function the next class of the object's method resolution order
defines, with ``self`` as its first argument (then inlined like any call); where the class of
the object was inferred rather than constructed, a run-time ``check_class`` comes first, so the
order looked up is the one the object has. Anything else ``super()`` could denote (a property,
a classmethod, ``super()`` as a value, a class not known at transform time) is refused at its
line.

    class Sub(Base):                         ->   r = Base_f(self, x)     (then inlined)
        def f(self, x):
            return super().f(x) + 1.0
"""

from __future__ import annotations

import inspect
import types

import gast

from ..astutil import ordered_walk
from ..errors import UnsupportedSyntaxError
from ..frontend.resolve import MISSING
from .methods import Known, user_class

ADVICE = ("call the base class's method by name instead (`Base.f(self, x)`) or define the "
          "method in the class itself")


def defining_class(fn):
    """The class whose body defines ``fn`` (Python's ``__class__`` cell), or None."""
    code = getattr(fn, "__code__", None)
    if code is None or "__class__" not in code.co_freevars:
        return None
    cell = fn.__closure__[code.co_freevars.index("__class__")]
    try:
        return cell.cell_contents
    except ValueError:
        return None


def _is_super(node, ctx):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and ctx.namespace.lookup(node.func.id) is super)


def resolve(node, fn, self_name, known, ctx, location):
    """Rewrite the ``super()`` calls in ``node`` (the method ``fn``'s body); the statements to
    run before the inlined body (a class check), or ``[]``."""
    found = [n for n in ordered_walk(node) if _is_super(n, ctx)]
    if not found:
        return []
    owner = defining_class(fn)
    if owner is None or self_name is None:
        raise _error(location, found[0], "`super()` outside a method of a class")
    if known is None or not user_class(known.cls) or not issubclass(known.cls, owner):
        known = Known(owner)
    parents = {id(n.func.value): n for n in ordered_walk(node)
               if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
               and _is_super(n.func.value, ctx)}
    for call in found:
        method = parents.get(id(call))
        if method is None:
            raise _error(location, call, "`super()` used as a value (only `super().method(...)` "
                         "is inlined)")
        _check_arguments(call, owner, self_name, ctx, location)
        target = _lookup(known.cls, owner, method.func.attr)
        if not isinstance(target, types.FunctionType):
            raise _error(location, method, f"`super().{method.func.attr}`, which is not a plain "
                         f"method of a base class of {known.cls.__qualname__}")
        name = ctx.global_name(target, target.__qualname__.replace(".", "_"))
        method.func = gast.copy_location(gast.Name(name, gast.Load(), None, None), method.func)
        method.args = [gast.Name(self_name, gast.Load(), None, None)] + method.args
    return [] if known.exact else _class_check(known, self_name, ctx)


def _check_arguments(call, owner, self_name, ctx, location):
    """``super()`` or ``super(C, self)`` with C the method's own class."""
    if not call.args:
        return
    ok = (len(call.args) == 2 and ctx.namespace.lookup(getattr(call.args[0], "id", "")) is owner
          and isinstance(call.args[1], gast.Name) and call.args[1].id == self_name)
    if not ok:
        raise _error(location, call, "`super(...)` with arguments other than the method's own "
                     "class and `self`")


def _lookup(cls, owner, attr):
    """What ``super(owner, obj).attr`` finds for an object of class ``cls``, as stored."""
    mro = cls.__mro__
    for klass in mro[mro.index(owner) + 1:]:
        if attr in vars(klass):
            return inspect.getattr_static(klass, attr)
    return MISSING


def _class_check(known, self_name, ctx):
    from .. import runtime
    from ..emit import naming

    unused = ctx.namer.fresh(naming.UNUSED)
    ctx.local_names.add(unused)
    helper = ctx.global_name(runtime.check_class, "check_class")
    cls = ctx.global_name(known.cls, known.cls.__name__)
    call = gast.Call(gast.Name(helper, gast.Load(), None, None),
                     [gast.Name(self_name, gast.Load(), None, None),
                      gast.Name(cls, gast.Load(), None, None)], [])
    return [gast.Assign([gast.Name(unused, gast.Store(), None, None)], call, None)]


def _error(location, node, what):
    return location.error(UnsupportedSyntaxError, node,
                          f"srcgrad does not support {what} here; {ADVICE}")


def run(fn_node, ctx):
    """The pass (before ANF): ``super()`` in the transformed function itself, a method whose
    ``self`` is the bound instance (``grad(model.loss)``) or of its own class."""
    from .methods import bound_instance, of_value, owner_class

    params = fn_node.args.posonlyargs + fn_node.args.args
    if not params or not any(_is_super(n, ctx) for n in ordered_walk(fn_node)):
        return fn_node
    instance = bound_instance(ctx.fn)
    if instance is not MISSING:
        known = of_value(instance)
    else:
        cls = owner_class(ctx.fn)
        known = Known(cls) if cls is not None else None
    checks = resolve(fn_node, ctx.fn, params[0].id, known, ctx, ctx.location)
    fn_node.body[:0] = [gast.copy_location(c, fn_node.body[0]) for c in checks]
    return fn_node
