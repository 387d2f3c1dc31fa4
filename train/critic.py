"""The oracle critic: a value function that also reads the hidden state, for training only.

Why
---
A hand's return is dominated by what no player can see: the other hands and the order of the wall
(``lab/notebook.md``, "Diagnosis"). A critic that reads only the player's observation must average over
them, so its advantages are mostly noise. A critic that also reads the hidden state (PerfectDou's
perfect-training-imperfect-execution, Suphx's oracle) predicts the return far better, and any function of the
state is a valid baseline for the policy gradient: ``E_a[grad log pi(a|o) * b(o, h)] = 0`` because the policy
reads ``o`` only. The actor (:mod:`agents.nn`) never sees the block: it is a separate network, it is not saved
in the actor's checkpoint (``policy.safetensors``, ``agents.nn`` format), and no policy or evaluation asks the
env for it (``tests/test_layering.py``).

What
----
:class:`OracleCritic` reads the actor's inputs (``agents.nn.input_features``, computed once per decision at
collection: for the mlp its tile and global features, for the planes network its tile planes and scalars
without the legal mask, as ``agents.nn.planes_inputs`` says) plus the oracle block of the deciding chair
(``VectorEnv(oracle=True)``, ``mjenv.observation`` "oracle block") as per-tile planes: every seat's concealed
counts (4), waits (4), the wall's counts (1) and the next draws of every seat (4). A per-tile encoder shared by
the 34 tiles, a flattened summary, and a two-layer MLP with the global inputs give the value.

In :mod:`train.ppo` (``--critic oracle``, :class:`CriticSettings`): :func:`make_critic` builds it, the rollout
stores the deciding chair's oracle block beside its features and takes the value from the critic, the update
trains the critic instead of the actor's value head (its gradients clipped apart), and :func:`bootstrap_values`
values the chains the rollout's end cuts (with either critic).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from agents.nn import NUM_GLOBAL, NUM_TILE_FEATURES, NNConfig, planes_inputs
from mjenv._jit import njit
from mjenv.observation import OBS_SIZE, ORACLE_OFFSETS, ORACLE_SIZE, observe_kernel, oracle_rows_kernel

CRITICS = ("shared", "oracle")


@dataclass
class CriticSettings:
    """The value function of ``python -m train.ppo`` (its options)."""

    critic: str = "shared"
    """value function: ``shared`` (the actor network's value head, observation only) or ``oracle`` (a separate
    network that also reads the hidden state, ``VectorEnv(oracle=True)``; training only, never in the actor:
    train/critic.py)"""
    critic_channels: int = 32
    """oracle critic: per-tile width"""
    critic_hidden: int = 256
    """oracle critic: MLP width"""


_PLANES = (("hands", 4, 4.0), ("waits", 4, 1.0), ("wall_counts", 1, 4.0), ("wall_next", 4, 4.0))
NUM_ORACLE_PLANES = sum(c for _, c, _ in _PLANES)
_SUMMARY = 8


def _plane_index() -> tuple[np.ndarray, np.ndarray]:
    """Flat indices ``[34, NUM_ORACLE_PLANES]`` into the oracle block, and the scale of each plane."""
    idx = np.empty((34, NUM_ORACLE_PLANES), np.int64)
    scale = np.empty(NUM_ORACLE_PLANES, np.float32)
    c = 0
    for name, count, sc in _PLANES:
        for j in range(count):
            idx[:, c] = ORACLE_OFFSETS[name] + 34 * j + np.arange(34)
            scale[c] = sc
            c += 1
    return idx, scale


_IDX, _SCALE = _plane_index()


@dataclass(frozen=True)
class CriticConfig:
    """``channels``: per-tile width; ``hidden``: MLP width."""

    channels: int = 32
    hidden: int = 256


class OracleCritic(nn.Module):
    """``forward(tile, glob, oracle) -> value [N]`` (see the module docstring); ``tile, glob`` are the inputs
    of an actor of ``net_config`` (default: the mlp's)."""

    def __init__(self, config: CriticConfig | None = None, net_config: NNConfig | None = None) -> None:
        super().__init__()
        self.config = CriticConfig() if config is None else config
        self.planes_layout = net_config is not None and net_config.arch == "planes"
        if self.planes_layout:  # [N, planes, 34] and [N, scalars]: the mask rows and columns are left out
            n_tile, n_glob, scale = planes_inputs(net_config)
        else:
            n_tile, n_glob, scale = NUM_TILE_FEATURES, NUM_GLOBAL, np.ones(NUM_GLOBAL, np.float32)
        self.n_tile, self.n_glob = n_tile, n_glob
        c, h = self.config.channels, self.config.hidden
        self.tile_enc = nn.Linear(n_tile + NUM_ORACLE_PLANES, c)
        self.tile_sum = nn.Linear(c, _SUMMARY)
        self.body = nn.Sequential(
            nn.Linear(34 * _SUMMARY + n_glob, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1)
        )
        self.register_buffer("plane_idx", torch.from_numpy(_IDX), persistent=False)
        self.register_buffer("plane_scale", torch.from_numpy(_SCALE), persistent=False)
        self.register_buffer("glob_inv_scale", torch.from_numpy(1.0 / scale), persistent=False)

    def planes(self, oracle: torch.Tensor) -> torch.Tensor:
        """``[N, 34, NUM_ORACLE_PLANES]`` float planes of an oracle block batch ``[N, ORACLE_SIZE]``."""
        if oracle.shape[-1] != ORACLE_SIZE:
            raise ValueError(f"oracle block must have {ORACLE_SIZE} columns, got {tuple(oracle.shape)}")
        return oracle[:, self.plane_idx].float() / self.plane_scale

    def forward(self, tile: torch.Tensor, glob: torch.Tensor, oracle: torch.Tensor) -> torch.Tensor:
        if self.planes_layout:
            tile = tile[:, : self.n_tile].transpose(1, 2)
        glob = glob[:, : self.n_glob].float() * self.glob_inv_scale
        x = torch.cat([tile.float(), self.planes(oracle)], dim=2)
        e = torch.relu(self.tile_enc(x))
        s = self.tile_sum(e).flatten(1)
        return self.body(torch.cat([s, glob], dim=1)).squeeze(1)


def make_critic(cfg, net_config: NNConfig, device: torch.device) -> OracleCritic | None:
    """The oracle critic of a run's settings (``cfg.critic == "oracle"``, seeded ``cfg.seed + 1``), else None."""
    if cfg.critic != "oracle":
        return None
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed + 1)
        return OracleCritic(CriticConfig(cfg.critic_channels, cfg.critic_hidden), net_config).to(device)


