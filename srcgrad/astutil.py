"""Small queries on gast trees that several passes share (names stored, loaded, assigned, the
parameters, the local names of a function), and a fast clone."""

from __future__ import annotations

import ast
import builtins
import itertools
import sys
from collections import Counter, deque

import gast

# The fields of gast's nodes that hold a name, a number or a comment, never a node: the walks
# below skip them (the rest of a node's fields, in order, for each gast class)
_LEAVES = {"id", "attr", "arg", "type_comment"}
_LEAVES_OF = {gast.Constant: {"value", "kind"}, gast.FunctionDef: {"name"},
              gast.AsyncFunctionDef: {"name"}, gast.ClassDef: {"name"}}
_CHILDREN = {
    cls: tuple(f for f in cls._fields if f not in _LEAVES and f not in _LEAVES_OF.get(cls, ()))
    for cls in vars(gast).values() if isinstance(cls, type) and issubclass(cls, gast.AST)
}


def _nodes(tree):
    """Every node of ``tree`` (a node or a list of them), in no particular order: a plain stack
    walk, a few times faster than ``gast.walk`` on the large trees of generated code."""
    stack = list(tree) if isinstance(tree, list) else [tree]
    AST, children = gast.AST, _CHILDREN.get
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        yield node
        fields = children(node.__class__)
        for field in node._fields if fields is None else fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                for v in value:
                    if isinstance(v, AST):
                        push(v)
            elif isinstance(value, AST):
                push(value)


walk = _nodes  # for queries that do not care about order


def ordered_walk(tree):
    """Every node of ``tree`` in ``gast.walk``'s order (breadth first, a node's children taken
    before it is yielded, so a caller may replace them), about twice as fast."""
    todo = deque([tree])
    AST, children = gast.AST, _CHILDREN.get
    pop, push = todo.popleft, todo.append
    while todo:
        node = pop()
        fields = children(node.__class__)
        for field in node._fields if fields is None else fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, AST):
                        push(item)
            elif isinstance(value, AST):
                push(value)
        yield node


def _names(tree, ctx):
    """The ids of the names in ``ctx`` in ``tree``, in the order ``_nodes`` meets them: its walk,
    inlined, that does not descend into a name's context node."""
    out = []
    stack = list(tree) if isinstance(tree, list) else [tree]
    AST, Name, children = gast.AST, gast.Name, _CHILDREN.get
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if node.__class__ is Name:
            if isinstance(node.ctx, ctx):
                out.append(node.id)
            if node.annotation is not None:
                push(node.annotation)
            continue
        fields = children(node.__class__)
        for field in node._fields if fields is None else fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                for v in value:
                    if isinstance(v, AST):
                        push(v)
            elif isinstance(value, AST):
                push(value)
    return out


def param_names(fn_node, packed=False):
    """The names of a function's parameters; with ``packed``, ``*args`` and ``**kwargs`` too."""
    args = fn_node.args
    named = args.posonlyargs + args.args + args.kwonlyargs
    if packed:
        named = named + [a for a in (args.vararg, args.kwarg) if a is not None]
    return {a.id for a in named}


def stored(tree):
    """Names assigned anywhere in ``tree`` (a node or a list of statements)."""
    return set(_names(tree, gast.Store))


def loaded(tree):
    """Names read anywhere in ``tree``."""
    return set(_names(tree, gast.Load))


def store_counts(tree):
    """How many times each name is assigned in ``tree``."""
    return Counter(_names(tree, gast.Store))


def binding_counts(fn_node):
    """How many times each name is bound in the function ``fn_node``: its assignments, and one
    more for a parameter (the call binds it): a parameter assigned once is bound twice."""
    return store_counts(fn_node) + Counter(param_names(fn_node, packed=True))


def index_value(node, slice_name="slice"):
    """A subscript's index as an expression (``a:b`` -> ``slice(a, b, None)``). ``slice_name``:
    the name generated code calls the builtin ``slice`` by (``ctx.global_name``: another name
    where the user's module binds ``slice`` to something else)."""
    if isinstance(node, gast.Slice):
        parts = [
            p if p is not None else gast.Constant(None, None)
            for p in (node.lower, node.upper, node.step)
        ]
        return gast.Call(gast.Name(slice_name, gast.Load(), None, None), parts, [])
    if isinstance(node, gast.Tuple):
        return gast.Tuple([index_value(e, slice_name) for e in node.elts], gast.Load())
    return node


