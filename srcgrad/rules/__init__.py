"""Rule tables. Importing this package registers every rule."""

from . import math_rules, numpy_rules, operators, runtime_rules  # noqa: F401
from .registry import RULES, Rule, Template, defrule, elementwise, linear, lookup, nondiff

__all__ = ["RULES", "Rule", "Template", "defrule", "elementwise", "linear", "lookup", "nondiff"]
