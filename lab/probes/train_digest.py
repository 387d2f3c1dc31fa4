"""Digest of seeded short PPO runs, to check that a speed change is bitwise neutral: ``python -m lab.probes.train_digest``.

Runs :func:`train.ppo.train` twice from fixed seeds: ``tiny`` (the settings of ``tests/test_train.py``: 16 tables,
every opponent kind, 1 + 1 threads) and ``mid`` (64 tables x 32 steps, the default network and opponents, 2 + 2
threads, one value-warm-up update), and prints a SHA-256 prefix over every tensor of the final checkpoint
(network, optimizer, pool, env state, RNG states) with the last losses. Run it in two checkouts
(``PYTHONPATH=<checkout>``) and compare: the same digests mean the same training, bit for bit, on this machine.

``state`` leaves out the VectorEnv's scratch buffer ``env._work``: with 2 Numba threads its leftover contents
depend on which thread stepped which table, so in checkouts whose checkpoints stored it (before
``VectorEnv.SCRATCH_ARRAYS``) ``ckpt`` (every tensor) of ``mid`` differed from run to run of the same code
(measured: 4 different values in 6 runs, every other tensor the same). Checkpoints no longer store it, so on
this code ``ckpt`` equals ``state``; compare ``state`` against older checkouts.
"""

from __future__ import annotations

import hashlib
import json
import tempfile

import torch

from train.ppo import PPOConfig, read_checkpoint, train

TINY = {
    "num_envs": 16, "rollout_steps": 16, "threads": 1, "torch_threads": 1, "channels": 4, "hidden": 16,
    "updates": 4, "minibatch_size": 64, "epochs": 2, "pool_every": 1, "pool_size": 2, "eval_every": 0,
    "save_every": 1, "progress": False, "opponents": ("rule", "pool", "random"), "opponent_prob": 0.5,
    "min_fan": 4, "value_warmup": 0,
}  # fmt: skip
MID = {
    "num_envs": 64, "rollout_steps": 32, "threads": 2, "torch_threads": 2, "updates": 3, "minibatch_size": 512,
    "eval_every": 0, "save_every": 3, "progress": False, "value_warmup": 1,
}  # fmt: skip

SCRATCH = frozenset({"env._work"})  # scratch of the env kernels: contents depend on the thread schedule


def main() -> dict:
    out = {}
    for name, kw in (("tiny", TINY), ("mid", MID)):
        with tempfile.TemporaryDirectory() as d:
            r = train(PPOConfig(run_dir=d, **kw))
            tensors, _ = read_checkpoint(f"{d}/checkpoint.safetensors")
            h, hs = hashlib.sha256(), hashlib.sha256()
            for k in sorted(tensors):
                b = tensors[k].contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
                for x in (h, hs) if k not in SCRATCH else (h,):
                    x.update(k.encode())
                    x.update(b)
            out[name] = {
                "state": hs.hexdigest()[:16],
                "ckpt": h.hexdigest()[:16],
                "decisions": r["counters"]["decisions"],
                "last": {k: r["last"].get(k) for k in ("pg_loss", "v_loss", "entropy", "approx_kl")},
            }
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
