"""Rule tables. Importing this package registers every rule but those of SciPy, which are
registered at the first lookup after the user imports SciPy (``import srcgrad`` never imports it).
"""

from . import (  # noqa: F401
    container_rules,
    fft_rules,
    helper_rules,
    inplace_rules,
    math_rules,
    nograd_rules,
    numpy_rules,
    operators,
    runtime_rules,
)
from .registry import (
    OPTIONAL_RULES,
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

OPTIONAL_RULES["scipy"] = __name__ + ".scipy_rules"

__all__ = [
    "RULES", "Rule", "Template", "bilinear", "defrule", "elementwise", "linear", "lookup",
    "nondiff",
]
