"""Lab probe (issue 25): one step of policy iteration, by rollouts from the learner's real decisions.

    python lab/probes/rollout_labels.py collect --states 200000 --out runs/s24/roll.npz
    python lab/probes/rollout_labels.py stats runs/s24/roll.npz
    python lab/probes/rollout_labels.py fit runs/s24/roll.npz --out runs/s24/qnet.safetensors
    python -m mjenv eval --agent new=lab.probes.rollout_labels:improved \
        --agent-opt new.qnet=runs/s24/qnet.safetensors --agent base=agents.nn:ens5_baseline --seating 1v3 ...

The learner (a greedy ``agents.nn`` checkpoint, default ``agents/zoo/ens5-2026-12-05.safetensors``, the network
shipped in sessions 21-27) plays chair ``i % 4`` of base table ``i`` against an opponent at the other three
chairs (default ``agents.rule:make``: the states of a 1v3 evaluation). At each of its decisions with more than
one legal action, each of its ``top_k``
most likely legal actions is applied to a copy of the table (``VectorEnv.copy_tables`` into a second env of
``rollout_tables`` tables) and the hand is played out by the same policies; the learner's score of the hand is
recorded per candidate. Every later decision of a rollout is taken from observations only, and the copied
table's hidden state (the other hands, the wall) is a draw from its posterior given the learner's observation,
so each return is an unbiased sample of ``Q(observation, candidate)`` of the learner's policy; the candidates
of one decision share the hidden state and every policy is deterministic, so their differences carry none of
the deal's luck, only the hidden state's. Check built in: the rollout of the learner's own action replays the
base table's hand, so its return equals the base hand's score for the learner (printed as ``replayed``).

The file written (``.npz``): ``obs`` uint8 ``[S, OBS_SIZE]``, ``masks`` bit-packed ``[S, 14]``, ``cands`` int16
``[S, top_k]`` (-1 past the legal ones; column 0 the learner's action), ``probs`` float32 ``[S, top_k]`` (the
learner's), ``returns`` float32 ``[S, top_k]`` (the learner's score of the hand after each candidate), ``chair``,
``meta``.

``fit`` learns the advantages from them: a copy of the learner's network whose change of logit gaps,
``A(c) = (q[c] - q[c0]) - (s[c] - s[c0])`` (``q`` the copy's logits, ``s`` the learner's, ``c0`` the learner's
action), regresses ``(return[c] - return[c0]) / scale`` (mean squared error; ``A = 0`` at the start). Held-out
states give an unbiased estimate of what acting on it gains: the mean of ``return[c] - return[c0]`` over the
decisions where ``max_c A(c)`` passes a margin. ``improved`` is the policy that does so (the learner's action
unless another of its top-k candidates has ``A`` above ``margin``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents import nn as ann  # noqa: E402
from mjenv.policy import load_policy  # noqa: E402
from mjenv.rules import RuleConfig  # noqa: E402
from mjenv.vector import VectorEnv  # noqa: E402
from train.bc import TYPE_NAMES, dataset_features, decision_types, pack_masks, unpack_masks  # noqa: E402


def collect(
    checkpoint: str, opponent: str, states: int, *, num_envs: int = 256, rollout_tables: int = 4096,
    top_k: int = 3, seed: int = 0, threads: int = 2, progress: bool = True,
) -> dict[str, np.ndarray]:  # fmt: skip
    """The rollout-labelled decisions (module docstring)."""
    ann.set_torch_threads(threads)
    learner = ann.make(max(num_envs, rollout_tables), seed, checkpoint=checkpoint, greedy=True)
    opp = load_policy(opponent, rollout_tables, seed + 1)
    rules = RuleConfig(illegal="raise")
    base = VectorEnv(num_envs, seed=seed, rules=rules, threads=threads, obs_dtype=np.uint8)
    roll = VectorEnv(rollout_tables, seed=seed + 1, rules=rules, threads=threads, obs_dtype=np.uint8,
                     after_schedule="stop")  # fmt: skip
    base.reset()
    roll.reset()
    chair = (np.arange(num_envs) % 4).astype(np.int32)
    k = top_k
    obs_buf = np.zeros((states, base.obs.shape[1]), np.uint8)
    mask_buf = np.zeros((states, 14), np.uint8)
    cands = np.full((states, k), -1, np.int16)
    probs = np.zeros((states, k), np.float32)
    returns = np.full((states, k), np.nan, np.float32)
    actual = np.full(states, np.nan, np.float32)
    chairs = np.zeros(states, np.int8)
    # rollout slots: which state and candidate each holds, whose chair is the learner's, the first action
    in_use = np.zeros(rollout_tables, bool)
    pending = np.zeros(rollout_tables, bool)
    first = np.zeros(rollout_tables, np.int64)
    slot_chair = np.zeros(rollout_tables, np.int32)
    slot_state = np.zeros(rollout_tables, np.int64)
    slot_cand = np.zeros(rollout_tables, np.int64)
    slot_ret = np.zeros(rollout_tables, np.float64)
    hand_states: list[list[int]] = [[] for _ in range(num_envs)]
    hand_ret = np.zeros(num_envs, np.float64)
    have = 0
    n_roll = 0

    def step_roll() -> None:
        nonlocal n_roll
        a = roll.legal_actions[:, 0].astype(np.int64)  # free slots still dealing their first hand: any action
        a[pending] = first[pending]
        todo = in_use & ~pending & roll.active
        lrn = todo & (roll.seats == slot_chair)
        opr = todo & ~lrn
        if lrn.any():
            a[lrn] = learner(roll.obs[lrn], roll.masks[lrn], roll.seats[lrn])
        if opr.any():
            a[opr] = opp(roll.obs[opr], roll.masks[opr], roll.seats[opr])
        pending[:] = False
        roll.step(a)
        slot_ret[in_use] += roll.rewards[in_use, slot_chair[in_use]]
        fin = np.flatnonzero(in_use & roll.terminated)
        returns[slot_state[fin], slot_cand[fin]] = slot_ret[fin]
        in_use[fin] = False
        n_roll += fin.size

    t0 = time.perf_counter()
    obs, masks, seats = base.obs, base.masks, base.seats
    bar = tqdm(total=states, disable=not progress, unit="state", desc="rollouts")
    while True:
        lrn = np.flatnonzero(seats == chair)
        a = np.empty(num_envs, np.int64)
        if lrn.size:
            act, info = learner.act_with_info(obs[lrn], masks[lrn], seats[lrn])
            a[lrn] = act
        other = np.flatnonzero(seats != chair)
        if other.size:
            a[other] = opp(obs[other], masks[other], seats[other])
        if have < states and lrn.size:
            sel = np.flatnonzero(base.n_legal[lrn] > 1)[: states - have]
            if sel.size:
                p = np.where(masks[lrn[sel]], info["probs"][sel], -1.0)
                top = np.argsort(-p, axis=1, kind="stable")[:, :k]
                top[:, 0] = a[lrn[sel]]  # the learner's own action first (its argmax)
                nc = np.minimum(base.n_legal[lrn[sel]], k)
                need = int(nc.sum())
                while rollout_tables - in_use.sum() < need:
                    step_roll()
                free = np.flatnonzero(~in_use)[:need]
                ids = have + np.arange(sel.size)
                rows = lrn[sel]
                src = np.repeat(rows, nc)  # one rollout per candidate: table, state and candidate index
                sid = np.repeat(ids, nc)
                cid = np.arange(need) - np.repeat(np.cumsum(nc) - nc, nc)
                for j, t in enumerate(rows):
                    hand_states[t].append(int(ids[j]))
                roll.copy_tables(base, src, free)
                in_use[free] = True
                pending[free] = True
                first[free] = top[sid - have, cid]
                slot_chair[free] = chair[src]
                slot_state[free] = sid
                slot_cand[free] = cid
                slot_ret[free] = 0.0
                present = np.arange(k) < nc[:, None]
                cands[ids] = np.where(present, top, -1)
                probs[ids] = np.where(present, np.take_along_axis(info["probs"][sel], top, axis=1), 0.0)
                obs_buf[ids] = obs[lrn[sel]]
                mask_buf[ids] = pack_masks(masks[lrn[sel]])
                chairs[ids] = chair[lrn[sel]]
                have += sel.size
                bar.update(sel.size)
        if have >= states:
            break
        obs, masks, seats, rewards, term = base.step(a)
        hand_ret += rewards[np.arange(num_envs), chair]
        for t in np.flatnonzero(term):
            actual[hand_states[t]] = hand_ret[t]
            hand_states[t] = []
            hand_ret[t] = 0.0
    while in_use.any():
        step_roll()
    bar.close()
    return {
        "obs": obs_buf, "masks": mask_buf, "cands": cands, "probs": probs, "returns": returns, "actual": actual,
        "chair": chairs, "seconds": np.float64(time.perf_counter() - t0), "rollouts": np.int64(n_roll),
    }  # fmt: skip


def stats(d: dict[str, np.ndarray]) -> dict[str, object]:
    """How often and by how much another candidate beats the learner's action, per decision type."""
    r, c = d["returns"], d["cands"]
    ok = ~np.isnan(d["actual"])
    out: dict[str, object] = {
        "states": int(r.shape[0]),
        "replayed": float(np.mean(r[ok, 0] == d["actual"][ok])) if ok.any() else float("nan"),
        "seconds": float(d["seconds"]),
        "rollouts": int(d["rollouts"]),
    }
    adv = r[:, 1:] - r[:, :1]  # other candidates against the learner's action (nan where absent)
    types = decision_types(c[:, 0].astype(np.int64))
    for t, name in enumerate(TYPE_NAMES):
        m = types == t
        if not m.any():
            continue
        a = adv[m]
        valid = ~np.isnan(a)
        best = np.nanmax(np.where(valid, a, -np.inf), axis=1)
        out[name] = {
            "n": int(m.sum()),
            "any_differs": float(np.mean((np.abs(np.where(valid, a, 0)) > 0).any(axis=1))),
            "best_other_better": float(np.mean(best > 0)),
            "best_other_worse": float(np.mean(np.where(valid, a, 0).min(axis=1) < 0)),
            "mean_adv": [float(np.nanmean(a[:, j])) for j in range(a.shape[1])],
            "sd_adv": [float(np.nanstd(a[:, j])) for j in range(a.shape[1])],
        }
    return out


