"""Lab probe (issue 25): a belief model, the other seats' concealed tiles predicted from one seat's observation,
for the determinizations of a search (``lab/probes/pimc.py --belief``).

    python lab/probes/belief.py collect --decisions 400000 --out runs/s27/belief_data.npz
    python lab/probes/belief.py fit runs/s27/belief_data.npz --out runs/s27/belief.pt

``collect``: the learner (a greedy ``agents.nn`` checkpoint, default ``agents/zoo/ens5-2026-12-05.safetensors``, the
network shipped in sessions 21-27) plays chair ``i % 4`` of table ``i`` against an opponent at the other three
(default ``agents.rule:make``: the states of the 1v3 evaluation); at each of its own turns (``PH_TURN``) the
observation, the legal mask and the concealed tiles of
the next, the opposite and the previous seat (``int8[3, 34]``, read from the table: training labels only) are
kept. ``fit``: a copy of the learner's network (its tower, initialised from the learner) with a head that gives,
per other seat and tile, the probabilities of holding at least 1, 2, 3 and 4 copies (binary cross-entropy). The
expected count of a tile is the sum of the four. Printed: the held-out loss against the uniform prior's (each
hidden copy equally likely in each hand or the wall).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents import nn as ann  # noqa: E402
from mjenv import game as G  # noqa: E402
from mjenv.policy import load_policy  # noqa: E402
from mjenv.rules import RuleConfig  # noqa: E402
from mjenv.vector import VectorEnv  # noqa: E402
from train.bc import pack_masks, unpack_masks  # noqa: E402


def collect(checkpoint: str, opponent: str, decisions: int, *, num_envs: int = 1024, seed: int = 0,
            threads: int = 2, progress: bool = True) -> dict[str, np.ndarray]:  # fmt: skip
    """The learner's own-turn observations and the other seats' hands (module docstring)."""
    ann.set_torch_threads(threads)
    learner = ann.make(num_envs, seed, checkpoint=checkpoint, greedy=True)
    opp = load_policy(opponent, num_envs, seed + 1)
    env = VectorEnv(
        num_envs, seed=seed, rules=RuleConfig(illegal="raise"), threads=threads, obs_dtype=np.uint8
    )
    env.reset()
    chair = np.arange(num_envs) % 4
    obs = np.zeros((decisions, env.obs.shape[1]), np.uint8)
    masks = np.zeros((decisions, 14), np.uint8)
    hands = np.zeros((decisions, 3, 34), np.int8)
    pool = np.zeros((decisions, 34), np.int8)  # hidden copies (hands, wall; no kong faces): the prior's loss
    have = 0
    bar = tqdm(total=decisions, disable=not progress, unit="decision", desc="collect")
    while have < decisions:
        lrn = np.flatnonzero(env.seats == chair)
        oth = np.flatnonzero(env.seats != chair)
        a = np.zeros(num_envs, np.int64)
        if lrn.size:
            a[lrn] = learner(env.obs[lrn], env.masks[lrn], env.seats[lrn])
            sel = lrn[env.states[lrn, G.PHASE] == G.PH_TURN][: decisions - have]
            if sel.size:
                ids = slice(have, have + sel.size)
                obs[ids] = env.obs[sel]
                masks[ids] = pack_masks(env.masks[sel])
                hands[ids], pool[ids] = hidden_counts(env.states[sel], chair[sel])
                have += sel.size
                bar.update(sel.size)
        if oth.size:
            a[oth] = opp(env.obs[oth], env.masks[oth], env.seats[oth])
        env.step(a)
    bar.close()
    return {"obs": obs, "masks": masks, "hands": hands, "pool": pool}


def hidden_counts(states: np.ndarray, chairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(hands int64[N, 3, 34], pool int64[N, 34])``: the concealed tiles of the next, the opposite and the
    previous seat of ``chairs[i]`` at table ``states[i]``, and the hidden copies of each tile (those hands and the
    wall's suited and honour tiles; no kong faces). Reads hidden information: labels and diagnostics only."""
    n = states.shape[0]
    hands = np.zeros((n, 3, 34), np.int64)
    for r in range(3):
        seat = (chairs + 1 + r) % 4
        hands[:, r] = np.take_along_axis(states, G.HAND + 34 * seat[:, None] + np.arange(34), axis=1)
    pool = hands.sum(axis=1)
    for i, st in enumerate(states):
        pool[i] += np.bincount(st[G.WALL + st[G.FRONT] : G.WALL + st[G.BACK]], minlength=42)[:34]
    return hands, pool


