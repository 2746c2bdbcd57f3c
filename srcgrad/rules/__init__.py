"""Rule tables. Importing this package registers every rule."""

from . import (  # noqa: F401
    container_rules,
    helper_rules,
    inplace_rules,
    math_rules,
    numpy_rules,
    operators,
    runtime_rules,
)
from .registry import (
    RULES,
    Rule,
    Template,
    bilinear,
    defrule,
    elementwise,
    linear,
    lookup,
    nondiff,
)

try:  # SciPy is optional: its rules exist only where it is installed
    from . import scipy_rules  # noqa: F401
except ImportError:
    pass

__all__ = [
    "RULES", "Rule", "Template", "bilinear", "defrule", "elementwise", "linear", "lookup",
    "nondiff",
]
