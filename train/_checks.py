"""Setting checks shared by the commands of ``train/`` (``train.ppo``, ``train.bc``, ``train.recipe``)."""

from __future__ import annotations

from collections.abc import Mapping


def check_ints(cfg: object, prefix: str, lows: Mapping[str, int]) -> None:
    """``TypeError`` for the first setting of ``cfg`` named in ``lows`` that is not an int (a bool is not),
    ``ValueError`` for one below its bound; the message names it as ``prefix.name``."""
    for name, lo in lows.items():
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{prefix}.{name} must be an int, got {type(v).__name__}")
        if v < lo:
            raise ValueError(f"{prefix}.{name} must be >= {lo}, got {v}")