def by_seat(rel: np.ndarray, chairs: np.ndarray) -> np.ndarray:
    """``float64[N, 4, 34]`` by absolute seat from ``rel[N, 3, 34]`` of the next, opposite and previous seat of
    ``chairs`` (the row of ``chairs[i]`` itself zero): the ``expect`` of :func:`mjenv.determinize.determinize_rows`."""
    out = np.zeros((rel.shape[0], 4, 34))
    for r in range(3):
        out[np.arange(rel.shape[0]), (chairs + 1 + r) % 4] = rel[:, r]
    return out


class BeliefNet(nn.Module):
    """The learner's planes network with a belief head: ``forward(planes, scal) -> logits [N, 3, 4, 34]`` of
    "the next / opposite / previous seat holds at least k+1 copies of tile t"."""

    def __init__(self, net: ann.PlanesNet) -> None:
        super().__init__()
        self.net = net
        self.head = nn.Conv1d(net.config.channels, 12, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, planes: torch.Tensor, scal: torch.Tensor) -> torch.Tensor:
        n = self.net
        planes, scal = planes.float(), scal.float()
        k, j = n.n_planes, n.n_scalars
        glob = scal[:, :j] * n.inv_scale
        x = n.stem(planes[:, :k]) + n.tile_embed + n.scalar_in(glob).unsqueeze(2)
        x = ann.tiles_to_row(x)
        for block in n.tower:
            x = x + block(x) * n.gap
        x = torch.relu(ann.row_to_tiles(x))
        offer = torch.bmm(x, planes[:, ann.P.P_OFFER].unsqueeze(2)).squeeze(2)
        h = n.body(torch.cat([n.tile_sum(x).flatten(1), offer, glob], dim=1))
        return self.head(torch.relu(x + n.ctx(h).unsqueeze(2))).view(-1, 3, 4, 34)

    @torch.no_grad()
    def expect(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``float64[N, 3, 34]``: the expected count of each tile in the next, opposite and previous seat's hand."""
        if obs.shape[0] == 0:
            return np.zeros((0, 3, 34))
        p = torch.sigmoid(self(*self.net.features(obs, masks)))
        return p.sum(dim=2).double().numpy()


def _targets(hands: np.ndarray) -> np.ndarray:
    return (hands[:, :, None, :] > np.arange(4)[None, None, :, None]).astype(np.float32)


def fit(path: str, out: str, *, checkpoint: str = "agents/zoo/ens5-2026-12-05.safetensors", epochs: int = 2,
        lr: float = 1e-3, batch_size: int = 1024, holdout: float = 0.05, seed: int = 0, threads: int = 2,
        progress: bool = True) -> dict[str, object]:  # fmt: skip
    """Fit :class:`BeliefNet` (module docstring); saves its state dict and the checkpoint it started from."""
    ann.set_torch_threads(threads)
    torch.manual_seed(seed)
    with np.load(path) as z:
        obs, masks, hands, pool = z["obs"], unpack_masks(z["masks"]), z["hands"], z["pool"]
    model = BeliefNet(ann.load(checkpoint))
    n = obs.shape[0]
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    n_hold = max(1, round(holdout * n))
    hold, tr = np.sort(perm[:n_hold]), perm[n_hold:]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps = epochs * ((tr.size + batch_size - 1) // batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1 - s / steps)
    bce = nn.BCEWithLogitsLoss()
    t0 = time.perf_counter()
    with tqdm(total=steps, disable=not progress, unit="batch", desc="fit") as bar:
        for _ in range(epochs):
            order = rng.permutation(tr)
            for s in range(0, order.size, batch_size):
                r = np.sort(order[s : s + batch_size])
                logits = model(*model.net.features(obs[r], masks[r]))
                loss = bce(logits, torch.from_numpy(_targets(hands[r])))
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
                bar.update(1)
    model.eval()
    with torch.no_grad():
        tot = tot0 = 0.0
        for s in range(0, hold.size, 8192):
            r = hold[s : s + 8192]
            logits = model(*model.net.features(obs[r], masks[r]))
            y = torch.from_numpy(_targets(hands[r]))
            tot += nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="sum").item()
            # the uniform prior: each hidden copy of t in a given hand with probability size / hidden
            p0 = torch.from_numpy(_uniform(pool[r], hands[r])).clamp(1e-6, 1 - 1e-6)
            tot0 += nn.functional.binary_cross_entropy(p0, y, reduction="sum").item()
    rep = {"decisions": n, "held_out": int(hold.size), "seconds": time.perf_counter() - t0,
           "held_out_bce": tot / (hold.size * 408), "uniform_bce": tot0 / (hold.size * 408), "checkpoint": checkpoint}  # fmt: skip
    torch.save({"state_dict": model.state_dict(), "checkpoint": checkpoint}, out)
    Path(out).with_suffix(".json").write_text(json.dumps(rep, indent=1))
    return rep


_HYPER = None


def _uniform(pool: np.ndarray, hands: np.ndarray) -> np.ndarray:
    """``[N, 3, 4, 34]``: P(seat holds >= k+1 copies of t) under the uniform prior: a hand of ``size`` tiles drawn
    from the ``hidden`` tiles (the three hands and the wall), ``pool[t]`` of them copies of t (hypergeometric)."""
    global _HYPER
    if _HYPER is None:  # [K, s, H, k]: P(X >= k + 1) for X ~ Hypergeometric(H, K, s)
        from math import comb

        _HYPER = np.zeros((5, 15, 145, 4))
        for big_k in range(5):
            for sz in range(15):
                for h in range(max(big_k, sz), 145):
                    pm = [
                        comb(big_k, m) * comb(h - big_k, sz - m) / comb(h, sz)
                        for m in range(min(big_k, sz) + 1)
                    ]
                    for k in range(4):
                        _HYPER[big_k, sz, h, k] = sum(pm[k + 1 :])
    size = hands.sum(axis=2).astype(np.int64)  # [N, 3]
    hidden = pool.sum(axis=1).astype(np.int64)  # [N]
    out = _HYPER[pool[:, None, :].astype(np.int64), size[:, :, None], hidden[:, None, None]]  # [N, 3, 34, 4]
    return out.transpose(0, 1, 3, 2).astype(np.float32)


def load_belief(path: str) -> BeliefNet:
    """A :class:`BeliefNet` saved by :func:`fit`."""
    d = torch.load(path, weights_only=True)
    model = BeliefNet(ann.load(d["checkpoint"]))
    model.load_state_dict(d["state_dict"])
    return model.eval()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--checkpoint", default="agents/zoo/ens5-2026-12-05.safetensors")
    c.add_argument("--opponent", default="agents.rule:make")
    c.add_argument("--decisions", type=int, default=200_000)
    c.add_argument("--num-envs", type=int, default=1024)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--threads", type=int, default=2)
    c.add_argument("--out", required=True)
    c.add_argument("--no-progress", action="store_true")
    f = sub.add_parser("fit")
    f.add_argument("path")
    f.add_argument("--out", required=True)
    f.add_argument("--checkpoint", default="agents/zoo/ens5-2026-12-05.safetensors")
    f.add_argument("--epochs", type=int, default=2)
    f.add_argument("--lr", type=float, default=1e-3)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--threads", type=int, default=2)
    f.add_argument("--no-progress", action="store_true")
    args = ap.parse_args()
    if args.cmd == "collect":
        if args.decisions < 1 or args.num_envs < 4:
            raise SystemExit("need --decisions >= 1 and --num-envs >= 4")
        d = collect(args.checkpoint, args.opponent, args.decisions, num_envs=args.num_envs, seed=args.seed,
                    threads=args.threads, progress=not args.no_progress)  # fmt: skip
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.out, **d)
        print(json.dumps({"decisions": int(d["obs"].shape[0]), "out": args.out}))
    else:
        rep = fit(args.path, args.out, checkpoint=args.checkpoint, epochs=args.epochs, lr=args.lr, seed=args.seed,
                  threads=args.threads, progress=not args.no_progress)  # fmt: skip
        print(json.dumps(rep, indent=1))


if __name__ == "__main__":
    main()
