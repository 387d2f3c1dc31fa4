"""A small PyTorch policy-value network over mjenv's observation: ``agents.nn:make``.

Inputs: the engineered features of :mod:`agents.features` (per tile type: copies held and visible, melds and
discards of every player, and on the player's turn the target shanten, regular shanten and useful tiles after
each discard, the rule agent's pre-order, kong flags; per row: phase, wall, best target value and target,
claim-advance flags), computed by a Numba kernel from the observation and legal mask only, plus the
observation's scalars. The network (:class:`PolicyValueNet`) is small dense layers only: a per-tile encoder
shared by the 34 tile types, a trunk over a flattened tile summary and the global features, a per-tile head
for the tile actions (discard, concealed kong, added kong) and a head for the seven others, and a value head.
Illegal actions get a logit of ``-inf`` (masked logits), so neither sampling nor the greedy choice can pick
one.

``NNConfig(arch="planes")`` (:class:`PlanesNet`) reads the observation itself instead: the tile planes and
scalars of :mod:`agents.planes` through a residual tower of 1-D convolutions over the tiles (``blocks`` x
``channels``), optionally with the engineered features as extra inputs (``with_features``). :func:`build_net`
builds either; :func:`input_features` computes either's inputs (to compute a batch's inputs once).

Observations may be ``float32`` or ``uint8`` (``numpy`` arrays or ``torch`` tensors); the features are computed
on CPU, the network runs on CPU or CUDA. Checkpoints are safetensors files that carry the network config,
its input layout (:func:`features_version`; the mlp's is ``NN_FEATURES_VERSION``, the observation layout and
the feature layout) and a SHA-256 of the weights: loading one made for other inputs, another config, or with tampered or truncated bytes raises ``ValueError`` naming the
problem.

The shipped networks live in the model zoo (:mod:`agents.zoo_meta`, ``agents/zoo/NAME.safetensors``) under
immutable versioned names: ``agents.nn:zoo`` with ``name="avg109-2026-12-06"`` plays one (greedy). Two aliases
follow the zoo: ``agents.nn:latest`` is the newest network alone, ``agents.nn:baseline`` the strongest shipped
agent (today the newest network with its discards checked by the value of the waits they leave,
:func:`agents.waits.checked`; ``waits=False``: the network alone). ``agents.nn:ens5_baseline``,
``agents.nn:planes32_baseline`` and ``agents.nn:mlp_baseline`` are deprecated aliases of their zoo entries.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import itertools
import json
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents import planes as P
from agents import waits as W
from agents._common import check_factory_args
from agents.features import FEATURES_ID, NUM_GLOBAL_FEATURES, NUM_TILE_FEATURES, nn_features
from agents.symmetry import VIEWS, View
from agents.zoo_meta import BASELINE, LATEST, ZOO, zoo_path
from mjenv.actions import NUM_ACTIONS
from mjenv.observation import FEATURES_VERSION, OBS_OFFSETS, OBS_PIECES, OBS_SIZE

FORMAT = "mjenv-agents-nn/1"
#: the network's input layout: the observation layout and the engineered features of :mod:`agents.features`
NN_FEATURES_VERSION = f"{FEATURES_VERSION}+{FEATURES_ID}"
_SCALARS = (
    ("flowers", 4, 8.0), ("concealed", 4, 14.0), ("seat_wind", 4, 1.0), ("prevalent_wind", 4, 1.0),
    ("offer_from", 4, 1.0), ("turn", 4, 1.0), ("no_win", 1, 1.0),
)  # fmt: skip
NUM_SCALARS = sum(c for _, c, _ in _SCALARS)
NUM_GLOBAL = NUM_GLOBAL_FEATURES + NUM_SCALARS
_SHAPES = dict(OBS_PIECES)
_TILE_SUMMARY = 8  # per-tile width of the flattened summary that feeds the trunk


ARCHS = ("mlp", "planes")


@dataclass(frozen=True)
class NNConfig:
    """Network architecture and sizes.

    ``arch="mlp"`` (:class:`PolicyValueNet`, the default): the engineered features through dense layers;
    ``channels``: width of the per-tile encoder and head; ``hidden``: width of the trunk.

    ``arch="planes"`` (:class:`PlanesNet`): the observation's tile planes (:mod:`agents.planes`) through a
    residual tower of ``blocks`` blocks of 1-D convolutions over the tiles, ``channels`` wide; ``hidden``: width
    of the dense trunk of the heads; ``with_features``: the engineered features of :mod:`agents.features` as
    extra inputs.
    """

    channels: int = 16
    hidden: int = 128
    arch: str = "mlp"
    blocks: int | None = None
    """planes only: residual blocks (default 2)"""
    with_features: bool = False
    """planes only: also read the engineered features"""
    wait_inputs: bool = False
    """planes only: also read the values of the waits each discard leaves (:data:`WAIT_PLANES` planes from
    :func:`agents.waits.discard_values`, the wait check's first step, computed from the observation)"""
    near_inputs: bool = False
    """planes with ``wait_inputs`` only: also read the wait check's second step (:data:`NEAR_PLANES` planes from
    :func:`agents.waits.near_values`: the waits each discard can reach one draw later)"""

    def __post_init__(self) -> None:
        if not isinstance(self.arch, str):
            raise TypeError(f"NNConfig.arch must be a str, got {type(self.arch).__name__}")
        if self.arch not in ARCHS:
            raise ValueError(f"NNConfig.arch must be one of {ARCHS}, got {self.arch!r}")
        for name in ("with_features", "wait_inputs", "near_inputs"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"NNConfig.{name} must be a bool, got {type(getattr(self, name)).__name__}")
        if self.arch == "mlp":
            if self.blocks is not None:
                raise ValueError(
                    f"NNConfig.blocks is a setting of arch='planes', not 'mlp' (got {self.blocks})"
                )
            if self.with_features:
                raise ValueError(
                    "NNConfig.with_features is a setting of arch='planes' (the mlp always reads them)"
                )
            if self.wait_inputs:
                raise ValueError("NNConfig.wait_inputs is a setting of arch='planes'")
        elif self.blocks is None:
            object.__setattr__(self, "blocks", 2)
        if self.near_inputs and not self.wait_inputs:
            raise ValueError("NNConfig.near_inputs needs wait_inputs (its planes follow the wait planes)")
        for name, hi in (("channels", 4096), ("hidden", 4096), ("blocks", 64)):
            v = getattr(self, name)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"NNConfig.{name} must be an int, got {type(v).__name__}")
            if not 1 <= v <= hi:
                raise ValueError(f"NNConfig.{name} must be in 1..{hi}, got {v}")

    def describe(self) -> str:
        """The architecture in one short string, e.g. ``mlp(channels=16, hidden=128)``."""
        if self.arch == "mlp":
            return f"mlp(channels={self.channels}, hidden={self.hidden})"
        extra = (
            (", with_features" if self.with_features else "")
            + (", wait_inputs" if self.wait_inputs else "")
            + (", near_inputs" if self.near_inputs else "")
        )
        return f"planes(blocks={self.blocks}, channels={self.channels}, hidden={self.hidden}{extra})"


