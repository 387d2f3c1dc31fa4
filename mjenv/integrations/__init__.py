"""Adapters of mjenv's envs to RL libraries (``docs/integrations.md``).

* :mod:`mjenv.integrations.sb3`: Stable-Baselines3 / sb3-contrib (``pip install mjenv[sb3]``):
  :func:`~mjenv.integrations.sb3.make_vec_env` returns an SB3 ``VecEnv`` that ``MaskablePPO`` trains on.
* :mod:`mjenv.integrations.torchrl`: TorchRL (``pip install mjenv[torchrl]``):
  :func:`~mjenv.integrations.torchrl.make_env` returns a batched TorchRL env with the action mask in its specs.
* :mod:`mjenv.integrations.tianshou`: Tianshou (``pip install mjenv[tianshou]``):
  :func:`~mjenv.integrations.tianshou.make_env` returns Tianshou's ``PettingZooEnv`` of the four-player AEC env,
  with infos its replay buffer can hold.

Each adapter module imports its library when it is imported itself; importing this package imports none.
(Gymnasium's own vector API needs no adapter: :class:`mjenv.gym_vector.MahjongVectorEnv`.)
"""

__all__ = ["sb3", "tianshou", "torchrl"]


def __getattr__(name):  # the adapter modules load on first use
    if name in __all__:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
