"""Lab probe (issue 25): is a search over the shipped network stronger than the network? Perfect-information
Monte Carlo (PIMC) at the network's uncertain turns, evaluated head to head against the network alone.

    python lab/probes/pimc.py --walls 500 --dets 32 --seed 1 --out runs/s27/pimc.npz

The learner (a greedy ``agents.nn`` checkpoint, default ``agents/zoo/ens5-2026-12-05.safetensors``, the network
shipped in sessions 21-27) plays chair ``i % 4`` of table ``i`` against an opponent at the other three chairs
(default ``agents.rule:make``), every wall at four tables (the learner in each chair once, as in the 1v3
duplicate evaluation), one hand per table. At each of its own turns (``PH_TURN``: discards, kongs, a
self-drawn win) where its most likely legal action has probability below
``--tau``, the search takes its ``--top-k`` most likely legal actions (those of probability at least
``--min-prob``), and for each of ``--dets`` determinizations (:mod:`mjenv.determinize`: the hidden tiles redealt,
the same redeal for every candidate) plays the hand out from each candidate with the same policies
(``VectorEnv.copy_tables`` into a rollout env). It then plays the candidate of the highest mean return (the
network's own action on ties). Claim decisions are not searched (the redeal needs the seat's own turn).

The same walls are played twice, by the network alone and with the search, so each wall gives a paired
difference (the hands are the same until the first decision the search changes). Printed: points per hand of
each (against the opponents), the difference with a 95% CI over walls, and what the search saw: decisions
searched per hand, how often it changed the action, and the split-half reliability of its estimates (the
correlation between the advantage of candidate 2 over candidate 1 estimated on the even and on the odd
determinizations: near 0, the estimates are noise; the Spearman-Brown ``2r / (1 + r)`` is the reliability of
the full mean). Written to ``--out``: per searched decision the candidates, the network's probabilities and the
``[top_k, dets]`` returns; per wall the two modes' points.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents import nn as ann  # noqa: E402
from lab.probes.belief import by_seat, hidden_counts, load_belief  # noqa: E402
from mjenv import game as G  # noqa: E402
from mjenv.determinize import determinize_rows  # noqa: E402
from mjenv.policy import load_policy  # noqa: E402
from mjenv.rules import RuleConfig  # noqa: E402
from mjenv.vector import VectorEnv, table_seeds  # noqa: E402
from train.bc import pack_masks  # noqa: E402


def _blended(states: np.ndarray, chairs: np.ndarray, blend: float) -> np.ndarray:
    """``float64[N, 4, 34]``: ``blend`` x the other seats' real tile counts + (1 - blend) x the uniform prior's
    expected counts (hand size x hidden copies / hidden tiles). Reads hidden information: diagnostics only."""
    hands, pool = hidden_counts(states, chairs)
    size = hands.sum(axis=2, keepdims=True)
    uniform = size * (pool / np.maximum(pool.sum(axis=1, keepdims=True), 1))[:, None, :]
    return by_seat(blend * hands + (1 - blend) * uniform, chairs)


def _acting(env: VectorEnv, chair: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The active tables where the learner's chair is to act, and the other active tables."""
    mine = env.seats == chair
    return np.flatnonzero(env.active & mine), np.flatnonzero(env.active & ~mine)