def features_version(config: NNConfig) -> str:
    """The input layout a network of ``config`` reads (recorded in its checkpoints): the observation layout and
    :mod:`agents.features`' ``FEATURES_ID`` (mlp: :data:`NN_FEATURES_VERSION`), or :mod:`agents.planes`'
    ``PLANES_ID`` (and ``FEATURES_ID`` with ``with_features``)."""
    if config.arch == "mlp":
        return NN_FEATURES_VERSION
    return (
        f"{FEATURES_VERSION}+{P.PLANES_ID}"
        + (f"+{FEATURES_ID}" if config.with_features else "")
        + (f"+{WAITS_ID}" if config.wait_inputs else "")
        + (f"+{NEAR_ID}" if config.near_inputs else "")
    )


#: the input layout of ``wait_inputs`` (in :func:`features_version`)
WAITS_ID = "w1"
#: planes of ``wait_inputs``: per tile, 1 where discarding it leaves a waiting hand, and ``log1p(value) / 8`` of
#: that wait (:func:`agents.waits.discard_values` under the default rules; 0 elsewhere and off the own turn)
WAIT_PLANES = 2
#: the input layout of ``near_inputs`` (in :func:`features_version`)
NEAR_ID = "n1"
#: planes of ``near_inputs``: per tile, 1 where discarding it leaves a hand one tile from waiting, and
#: ``log1p(value) / 12`` of :func:`agents.waits.near_values` (the waits the next draw can reach, summed over draws)
NEAR_PLANES = 2


def wait_planes(obs: np.ndarray, masks: np.ndarray | None, near: bool = False) -> np.ndarray:
    """``float32[N, WAIT_PLANES (+ NEAR_PLANES with near), 34]`` of ``wait_inputs`` (and ``near_inputs``); zeros
    without masks (a player not asked)."""
    out = np.zeros((obs.shape[0], WAIT_PLANES + (NEAR_PLANES if near else 0), 34), np.float32)
    if masks is not None and obs.shape[0]:
        m = np.asarray(masks, dtype=bool)
        for i, (fn, scale) in enumerate(((W.discard_values, 8.0), (W.near_values, 12.0))[: 2 if near else 1]):
            v = fn(obs, m)
            ok = v >= 0
            out[:, 2 * i] = ok
            out[:, 2 * i + 1] = np.where(ok, np.log1p(np.maximum(v, 0.0)) / scale, 0.0)
    return out


def _scalar_index() -> tuple[np.ndarray, np.ndarray]:
    scal, scale = [], []
    for name, count, sc in _SCALARS:
        assert int(np.prod(_SHAPES[name])) == count, name
        scal.extend(OBS_OFFSETS[name] + np.arange(count))
        scale.extend([sc] * count)
    return np.array(scal), np.array(scale, np.float32)


_SCALAR_IDX, _SCALAR_SCALE = _scalar_index()


