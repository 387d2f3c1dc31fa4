"""Generate ``suit_tables.npz``: per-suit block-counting tables for win detection and shanten.

Run ``python -m mjenv._tables.gen_suit_tables`` (writes ``mjenv/_tables/suit_tables.npz``); then update
``SHA256SUMS`` with ``python -m mjenv._tables.gen_suit_tables --sums``.

Rules
-----
A regular MCR hand is four sets (chow or pung) and a pair. Block counting: a partial hand scores
``2*sets + min(partials, need - sets) + pair`` where a partial is two tiles of a set (pair, adjacent or gapped
chow) and ``need`` is the number of sets still to form; shanten is ``2*need - best score``.

Specification in mjenv
----------------------
A suit (9 ranks) or the honours (7 kinds, no chows) is keyed by its counts in base 5, ``key = sum c[r] * 5**r``
(counts 0..4). ``suit[key, p*5 + b]`` (``p`` in {0, 1}: this group holds the pair; ``b`` in 0..4: blocks given
to this group) is the best ``2*sets + min(partials, b - sets) + p`` over decompositions of the group with
``sets <= b`` (``-64`` when impossible, i.e. ``p = 1`` and no pair). Groups combine by a max-plus convolution
over ``b`` and ``p``, so the table is all a kernel needs.

``suit_win[key]`` bit 0: the group splits exactly into sets; bit 1: exactly into sets and one pair.
Values follow from a recurrence on the lowest tile: it is either isolated or the lowest tile of one block
(set, head pair, partial pair, adjacent or gapped partial chow).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np

from mjenv._jit import njit

NEG = -64
HERE = Path(__file__).resolve().parent


@njit(cache=False)
def _add(g, best, sub_key, dsets, dpart, dpair):
    for p in range(2):
        for b in range(5):
            if dpair:
                if p == 0:
                    continue
                v = g[sub_key, b] + 1 if g[sub_key, b] > NEG else NEG
            else:
                used = dsets + dpart
                if b < used:
                    continue
                s = g[sub_key, p * 5 + b - used]
                v = s + 2 * dsets + dpart if s > NEG else NEG
            best[p * 5 + b] = max(best[p * 5 + b], v)


@njit(cache=False)
def _fill(g, nranks, chows):
    size = g.shape[0]
    pw = np.ones(nranks + 2, dtype=np.int64)
    for i in range(1, nranks + 2):
        pw[i] = pw[i - 1] * 5
    g[0, :5] = 0
    c = np.zeros(nranks + 2, dtype=np.int64)
    best = np.zeros(10, dtype=np.int16)
    for key in range(1, size):
        i = 0
        while True:  # increment the base-5 digits
            c[i] += 1
            if c[i] < 5:
                break
            c[i] = 0
            i += 1
        low = 0
        while c[low] == 0:
            low += 1
        best[:] = g[key - pw[low]]  # lowest tile isolated
        if c[low] >= 3:
            _add(g, best, key - 3 * pw[low], 1, 0, 0)
        if c[low] >= 2:
            _add(g, best, key - 2 * pw[low], 0, 0, 1)
            _add(g, best, key - 2 * pw[low], 0, 1, 0)
        if chows:
            if low + 2 < nranks and c[low + 1] > 0 and c[low + 2] > 0:
                _add(g, best, key - pw[low] - pw[low + 1] - pw[low + 2], 1, 0, 0)
            if low + 1 < nranks and c[low + 1] > 0:
                _add(g, best, key - pw[low] - pw[low + 1], 0, 1, 0)
            if low + 2 < nranks and c[low + 2] > 0:
                _add(g, best, key - pw[low] - pw[low + 2], 0, 1, 0)
        for p in range(2):  # monotone in b: more blocks never hurt
            for b in range(1, 5):
                best[p * 5 + b] = max(best[p * 5 + b], best[p * 5 + b - 1])
        g[key] = best


def build_table(nranks: int, chows: bool) -> np.ndarray:
    """The block-counting table ``g[key, p*5 + b]`` of a suit (``nranks=9, chows=True``) or of the honours
    (``7, False``), as in the module docstring (``suit`` / ``honor``; ``gen_shanten_tables.py`` packs its
    increments from the same tables)."""
    g = np.full((5**nranks, 10), NEG, dtype=np.int16)
    _fill(g, nranks, chows)
    return g


def _win(g: np.ndarray, nranks: int) -> np.ndarray:
    size = g.shape[0]
    keys = np.arange(size)
    n = np.zeros(size, dtype=np.int64)
    for r in range(nranks):
        n += (keys // 5**r) % 5
    win = np.zeros(size, dtype=np.uint8)
    sets = n // 3
    ok0 = (n % 3 == 0) & (sets <= 4)
    idx = np.where(ok0)[0]
    win[idx] |= (g[idx, sets[idx]] == 2 * sets[idx]).astype(np.uint8)
    ok1 = (n % 3 == 2) & (sets <= 4)
    idx = np.where(ok1)[0]
    win[idx] |= (g[idx, 5 + sets[idx]] == 2 * sets[idx] + 1).astype(np.uint8) << 1
    return win


def generate() -> dict[str, np.ndarray]:
    suit = build_table(9, True)
    honor = build_table(7, False)
    return {
        "suit": suit.astype(np.int8),
        "honor": honor.astype(np.int8),
        "suit_win": _win(suit, 9),
        "honor_win": _win(honor, 7),
    }


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str]) -> None:
    out = HERE / "suit_tables.npz"
    if "--sums" not in argv:
        np.savez_compressed(out, **generate())
        print(f"wrote {out}")
    lines = [f"{sha256(p)}  {p.name}" for p in sorted(HERE.glob("*.npz"))]
    (HERE / "SHA256SUMS").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
