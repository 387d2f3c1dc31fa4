"""A small PyTorch policy-value network over mjenv's observation: ``agents.nn:make``.

Inputs (built from :func:`mjenv.observation.views`, so a change of the observation layout is caught by
``FEATURES_VERSION``): 38 *tile planes* over the 34 tile types -- own hand (4), drawn tile (1), every player's
melds (16) and discards (16), the tile on offer (1) -- and 30 *scalars*: flowers, concealed-tile counts
(scaled), seat and prevailing wind, tiles left in the wall (/144), who offered, the phase, whose turn, and
the no-win flag. The tile planes go through two 1-D convolutions over the tile axis (kernel 3: neighbouring
ranks; the honours sit after the suits), are flattened, joined with the scalars, and feed a hidden layer with
a policy head (``NUM_ACTIONS`` logits) and a value head. Illegal actions get a logit of ``-inf`` (masked
logits), so neither sampling nor the greedy choice can pick one.

Observations may be ``float32`` or ``uint8`` (``numpy`` arrays or ``torch`` tensors); inference is batched on
CPU or CUDA. Checkpoints are safetensors files that carry the network config, the observation
``FEATURES_VERSION`` and a SHA-256 of the weights: loading one made for other features, another config, or
with tampered or truncated bytes raises ``ValueError`` naming the problem.
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
from mjenv.actions import NUM_ACTIONS
from mjenv.observation import FEATURES_VERSION, OBS_OFFSETS, OBS_PIECES, OBS_SIZE

FORMAT = "mjenv-agents-nn/1"
_PLANES = (("hand", 4), ("drawn", 1), ("melds", 16), ("discards", 16), ("offer_tile", 1))
_SCALARS = (
    ("flowers", 4, 8.0), ("concealed", 4, 14.0), ("seat_wind", 4, 1.0), ("prevalent_wind", 4, 1.0),
    ("wall", 1, 144.0), ("offer_from", 4, 1.0), ("phase", 4, 1.0), ("turn", 4, 1.0), ("no_win", 1, 1.0),
)  # fmt: skip
NUM_PLANES = sum(c for _, c in _PLANES)
NUM_SCALARS = sum(c for _, c, _ in _SCALARS)
_SHAPES = dict(OBS_PIECES)


@dataclass(frozen=True)
class NNConfig:
    """Network sizes. ``channels``: convolution width; ``hidden``: width of the joint layer."""

    channels: int = 64
    hidden: int = 256

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"NNConfig.{f.name} must be an int, got {type(v).__name__}")
            if not 1 <= v <= 4096:
                raise ValueError(f"NNConfig.{f.name} must be in 1..4096, got {v}")


def _index_arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat observation indices of the tile planes (NUM_PLANES x 34), the scalars and their scales."""
    planes = []
    for name, count in _PLANES:
        base = OBS_OFFSETS[name]
        assert int(np.prod(_SHAPES[name])) == 34 * count, name
        planes.extend(base + 34 * c + np.arange(34) for c in range(count))
    scal, scale = [], []
    for name, count, sc in _SCALARS:
        assert int(np.prod(_SHAPES[name])) == count, name
        scal.extend(OBS_OFFSETS[name] + np.arange(count))
        scale.extend([sc] * count)
    return np.array(planes), np.array(scal), np.array(scale, np.float32)


_PLANE_IDX, _SCALAR_IDX, _SCALAR_SCALE = _index_arrays()


def _runs(idx: np.ndarray) -> tuple[tuple[int, int], ...]:
    """``idx`` (flat observation indices, in feature order) as maximal contiguous ``[a, b)`` slices."""
    cut = np.flatnonzero(np.diff(idx) != 1) + 1
    return tuple((int(r[0]), int(r[-1]) + 1) for r in np.split(idx, cut))


_RUNS = _runs(np.concatenate([_PLANE_IDX.ravel(), _SCALAR_IDX]))