class Search:
    """The rollouts of one batch of searched decisions (module docstring)."""

    def __init__(
        self, learner, opp, rollout_tables: int, dets: int, seed: int, threads: int, keep_hands: bool = False
    ) -> None:
        self.learner, self.opp, self.dets, self.keep_hands = learner, opp, dets, keep_hands
        self.roll = VectorEnv(rollout_tables, seed=seed, rules=RuleConfig(illegal="raise"), threads=threads,
                              obs_dtype=np.uint8, after_schedule="stop")  # fmt: skip
        self.roll.reset()
        self.roll.active[:] = False
        self.rng = np.random.default_rng(seed)
        self.rollouts = 0

    def returns(
        self,
        base: VectorEnv,
        rows: np.ndarray,
        chairs: np.ndarray,
        cands: np.ndarray,
        expect: np.ndarray | None,
    ) -> np.ndarray:
        """``float64[len(rows), k, dets]``: the learner's points of the hand after each candidate ``cands[r, c]``
        (``-1``: none, nan) on each determinization of base table ``rows[r]``."""
        n, k = cands.shape
        d = self.dets
        out = np.full((n, k, d), np.nan)
        det_seed = self.rng.integers(0, 2**62, size=(n, d))
        r_i, c_i, j_i = np.meshgrid(np.arange(n), np.arange(k), np.arange(d), indexing="ij")
        r_i, c_i, j_i = r_i.ravel(), c_i.ravel(), j_i.ravel()
        keep = cands[r_i, c_i] >= 0
        r_i, c_i, j_i = r_i[keep], c_i[keep], j_i[keep]
        cap = self.roll.num_envs
        roll = self.roll
        for s in range(0, r_i.size, cap):
            rr, cc, jj = r_i[s : s + cap], c_i[s : s + cap], j_i[s : s + cap]
            dst = np.arange(rr.size)
            roll.copy_tables(base, rows[rr], dst)
            determinize_rows(
                roll.states, dst, det_seed[rr, jj], None if expect is None else expect[rr], self.keep_hands
            )
            chair = np.full(cap, -1, np.int64)
            chair[dst] = chairs[rr]
            ret = np.zeros(cap)
            a = np.zeros(cap, np.int64)
            a[dst] = cands[rr, cc]
            roll.step(a)
            ret += roll.rewards[np.arange(cap), chair]
            while roll.active.any():
                lrn, oth = _acting(roll, chair)
                a = np.zeros(cap, np.int64)
                if lrn.size:
                    a[lrn] = self.learner(roll.obs[lrn], roll.masks[lrn], roll.seats[lrn])
                if oth.size:
                    a[oth] = self.opp(roll.obs[oth], roll.masks[oth], roll.seats[oth])
                roll.step(a)
                ret += roll.rewards[np.arange(cap), chair]
            out[rr, cc, jj] = ret[dst]
            self.rollouts += rr.size
        return out


