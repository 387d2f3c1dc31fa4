"""Tile faces as vector primitives, shared by the HTML viewer (SVG symbols) and the image renderer.

Rules
-----
Nothing of the rules: pictures of the 42 tile kinds of :mod:`mjenv.tiles` (ids 0..8 characters, 9..17 bamboo,
18..26 dots, 27..30 winds E S W N, 31..33 red / green / white dragon, 34..41 flowers) and a tile back.

Specification in mjenv
----------------------
A face is drawn in a ``FACE_W x FACE_H`` box (60 x 80 units) from a list of primitives::

    ("rect", x, y, w, h, fill, stroke, stroke_width, corner_radius)
    ("circle", cx, cy, r, fill, stroke, stroke_width)
    ("lines", [[(x, y), ...], ...], stroke, stroke_width)       # polylines with round caps and joins

Ranks, winds and dragons are drawn with a small stroke font (:data:`GLYPHS`, polylines on a 4 x 6 grid), so
the faces are legible without any font installed: characters show the rank and a red 万, bamboo shows the rank
and that many green sticks, dots show the rank and that many circles, winds their letter, the red dragon a red
中, the green dragon a green F (its compact code), the white dragon a blue frame, flowers their number 1..4
with a flower (seasons orange, plants purple). :func:`svg_defs` turns every face into an SVG ``<symbol>``
(``id="f<tile>"``, the back ``id="fb"``); :mod:`mjenv.viewer.raster` draws the same primitives with Pillow.
"""

from __future__ import annotations

FACE_W, FACE_H = 60, 80
INK, RED, GREEN, BLUE = "#1d2b53", "#c0392b", "#1e8449", "#2e5fa8"
PAPER, EDGE, BACK = "#fbf8ef", "#8a8371", "#2f7d6d"

#: stroke font on a 4 x 6 grid (x right, y down): polylines per glyph
GLYPHS: dict[str, list[list[tuple[float, float]]]] = {
    "1": [[(1, 1.2), (2.2, 0), (2.2, 6)], [(1, 6), (3.4, 6)]],
    "2": [[(0.2, 1.2), (1.2, 0), (2.9, 0), (3.9, 1), (3.9, 2.2), (0.1, 6), (4, 6)]],
    "3": [
        [(0.2, 0.8), (1.1, 0), (2.9, 0), (3.8, 0.9), (3.8, 2), (2.8, 2.9), (1.6, 2.9)],
        [(2.8, 2.9), (3.9, 3.9), (3.9, 5), (2.9, 6), (1.1, 6), (0.1, 5.2)],
    ],
    "4": [[(3, 6), (3, 0), (0, 4.2), (4, 4.2)]],
    "5": [[(3.8, 0), (0.4, 0), (0.2, 2.7), (2.8, 2.6), (3.9, 3.6), (3.9, 5), (2.9, 6), (0.2, 6)]],
    "6": [
        [
            (3.5, 0.2),
            (1.5, 0),
            (0.1, 1.6),
            (0.1, 5),
            (1.1, 6),
            (2.9, 6),
            (3.9, 5),
            (3.9, 3.7),
            (2.9, 2.8),
            (1.1, 2.8),
            (0.1, 3.6),
        ]
    ],
    "7": [[(0, 0), (4, 0), (1.4, 6)]],
    "8": [
        [
            (2, 2.9),
            (3.6, 2),
            (3.6, 0.9),
            (2.8, 0),
            (1.2, 0),
            (0.4, 0.9),
            (0.4, 2),
            (2, 2.9),
            (3.9, 4),
            (3.9, 5.1),
            (2.9, 6),
            (1.1, 6),
            (0.1, 5.1),
            (0.1, 4),
            (2, 2.9),
        ]
    ],
    "9": [
        [
            (3.9, 3),
            (2.9, 3.4),
            (1.1, 3.4),
            (0.1, 2.4),
            (0.1, 1),
            (1.1, 0),
            (2.9, 0),
            (3.9, 1),
            (3.9, 4.4),
            (2.5, 6),
            (0.6, 6),
        ]
    ],
    "E": [[(3.9, 0), (0.2, 0), (0.2, 6), (3.9, 6)], [(0.2, 3), (3.2, 3)]],
    "S": [
        [
            (3.8, 0.9),
            (2.9, 0),
            (1.1, 0),
            (0.1, 0.9),
            (0.1, 2),
            (1.1, 2.9),
            (2.9, 3.1),
            (3.9, 4),
            (3.9, 5.1),
            (2.9, 6),
            (1.1, 6),
            (0.1, 5.1),
        ]
    ],
    "W": [[(0, 0), (1, 6), (2, 1.8), (3, 6), (4, 0)]],
    "N": [[(0.2, 6), (0.2, 0), (3.8, 6), (3.8, 0)]],
    "F": [[(3.9, 0), (0.3, 0), (0.3, 6)], [(0.3, 2.9), (3.2, 2.9)]],
    "中": [[(0.2, 1.6), (3.8, 1.6), (3.8, 4.2), (0.2, 4.2), (0.2, 1.6)], [(2, 0), (2, 6)]],
    "万": [
        [(0, 0.4), (4, 0.4)],
        [(1.6, 0.4), (1.3, 3.6), (0.2, 6)],
        [(1.5, 2.4), (3.7, 2.4), (3.5, 5.6), (2.6, 6)],
    ],
}