def obs_features(
    obs: Any, masks: Any = None, threads: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(tile [N, 34, NUM_TILE_FEATURES], glob [N, NUM_GLOBAL])`` float32 CPU tensors from observations
    (uint8 or float32; numpy or torch) and their legal masks (``None``: a player not asked, e.g. a value
    bootstrap): :func:`agents.features.nn_features` plus the observation's scalars (flowers, concealed counts,
    winds, who offered, whose turn, the no-win flag)."""
    o = obs.detach().cpu().numpy() if isinstance(obs, torch.Tensor) else np.asarray(obs)
    m = masks.detach().cpu().numpy() if isinstance(masks, torch.Tensor) else masks
    if o.ndim != 2 or o.shape[1] != OBS_SIZE:
        raise ValueError(f"obs must have shape (N, {OBS_SIZE}), got {tuple(o.shape)}")
    tile, glob = nn_features(o, m, threads=threads)
    sc = o[:, _SCALAR_IDX].astype(np.float32) / _SCALAR_SCALE
    return torch.from_numpy(tile), torch.from_numpy(np.concatenate([glob, sc], axis=1))


def input_features(
    config: NNConfig, obs: Any, masks: Any = None, threads: int | None = None
) -> tuple[torch.Tensor, ...]:
    """The inputs of a network of ``config`` (CPU tensors; :meth:`PolicyValueNet.forward_features` and
    :meth:`PlanesNet.forward_features` take them), from observations (uint8 or float32; numpy or torch) and
    their legal masks (``None``: a player not asked, e.g. a value bootstrap), so that a batch's inputs can be
    computed once and stored.

    ``mlp``: exactly :func:`obs_features`. ``planes``: ``(planes [N, C, 34], scalars [N, S])``, uint8 (every
    value a small integer: :func:`agents.planes.obs_planes`); with ``with_features`` float32, the engineered
    tile features inserted before the mask planes and the global ones before the mask scalars."""
    if not isinstance(config, NNConfig):
        raise TypeError(f"config must be an NNConfig, got {type(config).__name__}")
    if config.arch == "mlp":
        return obs_features(obs, masks, threads=threads)
    o = obs.detach().cpu().numpy() if isinstance(obs, torch.Tensor) else np.asarray(obs)
    m = masks.detach().cpu().numpy() if isinstance(masks, torch.Tensor) else masks
    if o.ndim != 2 or o.shape[1] != OBS_SIZE:
        raise ValueError(f"obs must have shape (N, {OBS_SIZE}), got {tuple(o.shape)}")
    planes, scal = P.obs_planes(o, m, threads=threads)
    if not config.with_features and not config.wait_inputs:
        return torch.from_numpy(planes), torch.from_numpy(scal)
    k, j = P.NUM_PLANES - P.NUM_MASK_PLANES, P.NUM_SCALARS - P.NUM_MASK_SCALARS
    parts, sc = [planes[:, :k]], scal
    if config.with_features:
        tile, glob = nn_features(o, m, threads=threads)
        parts.append(tile.transpose(0, 2, 1))
        sc = np.concatenate([scal[:, :j], glob, scal[:, j:]], axis=1, dtype=np.float32)
    if config.wait_inputs:
        parts.append(wait_planes(o, m, near=config.near_inputs))
    pl = np.concatenate([*parts, planes[:, k:]], axis=1, dtype=np.float32)
    return torch.from_numpy(pl), torch.from_numpy(np.asarray(sc, dtype=np.float32))


class _TrunkInput(torch.autograd.Function):
    """``linear(cat([summary, glob], 1), weight, bias)``, the trunk's first layer, with the same forward (bit for
    bit) but a backward that computes the input gradient of ``summary`` only: ``glob`` (the engineered features)
    never needs one, and autograd's ``addmm`` backward would compute it for all ``34 * 8 + NUM_GLOBAL``
    columns (measured 13-15 against 5-9 ms CPU for a minibatch of 4,096 on one core). The weight and bias
    gradients are the ``mm`` and ``sum`` autograd computes (bitwise the same, tests/test_nn_fast.py)."""

    @staticmethod
    def forward(ctx, summary, glob, weight, bias):  # noqa: D102
        x = torch.cat([summary, glob], dim=1)
        ctx.save_for_backward(x, weight)
        ctx.n_summary = summary.shape[1]
        return torch.nn.functional.linear(x, weight, bias)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        x, weight = ctx.saved_tensors
        g_summary = grad.mm(weight[:, : ctx.n_summary]) if ctx.needs_input_grad[0] else None
        g_glob = grad.mm(weight[:, ctx.n_summary :]) if ctx.needs_input_grad[1] else None
        g_weight = grad.t().mm(x) if ctx.needs_input_grad[2] else None
        g_bias = grad.sum(0) if ctx.needs_input_grad[3] else None
        return g_summary, g_glob, g_weight, g_bias


class _ActionLogits(torch.autograd.Function):
    """The action layout's logits from the per-tile head ``[N, 34, 3]`` and the other head ``[N, 7]``:
    ``cat([per[:, :, 0], other[:, :5], per[:, :, 1], per[:, :, 2], other[:, 5:]])``, with a backward that
    writes the gradient of ``per`` in one ``stack`` instead of autograd's three zero-filled ``[N, 34, 3]``
    tensors added together (the same values)."""

    @staticmethod
    def forward(ctx, per, other):  # noqa: D102
        return torch.cat([per[:, :, 0], other[:, :5], per[:, :, 1], per[:, :, 2], other[:, 5:]], dim=1)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        g_per = torch.stack([grad[:, :34], grad[:, 39:73], grad[:, 73:107]], dim=2)
        g_other = torch.cat([grad[:, 34:39], grad[:, 107:]], dim=1)
        return g_per, g_other


class PolicyValueNet(nn.Module):
    """``forward(obs, masks) -> (masked logits [N, NUM_ACTIONS], value [N])``.

    Inputs: the engineered features of :func:`obs_features`. A per-tile encoder (a linear layer shared by the
    34 tile types, ``channels`` wide) feeds (a) a flattened ``34 x 8`` summary that joins the global features
    in a two-layer trunk (``hidden`` wide) and (b) a per-tile head, shared across tiles, that gives each tile's
    discard, concealed-kong and added-kong logits from its encoding plus a projection of the trunk. The trunk
    gives the seven other logits (chows, pung, kong, win, pass) and the value. All layers are small dense
    matmuls (fast on CPU); illegal actions get ``-inf`` (masked logits).
    """

    def __init__(self, config: NNConfig | None = None) -> None:
        super().__init__()
        self.config = NNConfig() if config is None else config
        if self.config.arch != "mlp":
            raise ValueError(
                f"PolicyValueNet is arch 'mlp', got a config for {self.config.arch!r} (use build_net)"
            )
        c, h = self.config.channels, self.config.hidden
        self.tile_enc = nn.Linear(NUM_TILE_FEATURES, c)
        self.tile_sum = nn.Linear(c, _TILE_SUMMARY)
        self.body = nn.Sequential(
            nn.Linear(34 * _TILE_SUMMARY + NUM_GLOBAL, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU()
        )
        self.ctx = nn.Linear(h, c)
        self.tile_head = nn.Linear(c, 3)
        self.other_head = nn.Linear(h, 7)
        self.value_head = nn.Linear(h, 1)
        for head in (self.tile_head, self.other_head):  # a near-uniform initial policy (CleanRL's actor init)
            nn.init.normal_(head.weight, std=0.01)
            nn.init.zeros_(head.bias)

    @property
    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def features(self, obs: Any, masks: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
        """:func:`obs_features` moved to this network's device."""
        dev = self.value_head.weight.device
        tile, glob = obs_features(obs, masks)
        return tile.to(dev), glob.to(dev)

    def forward(self, obs: Any, masks: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_features(*self.features(obs, masks), masks)

    def forward_features(
        self, tile: torch.Tensor, glob: torch.Tensor, masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`forward` from the output of :meth:`features` (to compute the features of a batch once)."""
        e = torch.relu(self.tile_enc(tile.float()))  # [N, 34, c]
        # self.body's two linear layers one by one: the first one with its own backward (_TrunkInput)
        body0, body1 = self.body[0], self.body[2]
        x = torch.relu(_TrunkInput.apply(self.tile_sum(e).flatten(1), glob.float(), body0.weight, body0.bias))
        x = torch.relu(body1(x))
        per = self.tile_head(torch.relu(e + self.ctx(x).unsqueeze(1)))  # [N, 34, 3]
        other = self.other_head(x)
        logits = _ActionLogits.apply(per, other)
        if masks is not None:
            m = masks if isinstance(masks, torch.Tensor) else torch.from_numpy(np.asarray(masks))
            logits = logits.masked_fill(~m.to(device=logits.device, dtype=torch.bool), float("-inf"))
        return logits, self.value_head(x).squeeze(1)


# the 34 tile types on a row of 37 with an empty column after each suit, so that a convolution over neighbouring
# tiles never mixes two suits (a run continues only within its suit); the honours follow the third gap
_POS = np.array([t + t // 9 if t < 27 else t + 3 for t in range(34)])
_ROW = 37


def tiles_to_row(x: torch.Tensor) -> torch.Tensor:
    """``[..., 34]`` per tile type to ``[..., 37]``, the suits apart (zeros in the empty columns of ``_POS``).

    Slices and a concatenation, not an index: the backward of an index into a padded tensor is a scatter-add,
    which cost 9% of a PPO step's CPU time (collection and update) on the 2 x 32 network."""
    z = x.new_zeros(*x.shape[:-1], 1)
    return torch.cat([x[..., 0:9], z, x[..., 9:18], z, x[..., 18:27], z, x[..., 27:34]], dim=-1)


def row_to_tiles(x: torch.Tensor) -> torch.Tensor:
    """The inverse of :func:`tiles_to_row`: ``[..., 37]`` to ``[..., 34]`` (the empty columns dropped)."""
    return torch.cat([x[..., 0:9], x[..., 10:19], x[..., 20:29], x[..., 30:37]], dim=-1)


class _Block(nn.Module):
    """A pre-activation residual block without normalisation: ``relu, conv3, relu, conv3`` over the tile row;
    the second convolution starts at zero, so the block starts as the identity (Fixup's idea)."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(c, c, 3, padding=1)
        self.conv2 = nn.Conv1d(c, c, 3, padding=1)
        nn.init.zeros_(self.conv2.weight)
        nn.init.zeros_(self.conv2.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2(torch.relu(self.conv1(torch.relu(x))))


def planes_inputs(config: NNConfig) -> tuple[int, int, np.ndarray]:
    """What a planes network of ``config`` reads of its :func:`input_features`, the legal mask left out:
    ``(planes, scalars, scale)``, the first ``planes`` rows of the planes and the first ``scalars`` columns of
    the scalars, each scalar divided by its ``scale`` (float32 ``[scalars]``) before use."""
    f = config.with_features
    n_planes = P.NUM_PLANES - P.NUM_MASK_PLANES + (NUM_TILE_FEATURES if f else 0)
    n_planes += WAIT_PLANES if config.wait_inputs else 0
    n_planes += NEAR_PLANES if config.near_inputs else 0
    n_scalars = P.NUM_SCALARS - P.NUM_MASK_SCALARS + (NUM_GLOBAL_FEATURES if f else 0)
    scale = np.ones(n_scalars, np.float32)
    scale[: P.NUM_SCALARS - P.NUM_MASK_SCALARS] = P.SCALAR_SCALE[: P.NUM_SCALARS - P.NUM_MASK_SCALARS]
    return n_planes, n_scalars, scale


class PlanesNet(nn.Module):
    """``forward(obs, masks) -> (masked logits [N, NUM_ACTIONS], value [N])``, reading the observation itself.

    Inputs: :func:`input_features` (``arch="planes"``): the tile planes and scalars of :mod:`agents.planes`
    (and the engineered features with ``with_features``). A stem (a linear map of each tile's planes, shared
    by the 34 tile types, plus a learned per-tile embedding and a projection of the scalars) feeds a tower of
    ``blocks`` residual blocks of 1-D convolutions (kernel 3, ``channels`` wide) over the tiles laid out per
    suit (an empty column between suits: runs never cross a suit). Heads as in :class:`PolicyValueNet`: a
    ``34 x 8`` summary, the tower's column of the tile on offer (what a claim decides on) and the scalars
    through a two-layer trunk (``hidden`` wide) give the value and, with
    the legal non-tile actions, the seven other logits; a per-tile head gives each tile's discard,
    concealed-kong and added-kong logits from its tower output, a projection of the trunk and its legal tile
    actions. The legal mask reaches the policy heads only: the value is a function of the observation (or,
    with ``with_features``, of the engineered features too, which read the mask as for the mlp).
    """

    def __init__(self, config: NNConfig) -> None:
        super().__init__()
        if config.arch != "planes":
            raise ValueError(f"PlanesNet is arch 'planes', got a config for {config.arch!r} (use build_net)")
        self.config = config
        c, h = config.channels, config.hidden
        self.n_planes, self.n_scalars, scale = planes_inputs(config)
        self.register_buffer("inv_scale", torch.from_numpy(1.0 / scale), persistent=False)
        gap = np.zeros(_ROW, np.float32)
        gap[_POS] = 1.0
        self.register_buffer("gap", torch.from_numpy(gap), persistent=False)
        self.stem = nn.Conv1d(self.n_planes, c, 1)
        self.tile_embed = nn.Parameter(torch.zeros(c, 34))
        nn.init.normal_(self.tile_embed, std=0.1)
        self.scalar_in = nn.Linear(self.n_scalars, c)
        self.tower = nn.ModuleList([_Block(c) for _ in range(config.blocks)])
        self.tile_sum = nn.Conv1d(c, _TILE_SUMMARY, 1)
        self.body = nn.Sequential(
            nn.Linear(34 * _TILE_SUMMARY + c + self.n_scalars, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU()
        )
        self.ctx = nn.Linear(h, c)
        self.legal_in = nn.Conv1d(P.NUM_MASK_PLANES, c, 1)
        self.tile_head = nn.Conv1d(c, 3, 1)
        self.other_head = nn.Linear(h + P.NUM_MASK_SCALARS, 7)
        self.value_head = nn.Linear(h, 1)
        for head in (self.tile_head, self.other_head):  # a near-uniform initial policy, as PolicyValueNet
            nn.init.normal_(head.weight, std=0.01)
            nn.init.zeros_(head.bias)

    @property
    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def features(self, obs: Any, masks: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
        """:func:`input_features` moved to this network's device."""
        dev = self.value_head.weight.device
        planes, scal = input_features(self.config, obs, masks)
        return planes.to(dev), scal.to(dev)

    def forward(self, obs: Any, masks: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_features(*self.features(obs, masks), masks)

    def forward_features(
        self, planes: torch.Tensor, scal: torch.Tensor, masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`forward` from the output of :meth:`features` (to compute the inputs of a batch once)."""
        planes, scal = planes.float(), scal.float()
        k, j = self.n_planes, self.n_scalars
        glob, legal_other = scal[:, :j] * self.inv_scale, scal[:, j:]
        # the stem reads all the planes with zero weights on the mask planes: the same values bit for bit (their
        # terms are exact zeros), without copying the strided slice ``planes[:, :k]`` in the forward and again in
        # the backward (a minibatch of 4,096 x 113 x 34 floats twice per PPO step)
        stem_w = torch.nn.functional.pad(self.stem.weight, (0, 0, 0, planes.shape[1] - k))
        x = torch.nn.functional.conv1d(planes, stem_w, self.stem.bias)
        x = x + self.tile_embed + self.scalar_in(glob).unsqueeze(2)  # [N, c, 34]
        x = tiles_to_row(x)  # [N, c, 37]: the suits apart
        for block in self.tower:
            x = torch.addcmul(x, block(x), self.gap)  # x + block(x) * gap: the empty columns stay zero
        x = torch.relu(row_to_tiles(x))  # [N, c, 34]
        offer = torch.bmm(x, planes[:, P.P_OFFER].unsqueeze(2)).squeeze(
            2
        )  # [N, c]: the tile on offer's column
        h = self.body(torch.cat([self.tile_sum(x).flatten(1), offer, glob], dim=1))
        per = self.tile_head(
            torch.relu(x + self.ctx(h).unsqueeze(2) + self.legal_in(planes[:, k:]))
        )  # [N, 3, 34]
        other = self.other_head(torch.cat([h, legal_other], dim=1))
        logits = torch.cat([per[:, 0], other[:, :5], per[:, 1], per[:, 2], other[:, 5:]], dim=1)
        if masks is not None:
            m = masks if isinstance(masks, torch.Tensor) else torch.from_numpy(np.asarray(masks))
            logits = logits.masked_fill(~m.to(device=logits.device, dtype=torch.bool), float("-inf"))
        return logits, self.value_head(h).squeeze(1)


Net = PolicyValueNet | PlanesNet


def build_net(config: NNConfig | None = None) -> Net:
    """A fresh network of ``config`` (default ``NNConfig()``): :class:`PolicyValueNet` for ``arch="mlp"``,
    :class:`PlanesNet` for ``arch="planes"``."""
    config = NNConfig() if config is None else config
    if not isinstance(config, NNConfig):
        raise TypeError(f"config must be an NNConfig, got {type(config).__name__}")
    return PolicyValueNet(config) if config.arch == "mlp" else PlanesNet(config)


# ------------------------------------------------------------------------------------------------ threads
def set_torch_threads(n: int) -> None:
    """``torch.set_num_threads(n)`` that lasts: start numba's threading layer first.

    numba's OpenMP threading layer, when it starts (at the first parallel kernel or numba thread call: the
    VectorEnv, the features, the rule agent), sets OpenMP's thread count to the core count, and torch reads
    the same libgomp, so a count set before it (once torch has run an op) is silently replaced. Measured on
    the 2-core host: PPO from a checkpoint with ``torch_threads=1`` ran with 2 torch threads and, beside
    another busy process, 5x slower per decision.
    """
    import numba

    numba.get_num_threads()  # starts the threading layer (a no-op once started)
    torch.set_num_threads(n)


def check_threads(threads: Any) -> int | None:
    """A policy's ``threads`` option: None or a positive int (``TypeError`` / ``ValueError`` otherwise)."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be an int or None, got {type(threads).__name__}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    return int(threads)


@contextlib.contextmanager
def torch_threads(n: int | None):
    """torch's intra-op threads (and Numba's, in this thread) at ``n`` for the block, the caller's counts put back
    after it; nothing changes with ``n`` None. Numba's threading layer is started first (see
    :func:`set_torch_threads`). Setting the count costs well under a microsecond; measured on the 2-core host,
    one decision (one row) of :func:`baseline` took ~0.75 ms with 1 torch thread and 8-17 ms with 2."""
    if n is None:
        yield
        return
    import numba

    nb_prev = numba.get_num_threads()  # starts the threading layer (a no-op once started)
    nb = min(n, numba.config.NUMBA_NUM_THREADS)
    prev = torch.get_num_threads()
    if nb != nb_prev:
        numba.set_num_threads(nb)
    if prev != n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if prev != n:
            torch.set_num_threads(prev)
        if nb != nb_prev:
            numba.set_num_threads(nb_prev)


def _bounded(method):
    """``method`` of a policy run under :func:`torch_threads` of the policy's ``threads``."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with torch_threads(self.threads):
            return method(self, *args, **kwargs)

    return run


# ------------------------------------------------------------------------------------------------ checkpoints
def _digest(state: dict[str, torch.Tensor]) -> str:
    h = hashlib.sha256()
    for name in sorted(state):
        t = state[name].detach().cpu().contiguous()
        h.update(name.encode())
        h.update(str(tuple(t.shape)).encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def save(net: Net, path: str | Path) -> None:
    """Write ``net`` to a safetensors file with its config, its input layout (:func:`features_version`) and a
    SHA-256 of the weights."""
    from safetensors.torch import save_file

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in net.state_dict().items()}
    meta = {
        "format": FORMAT,
        "config": json.dumps(asdict(net.config), sort_keys=True),
        "features_version": features_version(net.config),
        "obs_size": str(OBS_SIZE),
        "num_actions": str(NUM_ACTIONS),
        "sha256": _digest(state),
    }
    save_file(state, str(path), metadata=meta)


def load(path: str | Path, config: NNConfig | None = None, device: str | torch.device = "cpu") -> Net:
    """Read a checkpoint written by :func:`save` (either architecture; a config saved without ``arch`` is an
    mlp's).

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for a file that is not such a checkpoint
    (corrupt or truncated), whose weights do not match their recorded SHA-256 (tampered), that was made for
    other observation features or another action space, or whose config differs from ``config`` when given.
    """
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            meta = f.metadata() or {}
            state = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 (safe_open is not iterable)
    except Exception as e:  # safetensors raises its own error types for bad headers / short files
        raise ValueError(
            f"{path} is not a readable safetensors checkpoint (corrupt or truncated?): {e}"
        ) from e
    if meta.get("format") != FORMAT:
        raise ValueError(
            f"{path} is not an agents.nn checkpoint (format {meta.get('format')!r}, want {FORMAT!r})"
        )
    # every input layout this code builds: the mlp's, and each valid choice of the planes network's input options
    planes = [NNConfig(arch="planes", with_features=f, wait_inputs=w, near_inputs=n)
              for f, w, n in itertools.product((False, True), repeat=3) if w or not n]  # fmt: skip
    known = {features_version(c): c.arch for c in (NNConfig(), *planes)}
    if meta.get("features_version") not in known:
        have = ", ".join(f"{v!r} ({a})" for v, a in known.items())
        raise ValueError(
            f"{path} was made for network features {meta.get('features_version')!r}, "
            f"this agents.nn has {have} (retrain, or use the matching mjenv/agents version)"
        )
    if meta.get("obs_size") != str(OBS_SIZE) or meta.get("num_actions") != str(NUM_ACTIONS):
        raise ValueError(
            f"{path} was made for obs_size={meta.get('obs_size')}, num_actions={meta.get('num_actions')}; "
            f"this mjenv has {OBS_SIZE}, {NUM_ACTIONS}"
        )
    try:
        saved = NNConfig(**json.loads(meta["config"]))
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path} has an unreadable network config: {e}") from e
    if features_version(saved) != meta["features_version"]:
        raise ValueError(
            f"{path} holds inputs {meta['features_version']!r}, but its config {saved} reads "
            f"{features_version(saved)!r}"
        )
    if config is not None and config != saved:
        raise ValueError(f"{path} holds a network with config {saved}, but {config} was asked for")
    if _digest(state) != meta.get("sha256"):
        raise ValueError(f"{path}: the weights do not match their recorded SHA-256 (the file was modified)")
    net = build_net(saved)
    try:
        net.load_state_dict(state, strict=True)
    except RuntimeError as e:
        raise ValueError(f"{path}: the weights do not fit config {saved}: {e}") from e
    return net.to(device)


def add_wait_inputs(net: Net, near: bool = False) -> PlanesNet:
    """A copy of the planes network ``net`` that also reads ``wait_inputs`` (and ``near_inputs`` with ``near``),
    with zero weights on the planes it gains: the same logits and value as ``net`` (to train from a network made
    without them)."""
    if not isinstance(net, PlanesNet):
        raise ValueError(f"wait inputs are a setting of planes networks, got {net.config.describe()}")
    c = net.config
    if c.wait_inputs and (c.near_inputs or not near):
        raise ValueError(f"the network already reads the {'near' if near else 'wait'} inputs")
    extra = (0 if c.wait_inputs else WAIT_PLANES) + (NEAR_PLANES if near and not c.near_inputs else 0)
    wide = build_net(dataclasses.replace(c, wait_inputs=True, near_inputs=c.near_inputs or near))
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    w = state["stem.weight"]
    state["stem.weight"] = torch.cat([w, w.new_zeros(w.shape[0], extra, w.shape[2])], dim=1)
    wide.load_state_dict(state, strict=True)
    return wide.to(next(net.parameters()).device)


# ------------------------------------------------------------------------------------------------ policy
class NNPolicy:
    """Batched policy over a :class:`PolicyValueNet` or :class:`PlanesNet`: samples from the masked softmax (or
    takes its argmax with ``greedy``); :meth:`act_with_info` also returns the probabilities and the value.

    ``row_streams = True``: called with ``rng`` (:class:`mjenv.policy.RowStreams`, the arena's per-table
    streams) it samples each row by inverting the row's distribution at one uniform of that row's stream, so
    its actions at a table do not depend on the other rows of the batch; without ``rng`` it samples with its
    own torch generator (``torch.multinomial``).
    """

    needs_observations = True
    row_streams = True

    def __init__(
        self, net: Net, seed: int = 0, device: str = "cpu", greedy: bool = False, threads: int | None = None
    ) -> None:
        #: torch's (and Numba's) thread count during each call (:func:`torch_threads`), None: the caller's
        self.threads = check_threads(threads)
        self.device = torch.device(device)
        self.net = net.to(self.device).eval()
        self.greedy = bool(greedy)
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(int(seed))

    def describe(self) -> str:
        """One line: the architecture, parameter count, device and features version."""
        c = self.net.config
        args = c.describe().split("(", 1)[1]
        return (
            f"agents.nn {type(self.net).__name__}({args}: "
            f"{self.net.num_parameters:,} parameters on {self.device}, features {features_version(c)}"
        )

    @_bounded
    @torch.no_grad()
    def act_with_info(
        self, obs: Any, masks: Any, seats: Any = None, rng: Any = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        o, m = _check_batch(obs, masks)
        probs, value = self._probs(self.net.features(o, m), m)
        if self.greedy:
            actions = probs.argmax(dim=1)
        elif rng is not None:  # inverse CDF at one uniform per row: the first action whose CDF exceeds u
            cdf = np.cumsum(probs.double().cpu().numpy(), axis=1)
            u = rng.random(cdf.shape[0]) * cdf[:, -1]  # < the row's total, so an action of probability > 0
            actions = torch.from_numpy((cdf <= u[:, None]).sum(axis=1).astype(np.int64))
        elif probs.shape[0]:
            actions = torch.multinomial(probs, 1, generator=self.generator).squeeze(1)
        else:
            actions = torch.zeros(0, dtype=torch.int64, device=self.device)
        info = {"probs": probs.float().cpu().numpy(), "value": value.float().cpu().numpy()}
        return actions.cpu().numpy().astype(np.int64), info

    def __call__(self, obs: Any, masks: Any, seats: Any = None, rng: Any = None) -> np.ndarray:
        return self.act_with_info(obs, masks, seats, rng)[0]

    def _probs(self, inputs: tuple[torch.Tensor, ...], m: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """The masked softmax and the value from the network's inputs (``self.net.features``) and bool masks."""
        mt = torch.from_numpy(np.ascontiguousarray(m)).to(self.device)
        logits, value = self.net.forward_features(*inputs, mt)
        return torch.softmax(logits, dim=1), value


def _check_batch(obs: Any, masks: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(obs, bool masks)`` as numpy arrays, or a ValueError naming what is wrong with them."""
    if obs is None:
        raise ValueError("the nn agent needs observations (VectorEnv(..., observations=True))")
    if masks is None:
        raise ValueError("the nn agent needs masks")
    o = obs.detach().cpu().numpy() if isinstance(obs, torch.Tensor) else np.asarray(obs)
    m = masks.detach().cpu().numpy() if isinstance(masks, torch.Tensor) else np.asarray(masks)
    if o.ndim != 2 or o.shape[1] != OBS_SIZE:
        raise ValueError(f"obs must have shape (N, {OBS_SIZE}), got {tuple(o.shape)}")
    m = m.astype(np.bool_, copy=False)
    if m.ndim != 2 or m.shape != (o.shape[0], NUM_ACTIONS):
        raise ValueError(f"masks must have shape ({o.shape[0]}, {NUM_ACTIONS}), got {tuple(m.shape)}")
    if m.shape[0] and not bool(m.any(axis=1).all()):
        raise ValueError("a row of masks has no legal action")
    return o, m


def make(
    num_envs: int,
    seed: int,
    checkpoint: str | Path | None = None,
    device: str = "cpu",
    greedy: bool = False,
    channels: int | None = None,
    hidden: int | None = None,
    arch: str | None = None,
    blocks: int | None = None,
    with_features: bool | None = None,
    waits: bool | dict | W.WaitCheck = False,
    threads: int | None = None,
) -> NNPolicy | W.CheckedPolicy:
    """``agents.nn:make``: an :class:`NNPolicy`, from ``checkpoint`` or freshly initialised from ``seed``.

    ``arch`` (``"mlp"`` or ``"planes"``), ``channels``, ``hidden``, ``blocks`` and ``with_features``
    (:class:`NNConfig`) shape a fresh network (or, with a checkpoint, must match it). ``device`` is any torch
    device string (``"cpu"``, ``"cuda"``, ``"cuda:1"``). ``waits``: the policy with its discards checked by the
    value of the waits they leave, an :class:`agents.waits.CheckedPolicy` over it (as ``agents.waits:checked``,
    under the default rules): ``True`` for the default :class:`agents.waits.WaitCheck`, a dict of ``margin``,
    ``near`` and ``p_self`` over the defaults, or a ``WaitCheck``. ``threads``: torch's (and Numba's) thread
    count during each call, the caller's put back after it (:func:`torch_threads`; ``mjenv eval --threads``
    fills it); default: unchanged.
    """
    _, seed = check_factory_args(num_envs, seed)
    threads = check_threads(threads)
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"device must be a str, got {type(device).__name__}")
    try:
        dev = torch.device(device)
    except RuntimeError as e:
        raise ValueError(f"bad device {device!r}: {e}") from e
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but CUDA is not available")
    if not isinstance(greedy, bool):
        raise TypeError(f"greedy must be a bool, got {type(greedy).__name__}")
    check = W.WaitCheck.of(waits)
    given = (("channels", channels), ("hidden", hidden), ("arch", arch), ("blocks", blocks),
             ("with_features", with_features))  # fmt: skip
    sizes = {k: v for k, v in given if v is not None}
    if checkpoint is not None:
        net = load(checkpoint, device=dev)
        for k, v in sizes.items():
            if getattr(net.config, k) != v:
                raise ValueError(f"{checkpoint} holds a network with {k}={getattr(net.config, k)}, not {v}")
    else:
        config = NNConfig(**sizes)
        with torch.random.fork_rng(devices=[]):  # the initial weights follow the seed; global RNG untouched
            torch.manual_seed(seed)
            net = build_net(config)
    policy = NNPolicy(net, seed=seed, device=str(dev), greedy=greedy, threads=threads)
    return policy if check is None else W.CheckedPolicy(policy, check)


# ------------------------------------------------------------------------------------------------ the zoo
def zoo(
    num_envs: int,
    seed: int,
    name: str | None = None,
    device: str = "cpu",
    greedy: bool = True,
    waits: bool | dict | W.WaitCheck = False,
    threads: int | None = None,
) -> NNPolicy | W.CheckedPolicy:
    """``agents.nn:zoo``: the shipped network ``name`` of the model zoo (:data:`agents.zoo_meta.ZOO`, e.g.
    ``"avg109-2026-12-06"``; a name never changes meaning), greedy by default; ``waits`` as :func:`make`'s.

    ``mjenv eval --agent nn=agents.nn:zoo --agent-opt nn.name=avg109-2026-12-06 --agent rule=agents.rule:make
    --seating 1v3``.
    """
    if name is None:
        raise TypeError(f"agents.nn:zoo needs name=, one of {', '.join(ZOO)}")
    path = zoo_path(name)
    if not path.is_file():
        raise FileNotFoundError(f"the zoo file of {name} is missing: {path}")
    return make(num_envs, seed, checkpoint=path, device=device, greedy=greedy, waits=waits, threads=threads)


def latest(
    num_envs: int,
    seed: int,
    device: str = "cpu",
    greedy: bool = True,
    waits: bool | dict | W.WaitCheck = False,
    threads: int | None = None,
) -> NNPolicy | W.CheckedPolicy:
    """``agents.nn:latest``: the newest network of the zoo alone (:data:`agents.zoo_meta.LATEST`, today
    ``recipe-2026-12-08``), greedy by default. An alias: it follows the zoo; for a figure that keeps its meaning,
    name the entry (:func:`zoo`)."""
    return zoo(num_envs, seed, LATEST, device=device, greedy=greedy, waits=waits, threads=threads)


def baseline(
    num_envs: int,
    seed: int,
    device: str = "cpu",
    greedy: bool = True,
    waits: bool | dict | W.WaitCheck = W.BASELINE_CHECK,
    threads: int | None = None,
) -> NNPolicy | W.CheckedPolicy:
    """``agents.nn:baseline``: the strongest shipped agent, the zoo's :data:`agents.zoo_meta.BASELINE` (today
    ``avg109-2026-12-06``; the newest network, :func:`latest`, is ``recipe-2026-12-08``) with its discards
    checked by the value of the waits they leave and its passes by the claims into a better wait
    (``agents.waits:checked`` over it with ``claims=0.5``: :data:`agents.waits.BASELINE_CHECK`, since 2026-12-07);
    ``waits=True`` is the default :class:`agents.waits.WaitCheck` (no claims), ``waits=False`` the network alone.
    An alias: it follows the zoo and the check; for a figure that keeps its meaning, name the zoo entry and the
    check.

    ``mjenv eval --agent nn=agents.nn:baseline --agent rule=agents.rule:make --seating 1v3 --walls 1000``.
    """
    return zoo(num_envs, seed, BASELINE, device=device, greedy=greedy, waits=waits, threads=threads)


def _deprecated(old: str, num_envs: int, seed: int, device: str, greedy: bool, waits: bool | dict | W.WaitCheck,
                threads: int | None = None) -> NNPolicy | W.CheckedPolicy:  # fmt: skip
    """The zoo entry that the factory ``old`` named before the zoo, with a ``DeprecationWarning``."""
    name = next(e.name for e in ZOO.values() if e.old == old)
    warnings.warn(
        f"agents.nn:{old} is deprecated: use agents.nn:zoo with name={name!r}",
        DeprecationWarning,
        stacklevel=3,
    )
    return zoo(num_envs, seed, name, device=device, greedy=greedy, waits=waits, threads=threads)


def ens5_baseline(
    num_envs: int,
    seed: int,
    device: str = "cpu",
    greedy: bool = True,
    waits: bool | dict | W.WaitCheck = False,
    threads: int | None = None,
) -> NNPolicy | W.CheckedPolicy:
    """Deprecated: ``agents.nn:zoo`` with ``name="ens5-2026-12-05"`` (planes 2 x 32 + features, the student of
    five PPO networks), the shipped network of 2026-12-05."""
    return _deprecated("ens5_baseline", num_envs, seed, device, greedy, waits, threads)


def planes32_baseline(
    num_envs: int,
    seed: int,
    device: str = "cpu",
    greedy: bool = True,
    waits: bool | dict | W.WaitCheck = False,
    threads: int | None = None,
) -> NNPolicy | W.CheckedPolicy:
    """Deprecated: ``agents.nn:zoo`` with ``name="planes32-2026-12-04"`` (planes 2 x 32 + features, BC then PPO
    annealed), the shipped network of 2026-12-04."""
    return _deprecated("planes32_baseline", num_envs, seed, device, greedy, waits, threads)


def mlp_baseline(
    num_envs: int,
    seed: int,
    device: str = "cpu",
    greedy: bool = True,
    waits: bool | dict | W.WaitCheck = False,
    threads: int | None = None,
) -> NNPolicy | W.CheckedPolicy:
    """Deprecated: ``agents.nn:zoo`` with ``name="mlp-2026-12-01"`` (the mlp on the engineered features, BC then
    PPO), the shipped network of 2026-12-01; about four times faster per decision than the planes networks."""
    return _deprecated("mlp_baseline", num_envs, seed, device, greedy, waits, threads)


#: :class:`EnsemblePolicy`: the floor of each member's probabilities before their logs are summed
PROB_FLOOR = 1e-12


class EnsemblePolicy:
    """Greedy policy of several networks: each row takes the legal action of the highest summed
    log-probability over the members, each probability floored at :data:`PROB_FLOOR` (float32), so that no
    member vetoes an action alone (the trained networks give their rejected actions 1e-20 and below). The
    legal action of the most support wins. Deterministic (it ignores ``rng``); the members that read the same
    inputs share their computation, the rest costs each member its network.
    """

    needs_observations = True
    row_streams = True

    def __init__(self, members: list[NNPolicy], views: int = 1, threads: int | None = None) -> None:
        #: torch's (and Numba's) thread count during each call (:func:`torch_threads`), None: the caller's
        self.threads = check_threads(threads)
        if not members:
            raise ValueError("an ensemble needs at least one member")
        if isinstance(views, bool) or not isinstance(views, (int, np.integer)):
            raise TypeError(f"views must be an int, got {type(views).__name__}")
        if not 1 <= views <= len(VIEWS):
            raise ValueError(f"views must be 1..{len(VIEWS)}, got {views}")
        self.members = list(members)
        self.views = [View(*v) for v in VIEWS[: int(views)]]

    def describe(self) -> str:
        """One line: the members' descriptions (and the number of tile views, when more than one)."""
        v = f", {len(self.views)} tile views each" if len(self.views) > 1 else ""
        return f"agents.nn ensemble of {len(self.members)}{v}: " + "; ".join(
            m.describe() for m in self.members
        )

    @_bounded
    @torch.no_grad()
    def __call__(self, obs: Any, masks: Any, seats: Any = None, rng: Any = None) -> np.ndarray:
        o, m = _check_batch(obs, masks)
        total = None
        for view in self.views:
            ov, mv = view.obs(o), view.mask(m)
            # the members' inputs, computed once per input layout and device
            inputs: dict[tuple[str, str], tuple[torch.Tensor, ...]] = {}
            for member in self.members:
                key = (features_version(member.net.config), str(member.device))
                if key not in inputs:
                    inputs[key] = member.net.features(ov, mv)
                probs = member._probs(inputs[key], mv)[0].float().cpu().numpy()
                logp = view.back(np.log(np.maximum(probs, PROB_FLOOR)))
                total = logp if total is None else total + logp
        total[~m] = -np.inf
        return total.argmax(axis=1).astype(np.int64)


def ensemble(
    num_envs: int,
    seed: int,
    checkpoints: str | Path | list | tuple,
    device: str = "cpu",
    views: int = 1,
    threads: int | None = None,
) -> EnsemblePolicy:
    """``agents.nn:ensemble``: an :class:`EnsemblePolicy` of the ``agents.nn`` checkpoints ``checkpoints`` (a
    list of paths, or one string of paths separated by commas), greedy; ``views`` > 1 also averages each
    member over the first ``views`` of :data:`agents.symmetry.VIEWS` (relabelled suits and reversed ranks).

    ``mjenv eval --agent ens=agents.nn:ensemble --agent-opt ens.checkpoints=A.safetensors,B.safetensors
    --agent rule=agents.rule:make --seating 1v3``.
    """
    _, seed = check_factory_args(num_envs, seed)
    if isinstance(checkpoints, (str, Path)):
        paths = [p.strip() for p in str(checkpoints).split(",")]
    elif isinstance(checkpoints, (list, tuple)):
        paths = list(checkpoints)
    else:
        raise TypeError(
            f"checkpoints must be a list of paths or a comma-separated str, got {type(checkpoints).__name__}"
        )
    for p in paths:
        if not isinstance(p, (str, Path)) or not str(p):
            raise ValueError(
                f"checkpoints: every entry must be a non-empty path, got {p!r} in {checkpoints!r}"
            )
    if not paths:
        raise ValueError("checkpoints: give at least one checkpoint")
    members = [make(num_envs, seed, checkpoint=p, device=device, greedy=True) for p in paths]
    return EnsemblePolicy(members, views=views, threads=threads)


def symmetric(
    num_envs: int,
    seed: int,
    checkpoint: str | Path | None = None,
    device: str = "cpu",
    views: int = 12,
    threads: int | None = None,
) -> EnsemblePolicy:
    """``agents.nn:symmetric``: one network (``checkpoint``, default the newest of the zoo, ``agents.nn:latest``) averaged
    over ``views`` tile symmetries (:mod:`agents.symmetry`: the suits relabelled, the ranks reversed; 12 =
    all), greedy: an :class:`EnsemblePolicy` of one member, ``views`` times its cost per decision."""
    path = zoo_path(LATEST) if checkpoint is None else checkpoint
    return ensemble(num_envs, seed, [path], device=device, views=views, threads=threads)
