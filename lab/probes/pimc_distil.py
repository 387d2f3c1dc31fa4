"""Lab probe (issue 25): fine-tune the network toward a search's choices (one step of expert iteration).

    python lab/probes/pimc.py --labels 0.05 --keep-hands --walls 20000 --dets 16 --out runs/s27/lab.npz
    python lab/probes/pimc_distil.py runs/s27/lab.npz --out runs/s27/distil.safetensors

The labels (``pimc.py --labels``): at each searched decision the ``[top_k, dets]`` returns of the candidates on
shared determinizations. Target at a searched decision: the probability that the second candidate is the better,
``Phi(mean / se)`` of its per-determinization advantage over the first (the rest of the mass on the first, none
on other actions). Target at the anchor decisions (a sample of the learner's other decisions in the same games):
the starting network's own distribution, so that the rest of the policy stays where it was. The loss is the
cross-entropy to the targets, the searched decisions weighted ``--weight`` times an anchor decision, from the
starting network (Adam, ``--epochs``, the rate annealed to 0).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents import nn as ann  # noqa: E402
from train.bc import unpack_masks  # noqa: E402


def targets(cands: np.ndarray, returns: np.ndarray) -> np.ndarray:
    """``float32[N, top_k]``: the probability mass on each candidate (module docstring; 2 candidates used)."""
    adv = returns[:, 1, :] - returns[:, 0, :]
    d = adv.shape[1]
    se = adv.std(axis=1, ddof=1) / math.sqrt(d)
    z = np.where(se > 0, adv.mean(axis=1) / np.maximum(se, 1e-9), np.sign(adv.mean(axis=1)) * 10)
    p2 = 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
    p2 = np.where(cands[:, 1] >= 0, p2, 0.0)
    out = np.zeros(cands.shape, np.float32)
    out[:, 0], out[:, 1] = 1 - p2, p2
    return out


def distil(paths: list[str], out: str, *, checkpoint: str, epochs: int, lr: float, weight: float,
           batch_size: int = 1024, seed: int = 0, threads: int = 2) -> dict[str, object]:  # fmt: skip
    ann.set_torch_threads(threads)
    torch.manual_seed(seed)
    ds = [np.load(p) for p in paths]
    obs = np.concatenate([z["obs"] for z in ds] + [z["anchor_obs"] for z in ds])
    masks = unpack_masks(np.concatenate([z["masks"] for z in ds] + [z["anchor_masks"] for z in ds]))
    cands = np.concatenate([z["cands"] for z in ds]).astype(np.int64)
    tgt = targets(cands, np.concatenate([z["returns"] for z in ds]))
    n_s, n = cands.shape[0], obs.shape[0]
    start = ann.load(checkpoint).eval()
    net = ann.load(checkpoint)
    probs = np.zeros(
        (n, masks.shape[1]), np.float32
    )  # the targets: the start's distribution, searched rows replaced
    with torch.no_grad():
        for s in range(0, n, 8192):
            logits, _ = start(obs[s : s + 8192], masks[s : s + 8192])
            probs[s : s + 8192] = torch.softmax(logits, dim=1).numpy()
    searched = np.zeros((n_s, masks.shape[1]), np.float32)
    for j in range(cands.shape[1]):
        ok = cands[:, j] >= 0
        searched[np.flatnonzero(ok), cands[ok, j]] += tgt[ok, j]
    before = probs[:n_s].copy()
    probs[:n_s] = searched
    w = np.ones(n, np.float32)
    w[:n_s] = weight
    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    steps = epochs * ((n + batch_size - 1) // batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1 - s / steps)
    t0 = time.perf_counter()
    net.train()
    for _ in range(epochs):
        order = rng.permutation(n)
        for s in range(0, n, batch_size):
            r = np.sort(order[s : s + batch_size])
            logits, _ = net(obs[r], masks[r])
            logp = torch.log_softmax(logits, dim=1).clamp(min=-1e4)
            loss = (
                -(torch.from_numpy(w[r]) * (torch.from_numpy(probs[r]) * logp).sum(dim=1)).sum() / w[r].sum()
            )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
    net.eval()
    with torch.no_grad():
        agree_s = agree_a = 0
        for s in range(0, n, 8192):
            a = net(obs[s : s + 8192], masks[s : s + 8192])[0].argmax(dim=1).numpy()
            t = probs[s : s + 8192].argmax(axis=1)
            first = max(0, min(n_s - s, a.size))
            agree_s += int((a[:first] == t[:first]).sum())
            agree_a += int((a[first:] == t[first:]).sum())
    ann.save(net, out)
    rep = {
        "searched": n_s, "anchor": n - n_s, "seconds": time.perf_counter() - t0,
        "start_agrees_with_search": float((before.argmax(axis=1) == searched.argmax(axis=1)).mean()),
        "new_agrees_with_search": agree_s / max(1, n_s), "new_agrees_with_start_on_anchor": agree_a / max(1, n - n_s),
        "settings": {"paths": paths, "checkpoint": checkpoint, "epochs": epochs, "lr": lr, "weight": weight},
    }  # fmt: skip
    Path(out).with_suffix(".json").write_text(json.dumps(rep, indent=1))
    return rep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--checkpoint", default="agents/zoo/ens5-2026-12-05.safetensors")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--weight", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    rep = distil(args.paths, args.out, checkpoint=args.checkpoint, epochs=args.epochs, lr=args.lr,
                 weight=args.weight, seed=args.seed, threads=args.threads)  # fmt: skip
    print(json.dumps(rep, indent=1))


if __name__ == "__main__":
    main()
