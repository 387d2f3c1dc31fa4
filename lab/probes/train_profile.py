"""Where the PPO loop's CPU time goes: ``PYTHONPATH=. python -m lab.probes.train_profile [--threads 1]``.

With the default :class:`train.ppo.PPOConfig` (``--threads`` Numba and torch threads; 1 by default, so that the
CPU seconds measure work rather than a second thread's waiting on a shared machine) it collects one warm-up
rollout, then

1. **collection**: one rollout under ``cProfile``, the functions with the most own time (the feature kernel
   ``nn_features_kernel``, torch's ``linear``, the rule agent's kernels, the env step, the loop itself);
2. **update**: ``--minibatches`` PPO minibatch steps of the default size on that rollout (forward, the loss of
   ``train.ppo.ppo_losses``, backward, gradient clipping, Adam), each phase's CPU milliseconds (medians), and
   every autograd node of the backward timed with hooks (the medians of the costliest ones, with the input
   shape of the ``addmm`` nodes).

Figures are CPU time (``time.process_time``) where stated, wall time for ``cProfile``; on a loaded machine
both are inflated, compare within one run.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import statistics
import sys
import tempfile
import time

import torch


def _walk(fn, seen, out):
    stack = [fn]
    while stack:
        f = stack.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        out.append(f)
        stack.extend(n for n, _ in f.next_functions)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="Numba and torch threads (default 1)")
    ap.add_argument("--minibatches", type=int, default=15, help="minibatch steps timed (default 15)")
    ap.add_argument("--top", type=int, default=15, help="rows of each table (default 15)")
    args = ap.parse_args(argv)
    if args.threads < 1 or args.minibatches < 1:
        ap.error("--threads and --minibatches must be >= 1")
    from train.ppo import PPOConfig, Trainer, masked_logits, ppo_losses

    with tempfile.TemporaryDirectory() as tmp:
        cfg = PPOConfig(run_dir=tmp, eval_every=0, progress=False, value_warmup=0, threads=args.threads,
                        torch_threads=args.threads)  # fmt: skip
        tr = Trainer(cfg)
    timers = dict.fromkeys(("env_s", "inference_s", "gae_s", "update_s", "other_s"), 0.0)
    col = tr.col
    col.collect(tr.net, tr.pool, tr.gen, tr.device, timers)  # warm-up
    prof = cProfile.Profile()
    c0 = time.process_time()
    prof.enable()
    batch = col.collect(tr.net, tr.pool, tr.gen, tr.device, timers)
    prof.disable()
    cpu_collect = time.process_time() - c0
    k = batch["actions"].shape[0]
    print(f"collection: {cfg.num_envs} tables x {cfg.rollout_steps} steps, {k} learner decisions, "
          f"{cpu_collect:.3f} CPU-s; own time (wall) of the costliest functions:")  # fmt: skip
    st = pstats.Stats(prof)
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[: args.top]
    for (file, line, name), (_, ncalls, tottime, _, _) in rows:
        print(f"  {tottime:7.3f} s  {ncalls:5d} calls  {name} ({file.rsplit('/', 1)[-1]}:{line})")

    net, opt = tr.net, tr.opt
    mb = min(cfg.minibatch_size, k)
    g = torch.Generator().manual_seed(0)
    idx_all = [torch.randperm(k, generator=g)[:mb] for _ in range(args.minibatches + 2)]
    tile_all, glob_all = torch.from_numpy(batch["tile"]), torch.from_numpy(batch["glob"])
    illegal_all = ~torch.from_numpy(batch["masks"])
    act_all, old_all = torch.from_numpy(batch["actions"]), torch.from_numpy(batch["logp"])
    adv_all, ret_all = torch.from_numpy(batch["advantages"]), torch.from_numpy(batch["returns"])
    phases: dict[str, list[float]] = collections.defaultdict(list)
    nodes: dict[str, list[float]] = collections.defaultdict(list)
    T = time.process_time
    for it, idx in enumerate(idx_all):
        t0 = T()
        tile, glob, illegal = tile_all.index_select(0, idx), glob_all.index_select(0, idx), illegal_all[idx]
        t1 = T()
        logits, v = masked_logits(net, tile, glob, illegal)
        t2 = T()
        pg, v_loss, entropy, _, _ = ppo_losses(
            logits, v, illegal, act_all[idx], old_all[idx], adv_all[idx], ret_all[idx], cfg.clip_coef
        )
        loss = pg - cfg.ent_coef * entropy + cfg.vf_coef * v_loss
        t3 = T()
        opt.zero_grad(set_to_none=True)
        graph: list = []
        _walk(loss.grad_fn, set(), graph)
        starts: dict[str, float] = {}
        for j, nd in enumerate(graph):
            if type(nd).__name__ == "AccumulateGrad":
                continue
            shape = tuple(nd._saved_mat1.shape) if nd.name() == "AddmmBackward0" else ""
            key = f"#{j:02d} {nd.name()} {shape}"
            nd.register_prehook(lambda _g, key=key, st=starts: st.__setitem__(key, T()))
            if it >= 2:
                nd.register_hook(lambda _gi, _go, key=key, st=starts: nodes[key].append(T() - st[key]))
        t4 = T()
        loss.backward()
        t5 = T()
        torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
        t6 = T()
        opt.step()
        t7 = T()
        if it >= 2:  # the first two are warm-up
            for name, dt in (("gather", t1 - t0), ("forward", t2 - t1), ("loss", t3 - t2), ("backward", t5 - t4),
                             ("clip", t6 - t5), ("adam", t7 - t6), ("total", t7 - t0 - (t4 - t3))):  # fmt: skip
                phases[name].append(dt)
    med = {name: 1e3 * statistics.median(v) for name, v in phases.items()}
    print(f"\nupdate: minibatch {mb}, {args.minibatches} steps, {args.threads} torch thread(s); CPU ms (medians): "
          + ", ".join(f"{n} {v:.1f}" for n, v in med.items()))  # fmt: skip
    print(
        "backward nodes, CPU ms (medians; their own work, the gradient accumulation between them not counted):"
    )
    top = sorted(((1e3 * statistics.median(v), key) for key, v in nodes.items()), reverse=True)[: args.top]
    for ms, key in top:
        print(f"  {ms:7.2f} ms  {key}")
    return {"collect_cpu_s": cpu_collect, "update_ms": med, "nodes_ms": {k_: m for m, k_ in top}}


if __name__ == "__main__":
    main(sys.argv[1:])
