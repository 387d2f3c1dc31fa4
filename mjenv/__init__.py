"""mjenv: a Chinese Official Mahjong (MCR, 国标麻将) reinforcement-learning environment.

The rules core (tiles, hands, scoring, game engine) is Numba kernels over numpy arrays; the PettingZoo,
Gymnasium and vector envs are thin fronts over those kernels.
"""

__version__ = "0.1.0"

from mjenv.tiles import format_tiles, parse_tiles  # noqa: E402

__all__ = ["__version__", "format_tiles", "parse_tiles", "env", "raw_env", "MahjongGymEnv", "RuleConfig",
           "VectorEnv", "RandomPolicy", "score", "warmup"]

_LAZY = {"env": "mjenv.pettingzoo_env", "raw_env": "mjenv.pettingzoo_env", "MahjongGymEnv": "mjenv.gym_env",
         "RuleConfig": "mjenv.rules", "VectorEnv": "mjenv.vector", "RandomPolicy": "mjenv.policy",
         "score": "mjenv.fans"}


def __getattr__(name):  # lazy fronts: importing mjenv imports neither pettingzoo nor the kernels
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mjenv' has no attribute {name!r}")


def warmup(verbose: bool = False) -> dict[str, float]:
    """Compile (or load from numba's on-disk cache) every kernel of mjenv; returns seconds per module.

    Kernels compile lazily on first use, so calling this is optional; benchmarks and long runs call it first
    so that compile time is reported apart from run time.
    """
    import importlib
    import time

    out: dict[str, float] = {}
    for name in ("mjenv.hand", "mjenv.fans", "mjenv.game", "mjenv.vector"):
        t0 = time.perf_counter()
        importlib.import_module(name).warmup()
        out[name] = time.perf_counter() - t0
        if verbose:
            print(f"{name}: {out[name]:.1f} s")
    return out


def _register_gymnasium() -> None:
    """Make ``gymnasium.make("mjenv/Mahjong-v0")`` work after ``import mjenv``."""
    try:
        import gymnasium
    except ImportError:  # pragma: no cover - gymnasium is a dependency
        return
    if "mjenv/Mahjong-v0" not in gymnasium.registry:
        gymnasium.register(id="mjenv/Mahjong-v0", entry_point="mjenv.gym_env:MahjongGymEnv")


_register_gymnasium()
