"""Normalization: reject what is unsupported, desugar, and bring the body into A-normal form."""
