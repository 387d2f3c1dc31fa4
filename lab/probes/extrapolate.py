"""Lab probe (issue 25): weight extrapolation, ``w = a + alpha (b - a)``, from checkpoint ``a`` through ``b``.

    PYTHONPATH=. python lab/probes/extrapolate.py agents/zoo/ens5-2026-12-05.safetensors \\
        agents/zoo/avg109-2026-12-06.safetensors --alpha 1.5 --out runs/s31/ex1.5.safetensors

``alpha = 1`` gives ``b`` back, ``0 < alpha < 1`` interpolates, ``alpha > 1`` goes on past ``b`` along the line
from ``a`` (as "model extrapolation" does from a fine-tune's start through its end). Both checkpoints must hold
networks of one :class:`agents.nn.NNConfig` (a ``ValueError`` names them otherwise). Every weight is computed in
float64 and stored in its own dtype; the result keeps ``b``'s config, so ``agents.nn:make`` loads it. Prints one
line with the distance ``|b - a|`` and the norm ``|a|`` (all weights as one vector). docs/training.md,
"Session 31", has the figures.
"""

from __future__ import annotations

import argparse
import math

import torch

import agents.nn as ann


def extrapolate(a_path: str, b_path: str, alpha: float) -> tuple[ann.Net, float, float]:
    """The network ``a + alpha (b - a)``, with ``|b - a|`` and ``|a|`` over every weight."""
    if not math.isfinite(alpha):
        raise ValueError(f"alpha must be a finite number, got {alpha}")
    a, b = ann.load(a_path), ann.load(b_path)
    if a.config != b.config:
        raise ValueError(f"{a_path} holds a network with config {a.config}, {b_path} one with {b.config}")
    sa, sb = a.state_dict(), b.state_dict()
    diff = {k: sb[k].double() - sa[k].double() for k in sb}
    dist = math.sqrt(sum(float((d * d).sum()) for d in diff.values()))
    norm = math.sqrt(sum(float((v.double() ** 2).sum()) for v in sa.values()))
    b.load_state_dict({k: (sa[k].double() + alpha * diff[k]).to(sb[k].dtype) for k in sb})
    return b, dist, norm


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="the start (agents.nn checkpoint)")
    ap.add_argument("b", help="the point the line goes through (same network config)")
    ap.add_argument("--alpha", type=float, required=True, help="1 gives b; above 1 goes past it")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    try:
        with torch.no_grad():
            net, dist, norm = extrapolate(args.a, args.b, args.alpha)
    except (FileNotFoundError, ValueError) as e:
        raise SystemExit(f"extrapolate: {e}") from None
    ann.save(net, args.out)
    print(f"{args.out}: alpha {args.alpha}, |b - a| {dist:.3f}, |a| {norm:.3f}")


if __name__ == "__main__":
    main()
