"""mjenv: a Chinese Official Mahjong (MCR, 国标麻将) reinforcement-learning environment.

The rules core (tiles, hands, scoring, game engine) is Numba kernels over numpy arrays; the PettingZoo,
Gymnasium and vector envs are thin fronts over those kernels.
"""

__version__ = "0.1.0"

from mjenv.tiles import format_tiles, parse_tiles  # noqa: E402

__all__ = ["__version__", "format_tiles", "parse_tiles", "env", "raw_env", "MahjongGymEnv", "RuleConfig",
           "VectorEnv", "RandomPolicy"]

_LAZY = {"env": "mjenv.pettingzoo_env", "raw_env": "mjenv.pettingzoo_env", "MahjongGymEnv": "mjenv.gym_env",
         "RuleConfig": "mjenv.rules", "VectorEnv": "mjenv.vector", "RandomPolicy": "mjenv.vector"}


def __getattr__(name):  # lazy fronts: importing mjenv imports neither pettingzoo nor the kernels
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mjenv' has no attribute {name!r}")


def _register_gymnasium() -> None:
    """Make ``gymnasium.make("mjenv/Mahjong-v0")`` work after ``import mjenv``."""
    try:
        import gymnasium
    except ImportError:  # pragma: no cover - gymnasium is a dependency
        return
    if "mjenv/Mahjong-v0" not in gymnasium.registry:
        gymnasium.register(id="mjenv/Mahjong-v0", entry_point="mjenv.gym_env:MahjongGymEnv")


_register_gymnasium()