def glyph(ch: str, x: float, y: float, h: float, stroke: str, width: float) -> tuple:
    """A ``lines`` primitive drawing glyph ``ch`` with its top-left corner at (x, y), ``h`` units tall."""
    k = h / 6.0
    return ("lines", [[(x + px * k, y + py * k) for px, py in line] for line in GLYPHS[ch]], stroke, width)


# positions of the dots (x, y on the face) for ranks 1..9
_DOTS = {
    1: [(30, 44)],
    2: [(30, 28), (30, 60)],
    3: [(16, 24), (30, 44), (44, 64)],
    4: [(18, 30), (42, 30), (18, 58), (42, 58)],
    5: [(17, 26), (43, 26), (30, 44), (17, 62), (43, 62)],
    6: [(20, 24), (40, 24), (20, 44), (40, 44), (20, 64), (40, 64)],
    7: [(14, 20), (30, 27), (46, 34), (20, 50), (40, 50), (20, 66), (40, 66)],
    8: [(20, 18), (40, 18), (20, 34), (40, 34), (20, 50), (40, 50), (20, 66), (40, 66)],
    9: [(14, 22), (30, 22), (46, 22), (14, 44), (30, 44), (46, 44), (14, 66), (30, 66), (46, 66)],
}
# columns x rows of bamboo sticks for ranks 1..9 (rank 1 is one tall stick)
_STICKS = {1: (1, 1), 2: (1, 2), 3: (3, 1), 4: (2, 2), 5: (3, 2), 6: (3, 2), 7: (4, 2), 8: (4, 2), 9: (3, 3)}


def _base() -> list[tuple]:
    return [("rect", 1.5, 1.5, FACE_W - 3, FACE_H - 3, PAPER, EDGE, 3, 7)]


def _corner(rank: int, color: str) -> tuple:
    return glyph(str(rank), 4, 4, 12, color, 2.2)


