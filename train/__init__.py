"""Training scripts for mjenv agents, used from a checkout (``python -m train.bc``, ``python -m train.ppo``).

* :mod:`train.bc` -- behaviour cloning from a teacher policy on the VectorEnv or from recorded games;
* :mod:`train.ppo` -- masked PPO self-play with an opponent pool, in one readable file.

Both write checkpoints that :mod:`agents.nn` loads (``agents.nn:make --checkpoint``). ``mjenv`` and ``agents``
never import this package.
"""