class PolicyValueNet(nn.Module):
    """``forward(obs, masks) -> (masked logits [N, NUM_ACTIONS], value [N])`` (see the module docstring)."""

    def __init__(self, config: NNConfig | None = None) -> None:
        super().__init__()
        self.config = NNConfig() if config is None else config
        c, h = self.config.channels, self.config.hidden
        self.conv = nn.Sequential(
            nn.Conv1d(NUM_PLANES, c, 3, padding=1), nn.ReLU(), nn.Conv1d(c, c, 3, padding=1), nn.ReLU()
        )
        self.body = nn.Sequential(nn.Linear(34 * c + NUM_SCALARS, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.policy_head = nn.Linear(h, NUM_ACTIONS)
        self.value_head = nn.Linear(h, 1)
        self.register_buffer("scalar_scale", torch.as_tensor(_SCALAR_SCALE), persistent=False)

    @property
    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def features(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(planes [N, NUM_PLANES, 34], scalars [N, NUM_SCALARS])`` from flat observations (any dtype)."""
        if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
            raise ValueError(f"obs must have shape (N, {OBS_SIZE}), got {tuple(obs.shape)}")
        # gather first, on the raw dtype (uint8: a quarter of the bytes), as a few contiguous slices (a
        # fancy-index gather is ~10x slower on CPU), then convert only what the network reads
        x = torch.cat([obs[:, a:b] for a, b in _RUNS], dim=1).to(torch.float32)
        n_p = NUM_PLANES * 34
        return x[:, :n_p].view(-1, NUM_PLANES, 34), x[:, n_p:] / self.scalar_scale

    def forward(
        self, obs: torch.Tensor, masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_features(*self.features(obs), masks)

    def forward_features(
        self, planes: torch.Tensor, scalars: torch.Tensor, masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`forward` from the output of :meth:`features` (to gather the features of a batch once)."""
        x = self.conv(planes).flatten(1)
        x = self.body(torch.cat([x, scalars], dim=1))
        logits = self.policy_head(x)
        if masks is not None:
            logits = logits.masked_fill(~masks.to(torch.bool), float("-inf"))
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
    """Write ``net`` to a safetensors file with its config, ``FEATURES_VERSION`` and a SHA-256 of the weights."""
    from safetensors.torch import save_file

    state = {k: v.detach().cpu().contiguous() for k, v in net.state_dict().items()}
    meta = {
        "format": FORMAT,
        "config": json.dumps(asdict(net.config), sort_keys=True),
        "features_version": FEATURES_VERSION,
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
    if meta.get("features_version") != FEATURES_VERSION:
        raise ValueError(
            f"{path} was made for observation features {meta.get('features_version')!r}, "
            f"this mjenv has {FEATURES_VERSION!r}"
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
    with ``greedy``); :meth:`act_with_info` also returns the probabilities and the value."""

    needs_observations = True

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
            f"{self.net.num_parameters:,} parameters on {self.device}, features {FEATURES_VERSION}"
        )

    def _tensor(self, x: Any, name: str) -> torch.Tensor:
        if x is None:
            raise ValueError(f"the nn agent needs {name} (VectorEnv(..., observations=True))")
        t = x if isinstance(x, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(x))
        return t.to(self.device, non_blocking=True)

    @torch.no_grad()
    def act_with_info(
        self, obs: Any, masks: Any, seats: Any = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        o = self._tensor(obs, "observations")
        m = self._tensor(masks, "masks").to(torch.bool)
        if m.ndim != 2 or m.shape != (o.shape[0], NUM_ACTIONS):
            raise ValueError(f"masks must have shape ({o.shape[0]}, {NUM_ACTIONS}), got {tuple(m.shape)}")
        if m.shape[0] and not bool(m.any(dim=1).all()):
            raise ValueError("a row of masks has no legal action")
        logits, value = self.net(o, m)
        probs = torch.softmax(logits, dim=1)
        if self.greedy:
            actions = probs.argmax(dim=1)
        elif probs.shape[0]:
            actions = torch.multinomial(probs, 1, generator=self.generator).squeeze(1)
        else:
            actions = torch.zeros(0, dtype=torch.int64, device=self.device)
        info = {"probs": probs.float().cpu().numpy(), "value": value.float().cpu().numpy()}
        return actions.cpu().numpy().astype(np.int64), info

    def __call__(self, obs: Any, masks: Any, seats: Any = None) -> np.ndarray:
        return self.act_with_info(obs, masks, seats)[0]


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
