"""Compile-only process that ``tests/conftest.py`` runs beside :func:`mjenv.warmup` before the xdist workers start.

It fills numba's cache with what the suite needs beyond mjenv's warmup: the baseline agents' kernels
(:func:`agents.warmup.warmup`, about a minute of CPU cold, which the workers would otherwise compile in the
middle of the tests) and the vector kernel for uint8 observations (``mjenv.warmup`` compiles the float32 one;
tests in both workers use both). mjenv's shared kernels are stubs here (``mjenv._jit.stub_modules``, as in
the compile-only workers of :mod:`mjenv._compile`): the processes of :func:`mjenv.warmup` compile them at the same time, and
nothing run here reaches them (zero tables, zero rows).
"""

from __future__ import annotations

import mjenv._jit
from mjenv import _compile

#: the parts, one process each (conftest starts both): the rule agent's kernels alone are the longest chain
PARTS = ("rule", "rest")


def main(part: str) -> None:
    from agents.warmup import warmup

    if part == "rule":
        mjenv._jit.stub_modules = frozenset(_compile._TASKS["vector"])  # hand, fans, game: as the vector task
        warmup(parts=("rule",))
    elif part == "rest":
        # the vector task of mjenv's compile-only workers (its stubs: hand, fans, game), for uint8 observations
        _compile._warm_worker([["vector", {"observations": True, "obs_dtype": "uint8", "fronts": False}]])
        warmup(parts=("features",))
    else:
        raise SystemExit(f"unknown part {part!r}; the parts are {PARTS}")


if __name__ == "__main__":
    import sys

    main(*sys.argv[1:2])
