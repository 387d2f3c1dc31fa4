"""Lab probe (issue 25): the policy heads' biases moved by hand, one action class at a time.

    PYTHONPATH=. python lab/probes/bias_shift.py --shift pass=-1 --out runs/s34/pass-1.safetensors
    python -m mjenv eval --agent new=agents.nn:make --agent-opt new.checkpoint=runs/s34/pass-1.safetensors \\
        --agent-opt new.greedy=true --agent base=agents.nn:baseline --agent-opt base.waits=false --seating 1v3 \\
        --walls 5000 --seed 34001 --threads 2

Each policy head's bias is one logit shift per action class (a softmax over one class alone does not move, so a
class's bias only matters where it competes with another). ``--shift CLASS=DELTA`` (repeat) adds ``DELTA`` to the
bias of ``CLASS``: ``pass``, ``chow`` (its three positions together), ``pung``, ``kong`` (the exposed kong on a
discard), ``win``, ``concealed_kong``, ``added_kong`` or ``discard``. The network is the checkpoint (default the
shipped ``agents/zoo/avg109-2026-12-06.safetensors``) with those biases moved and every other weight unchanged; greedy, it
changes its choice only where the moved class's logit was within ``DELTA`` of the best. Head to head against
the unmoved network, only the hands where a choice changed score apart, so small changes are measured precisely
(session 31's kong overrides: +-0.03 at 10,000 walls). The policy gradient does not resolve these ten biases at
the shipped network (session 33: noise scale above 64 iterations of 18,700 decisions); duplicate evaluation does.
docs/training.md, "Session 34", has the figures.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np
import torch

import agents.nn as ann
from mjenv import tiles as T
from mjenv.actions import DISCARD, NUM_ACTIONS, NUM_TILE_TYPES, PASS
from mjenv.observation import O_DISCARDS, O_MSEQ

#: each class's bias: (the head, its output channels)
CLASSES: dict[str, tuple[str, tuple[int, ...]]] = {
    "discard": ("tile_head", (0,)),
    "concealed_kong": ("tile_head", (1,)),
    "added_kong": ("tile_head", (2,)),
    "chow": ("other_head", (0, 1, 2)),
    "pung": ("other_head", (3,)),
    "kong": ("other_head", (4,)),
    "win": ("other_head", (5,)),
    "pass": ("other_head", (6,)),
}


_RANK = T.RANK[:NUM_TILE_TYPES]
_SUITED = T.IS_SUITED[:NUM_TILE_TYPES]
#: the tile groups of :func:`discard_offset`: which of the 34 tiles each holds
TILE_GROUPS: dict[str, np.ndarray] = {
    "wind": T.IS_WIND[:NUM_TILE_TYPES],
    "dragon": T.IS_DRAGON[:NUM_TILE_TYPES],
    "honor": T.IS_HONOR[:NUM_TILE_TYPES],
    "terminal": T.IS_TERMINAL[:NUM_TILE_TYPES],
    "rank28": _SUITED & ((_RANK == 2) | (_RANK == 8)),
    "rank37": _SUITED & ((_RANK == 3) | (_RANK == 7)),
    "middle": _SUITED & (_RANK >= 4) & (_RANK <= 6),
}


def parse_shift(text: str) -> tuple[str, float]:
    """``"CLASS=DELTA"`` as ``(class, delta)``; ``ValueError`` naming the problem."""
    name, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"a shift is CLASS=DELTA, got {text!r}")
    if name not in CLASSES:
        raise ValueError(f"unknown class {name!r} in {text!r}; classes: {', '.join(CLASSES)}")
    try:
        delta = float(value)
    except ValueError:
        raise ValueError(f"the shift of {name} must be a number, got {value!r}") from None
    if not math.isfinite(delta):
        raise ValueError(f"the shift of {name} must be finite, got {value!r}")
    return name, delta


def shift_biases(net: ann.Net, shifts: dict[str, float]) -> ann.Net:
    """``net`` with ``shifts[class]`` added to each named class's bias (in place; returned)."""
    with torch.no_grad():
        for name, delta in shifts.items():
            head, channels = CLASSES[name]
            bias = getattr(net, head).bias
            for c in channels:
                bias[c] += delta
    return net


