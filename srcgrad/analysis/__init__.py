"""Analyses: what each statement computes, and which values carry gradient."""
