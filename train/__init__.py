"""Training scripts for mjenv agents, used from a checkout (``python -m train.bc``, ``python -m train.ppo``).

* :mod:`train.bc` -- behaviour cloning from a teacher policy on the VectorEnv or from recorded games;
* :mod:`train.ppo` -- masked PPO self-play with an opponent pool: the algorithm in one readable file, its run
  machinery in :mod:`train.run`, its opponents in :mod:`train.opponents`, each research option in its module.

Both write checkpoints that :mod:`agents.nn` loads (``agents.nn:make --checkpoint``). ``mjenv`` and ``agents``
never import this package.
"""