def own_builtin_name(call, tree, fn):
    """``{name: builtin}`` to bind for the builtin a call srcgrad wrote in ``tree`` names
    (``call.func``, a Name): renamed in place to a name ``tree`` does not use where ``fn``'s
    module or closure binds the builtin's name to something else; ``{}`` where it is the
    builtin."""
    word = call.func.id
    found = getattr(builtins, word)
    code = getattr(fn, "__code__", None)
    if word not in getattr(code, "co_freevars", ()) and (
            getattr(fn, "__globals__", {}).get(word, found) is found):
        return {}
    taken = {n.id for n in walk(tree) if isinstance(n, gast.Name)}
    call.func.id = next(t for t in (f"{word}_{i}" for i in itertools.count(1)) if t not in taken)
    return {call.func.id: found}


def clone(node):
    """A copy of an AST (a node, a list of nodes, or a leaf value), several times faster than
    ``copy.deepcopy``: nodes and lists are new, leaf values (names, numbers) are shared."""
    if isinstance(node, list):
        return [clone(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    new = type(node).__new__(type(node))
    for field in node._fields:
        setattr(new, field, clone(getattr(node, field, None)))
    for attr in node._attributes:
        if hasattr(node, attr):
            setattr(new, attr, getattr(node, attr))
    return new


def local_names(fn_node):
    """Parameters and every name the body assigns."""
    names = {a.id for a in fn_node.args.args + fn_node.args.kwonlyargs}
    for packed in (fn_node.args.vararg, fn_node.args.kwarg):
        if packed is not None:
            names.add(packed.id)
    names.update(a.id for a in fn_node.args.posonlyargs)
    names.update(_names(fn_node, (gast.Store, gast.Del)))
    return names


def updated_while_held(tree, body, params=()):
    """The names ``body`` updates in place (``z += v``) that a list, tuple, set or dict of
    ``tree`` holds (a literal's element, ``L.append(z)``, ``d[k] = z``) or that are among
    ``params`` (the caller's arrays), sorted."""
    updated = {n.target.id for n in walk(gast.Module(body, []))
               if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}
    held = set()
    for n in walk(tree):
        parts = []
        if isinstance(n, (gast.List, gast.Tuple, gast.Set)):
            parts = n.elts
        elif isinstance(n, gast.Dict):
            parts = n.values
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and n.func.attr in (
                "append", "insert", "extend", "update", "setdefault"):
            parts = n.args
        elif isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Subscript):
            parts = [n.value]
        held |= {p.id for p in parts if isinstance(p, gast.Name)}
    return sorted(updated & (held | set(params)))


def relocated(stmts, lineno, col_offset):
    """``stmts`` (an inlined body) at the line of the call they replace: each statement, and
    each expression from another line, so that an error located at it is at the call."""
    for s in stmts:
        for n in ordered_walk(s):
            if isinstance(n, gast.stmt) or getattr(n, "lineno", None) not in (None, lineno):
                n.lineno, n.col_offset = lineno, col_offset
    return stmts


_DEPRECATED_CONSTANT_VISITS = ("visit_Num", "visit_Str", "visit_Bytes", "visit_NameConstant",
                               "visit_Ellipsis")
_METHODS: dict = {}  # (visitor class, node class) -> its visit function


def _method(visitor_cls, node_cls):
    """What ``NodeVisitor.visit`` calls for a node of ``node_cls``: ``visit_<name>``, else
    ``generic_visit``; the base's ``visit_Constant`` (which only looks for the visits of
    Python 3.7's constant nodes) is ``generic_visit`` where the visitor has none of them."""
    found = getattr(visitor_cls, "visit_" + node_cls.__name__, None)
    if found is gast.NodeVisitor.visit_Constant and not any(
            hasattr(visitor_cls, m) for m in _DEPRECATED_CONSTANT_VISITS):
        found = None
    found = found or visitor_cls.generic_visit
    _METHODS[visitor_cls, node_cls] = found
    return found


class NodeVisitor(gast.NodeVisitor):
    """``gast.NodeVisitor`` with the same visits in the same order, about twice as fast: the
    method for a class of node is looked up once (a pass's visitor sets none on its
    instances)."""

    def visit(self, node):
        key = (self.__class__, node.__class__)
        method = _METHODS.get(key) or _method(*key)
        return method(self, node)

    def generic_visit(self, node):
        AST, visit = gast.AST, self.visit
        fields = _CHILDREN.get(node.__class__)
        for field in node._fields if fields is None else fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, AST):
                        visit(item)
            elif isinstance(value, AST):
                visit(value)


