"""The options of the reverse transforms: ``checkpoint`` and ``max_memory`` checked."""

from __future__ import annotations

from typing import Any

from .context import Options
from .emit import numba_backend
from .errors import SrcgradError


def _reverse_options(optimize: bool, verbose: bool, dump: bool, has_aux: bool, checkpoint: Any,
                     max_memory: Any, backend: str = "python") -> Options:
    """The options of a reverse transform, ``checkpoint`` and ``max_memory`` checked."""
    if checkpoint is not None and checkpoint != "auto" and (
        isinstance(checkpoint, bool) or not isinstance(checkpoint, int) or checkpoint < 1
    ):
        raise SrcgradError(
            f"checkpoint must be None, a number of snapshots >= 1, or 'auto'; got {checkpoint!r}"
        )
    if checkpoint == "auto":
        from .checkpoint import parse_memory

        parse_memory(max_memory)
    return Options(optimize=optimize, verbose=verbose, dump=dump, has_aux=has_aux,
                   checkpoint=checkpoint, max_memory=max_memory,
                   backend=numba_backend.check(backend))
