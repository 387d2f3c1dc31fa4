"""mjenv: a Chinese Official Mahjong (MCR, 国标麻将) reinforcement-learning environment.

The rules core (tiles, hands, scoring, game engine) is Numba kernels over numpy arrays; the PettingZoo,
Gymnasium and vector envs are thin fronts over those kernels.
"""

__version__ = "0.1.0"

from mjenv.tiles import format_tiles, parse_tiles  # noqa: E402

__all__ = ["__version__", "format_tiles", "parse_tiles"]
