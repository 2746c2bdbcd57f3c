"""Transforms: reverse mode (primal sweep + adjoint sweep) and forward mode."""