class RowOffsetPolicy(ann.NNPolicy):
    """An :class:`agents.nn.NNPolicy` whose logits get per-row offsets (:meth:`row_offsets` of the observation,
    ``[N, NUM_ACTIONS]``, or ``[1, NUM_ACTIONS]`` for the same offsets in every row) added before the softmax."""

    def __init__(self, net: ann.Net, seed: int = 0, device: str = "cpu", greedy: bool = True) -> None:
        super().__init__(net, seed=seed, device=device, greedy=greedy)
        self._offsets = torch.zeros(0, NUM_ACTIONS)

    def row_offsets(self, obs: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def act_with_info(self, obs: Any, masks: Any, seats: Any = None, rng: Any = None):  # noqa: ANN201
        offsets = self.row_offsets(np.asarray(obs)).astype(np.float32, copy=False)
        self._offsets = torch.from_numpy(offsets).to(self.device)
        return super().act_with_info(obs, masks, seats, rng)

    def _probs(self, inputs: tuple[torch.Tensor, ...], m: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        mt = torch.from_numpy(np.ascontiguousarray(m)).to(self.device)
        logits, value = self.net.forward_features(*inputs, mt)
        return torch.softmax(logits + self._offsets, dim=1), value


class OffsetPolicy(RowOffsetPolicy):
    """The same ``offsets`` (one per action) in every row."""

    def __init__(self, net: ann.Net, offsets: np.ndarray, **kwargs: Any) -> None:
        super().__init__(net, **kwargs)
        self.offsets = np.asarray(offsets, dtype=np.float32)
        if self.offsets.shape != (NUM_ACTIONS,):
            raise ValueError(f"offsets must have shape ({NUM_ACTIONS},), got {self.offsets.shape}")

    def row_offsets(self, obs: np.ndarray) -> np.ndarray:
        return self.offsets[None]  # broadcast over the rows


def _open_melds(obs: np.ndarray, seat: int) -> np.ndarray:
    """How many exposed melds (chow, pung, exposed or added kong) relative seat ``seat`` shows, per row
    (``meld_seq[seat, i, 0]`` is the kind of its i-th meld; relative seat 0 is the observer)."""
    kinds = obs[:, O_MSEQ + 12 * seat : O_MSEQ + 12 * seat + 12 : 3]
    return ((kinds >= 1) & (kinds <= 4)).sum(axis=1)


class ContextPassPolicy(RowOffsetPolicy):
    """The pass logit gets ``delta`` in the rows where the player's hand is still concealed (``when="concealed"``:
    no chow, pung or exposed or added kong in its melds; a concealed kong keeps it concealed) or already open
    (``when="open"``)."""

    def __init__(self, net: ann.Net, when: str, delta: float, **kwargs: Any) -> None:
        super().__init__(net, **kwargs)
        self.when, self.delta = when, float(delta)

    def row_offsets(self, obs: np.ndarray) -> np.ndarray:
        opened = _open_melds(obs, 0) > 0
        out = np.zeros((obs.shape[0], NUM_ACTIONS), np.float32)
        out[:, PASS] = self.delta * (opened if self.when == "open" else ~opened)
        return out


class DefendPolicy(RowOffsetPolicy):
    """The discards of the tiles an opponent with at least ``melds`` exposed melds has discarded itself get
    ``delta`` (the union over such opponents). MCR has no furiten: a player may win on a tile it discarded, so such
    a tile is only likelier safe (its owner chose to let it go), not sure."""

    def __init__(self, net: ann.Net, delta: float, melds: int, **kwargs: Any) -> None:
        super().__init__(net, **kwargs)
        self.delta, self.melds = float(delta), melds

    def row_offsets(self, obs: np.ndarray) -> np.ndarray:
        safe = np.zeros((obs.shape[0], NUM_TILE_TYPES), dtype=bool)
        for p in (1, 2, 3):
            threat = _open_melds(obs, p) >= self.melds
            discarded = obs[:, O_DISCARDS + 136 * p : O_DISCARDS + 136 * p + NUM_TILE_TYPES] != 0  # [p, 0, t]
            safe |= threat[:, None] & discarded
        out = np.zeros((obs.shape[0], NUM_ACTIONS), np.float32)
        out[:, DISCARD : DISCARD + NUM_TILE_TYPES] = self.delta * safe
        return out


def _net_and_options(num_envs: int, seed: int, checkpoint: str | None, device: str, greedy: bool
                     ) -> tuple[ann.Net, dict[str, Any]]:  # fmt: skip
    """The network of ``checkpoint`` (default the shipped one) and the policy options, checked as
    ``agents.nn:make`` checks them (``num_envs``, ``seed``, ``device``, ``greedy``)."""
    base = ann.make(
        num_envs,
        seed,
        checkpoint if checkpoint is not None else ann.zoo_path("avg109-2026-12-06"),
        device,
        greedy,
    )
    return base.net, {"seed": int(seed), "device": str(base.device), "greedy": greedy}


def _finite(delta: Any) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not math.isfinite(delta):
        raise ValueError(f"delta must be a finite number, got {delta!r}")
    return float(delta)


def pass_offset(num_envs: int, seed: int, when: str, delta: float, checkpoint: str | None = None,
                device: str = "cpu", greedy: bool = True) -> ContextPassPolicy:  # fmt: skip
    """The network of ``checkpoint`` (default the shipped one) with ``delta`` added to the pass's logit where the
    player's hand is still concealed (``when="concealed"``) or already open (``when="open"``)."""
    if when not in ("concealed", "open"):
        raise ValueError(f"when must be 'concealed' or 'open', got {when!r}")
    delta = _finite(delta)
    net, options = _net_and_options(num_envs, seed, checkpoint, device, greedy)
    return ContextPassPolicy(net, when, delta, **options)


def defend_offset(num_envs: int, seed: int, delta: float, melds: int = 3, checkpoint: str | None = None,
                  device: str = "cpu", greedy: bool = True) -> DefendPolicy:  # fmt: skip
    """The network of ``checkpoint`` (default the shipped one) with ``delta`` added to the logits of discarding a
    tile that an opponent showing at least ``melds`` exposed melds has discarded itself."""
    if isinstance(melds, bool) or not isinstance(melds, int) or not 1 <= melds <= 4:
        raise ValueError(f"melds must be an int in 1..4, got {melds!r}")
    delta = _finite(delta)
    net, options = _net_and_options(num_envs, seed, checkpoint, device, greedy)
    return DefendPolicy(net, delta, melds, **options)


def discard_offset(num_envs: int, seed: int, group: str, delta: float, checkpoint: str | None = None,
                   device: str = "cpu", greedy: bool = True) -> OffsetPolicy:  # fmt: skip
    """The network of ``checkpoint`` (default the shipped one) with ``delta`` added to the logits of discarding
    the tiles of ``group`` (:data:`TILE_GROUPS`)."""
    if not isinstance(group, str) or group not in TILE_GROUPS:
        raise ValueError(f"unknown tile group {group!r}; groups: {', '.join(TILE_GROUPS)}")
    offsets = np.zeros(NUM_ACTIONS, dtype=np.float32)
    offsets[DISCARD + np.flatnonzero(TILE_GROUPS[group])] = _finite(delta)
    net, options = _net_and_options(num_envs, seed, checkpoint, device, greedy)
    return OffsetPolicy(net, offsets, **options)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shift", action="append", default=[], metavar="CLASS=DELTA", required=True,
                    help=f"add DELTA to CLASS's bias (repeat); classes: {', '.join(CLASSES)}")  # fmt: skip
    ap.add_argument(
        "--checkpoint", default=str(ann.zoo_path("avg109-2026-12-06")), help="the network to move (agents.nn)"
    )
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    try:
        shifts: dict[str, float] = {}
        for text in a.shift:
            name, delta = parse_shift(text)
            if name in shifts:
                raise ValueError(f"{name} is shifted twice")
            shifts[name] = delta
        net = ann.load(a.checkpoint)
    except (FileNotFoundError, ValueError) as e:
        raise SystemExit(f"bias_shift: {e}") from None
    ann.save(shift_biases(net, shifts), a.out)
    print(f"{a.out}: {a.checkpoint} with " + ", ".join(f"{k} {v:+g}" for k, v in shifts.items()))


if __name__ == "__main__":
    main()