def play(
    walls: np.ndarray, learner, opp, search: Search | None, *, tau: float, top_k: int, min_prob: float,
    tables: int, threads: int, progress: bool, belief=None, anchor: float = 0.0, seed: int = 0, blend: float = 0.0,
) -> tuple[np.ndarray, dict[str, list]]:  # fmt: skip
    """Points per hand of the learner on each wall (mean over its four chairs), and the searched decisions (with
    ``anchor > 0`` also their observations and masks, and those of that share of the learner's other decisions)."""
    pts = np.zeros(walls.size)
    log: dict[str, list] = {"cands": [], "probs": [], "returns": [], "obs": [], "masks": [], "anchor_obs": [],
                            "anchor_masks": []}  # fmt: skip
    rng = np.random.default_rng(seed)
    per = tables // 4
    bar = tqdm(total=walls.size, disable=not progress, unit="wall", desc="search" if search else "network")
    for b in range(0, walls.size, per):
        w = walls[b : b + per]
        n = 4 * w.size
        env = VectorEnv(n, seed=np.repeat(w, 4), rules=RuleConfig(illegal="raise"), threads=threads,
                        obs_dtype=np.uint8, after_schedule="stop")  # fmt: skip
        env.reset()
        chair = np.arange(n) % 4
        total = np.zeros(n)
        while env.active.any():
            lrn, oth = _acting(env, chair)
            a = np.zeros(n, np.int64)
            if lrn.size:
                a_l, info = learner.act_with_info(env.obs[lrn], env.masks[lrn], env.seats[lrn])
                a[lrn] = a_l
                if anchor > 0:
                    keep = lrn[rng.random(lrn.size) < anchor]
                    log["anchor_obs"].append(env.obs[keep].copy())
                    log["anchor_masks"].append(pack_masks(env.masks[keep]))
                if search is not None:
                    p = np.where(env.masks[lrn], info["probs"], -1.0)
                    turn = env.states[lrn, G.PHASE] == G.PH_TURN
                    sel = np.flatnonzero(turn & (env.n_legal[lrn] > 1) & (p.max(axis=1) < tau))
                    if sel.size:
                        ps = p[sel]
                        top = np.argsort(-ps, axis=1, kind="stable")[:, :top_k]
                        tp = np.take_along_axis(ps, top, axis=1)
                        cands = np.where(tp >= min_prob, top, -1)
                        cands[:, 0] = top[:, 0]
                        two = (cands[:, 1:] >= 0).any(axis=1)
                        sel, cands, tp = sel[two], cands[two], tp[two]
                        if sel.size:
                            rows = lrn[sel]
                            ex = None
                            if blend > 0:  # diagnostic: a belief of known quality, from the real hands
                                ex = _blended(env.states[rows], chair[rows], blend)
                            elif belief is not None:  # the belief model's expected hands, by absolute seat
                                ex = by_seat(belief.expect(env.obs[rows], env.masks[rows]), chair[rows])
                            r = search.returns(env, rows, chair[rows], cands, ex)
                            mean = np.nanmean(r, axis=2)
                            mean = np.where(cands >= 0, mean, -np.inf)
                            best = np.where(
                                (mean > mean[:, :1] + 1e-9).any(axis=1), np.argmax(mean, axis=1), 0
                            )
                            a[rows] = cands[np.arange(rows.size), best]
                            log["cands"].append(cands.astype(np.int16))
                            log["probs"].append(tp.astype(np.float32))
                            log["returns"].append(r.astype(np.float32))
                            if anchor > 0:
                                log["obs"].append(env.obs[rows].copy())
                                log["masks"].append(pack_masks(env.masks[rows]))
            if oth.size:
                a[oth] = opp(env.obs[oth], env.masks[oth], env.seats[oth])
            env.step(a)
            total += env.rewards[np.arange(n), chair]
        pts[b : b + w.size] = total.reshape(-1, 4).mean(axis=1)
        bar.update(w.size)
    bar.close()
    return pts, log


