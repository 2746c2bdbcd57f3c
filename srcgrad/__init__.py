"""srcgrad: ahead-of-time source-transformation automatic differentiation for Python and NumPy."""

from .api import grad, hessian, hvp, jacobian, jvp, show, source, value_and_grad, vjp
from .errors import (
    NonScalarOutputError,
    NoRuleError,
    SeedShapeError,
    SourceUnavailableError,
    SrcgradError,
    TangentShapeError,
    UnsupportedSyntaxError,
)

__version__ = "0.1.0"

__all__ = [
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "hvp",
    "jacobian",
    "hessian",
    "source",
    "show",
    "SrcgradError",
    "UnsupportedSyntaxError",
    "NonScalarOutputError",
    "NoRuleError",
    "SeedShapeError",
    "TangentShapeError",
    "SourceUnavailableError",
]