@njit
def observe_rows_kernel(states, tables, seats, out):
    """``out[j]`` = observation of chair ``seats[j]`` at table ``tables[j]`` (``observe_kernel`` per row)."""
    for j in range(tables.shape[0]):
        observe_kernel(states[tables[j]], seats[j], out[j])


def bootstrap_values(net, critic: OracleCritic | None, env, tables: np.ndarray, seats: np.ndarray,
                     device: torch.device) -> np.ndarray:  # fmt: skip
    """Values ``float32[len(tables)]`` of chair ``seats[j]`` at table ``tables[j]`` of ``env`` now (a chain
    of decisions the rollout's end cut): the actor's value head on the chair's observation (its own view), or
    the oracle ``critic`` on the same features and the chair's oracle block."""
    ob = np.empty((tables.size, OBS_SIZE), np.uint8)
    observe_rows_kernel(env.states, tables.astype(np.int64), seats.astype(np.int64), ob)
    with torch.no_grad():
        feats = net.features(ob, None)
        if critic is None:
            _, v = net.forward_features(*feats, None)
        else:
            orc = np.empty((tables.size, ORACLE_SIZE), np.uint8)
            oracle_rows_kernel(env.states[tables], seats.astype(np.int32), orc)
            v = critic(*feats, torch.from_numpy(orc).to(device))
    return v.cpu().numpy()
