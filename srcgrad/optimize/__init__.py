"""Optimizing passes over generated code: constant folding and dead-code elimination."""
