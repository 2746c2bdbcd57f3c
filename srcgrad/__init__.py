"""srcgrad: ahead-of-time source-transformation automatic differentiation for Python and NumPy."""

from .api import (
    adjoint,
    grad,
    hessian,
    holomorphic_grad,
    hvp,
    jacobian,
    jvp,
    linearize,
    nondifferentiable,
    pullback,
    register_pytree,
    show,
    source,
    stop_gradient,
    tangent,
    value_and_grad,
    vjp,
)
from .errors import (
    NonScalarOutputError,
    NoRuleError,
    SeedShapeError,
    SourceUnavailableError,
    SrcgradError,
    TangentShapeError,
    UnsupportedSyntaxError,
)
from .kinds import specialize

__version__ = "0.1.0"

__all__ = [
    "grad",
    "value_and_grad",
    "vjp",
    "pullback",
    "jvp",
    "linearize",
    "hvp",
    "jacobian",
    "hessian",
    "holomorphic_grad",
    "source",
    "show",
    "adjoint",
    "tangent",
    "stop_gradient",
    "nondifferentiable",
    "register_pytree",
    "specialize",
    "SrcgradError",
    "UnsupportedSyntaxError",
    "NonScalarOutputError",
    "NoRuleError",
    "SeedShapeError",
    "TangentShapeError",
    "SourceUnavailableError",
]
