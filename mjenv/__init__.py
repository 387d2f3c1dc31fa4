"""mjenv: a Chinese Official Mahjong (MCR, 国标麻将) reinforcement-learning environment.

The rules core (tiles, hands, scoring, game engine) is Numba kernels over numpy arrays; the PettingZoo,
Gymnasium and vector envs are thin fronts over those kernels.

This module is the package face only: the public names (the fronts load lazily, on first use), and the
registration of the gymnasium id. Modules of the package never import it (``tests/test_layering.py``): they
import what they need from its submodules (:func:`warmup` lives in :mod:`mjenv._compile`).
"""

from mjenv._compile import default_jobs, warmup
from mjenv._version import __version__
from mjenv.tiles import format_tiles, parse_tiles

__all__ = [
    "__version__",
    "format_tiles",
    "parse_tiles",
    "env",
    "raw_env",
    "MahjongGymEnv",
    "MahjongVectorEnv",
    "RuleConfig",
    "VectorEnv",
    "RandomPolicy",
    "score",
    "warmup",
    "default_jobs",
]

_LAZY = {
    "env": "mjenv.pettingzoo_env",
    "raw_env": "mjenv.pettingzoo_env",
    "MahjongGymEnv": "mjenv.gym_env",
    "MahjongVectorEnv": "mjenv.gym_vector",
    "RuleConfig": "mjenv.rules",
    "VectorEnv": "mjenv.vector",
    "RandomPolicy": "mjenv.policy",
    "score": "mjenv.fans",
}


def __getattr__(name):  # lazy fronts: importing mjenv imports neither pettingzoo nor the kernels
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mjenv' has no attribute {name!r}")


GYM_ID = "mjenv/Mahjong-v0"


def _register(gymnasium) -> None:
    if GYM_ID not in gymnasium.registry:
        gymnasium.register(
            id=GYM_ID,
            entry_point="mjenv.gym_env:MahjongGymEnv",
            # gymnasium.make_vec(GYM_ID, num_envs=N): one VectorEnv underneath, not N one-table envs
            vector_entry_point="mjenv.gym_vector:MahjongVectorEnv",
        )


class _GymnasiumHook:
    """A one-shot import hook (on :data:`sys.meta_path`) that registers :data:`GYM_ID` with gymnasium right
    after gymnasium's own ``__init__`` has run, so that ``import mjenv`` does not import gymnasium (~0.05-0.1 s,
    which a warm start that never makes a gymnasium env does not need). gymnasium 1.x has no plugin entry
    points (0.x's ``gymnasium.envs`` group was removed), so this is what keeps ``gymnasium.make(GYM_ID)``
    working after ``import mjenv`` in either import order. The module's own loader is kept (only its
    ``exec_module`` is wrapped, for this one import)."""

    def find_spec(self, name, path=None, target=None):
        if name != "gymnasium":
            return None
        import importlib.util

        _remove_hook()
        spec = importlib.util.find_spec(name)  # the rest of sys.meta_path (this hook is gone)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            try:
                run(module)
            finally:
                vars(loader).pop("exec_module", None)  # the loader's own method again
            try:
                _register(module)
            except Exception as e:  # noqa: BLE001 - never break gymnasium's own import
                import warnings

                warnings.warn(f"mjenv could not register {GYM_ID!r} with gymnasium: {e!r}", RuntimeWarning)

        loader.exec_module = exec_module
        return spec


def _remove_hook() -> None:
    import sys

    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "_GymnasiumHook"]


def _register_gymnasium() -> None:
    """Make ``gymnasium.make("mjenv/Mahjong-v0")`` work after ``import mjenv``: registered now when gymnasium is
    imported already, else as soon as it is (:class:`_GymnasiumHook`)."""
    import sys

    gymnasium = sys.modules.get("gymnasium")
    if gymnasium is not None and hasattr(gymnasium, "register"):
        _register(gymnasium)
        return
    _remove_hook()  # one hook, also after importlib.reload(mjenv)
    sys.meta_path.insert(0, _GymnasiumHook())


_register_gymnasium()
