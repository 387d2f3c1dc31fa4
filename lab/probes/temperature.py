"""Lab probe (issue 25): a network's policy at another temperature, ``softmax(logits / T)``, as a checkpoint.

    PYTHONPATH=. python lab/probes/temperature.py agents/zoo/avg109-2026-12-06.safetensors --temperature 0.5 \\
        --out runs/s32/t05.safetensors

Every logit of an :mod:`agents.nn` network (planes or mlp) is an affine map of the last hidden layers: the
weights and biases of ``tile_head`` and ``other_head``. Dividing them by ``T`` divides every logit by ``T``: the
greedy action is the same (up to float rounding at exact ties), a sampled one is drawn from ``pi^(1/T)``
renormalised (``T < 1`` sharper, ``T > 1`` flatter). The value head and everything else are unchanged, so PPO
from the new checkpoint (``python -m train.ppo --init-from``) trains the policy at temperature ``T``: its rollouts
sample nearer the greedy play that the evaluation measures. Computed in float64, stored in each weight's dtype.
docs/training.md, "Session 32", has the figures.
"""

from __future__ import annotations

import argparse
import math

import torch

import agents.nn as ann

HEADS = ("tile_head.weight", "tile_head.bias", "other_head.weight", "other_head.bias")


def at_temperature(path: str, temperature: float) -> ann.Net:
    """The network of ``path`` with every logit divided by ``temperature``."""
    if not (math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature}")
    net = ann.load(path)
    sd = net.state_dict()
    missing = [k for k in HEADS if k not in sd]
    if missing:
        raise ValueError(f"{path}: no {missing} in the network (not an agents.nn policy network?)")
    with torch.no_grad():
        for k in HEADS:
            sd[k].copy_((sd[k].double() / temperature).to(sd[k].dtype))
    return net


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint", help="an agents.nn checkpoint")
    ap.add_argument("--temperature", type=float, required=True, help="T > 0: the logits are divided by it")
    ap.add_argument("--out", required=True, help="the new checkpoint")
    args = ap.parse_args(argv)
    try:
        net = at_temperature(args.checkpoint, args.temperature)
    except (OSError, ValueError) as e:
        ap.error(str(e))
    ann.save(net, args.out)
    print(f"{args.out}: {args.checkpoint} at temperature {args.temperature:g}")


if __name__ == "__main__":
    main()
