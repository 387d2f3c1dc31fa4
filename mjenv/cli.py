"""The ``mjenv`` command line.

Each sub-command lives in a ``_cmd_<name>`` function registered in :func:`build_parser`.
"""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mjenv", description="Chinese Official Mahjong (MCR) environment tools")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _register_tiles(sub)
    _register_hand(sub)
    return parser


def _register_tiles(sub) -> None:
    p = sub.add_parser("tiles", help="parse tiles in any notation and print them in every notation")
    p.add_argument("tiles", help='e.g. "123m456s789pESWNCFP", "W1 T2 J3" or unicode glyphs')
    p.set_defaults(func=_cmd_tiles)


def _cmd_tiles(args) -> int:
    from mjenv.tiles import STYLES, format_tiles, parse_tiles

    tiles = parse_tiles(args.tiles)
    for style in STYLES:
        print(f"{style:8s} {format_tiles(tiles, style)}")
    return 0


def _register_hand(sub) -> None:
    p = sub.add_parser("shanten", help="shanten per winning shape and useful tiles of a hand")
    p.add_argument("hand", help='e.g. "[567m,2][EEE,1] 123m45p99s" or "W1 W2 ..." (13 - 3*melds tiles)')
    p.add_argument("--mahjonggb", action="store_true", help="PyMahjongGB's useful-tile convention (5th copies)")
    p.set_defaults(func=_cmd_shanten)
    p = sub.add_parser("waits", help="tiles that complete a waiting hand (and win check of a complete one)")
    p.add_argument("hand", help='e.g. "1112345678999m" (13 - 3*melds tiles) or a 14 - 3*melds tile hand')
    p.set_defaults(func=_cmd_waits)


def _cmd_shanten(args) -> int:
    from mjenv.hand import as_hand, shanten, shanten_by_shape
    from mjenv.tiles import format_tiles

    h = as_hand(args.hand)
    physical = not args.mahjonggb
    by = shanten_by_shape(h, physical=physical)
    best = shanten(h, physical=physical)
    print(f"hand     {h}")
    label = "complete" if best.shanten == -1 else ("ready" if best.shanten == 0 else f"{best.shanten}-shanten")
    print(f"shanten  {best.shanten} ({label})")
    for name, r in by.items():
        useful = format_tiles(r.useful) if r.useful else "-"
        n_useful = sum(4 - int(h.held()[t]) for t in r.useful)
        mark = "*" if r.shanten == best.shanten else " "
        print(f" {mark}{name:17s} {r.shanten:3d}  useful {useful} ({len(r.useful)} kinds, {n_useful} tiles)")
    return 0


def _cmd_waits(args) -> int:
    from mjenv.hand import SHAPE_NAMES, as_hand, waits, win_shapes
    from mjenv.tiles import format_tiles

    h = as_hand(args.hand)
    print(f"hand     {h}")
    if h.is_complete:
        mask = win_shapes(h)
        names = [n for i, n in enumerate(SHAPE_NAMES) if mask >> i & 1]
        print("win      " + (", ".join(names) if names else "no"))
        return 0
    w = waits(h)
    held = h.held()
    left = sum(4 - int(held[t]) for t in w)
    print("waits    " + (f"{format_tiles(w)} ({len(w)} kinds, {left} tiles left)" if w else "none (not ready)"))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from mjenv import __version__

        print(__version__)
        return 0
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError) as e:
        print(f"mjenv {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
