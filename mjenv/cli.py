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
