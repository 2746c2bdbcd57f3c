"""Transforms: reverse mode (primal sweep + adjoint sweep), forward mode, and the trailing
parameter's defaults."""
