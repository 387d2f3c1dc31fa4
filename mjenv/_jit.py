"""The project's numba decorator, and the guard that keeps its on-disk cache in step with the sources.

Every kernel in mjenv is compiled with :func:`njit`, which is ``numba.njit`` with ``cache=True`` and
``nogil=True``. ``parallel=True`` kernels (the vector env) must pass ``cache`` explicitly if they want it.
Set ``MJENV_NO_CACHE=1`` to turn the on-disk cache off.

numba invalidates a cached kernel when the file that defines it changes, but not when a function it calls from
another file changes: after a ``git pull`` that edits only ``fans.py``, the cached engine kernels of
``game.py`` would go on scoring with the old rules. So on import this module stamps every kernel module of
the package (size and modification time of each file that imports it) and, when the stamp differs from the
one stored beside the cache (``mjenv/__pycache__/kernels.stamp``), deletes the package's cached kernels
(``*.nbi``/``*.nbc`` in its ``__pycache__`` folders) so that they are compiled again from the current sources.
This costs a few stat calls per process. It covers numba's default in-tree cache; with ``NUMBA_CACHE_DIR``
set, clear that folder yourself after changing the sources.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba

CACHE = os.environ.get("MJENV_NO_CACHE", "") not in ("1", "true", "yes")
_ROOT = Path(__file__).resolve().parent
_STAMP = "kernels.stamp"


def njit(*args, **kwargs):
    """``numba.njit`` with mjenv's defaults (``cache=True``, ``nogil=True``)."""
    kwargs.setdefault("cache", CACHE)
    kwargs.setdefault("nogil", True)
    if len(args) == 1 and callable(args[0]) and not kwargs.get("_signature"):
        return numba.njit(**kwargs)(args[0])
    return numba.njit(*args, **kwargs)


def source_stamp(root: Path = _ROOT) -> str:
    """Digest of the name, size and modification time of every module under ``root`` that defines kernels
    (imports ``mjenv._jit``), plus this file."""
    h = hashlib.blake2b(digest_size=16)
    for p in sorted(root.rglob("*.py")):
        if p.name != "_jit.py" and "mjenv._jit import" not in p.read_text(encoding="utf-8", errors="replace"):
            continue
        st = p.stat()
        h.update(f"{p.relative_to(root).as_posix()}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def drop_stale_caches(root: Path = _ROOT) -> int:
    """Delete the cached kernels under ``root`` when its kernel sources changed since the stored stamp;
    returns how many cache files were deleted. Never raises on file-system errors (a read-only install keeps
    numba's own behaviour)."""
    try:
        stamp = source_stamp(root)
        marker = root / "__pycache__" / _STAMP
        if marker.is_file() and marker.read_text() == stamp:
            return 0
        n = 0
        for pattern in ("*.nbi", "*.nbc"):
            for f in root.rglob(f"__pycache__/{pattern}"):
                f.unlink(missing_ok=True)
                n += 1
        marker.parent.mkdir(exist_ok=True)
        marker.write_text(stamp)
        return n
    except OSError:
        return 0


if CACHE:
    drop_stale_caches()
