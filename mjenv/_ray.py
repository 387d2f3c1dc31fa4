"""Ray plumbing shared by ``mjenv.arena`` (``workers=N``) and ``train.distributed`` (optional: ``ray`` is the
``distributed`` extra, imported only inside these functions; the rules modules never import this module).

Code shipping: the workers import ``mjenv``, ``agents``, ``train`` and the policies' modules from the same
checkout as the driver. By default every worker gets ``PYTHONPATH`` = the driver's import roots (absolute
paths: the directory holding the ``mjenv`` package, the current directory and the driver's ``PYTHONPATH``),
which works on one machine and on a cluster whose nodes see the checkout at the same path (shared file system
or the same image), and keeps Numba's on-disk cache (``__pycache__`` next to the sources) warm. With
``ship_code=True`` the current directory is uploaded instead (Ray ``runtime_env`` ``working_dir``; caches,
``runs/`` and ``.git`` excluded): for clusters without a shared checkout (Numba then compiles cold once per
node and session).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

_EXCLUDES = ["runs/", ".git/", "**/__pycache__/", "*.nbi", "*.nbc", "*.npz", "benchmarks/results/"]


def require_ray():
    """``import ray`` with a clear message when the ``distributed`` extra is missing."""
    try:
        import ray
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            'workers > 0 needs Ray: pip install -e ".[distributed]" (or pip install ray)'
        ) from e
    return ray


def import_roots() -> list[str]:
    """Absolute import roots of this process for the workers: mjenv's parent, the cwd, ``PYTHONPATH``."""
    roots = [str(Path(__file__).resolve().parent.parent), os.getcwd()]
    roots += [str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    out: list[str] = []
    for r in roots:
        if r not in out:
            out.append(r)
    return out


def runtime_env(ship_code: bool = False) -> dict[str, Any]:
    """The ``runtime_env`` of mjenv's actors and tasks (see the module docstring)."""
    if ship_code:
        return {"working_dir": os.getcwd(), "excludes": list(_EXCLUDES)}
    return {"env_vars": {"PYTHONPATH": os.pathsep.join(import_roots())}}


def ensure_ray(address: str | None = None, num_cpus: int | None = None):
    """Connect to Ray unless already connected: ``address`` (a cluster, e.g. ``"auto"`` or ``"host:6379"``) or a
    local instance with ``num_cpus`` CPUs (``None``: all). Returns the ``ray`` module."""
    ray = require_ray()
    if not ray.is_initialized():
        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True}
        if address is not None:
            ray.init(address=address, **kw)
        else:
            ray.init(num_cpus=num_cpus, **kw)
    return ray