def reliability(cands: np.ndarray, returns: np.ndarray) -> dict[str, float]:
    """Split-half correlation of the advantage of candidate 2 over candidate 1 (module docstring)."""
    ok = cands[:, 1] >= 0
    adv = returns[ok, 1, :] - returns[ok, 0, :]
    a, b = adv[:, 0::2].mean(axis=1), adv[:, 1::2].mean(axis=1)
    r = float(np.corrcoef(a, b)[0, 1]) if a.size > 2 else float("nan")
    full = adv.mean(axis=1)
    return {
        "pairs": int(a.size), "split_half_r": r, "spearman_brown": 2 * r / (1 + r) if r > -1 else float("nan"),
        "sd_single_det": float(adv.std()), "sd_of_means": float(full.std()), "mean_adv": float(full.mean()),
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", default="agents/zoo/ens5-2026-12-05.safetensors")
    ap.add_argument("--opponent", default="agents.rule:make")
    ap.add_argument("--walls", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0, help="walls: mjenv.vector.table_seeds(seed, walls)")
    ap.add_argument("--dets", type=int, default=32, help="determinizations per candidate")
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument(
        "--tau", type=float, default=0.9, help="search where the network's top probability is below"
    )
    ap.add_argument(
        "--min-prob", type=float, default=0.05, help="candidates beyond the first need this probability"
    )
    ap.add_argument("--tables", type=int, default=512, help="base tables (4 per wall)")
    ap.add_argument("--rollout-tables", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--keep-hands",
        action="store_true",
        help="diagnostic only (reads the hidden hands): redraw only the wall's order",
    )
    ap.add_argument("--belief", default=None, help="a lab/probes/belief.py model: redeal the hands by it")
    ap.add_argument(
        "--labels",
        type=float,
        default=0.0,
        help="label mode: play with the search only, and write the searched decisions' observations "
        "and masks, and this share of the learner's other decisions (the anchor of pimc_distil.py)",
    )
    ap.add_argument(
        "--oracle-blend",
        type=float,
        default=0.0,
        help="diagnostic only (reads the hidden hands): redeal by this blend of the real hands' counts "
        "and the uniform prior's",
    )
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args()
    if args.walls < 1 or args.dets < 2 or args.top_k < 2 or args.tables < 4 or args.rollout_tables < 1:
        raise SystemExit("need --walls >= 1, --dets >= 2, --top-k >= 2, --tables >= 4, --rollout-tables >= 1")
    if not 0 < args.tau <= 1 or not 0 <= args.min_prob < 1:
        raise SystemExit("need 0 < --tau <= 1 and 0 <= --min-prob < 1")
    if not 0 <= args.oracle_blend <= 1:
        raise SystemExit("need 0 <= --oracle-blend <= 1")
    if args.oracle_blend > 0 and (args.belief or args.keep_hands):
        raise SystemExit("--oracle-blend is its own redeal: give it without --belief and --keep-hands")
    ann.set_torch_threads(args.threads)
    walls = table_seeds(args.seed, args.walls)
    cap = max(args.tables, args.rollout_tables)
    learner = ann.make(cap, args.seed, checkpoint=args.checkpoint, greedy=True)
    opp = load_policy(args.opponent, cap, args.seed + 1)
    kw = dict(tau=args.tau, top_k=args.top_k, min_prob=args.min_prob, tables=args.tables, threads=args.threads,
              progress=not args.no_progress)  # fmt: skip
    t0 = time.perf_counter()
    base = np.full(walls.size, np.nan)
    if args.labels <= 0:
        base, _ = play(walls, learner, opp, None, **kw)
    t1 = time.perf_counter()
    search = Search(
        learner, opp, args.rollout_tables, args.dets, args.seed + 2, args.threads, args.keep_hands
    )
    belief = load_belief(args.belief) if args.belief else None
    srch, log = play(
        walls,
        learner,
        opp,
        search,
        belief=belief,
        anchor=args.labels,
        seed=args.seed + 3,
        blend=args.oracle_blend,
        **kw,
    )
    t2 = time.perf_counter()
    diff = srch - base
    half = 1.96 * diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else float("nan")
    cands = np.concatenate(log["cands"]) if log["cands"] else np.zeros((0, args.top_k), np.int16)
    rets = (
        np.concatenate(log["returns"]) if log["returns"] else np.zeros((0, args.top_k, args.dets), np.float32)
    )
    probs = np.concatenate(log["probs"]) if log["probs"] else np.zeros((0, args.top_k), np.float32)
    mean = np.where(cands >= 0, np.nanmean(rets, axis=2) if rets.size else 0.0, -np.inf)
    changed = (mean > mean[:, :1] + 1e-9).any(axis=1) if cands.size else np.zeros(0, bool)
    rep = {
        "walls": int(args.walls), "hands": int(4 * args.walls), "seconds_network": t1 - t0, "seconds_search": t2 - t1,
        "network_points_per_hand": float(base.mean()), "search_points_per_hand": float(srch.mean()),
        "search_minus_network": float(diff.mean()), "ci95": [float(diff.mean() - half), float(diff.mean() + half)],
        "walls_differing": float(np.mean(diff != 0)), "searched_per_hand": cands.shape[0] / (4 * args.walls),
        "changed_share": float(changed.mean()) if changed.size else float("nan"), "rollouts": search.rollouts,
        **(reliability(cands, rets) if cands.shape[0] > 2 else {}),
        "settings": {k: v for k, v in vars(args).items() if k != "no_progress"},
    }  # fmt: skip
    print(json.dumps(rep, indent=1))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        extra = {}
        if args.labels > 0:
            extra = {k: np.concatenate(log[k]) for k in ("obs", "masks", "anchor_obs", "anchor_masks")}
        np.savez_compressed(args.out, cands=cands, probs=probs, returns=rets, network=base, search=srch,
                            report=np.array(json.dumps(rep)), **extra)  # fmt: skip


if __name__ == "__main__":
    main()
