"""State shared by the passes while they generate one function.

Requires: the user function's namespace, a namer and the location for errors. Guarantees: one
name per object that generated code refers to beyond the user's own names (runtime helpers,
``numpy`` when the user imported it under another name), the user's own name wherever it already
denotes that object, and a record of the functions inlined, so a stale derivative is noticed.

    ctx.global_name(runtime.unbroadcast, "unbroadcast")   ->  "unbroadcast"  (bound as a cell)
    ctx.global_name(numpy, "np")  when the user wrote `import numpy as np`  ->  "np" (theirs)
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class GenContext:
    namespace: object  # the user function's Namespace
    namer: object
    local_names: set
    location: object
    _names: dict = field(default_factory=dict)  # id(object) -> generated name
    # (namespace, callee expression, function) for every inlined call: the derivative is stale
    # once the expression names another function (a helper redefined after the transform)
    dependencies: list = field(default_factory=list)

    @property
    def extras(self):
        """Generated name -> object, for names generated code adds beyond the user's own."""
        return self.namespace.extras

    def global_name(self, obj, preferred):
        """The name generated code uses for ``obj``; prefers the user's own name for it."""
        key = id(obj)
        if key in self._names:
            return self._names[key]
        if preferred not in self.local_names and self.namespace.lookup(preferred) is obj:
            name = preferred
            self.namer.reserve(name)
        else:
            name = self.namer.fresh(preferred)
            self.extras[name] = obj
        self._names[key] = name
        return name
