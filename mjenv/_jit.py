"""The project's numba decorator.

Every kernel in mjenv is compiled with :func:`njit`, which is ``numba.njit`` with ``cache=True`` and
``nogil=True``. Set ``MJENV_NO_CACHE=1`` to turn the on-disk cache off (useful while editing kernels, since
numba does not invalidate a cached kernel when a function it calls from another file changes).
``parallel=True`` kernels (the vector env) must pass ``cache`` explicitly if they want it.
"""

from __future__ import annotations

import os

import numba

CACHE = os.environ.get("MJENV_NO_CACHE", "") not in ("1", "true", "yes")


def njit(*args, **kwargs):
    """``numba.njit`` with mjenv's defaults (``cache=True``, ``nogil=True``)."""
    kwargs.setdefault("cache", CACHE)
    kwargs.setdefault("nogil", True)
    if len(args) == 1 and callable(args[0]) and not kwargs.get("_signature"):
        return numba.njit(**kwargs)(args[0])
    return numba.njit(*args, **kwargs)
