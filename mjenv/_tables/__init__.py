"""The lookup tables of the hand kernels (``mjenv.shanten``, ``mjenv.hand``) and their loaders.

``suit_tables.npz`` (``gen_suit_tables.py``): ``suit``/``honor``, the block scores of every base-5 key of one
suit (9 ranks) or of the honours (7), and ``suit_win``/``honor_win``, whether a group splits into sets (bit 0)
or sets and a pair (bit 1). ``shanten_tables.npz`` (``gen_shanten_tables.py``): ``suit_inc``/``honor_inc``,
the packed block increments of the overall shanten. ``SHA256SUMS`` holds their digests (checked by the tests).
Each file is read once per process, on first use.
"""

from __future__ import annotations

import hashlib
from importlib import resources

import numpy as np

_TABLES: tuple | None = None
_SHANTEN_TABLES: tuple | None = None


def load_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The lookup tables ``(suit, honor, suit_win, honor_win)``, loaded once (see ``gen_suit_tables.py``)."""
    global _TABLES
    if _TABLES is None:
        with resources.files(__name__).joinpath("suit_tables.npz").open("rb") as f:
            z = np.load(f)
            _TABLES = tuple(np.ascontiguousarray(z[k]) for k in ("suit", "honor", "suit_win", "honor_win"))
    return _TABLES


def load_shanten_tables() -> tuple[np.ndarray, np.ndarray]:
    """The packed increment tables ``(suit_inc, honor_inc)`` of the overall shanten, loaded once.

    See ``gen_shanten_tables.py``; :func:`mjenv.shanten.batch_shanten` passes them to the kernels.
    """
    global _SHANTEN_TABLES
    if _SHANTEN_TABLES is None:
        with resources.files(__name__).joinpath("shanten_tables.npz").open("rb") as f:
            z = np.load(f)
            _SHANTEN_TABLES = tuple(np.ascontiguousarray(z[k]) for k in ("suit_inc", "honor_inc"))
    return _SHANTEN_TABLES


_WIN_TABLES: tuple | None = None


def win_tables() -> tuple[np.ndarray, np.ndarray]:
    """``(suit_win, honor_win)``: the win lookup tables (those of :func:`load_tables`), all that playing needs.

    Loaded once; only these two members of ``suit_tables.npz`` are read (the 20 MB shanten table is not needed
    to play), unless :func:`load_tables` has loaded the tables already. The engine's ``reset_kernel``,
    ``step_kernel`` and ``begin_turn_kernel`` take them as their last two arguments (``mjenv.game.win_tables``).
    """
    global _WIN_TABLES
    if _WIN_TABLES is None:
        if _TABLES is not None:
            _WIN_TABLES = (_TABLES[2], _TABLES[3])
        else:
            with resources.files(__name__).joinpath("suit_tables.npz").open("rb") as f:
                z = np.load(f)
                _WIN_TABLES = (np.ascontiguousarray(z["suit_win"]), np.ascontiguousarray(z["honor_win"]))
    return _WIN_TABLES


def table_sha256(name: str = "suit_tables.npz") -> str:
    """SHA-256 of a shipped table file (checked against ``SHA256SUMS`` by the tests)."""
    data = resources.files(__name__).joinpath(name).read_bytes()
    return hashlib.sha256(data).hexdigest()
