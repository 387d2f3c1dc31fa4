"""Text rendering of a table (the ``ansi`` and ``human`` render modes).

Rules
-----
Nothing of the rules: a view of :mod:`mjenv.game` states.

Specification in mjenv
----------------------
``render_table(state, names, style, reveal)`` returns a multi-line string: wall count, winds, each seat's
flowers, melds (``[456m,2]`` CMOH notation, concealed kongs as ``[EEEE]``), concealed tiles (all seats when
``reveal``, else only ``viewer``'s) and discards (claimed ones in parentheses), then the tile on offer and the
result when the hand is over. ``style`` is a tile notation of :func:`mjenv.tiles.format_tiles` (``unicode``
by default).
"""

from __future__ import annotations

import numpy as np

from mjenv import game as G
from mjenv.melds import kind_of, offer_of, tile_of
from mjenv.tiles import WIND_NAMES, counts_to_tiles, format_tiles


def _meld_str(m: int, style: str) -> str:
    kind, t, offer = kind_of(m), tile_of(m), offer_of(m)
    tiles = [t - 1, t, t + 1] if kind == 1 else [t] * (4 if kind == 3 else 3)
    body = format_tiles(tiles, style)
    return f"[{body}]" if kind == 3 and offer == 0 else f"[{body},{offer}]"


def render_table(
    state: np.ndarray,
    names: list[str] | None = None,
    style: str = "unicode",
    reveal: bool = True,
    viewer: int | None = None,
) -> str:
    """A text picture of the table (see the module docstring)."""
    G.check_state(state)
    names = names or [f"seat {s}" for s in range(4)]
    dealer = int(state[G.DEALER])
    lines = [
        f"prevailing wind {WIND_NAMES[int(state[G.PREVALENT])]} | wall {int(state[G.BACK] - state[G.FRONT])} "
        f"tiles | dice {int(state[G.DICE]) // 10}+{int(state[G.DICE]) % 10}"
    ]
    for s in range(4):
        wind = WIND_NAMES[(s - dealer) % 4]
        mark = ">" if s == state[G.CUR] else " "
        show = reveal or viewer == s
        hand = (
            format_tiles(counts_to_tiles(G.seat_hand(state, s)), style)
            if show
            else f"({int(G.seat_hand(state, s).sum())} tiles)"
        )
        melds = " ".join(_meld_str(m, style) for m in G.seat_melds(state, s))
        flowers = format_tiles([34 + f for f in range(8) if int(state[G.FLOWER_BITS + s]) >> f & 1], style)
        disc = " ".join(
            f"({format_tiles([t], style)})" if c else format_tiles([t], style)
            for t, c in G.seat_discards(state, s)
        )
        lines.append(f"{mark}{wind} {names[s]:<9} {hand} {melds} {flowers}".rstrip())
        lines.append(f"   discards: {disc}")
    if state[G.OFFER_TILE] >= 0 and state[G.PHASE] != G.PH_OVER:
        lines.append(
            f"on offer: {format_tiles([int(state[G.OFFER_TILE])], style)} from "
            f"{names[int(state[G.OFFER_SEAT])]}"
        )
    if state[G.PHASE] == G.PH_OVER:
        r = G.result(state)
        if r["winner"] is None:
            lines.append(f"hand over: {r['win_type']}")
        else:
            fans = ", ".join(f"{k} x{v}" if v > 1 else k for k, v in r["fans"].items())
            lines.append(
                f"hand over: {names[r['winner']]} wins ({r['win_type']}) with {r['fan_total']} fan: {fans}"
            )
        lines.append("payments: " + ", ".join(f"{names[s]} {p:+d}" for s, p in enumerate(r["payments"])))
    return "\n".join(lines)
