"""Image of a table (``render_mode="rgb_array"``): the replay page's layout drawn with Pillow.

Rules
-----
Nothing of the rules: a picture of a :mod:`mjenv.game` state.

Specification in mjenv
----------------------
:func:`render_rgb` returns ``uint8[HEIGHT, WIDTH, 3]`` (688 x 960): a top bar (prevailing wind, wall count,
dice), then one block per seat in chair order, as in the HTML viewer (:mod:`mjenv.viewer`): the seat wind,
the name, the dealer mark and the hand's score; the concealed tiles (the tile just drawn set apart), the melds
(the claimed tile raised, a concealed kong with its outer tiles face down), the flowers; the discards (claimed
ones faded, the latest outlined); the seat to act is framed. A bottom line gives the tile on offer or the
result. Tile faces are :mod:`mjenv.viewer.faces`, the same primitives as the page's SVG symbols. ``reveal=False``
with ``viewer=s`` shows the other seats' concealed tiles face down.

Pillow is an optional dependency (``pip install mjenv[render]``; it also comes with matplotlib).
"""

from __future__ import annotations

import functools

import numpy as np

from mjenv import game as G
from mjenv.tiles import ENGLISH_NAMES, WIND_NAMES, counts_to_tiles
from mjenv.viewer.faces import FACE_H, FACE_W, face

WIDTH, HEIGHT = 960, 688
TOP, BLOCK, BOTTOM = 28, 150, 60
HAND_T, RIVER_T = (33, 44), (24, 32)
_BG, _SEAT, _CUR, _TEXT, _HL = (31, 79, 68), (42, 106, 91), (244, 208, 63), (234, 245, 241), (244, 208, 63)
_SS = 3  # supersampling of the faces


def _pil():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError(
            "render_mode='rgb_array' needs Pillow: pip install 'mjenv[render]' (or pillow)"
        ) from None
    return Image, ImageDraw, ImageFont


def _rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))


