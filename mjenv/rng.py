"""splitmix64, the one random generator of mjenv (Steele, Lea and Flood 2014).

A stream seeded with ``key`` is ``splitmix64(key + k * GOLDEN)`` for ``k = 1, 2, ...``: the engine's table RNG
(:mod:`mjenv.game`, the state a counter in two int32 words), the redeals of :mod:`mjenv.determinize`, the
per-table streams of sampling policies (:class:`mjenv.policy.TableStreams`) and the arena's agent seeds
(:mod:`mjenv.arena.schedule`) all draw from it. :func:`splitmix64_mix` is the output function for kernels (one
``uint64``), :func:`splitmix64` the same for numpy arrays.
"""

from __future__ import annotations

import numpy as np

from mjenv._jit import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)  #: the stream's increment (2**64 / the golden ratio, odd)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit
def splitmix64_mix(x):
    """splitmix64's output function of the counter ``x`` (a ``uint64``; wrapping arithmetic)."""
    z = (x ^ (x >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def splitmix64(x: np.ndarray) -> np.ndarray:
    """:func:`splitmix64_mix` of the ``uint64`` array ``x``, elementwise (a new array, at least 1-d)."""
    z = np.array(x, dtype=np.uint64, ndmin=1)
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))