class NodeTransformer(NodeVisitor):
    """``gast.NodeTransformer`` (its replacements, removals and spliced lists) on the faster
    visits of :class:`NodeVisitor`."""

    def generic_visit(self, node):
        AST, visit = gast.AST, self.visit
        fields = _CHILDREN.get(node.__class__)
        for field in node._fields if fields is None else fields:
            old_value = getattr(node, field, None)
            if isinstance(old_value, list):
                new_values = []
                for value in old_value:
                    if isinstance(value, AST):
                        value = visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, AST):
                            new_values.extend(value)
                            continue
                    new_values.append(value)
                old_value[:] = new_values
            elif isinstance(old_value, AST):
                new_node = visit(old_value)
                if new_node is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new_node)
        return node


class Renamed(NodeTransformer):
    """Each name of ``renames`` (a dict: old name -> new name) renamed, in place."""

    def __init__(self, renames):
        self.renames = renames

    def visit_Name(self, node):
        if node.id in self.renames:
            node.id = self.renames[node.id]
        return node


def set_store(target):
    """``target`` (a name, or a tuple of them) made an assignment's target."""
    for n in ordered_walk(target):
        if isinstance(n, (gast.Name, gast.Tuple)):
            n.ctx = gast.Store()


def located(stmts, node):
    """``stmts``, every statement and expression in them without a line given ``node``'s."""
    for s in stmts:
        for n in ordered_walk(s):
            if isinstance(n, (gast.stmt, gast.expr)) and getattr(n, "lineno", None) is None:
                gast.copy_location(n, node)
        if getattr(s, "lineno", None) is None:
            gast.copy_location(s, node)
    return stmts


def to_ast(node):
    """``gast.gast_to_ast(node)``, faster: the same new tree of ``ast`` nodes, with the same
    fields and locations (gast's own on Python 3.12 and later, whose nodes have more)."""
    if sys.version_info >= (3, 12):
        return gast.gast_to_ast(node)
    return _to_ast(node)


def _to_ast(value):
    if isinstance(value, list):
        return [_to_ast(v) for v in value]
    if not isinstance(value, gast.AST):
        return value
    special = _TO_AST.get(value.__class__.__name__)
    if special is not None:
        return special(value)
    cls = getattr(ast, value.__class__.__name__, None)
    if cls is None:  # (gast's: a node not in ``ast`` is dropped)
        return None
    new = cls()  # (its fields set one by one, as keyword arguments would)
    for f in value._fields:
        v = getattr(value, f, _ABSENT)
        if v is not _ABSENT:
            setattr(new, f, _to_ast(v) if isinstance(v, (list, gast.AST)) else v)
    for attr in value._attributes:
        v = getattr(value, attr, _ABSENT)
        if v is not _ABSENT:
            setattr(new, attr, v)
    return new


_ABSENT = object()


def _arg(node):
    if node is None:
        return None
    new = ast.arg(_to_ast(node.id), _to_ast(node.annotation), _to_ast(node.type_comment))
    return ast.copy_location(new, node)


def _arguments(node):
    return ast.arguments(
        [_arg(a) for a in node.posonlyargs], [_arg(a) for a in node.args], _arg(node.vararg),
        [_arg(a) for a in node.kwonlyargs], _to_ast(node.kw_defaults), _arg(node.kwarg),
        _to_ast(node.defaults))


def _except_handler(node):
    if not node.name:
        cls = ast.ExceptHandler
        new = cls(**{f: _to_ast(getattr(node, f)) for f in node._fields if hasattr(node, f)})
        for attr in node._attributes:
            if hasattr(node, attr):
                setattr(new, attr, getattr(node, attr))
        return new
    new = ast.ExceptHandler(_to_ast(node.type), node.name.id, _to_ast(node.body))
    return ast.copy_location(new, node)


def _function(cls):
    def convert(node):
        new = cls(_to_ast(node.name), _arguments(node.args), _to_ast(node.body),
                  _to_ast(node.decorator_list), _to_ast(node.returns),
                  _to_ast(node.type_comment))
        return ast.copy_location(new, node)
    return convert


_TO_AST = {
    "Name": lambda n: ast.copy_location(ast.Name(_to_ast(n.id), _to_ast(n.ctx)), n),
    "Assign": lambda n: ast.copy_location(ast.Assign(_to_ast(n.targets), _to_ast(n.value)), n),
    "ClassDef": lambda n: ast.copy_location(ast.ClassDef(
        _to_ast(n.name), _to_ast(n.bases), _to_ast(n.keywords), _to_ast(n.body),
        _to_ast(n.decorator_list)), n),
    "FunctionDef": _function(ast.FunctionDef),
    "AsyncFunctionDef": _function(ast.AsyncFunctionDef),
    "arguments": _arguments,
    "ExceptHandler": _except_handler,
}