@functools.lru_cache(maxsize=256)
def _tile_image(tile: int, w: int, h: int, faded: bool = False):
    """Tile ``tile`` (-1: back) drawn from its face primitives at ``w x h`` pixels (RGBA)."""
    Image, ImageDraw, _ = _pil()
    k = _SS * w / FACE_W
    ky = _SS * h / FACE_H
    img = Image.new("RGBA", (_SS * w, _SS * h), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    for p in face(tile):
        if p[0] == "rect":
            _, x, y, rw, rh, fill, stroke, sw, rr = p
            d.rounded_rectangle(
                [x * k, y * ky, (x + rw) * k, (y + rh) * ky],
                radius=rr * k,
                fill=_rgb(fill) if fill else None,
                outline=_rgb(stroke) if stroke else None,
                width=max(1, round(sw * k)),
            )
        elif p[0] == "circle":
            _, cx, cy, r, fill, stroke, sw = p
            d.ellipse(
                [(cx - r) * k, (cy - r) * ky, (cx + r) * k, (cy + r) * ky],
                fill=_rgb(fill) if fill else None,
                outline=_rgb(stroke) if stroke else None,
                width=max(1, round(sw * k)) if stroke else 0,
            )
        else:
            _, lines, stroke, sw = p
            wpx = max(1, round(sw * k))
            for line in lines:
                pts = [(x * k, y * ky) for x, y in line]
                d.line(pts, fill=_rgb(stroke), width=wpx, joint="curve")
                for x, y in (pts[0], pts[-1]):
                    d.ellipse([x - wpx / 2, y - wpx / 2, x + wpx / 2, y + wpx / 2], fill=_rgb(stroke))
    img = img.resize((w, h), Image.LANCZOS)
    if faded:
        img.putalpha(img.getchannel("A").point(lambda a: a * 40 // 100))
    return img


@functools.lru_cache(maxsize=4)
def _font(size: int):
    _, _, ImageFont = _pil()
    try:
        return ImageFont.load_default(size)
    except TypeError:  # pragma: no cover - Pillow < 10.1
        return ImageFont.load_default()


def _meld_parts(m: int, seat: int) -> tuple[list[int], int, bool]:
    from mjenv.viewer import meld_view

    tiles, _, claimed, concealed, _ = meld_view(m, seat)
    return tiles, claimed, bool(concealed)


def render_rgb(
    state: np.ndarray, names: list[str] | None = None, reveal: bool = True, viewer: int | None = None
) -> np.ndarray:
    """``uint8[688, 960, 3]`` picture of the table (see the module docstring)."""
    Image, ImageDraw, _ = _pil()
    G.check_state(state)
    names = names or [f"seat {s}" for s in range(4)]
    if len(names) != 4:
        raise ValueError(f"names must list 4 names, got {len(names)}")
    img = Image.new("RGB", (WIDTH, HEIGHT), _BG)
    d = ImageDraw.Draw(img)
    f14, f12 = _font(14), _font(12)
    dealer = int(state[G.DEALER])
    over = state[G.PHASE] == G.PH_OVER
    d.rectangle([0, 0, WIDTH, TOP - 2], fill=(22, 59, 51))
    d.text(
        (10, 6),
        f"prevailing {WIND_NAMES[int(state[G.PREVALENT])]} · wall {int(state[G.BACK] - state[G.FRONT])} "
        f"tiles · dice {int(state[G.DICE]) // 10}+{int(state[G.DICE]) % 10}",
        fill=_TEXT,
        font=f14,
    )
    drawn_seat = int(state[G.TURN]) if state[G.PHASE] == G.PH_TURN and state[G.DRAWN] >= 0 else -1
    for s in range(4):
        y0 = TOP + s * BLOCK
        cur = not over and int(state[G.CUR]) == s
        d.rounded_rectangle(
            [8, y0 + 2, WIDTH - 8, y0 + BLOCK - 4],
            radius=8,
            fill=_SEAT,
            outline=_CUR if cur else _SEAT,
            width=2,
        )
        wind = (s - dealer) % 4
        score = int(state[G.SCORES + s])
        head = f"{WIND_NAMES[wind]}  {names[s]}" + ("  [dealer]" if wind == 0 else "")
        d.text((18, y0 + 6), head, fill=_TEXT, font=f14)
        d.text((WIDTH - 100, y0 + 6), f"hand {score:+d}", fill=_TEXT, font=f14)
        hide = not reveal and viewer != s and not (over and int(state[G.WINNER]) == s)
        tiles = counts_to_tiles(G.seat_hand(state, s))
        drawn = None
        if drawn_seat == s:
            drawn = int(state[G.DRAWN])
            tiles.remove(drawn)
        x, y = 18, y0 + 28
        for t in tiles:
            img.paste(
                _tile_image(-1 if hide else t, *HAND_T), (x, y), _tile_image(-1 if hide else t, *HAND_T)
            )
            x += HAND_T[0] + 1
        if drawn is not None:
            x += 8
            im = _tile_image(-1 if hide else drawn, *HAND_T)
            img.paste(im, (x, y), im)
            x += HAND_T[0] + 1
        x += 12
        for m in G.seat_melds(state, s):
            mt, claimed, concealed = _meld_parts(m, s)
            for i, t in enumerate(mt):
                back = concealed and (hide or i in (0, 3))
                im = _tile_image(-1 if back else t, *HAND_T)
                img.paste(im, (x, y - (5 if i == claimed else 0)), im)
                x += HAND_T[0] + 1
            x += 8
        for f in range(8):
            if int(state[G.FLOWER_BITS + s]) >> f & 1:
                im = _tile_image(34 + f, *RIVER_T)
                img.paste(im, (x, y + HAND_T[1] - RIVER_T[1]), im)
                x += RIVER_T[0] + 1
        disc = G.seat_discards(state, s)
        per_row = (WIDTH - 36) // (RIVER_T[0] + 1)
        for i, (t, claimed) in enumerate(disc[: 2 * per_row]):
            rx, ry = 18 + (i % per_row) * (RIVER_T[0] + 1), y0 + 78 + (i // per_row) * (RIVER_T[1] + 2)
            im = _tile_image(t, *RIVER_T, faded=claimed)
            img.paste(im, (rx, ry), im)
            last = int(state[G.LAST_ACTOR]) == s and i == len(disc) - 1 and not claimed
            if last:
                d.rounded_rectangle(
                    [rx - 1, ry - 1, rx + RIVER_T[0], ry + RIVER_T[1]], radius=4, outline=_HL, width=2
                )
    yb = TOP + 4 * BLOCK + 6
    if over:
        r = G.result(state)
        if r["winner"] is None:
            line = f"hand over: {r['win_type']}"
        else:
            fans = ", ".join(f"{k} x{v}" if v > 1 else k for k, v in r["fans"].items())
            line = f"{names[r['winner']]} wins ({r['win_type']}) with {r['fan_total']} fan: {fans}"
        d.text((12, yb), line[:140], fill=_TEXT, font=f14)
        d.text(
            (12, yb + 22),
            "payments: " + ", ".join(f"{names[s]} {p:+d}" for s, p in enumerate(r["payments"])),
            fill=_TEXT,
            font=f12,
        )
    elif state[G.OFFER_TILE] >= 0:
        t = int(state[G.OFFER_TILE])
        d.text(
            (12, yb),
            f"on offer: {ENGLISH_NAMES[t]} from {names[int(state[G.OFFER_SEAT])]}",
            fill=_TEXT,
            font=f14,
        )
    return np.asarray(img, dtype=np.uint8).copy()
