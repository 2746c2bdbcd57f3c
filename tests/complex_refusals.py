"""The rules that refuse complex input: those whose derivative templates check their operands
with ``real_only`` (an ordering, a decomposition of Hermitian matrices, a density of a real
variable, a function that is not holomorphic), ``sign_grad`` (``np.sign``) or ``norm_input``
(the matrix norms of singular values). For issue 15's closing note and docs/complex.md:

    PYTHONPATH=. python tests/complex_refusals.py

prints one rule a line (``partly``: refused for some arguments only). NumPy itself raises for
complex input to the functions of real numbers (``floor``, ``arctan2``, ``hypot``, ...), and
SciPy for most of ``scipy.special``: those are not listed.
"""

from __future__ import annotations

import re

from srcgrad.rules import registry

CHECKS = {"real_only": "", "sign_grad": "", "norm_input": " (partly: ord 2, -2, 'nuc')"}


def _sources(rule):
    for src in (rule.vjp_src, rule.jvp_src):
        if isinstance(src, dict):
            yield from (s for s in src.values() if isinstance(s, str))
        elif isinstance(src, (tuple, list)):
            yield from (s for s in src if isinstance(s, str))
        elif isinstance(src, str):
            yield src


def _name(fn):
    """``scipy.special.ive``, ``scipy.stats.norm.logpdf``, ``np.linalg.svd``, ``np.sort``."""
    owner = getattr(fn, "__self__", None)
    module = getattr(fn, "__module__", None) or ""
    if owner is not None and module.startswith("scipy.stats"):
        name = getattr(owner, "name", None) or type(owner).__name__.removesuffix("_gen")
        return f"scipy.stats.{name}.{fn.__name__}"
    if module.startswith("scipy") or type(fn).__name__ == "ufunc" and hasattr(fn, "__name__"):
        for public in ("scipy.special", "scipy.linalg", "scipy.signal", "scipy.stats"):
            if module.startswith(public) or (
                public == "scipy.special" and _in_special(fn)
            ):
                name = "digamma" if fn.__name__ == "psi" else fn.__name__
                return f"{public}.{name}"
    if module.startswith("numpy.linalg"):
        return f"np.linalg.{fn.__name__}"
    return f"np.{fn.__name__}"


def _in_special(fn):
    import scipy.special

    return getattr(scipy.special, fn.__name__, None) is fn


def refusing_rules():
    """Rule name -> how it refuses, for every rule whose templates check for complex values."""
    registry.load_optional_rules(installed=True)
    found = {}
    for rule in registry.RULES.values():
        text = " ".join(_sources(rule))
        text = re.sub(r"norm_input\([^)]*False\)", "", text)  # vector norms: none
        for check, how in CHECKS.items():
            if re.search(rf"\b{check}\(", text):
                found[_name(rule.fn)] = found.get(_name(rule.fn)) or how
    return dict(sorted(found.items()))


if __name__ == "__main__":
    for name, how in refusing_rules().items():
        print(name + how)