def _gaps(logits: torch.Tensor, cands: torch.Tensor) -> torch.Tensor:
    """``logits[c] - logits[c0]`` for the candidates ``cands`` ``[N, k]`` (column 0 ``c0``; -1 entries give 0)."""
    idx = cands.clamp(min=0)
    g = logits.gather(1, idx) - logits.gather(1, idx[:, :1])
    return torch.where(cands >= 0, g, torch.zeros_like(g))


def fit(
    path: str, out: str, *, checkpoint: str = "agents/zoo/ens5-2026-12-05.safetensors", scale: float = 32.0,
    epochs: int = 2, lr: float = 3e-4, batch_size: int = 512, holdout: float = 0.05, seed: int = 0,
    threads: int = 2, progress: bool = True,
) -> dict[str, object]:  # fmt: skip
    """Fit the advantage network (module docstring) and estimate on held-out states what acting on it gains."""
    ann.set_torch_threads(threads)
    with np.load(path) as z:
        d = {k: z[k] for k in ("obs", "masks", "cands", "returns")}
    if np.isnan(d["returns"][d["cands"] >= 0]).any():
        raise ValueError(f"{path}: a candidate without its return (an interrupted collection?)")
    ok = np.ones(d["cands"].shape[0], bool)
    d = {k: v[ok] for k, v in d.items()}
    d["actions"] = d["cands"][:, 0].astype(np.int64)
    student = ann.load(checkpoint)
    q = ann.load(checkpoint)
    feats = dataset_features(d, config=student.config, progress=progress)
    n = d["actions"].shape[0]
    cands = torch.from_numpy(d["cands"].astype(np.int64))
    ret = torch.from_numpy(np.nan_to_num(d["returns"], nan=0.0))
    target = (ret - ret[:, :1]) / scale
    valid = cands >= 0
    valid[:, 0] = False
    masks = torch.from_numpy(unpack_masks(d["masks"]))
    with torch.no_grad():
        s_gap = torch.cat([_gaps(student.forward_features(*(f[i : i + 8192] for f in feats), masks[i : i + 8192])[0],
                                 cands[i : i + 8192]) for i in range(0, n, 8192)])  # fmt: skip
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    n_hold = max(1, round(holdout * n))
    hold, tr = np.sort(perm[:n_hold]), perm[n_hold:]
    torch.manual_seed(seed)
    opt = torch.optim.Adam(q.parameters(), lr=lr)
    t0 = time.perf_counter()
    steps = epochs * ((tr.size + batch_size - 1) // batch_size)
    losses = []
    with tqdm(total=steps, disable=not progress, unit="batch", desc="fit") as bar:
        for _ in range(epochs):
            order = rng.permutation(tr)
            for s in range(0, order.size, batch_size):
                r = torch.from_numpy(order[s : s + batch_size])
                logits, _ = q.forward_features(*(f[r] for f in feats), masks[r])
                a_hat = _gaps(logits, cands[r]) - s_gap[r]
                err = torch.where(valid[r], a_hat - target[r], torch.zeros_like(a_hat))
                loss = (err**2).sum() / valid[r].sum().clamp(min=1)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                losses.append(loss.item())
                bar.update(1)
    q.eval()
    ht = torch.from_numpy(hold)
    with torch.no_grad():
        a_hat = torch.cat([_gaps(q.forward_features(*(f[ht[i : i + 8192]] for f in feats), masks[ht[i : i + 8192]])[0],
                                 cands[ht[i : i + 8192]]) for i in range(0, hold.size, 8192)]) - s_gap[ht]  # fmt: skip
    v, t = valid[ht], target[ht]
    mse0 = float((t[v] ** 2).mean())
    mse = float(((a_hat - t)[v] ** 2).mean())
    a_hat = torch.where(v, a_hat, torch.full_like(a_hat, -1e9))
    best, arg = a_hat.max(dim=1)
    gain_by_margin = {}
    for margin in (0.0, 0.05, 0.1, 0.2, 0.4):
        sw = best > margin
        realised = (t.gather(1, arg[:, None]).squeeze(1) * scale)[sw]
        gain_by_margin[str(margin)] = {
            "switched": float(sw.float().mean()),
            "gain_per_decision": float(realised.sum() / hold.size),
            "gain_per_switch": float(realised.mean()) if sw.any() else float("nan"),
            "se_per_switch": float(realised.std() / max(1, sw.sum().item()) ** 0.5) if sw.sum() > 1 else float("nan"),
        }  # fmt: skip
    ann.save(q, out)
    rep = {"states": n, "held_out": int(hold.size), "fit_seconds": time.perf_counter() - t0,
           "final_loss": float(np.mean(losses[-200:])), "held_out_mse_zero": mse0, "held_out_mse": mse,
           "held_out_ev": 1 - mse / mse0, "gain_by_margin": gain_by_margin, "scale": scale, "checkpoint": checkpoint}  # fmt: skip
    Path(out).with_suffix(".json").write_text(json.dumps(rep, indent=1))
    return rep


class ImprovedPolicy:
    """The learner's greedy action, unless another of its ``top_k`` most likely legal actions has a fitted
    advantage (``fit``) above ``margin`` (in units of ``scale`` points); then the one of the highest."""

    needs_observations = True

    def __init__(self, student: ann.Net, q: ann.Net, margin: float, top_k: int) -> None:
        self.student, self.q, self.margin, self.top_k = student.eval(), q.eval(), float(margin), int(top_k)

    @torch.no_grad()
    def __call__(self, obs, masks, seats=None):
        m = np.ascontiguousarray(masks, dtype=np.bool_)
        if m.shape[0] == 0:
            return np.zeros(0, np.int64)
        feats = self.student.features(obs, m)
        mt = torch.from_numpy(m)
        s, _ = self.student.forward_features(*feats, mt)
        ql, _ = self.q.forward_features(*feats, mt)
        top = torch.topk(s, self.top_k, dim=1).indices
        legal = mt.gather(1, top)
        cands = torch.where(legal, top, torch.full_like(top, -1))
        a_hat = torch.where(legal, _gaps(ql, cands) - _gaps(s, cands), torch.full(top.shape, -1e9))
        a_hat[:, 0] = self.margin  # the learner's own action wins ties and anything below the margin
        return top.gather(1, a_hat.argmax(dim=1, keepdim=True)).squeeze(1).numpy().astype(np.int64)


def improved(
    num_envs: int, seed: int, qnet: str, student: str = "agents/zoo/ens5-2026-12-05.safetensors", margin: float = 0.0,
    top_k: int = 3,
) -> ImprovedPolicy:  # fmt: skip
    """``lab.probes.rollout_labels:improved``: :class:`ImprovedPolicy` of the files ``student`` and ``qnet``."""
    ann.set_torch_threads(1)
    return ImprovedPolicy(ann.load(student), ann.load(qnet), margin, top_k)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--checkpoint", default="agents/zoo/ens5-2026-12-05.safetensors")
    c.add_argument("--opponent", default="agents.rule:make")
    c.add_argument("--states", type=int, default=100_000)
    c.add_argument("--num-envs", type=int, default=256)
    c.add_argument("--rollout-tables", type=int, default=4096)
    c.add_argument("--top-k", type=int, default=3)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--threads", type=int, default=2)
    c.add_argument("--out", required=True)
    c.add_argument("--no-progress", action="store_true")
    s = sub.add_parser("stats")
    s.add_argument("path")
    f = sub.add_parser("fit")
    f.add_argument("path")
    f.add_argument("--out", required=True)
    f.add_argument("--checkpoint", default="agents/zoo/ens5-2026-12-05.safetensors")
    f.add_argument("--scale", type=float, default=32.0)
    f.add_argument("--epochs", type=int, default=2)
    f.add_argument("--lr", type=float, default=3e-4)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--threads", type=int, default=2)
    f.add_argument("--no-progress", action="store_true")
    args = ap.parse_args()
    if args.cmd == "fit":
        rep = fit(args.path, args.out, checkpoint=args.checkpoint, scale=args.scale, epochs=args.epochs, lr=args.lr,
                  seed=args.seed, threads=args.threads, progress=not args.no_progress)  # fmt: skip
        print(json.dumps(rep, indent=1))
        return
    if args.cmd == "collect":
        if (
            args.states < 1
            or args.top_k < 2
            or args.num_envs < 1
            or args.rollout_tables < args.num_envs * args.top_k
        ):
            raise SystemExit("need --states >= 1, --top-k >= 2, --rollout-tables >= num-envs * top-k")
        d = collect(args.checkpoint, args.opponent, args.states, num_envs=args.num_envs,
                    rollout_tables=args.rollout_tables, top_k=args.top_k, seed=args.seed, threads=args.threads,
                    progress=not args.no_progress)  # fmt: skip
        meta = {k: v for k, v in vars(args).items() if k not in ("cmd", "no_progress")}
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.out, **d, meta=np.array(json.dumps(meta)))
        print(json.dumps(stats(d), indent=1))
    else:
        with np.load(args.path) as z:
            print(json.dumps(stats(dict(z)), indent=1))


if __name__ == "__main__":
    main()
