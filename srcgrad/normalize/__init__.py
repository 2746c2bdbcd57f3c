"""Normalization: reject what is unsupported, desugar, inline, bring the body into A-normal and
SSA form, copy arrays before they are written."""
