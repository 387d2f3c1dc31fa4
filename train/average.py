"""Weight averaging of agents.nn checkpoints: ``python -m train.average --out OUT.safetensors A B C ...``.

Why
---
PPO from a strong start moves its policy by noise more than by signal (lab/notebook.md, section 4): each
update's step is mostly the deal's luck. Averaging the weights of checkpoints that stayed near one start (the
snapshots of one run, stochastic weight averaging; or the ends of runs from the same start, a "model soup")
averages that noise away at no cost per decision, where an ensemble (``agents.nn:ensemble``) pays for every
member at every decision. The networks have no normalisation layers, so an average of weights is a network as
it stands.

What
----
:func:`average_checkpoints` returns the uniform average of every weight (the value head too) of checkpoints of
one network config; a ``ValueError`` names a checkpoint whose config differs. The command writes it with
:func:`agents.nn.save` (``agents.nn:make`` loads it) and prints one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
import tyro

from agents import nn as ann


def average_checkpoints(paths: list[str | Path] | tuple[str | Path, ...]) -> ann.Net:
    """The network whose every weight is the mean of that weight over the checkpoints ``paths`` (at least one,
    all of one :class:`agents.nn.NNConfig`)."""
    if isinstance(paths, (str, Path)) or not paths:
        raise ValueError("give a list of at least one checkpoint path")
    first = ann.load(paths[0])
    total = {k: v.detach().double().clone() for k, v in first.state_dict().items()}
    for p in paths[1:]:
        net = ann.load(p)
        if net.config != first.config:
            raise ValueError(
                f"{p} holds a network with config {net.config}, {paths[0]} one with {first.config}"
            )
        for k, v in net.state_dict().items():
            total[k] += v.double()
    dtypes = {k: v.dtype for k, v in first.state_dict().items()}
    first.load_state_dict({k: (v / len(paths)).to(dtypes[k]) for k, v in total.items()})
    return first


@dataclass
class AverageConfig:
    """Settings of ``python -m train.average``."""

    checkpoints: tyro.conf.Positional[tuple[str, ...]]
    """agents.nn checkpoints of one network config (e.g. a run's run_dir/evals/policy_u*.safetensors)"""
    out: str = "runs/average/policy.safetensors"
    """where the averaged checkpoint goes"""


def main() -> None:
    cfg = tyro.cli(AverageConfig)
    try:  # agents.nn.load names a missing or unreadable file
        net = average_checkpoints(list(cfg.checkpoints))
    except (FileNotFoundError, ValueError) as e:
        raise SystemExit(f"train.average: {e}") from None
    ann.save(net, cfg.out)
    print(f"{cfg.out}: the average of {len(cfg.checkpoints)} checkpoints ({net.config.describe()})")


if __name__ == "__main__":
    with torch.no_grad():
        main()
