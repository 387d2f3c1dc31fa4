"""Baseline agents for mjenv, each built from an import string ``"module:factory"``.

* ``agents.random:make`` -- uniformly random legal actions (:mod:`agents.random`);
* ``agents.rule:make`` -- a rule-based MCR player: one Numba kernel over the batch (:mod:`agents.rule`);
* ``agents.nn:make`` -- a PyTorch policy-value network over the observation (:mod:`agents.nn`, needs the
  ``agents`` extra: ``torch``, ``safetensors``); the shipped networks by versioned name: ``agents.nn:zoo``
  (:mod:`agents.zoo_meta`), the aliases ``agents.nn:latest`` and ``agents.nn:baseline``;
* ``agents.waits:checked`` -- any agent with its discards checked by the value of the waits they leave
  (:mod:`agents.waits`).

Every factory has the signature ``make(num_envs, seed, **kwargs)`` and returns a batched policy
``policy(obs, masks, seats) -> int64[N]`` (:mod:`mjenv.policy`). This package is used from a checkout; mjenv
never imports it. Agents see only observations and masks, never the table state.
"""

from pathlib import Path as _Path

from mjenv._jit import guard_package_caches as _guard

# the agents' cached kernels inline mjenv's: they are stale when mjenv's kernel sources change
_guard(_Path(__file__).resolve().parent)

AGENTS = {"random": "agents.random:make", "rule": "agents.rule:make", "nn": "agents.nn:make"}

__all__ = ["AGENTS"]
