"""Compatibility layers with other mahjong libraries (``mjenv.compat.mahjonggb``: PyMahjongGB drop-in)."""
