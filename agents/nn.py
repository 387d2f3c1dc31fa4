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

Observations may be ``float32`` or ``uint8`` (``numpy`` arrays or ``torch`` tensors); the features are computed
on CPU, the network runs on CPU or CUDA. Checkpoints are safetensors files that carry the network config,
``NN_FEATURES_VERSION`` (the observation layout and the feature layout) and a SHA-256 of the weights: loading one
made for other features, another config, or with tampered or truncated bytes raises ``ValueError`` naming the
problem. ``agents.nn:baseline`` plays the checkpoint shipped with the repository (``agents/baseline.safetensors``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents._common import check_factory_args
from agents.features import FEATURES_ID, NUM_GLOBAL_FEATURES, NUM_TILE_FEATURES, nn_features
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


@dataclass(frozen=True)
class NNConfig:
    """Network sizes. ``channels``: width of the per-tile encoder and head; ``hidden``: width of the trunk."""

    channels: int = 16
    hidden: int = 128

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"NNConfig.{f.name} must be an int, got {type(v).__name__}")
            if not 1 <= v <= 4096:
                raise ValueError(f"NNConfig.{f.name} must be in 1..4096, got {v}")


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


# ------------------------------------------------------------------------------------------------ checkpoints
def _digest(state: dict[str, torch.Tensor]) -> str:
    h = hashlib.sha256()
    for name in sorted(state):
        t = state[name].detach().cpu().contiguous()
        h.update(name.encode())
        h.update(str(tuple(t.shape)).encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def save(net: PolicyValueNet, path: str | Path) -> None:
    """Write ``net`` to a safetensors file with its config, ``NN_FEATURES_VERSION`` and a SHA-256 of the weights."""
    from safetensors.torch import save_file

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in net.state_dict().items()}
    meta = {
        "format": FORMAT,
        "config": json.dumps(asdict(net.config), sort_keys=True),
        "features_version": NN_FEATURES_VERSION,
        "obs_size": str(OBS_SIZE),
        "num_actions": str(NUM_ACTIONS),
        "sha256": _digest(state),
    }
    save_file(state, str(path), metadata=meta)


def load(
    path: str | Path, config: NNConfig | None = None, device: str | torch.device = "cpu"
) -> PolicyValueNet:
    """Read a checkpoint written by :func:`save`.

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
    if meta.get("features_version") != NN_FEATURES_VERSION:
        raise ValueError(
            f"{path} was made for network features {meta.get('features_version')!r}, "
            f"this agents.nn has {NN_FEATURES_VERSION!r} (retrain, or use the matching mjenv/agents version)"
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
    if config is not None and config != saved:
        raise ValueError(f"{path} holds a network with config {saved}, but {config} was asked for")
    if _digest(state) != meta.get("sha256"):
        raise ValueError(f"{path}: the weights do not match their recorded SHA-256 (the file was modified)")
    net = PolicyValueNet(saved)
    try:
        net.load_state_dict(state, strict=True)
    except RuntimeError as e:
        raise ValueError(f"{path}: the weights do not fit config {saved}: {e}") from e
    return net.to(device)


# ------------------------------------------------------------------------------------------------ policy
class NNPolicy:
    """Batched policy over a :class:`PolicyValueNet`: samples from the masked softmax (or takes its argmax
    with ``greedy``); :meth:`act_with_info` also returns the probabilities and the value.

    ``row_streams = True``: called with ``rng`` (:class:`mjenv.policy.RowStreams`, the arena's per-table
    streams) it samples each row by inverting the row's distribution at one uniform of that row's stream, so
    its actions at a table do not depend on the other rows of the batch; without ``rng`` it samples with its
    own torch generator (``torch.multinomial``).
    """

    needs_observations = True
    row_streams = True

    def __init__(self, net: PolicyValueNet, seed: int = 0, device: str = "cpu", greedy: bool = False) -> None:
        self.device = torch.device(device)
        self.net = net.to(self.device).eval()
        self.greedy = bool(greedy)
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(int(seed))

    def describe(self) -> str:
        """One line: the architecture, parameter count, device and features version."""
        c = self.net.config
        return (
            f"agents.nn PolicyValueNet(channels={c.channels}, hidden={c.hidden}): "
            f"{self.net.num_parameters:,} parameters on {self.device}, features {NN_FEATURES_VERSION}"
        )

    @torch.no_grad()
    def act_with_info(
        self, obs: Any, masks: Any, seats: Any = None, rng: Any = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
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
        mt = torch.from_numpy(np.ascontiguousarray(m)).to(self.device)
        logits, value = self.net.forward_features(*self.net.features(o, m), mt)
        probs = torch.softmax(logits, dim=1)
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


def make(
    num_envs: int,
    seed: int,
    checkpoint: str | Path | None = None,
    device: str = "cpu",
    greedy: bool = False,
    channels: int | None = None,
    hidden: int | None = None,
) -> NNPolicy:
    """``agents.nn:make``: an :class:`NNPolicy`, from ``checkpoint`` or freshly initialised from ``seed``.

    ``channels``/``hidden`` size a fresh network (or, with a checkpoint, must match it). ``device`` is any
    torch device string (``"cpu"``, ``"cuda"``, ``"cuda:1"``).
    """
    _, seed = check_factory_args(num_envs, seed)
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
    sizes = {k: v for k, v in (("channels", channels), ("hidden", hidden)) if v is not None}
    if checkpoint is not None:
        net = load(checkpoint, device=dev)
        for k, v in sizes.items():
            if getattr(net.config, k) != v:
                raise ValueError(f"{checkpoint} holds a network with {k}={getattr(net.config, k)}, not {v}")
    else:
        with torch.random.fork_rng(devices=[]):  # the initial weights follow the seed; global RNG untouched
            torch.manual_seed(seed)
            net = PolicyValueNet(NNConfig(**sizes))
    return NNPolicy(net, seed=seed, device=str(dev), greedy=greedy)


#: the shipped trained checkpoint (how it was made: docs/training.md, "The shipped baseline (session 7)")
BASELINE_PATH = Path(__file__).with_name("baseline.safetensors")


def baseline(num_envs: int, seed: int, device: str = "cpu", greedy: bool = True) -> NNPolicy:
    """``agents.nn:baseline``: the shipped trained policy (:data:`BASELINE_PATH`), greedy by default.

    ``mjenv eval --agent ppo=agents.nn:baseline --agent rule=agents.rule:make --seating 1v3 --walls 1000``.
    """
    if not BASELINE_PATH.is_file():
        raise FileNotFoundError(f"the shipped baseline checkpoint is missing: {BASELINE_PATH}")
    return make(num_envs, seed, checkpoint=BASELINE_PATH, device=device, greedy=greedy)