def face(tile: int) -> list[tuple]:
    """The primitives of tile ``tile`` (0..41), or of the tile back for ``-1``."""
    if tile == -1:
        return [
            ("rect", 1.5, 1.5, FACE_W - 3, FACE_H - 3, BACK, "#1b4d43", 3, 7),
            ("rect", 9, 9, FACE_W - 18, FACE_H - 18, None, "#7fc2b1", 2, 4),
        ]
    if not 0 <= tile < 42:
        raise ValueError(f"tile must be -1 (back) or 0..41, got {tile}")
    out = _base()
    if tile < 9:  # characters: rank above a red 万
        r = tile + 1
        out.append(glyph(str(r), 19, 8, 30, INK, 5))
        out.append(glyph("万", 15, 44, 30, RED, 4.5))
    elif tile < 18:  # bamboo: that many green sticks
        r = tile - 8
        cols, rows = _STICKS[r]
        n_placed = 0
        cw, rh = 44 / cols, (56 if r == 1 else 58) / rows
        for row in range(rows):
            for col in range(cols):
                if n_placed == r:
                    break
                cx, top = 10 + cw * (col + 0.5), 18 + rh * row
                color = RED if (r == 1 or (r in (5, 7, 9) and n_placed == r // 2)) else GREEN
                out.append(("lines", [[(cx, top + 3), (cx, top + rh - 3)]], color, 5 if r > 1 else 8))
                out.append(("lines", [[(cx - 3, top + rh / 2), (cx + 3, top + rh / 2)]], color, 1.6))
                n_placed += 1
        out.append(_corner(r, GREEN))
    elif tile < 27:  # dots
        r = tile - 17
        rad = {1: 15, 2: 9, 3: 8, 4: 8, 5: 7, 6: 7, 7: 6, 8: 6, 9: 6}[r]
        for i, (cx, cy) in enumerate(_DOTS[r]):
            color = (
                RED if (r == 1 or (r in (5, 9) and i == len(_DOTS[r]) // 2) or (r == 7 and i >= 3)) else BLUE
            )
            out.append(("circle", cx, cy, rad, None, color, 2.6))
            out.append(("circle", cx, cy, rad * 0.4, color, None, 0))
        out.append(_corner(r, BLUE))
    elif tile < 31:  # winds
        out.append(glyph("ESWN"[tile - 27], 14, 18, 44, INK, 5.5))
    elif tile == 31:
        out.append(glyph("中", 12, 16, 48, RED, 6))
    elif tile == 32:
        out.append(glyph("F", 16, 18, 44, GREEN, 6))
    elif tile == 33:
        out.append(("rect", 12, 14, 36, 52, None, BLUE, 3.5, 2))
        out.append(("rect", 17, 19, 26, 42, None, BLUE, 1.8, 1))
    else:  # flowers: seasons 34..37, plants 38..41
        color = "#d35400" if tile < 38 else "#8e44ad"
        out.append(glyph(str((tile - 34) % 4 + 1), 4, 4, 14, color, 2.4))
        for dx, dy in ((0, -11), (10.5, -3.4), (6.5, 8.9), (-6.5, 8.9), (-10.5, -3.4)):
            out.append(("circle", 32 + dx, 44 + dy, 7.5, color, None, 0))
        out.append(("circle", 32, 44, 5, "#f4d03f", None, 0))
        out.append(("lines", [[(32, 56), (30, 74)]], GREEN, 2.5))
    return out


def _fmt(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _svg(prims: list[tuple]) -> str:
    parts = []
    for p in prims:
        if p[0] == "rect":
            _, x, y, w, h, fill, stroke, sw, rr = p
            parts.append(
                f'<rect x="{_fmt(x)}" y="{_fmt(y)}" width="{_fmt(w)}" height="{_fmt(h)}" rx="{rr}" '
                f'fill="{fill or "none"}" stroke="{stroke or "none"}" stroke-width="{sw}"/>'
            )
        elif p[0] == "circle":
            _, cx, cy, r, fill, stroke, sw = p
            s = f' stroke="{stroke}" stroke-width="{sw}"' if stroke else ""
            parts.append(
                f'<circle cx="{_fmt(cx)}" cy="{_fmt(cy)}" r="{_fmt(r)}" fill="{fill or "none"}"{s}/>'
            )
        else:
            _, lines, stroke, sw = p
            d = "".join("M" + "L".join(f"{_fmt(x)} {_fmt(y)}" for x, y in line) for line in lines)
            parts.append(f'<path d="{d}" fill="none" stroke="{stroke}" stroke-width="{sw}"/>')
    return "".join(parts)


def svg_defs() -> str:
    """An invisible ``<svg>`` holding one ``<symbol>`` per face (``#f0`` .. ``#f41``) and the back (``#fb``)."""
    syms = [f'<symbol id="f{t}" viewBox="0 0 {FACE_W} {FACE_H}">{_svg(face(t))}</symbol>' for t in range(42)]
    syms.append(f'<symbol id="fb" viewBox="0 0 {FACE_W} {FACE_H}">{_svg(face(-1))}</symbol>')
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" style="display:none" stroke-linecap="round" '
        f'stroke-linejoin="round">{"".join(syms)}</svg>'
    )
