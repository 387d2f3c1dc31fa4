"""Generate ``shanten_tables.npz``: per-group block-count increments for the fast overall shanten.

Run ``python -m mjenv._tables.gen_shanten_tables`` (writes ``mjenv/_tables/shanten_tables.npz`` and rewrites
``SHA256SUMS`` for every table in the folder).

Rules
-----
Regular shanten by block counting (see ``gen_suit_tables.py``): a group (suit or honours) given ``b`` blocks
scores ``f_p(b)``, ``p`` = 1 when it holds the pair; a hand scores the max-plus convolution of its four groups'
rows over block allotments summing to ``need``, one group at most taking its ``p = 1`` row.

Specification in mjenv
----------------------
For a group whose rows ``f_0`` and ``f_1`` are concave in ``b`` (increments ``f(b) - f(b-1)`` non-increasing,
true of all but 1227 of the 5**9 suit keys and of every honour key), the convolution is the sum of the
``need`` largest increments over all groups: with increments in {0, 1, 2}, only the number of 2s and 1s of
each row matters. ``suit_inc[key]`` / ``honor_inc[key]`` (uint16) pack, for the key of ``gen_suit_tables``:

* bits 0-2: number of increments equal to 2 in ``f_0`` (b = 1..4); bits 3-5: number equal to 1;
* bits 6-8, 9-11: the same for ``f_1`` (0 when the group has no pair);
* bit 12 (``INC_PAIR``): the group can hold the pair (``f_1(0) = 1``; ``f_0(0) = 0`` always);
* bit 13 (``INC_EXACT``): a row is not concave; the kernel then falls back to the full convolution.

The generator checks the facts the packing relies on (base values, increments in {0, 1, 2}).
"""

from __future__ import annotations

import sys

import numpy as np

from mjenv._tables import gen_suit_tables as _suit

INC_PAIR = 1 << 12
INC_EXACT = 1 << 13


def pack_increments(g: np.ndarray) -> np.ndarray:
    """Pack the rows of a block-counting table ``g`` (``int8[K, 10]``, as in ``suit_tables.npz``).

    Parameters
    ----------
    g : ndarray[int8, (K, 10)]
        ``g[key, p*5 + b]``; ``-64`` where ``p = 1`` is impossible.

    Returns
    -------
    ndarray[uint16, (K,)]
        The packed increment counts described in the module docstring.
    """
    g = g.astype(np.int64)
    r0, r1 = g[:, :5], g[:, 5:]
    pair = r1[:, 0] > _suit.NEG
    if not ((r0[:, 0] == 0).all() and (r1[pair, 0] == 1).all() and (r1[~pair] == _suit.NEG).all()):
        raise AssertionError("unexpected base values in the block-counting table")
    i0 = np.diff(r0, axis=1)
    i1 = np.where(pair[:, None], np.diff(r1, axis=1), 0)
    if not (np.isin(i0, (0, 1, 2)).all() and np.isin(i1, (0, 1, 2)).all()):
        raise AssertionError("increments outside {0, 1, 2}")
    concave = (np.diff(i0, axis=1) <= 0).all(axis=1) & (np.diff(i1, axis=1) <= 0).all(axis=1)
    v = (
        (i0 == 2).sum(axis=1)
        | (i0 == 1).sum(axis=1) << 3
        | (i1 == 2).sum(axis=1) << 6
        | (i1 == 1).sum(axis=1) << 9
        | np.where(pair, INC_PAIR, 0)
        | np.where(concave, 0, INC_EXACT)
    )
    return v.astype(np.uint16)


def generate() -> dict[str, np.ndarray]:
    """``{"suit_inc": uint16[5**9], "honor_inc": uint16[5**7]}`` from freshly built block tables."""
    return {
        "suit_inc": pack_increments(_suit.build_table(9, True)),
        "honor_inc": pack_increments(_suit.build_table(7, False)),
    }


def main(argv: list[str]) -> None:
    out = _suit.HERE / "shanten_tables.npz"
    np.savez_compressed(out, **generate())
    print(f"wrote {out}")
    _suit.main(["--sums"])


if __name__ == "__main__":
    main(sys.argv[1:])
