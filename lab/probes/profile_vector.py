"""Where the vector env's time goes: engine kernels per table-step, numpy policy, Python overhead.

Rules
-----
Not a rules module (a profile of :mod:`mjenv.vector` and the engine kernels it calls).

Specification in mjenv
----------------------
``PYTHONPATH=. python lab/probes/profile_vector.py [--tables N] [--seconds S] [--json PATH]`` prints

1. the batched loop split into the numpy random policy, ``VectorEnv.step`` (the parallel kernel plus input
   checks) and the rest of the Python loop, in wall and process-CPU seconds;
2. the CPU cost of each per-table engine kernel, measured single-threaded inside Numba over a corpus of states
   reached by random play (so no Python in between): ``legal_mask_kernel``, ``step_kernel`` (split by the kind
   of decision: a discard, another turn action, a claim/rob answer), ``observe_kernel``, and one hand's
   ``reset_kernel``; on a corpus of 256 states that stays in the caches (the kernels' compute) and one of
   20000 states that does not (plus the memory latency a large batch meets when nothing is prefetched);
3. the implied ceiling: decisions per CPU-second of the kernels alone.

CPU seconds (``time.process_time``) are used for the kernel figures because the machine is shared: they say
what the work costs, whatever share of a core the process got.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numba
import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv._jit import njit
from mjenv.observation import OBS_SIZE, observe_kernel
from mjenv.vector import VectorEnv, random_legal_actions, warmup

# The kernels below freeze mjenv.game's state offsets at compile time, and numba's on-disk cache does not
# see changes in other files: this file is edited with every change of the state layout (2026-11-30: hot
# fields first, SCRATCH removed) so that stale cached kernels are dropped.


@njit
def _corpus(n_states, seed, suit_win, honor_win):
    """States reached by random legal play (one row each), with the action random play takes there."""
    st = np.zeros(G.STATE_SIZE, np.int32)
    G.reset_kernel(st, seed, 0, 0, G.DEFAULT_RULES, suit_win, honor_win)
    out = np.zeros((n_states, G.STATE_SIZE), np.int32)
    acts = np.zeros(n_states, np.int64)
    mask = np.zeros(G.NUM_ACTIONS, np.bool_)
    rw = np.zeros(4, np.float32)
    x = np.uint64(seed) | np.uint64(1)
    for k in range(n_states):
        n = G.legal_mask_kernel(st, st[G.CUR], mask)
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        j = np.int64(x % np.uint64(n))
        a = 0
        for b in range(G.NUM_ACTIONS):
            if mask[b]:
                if j == 0:
                    a = b
                    break
                j -= 1
        out[k] = st
        acts[k] = a
        G.step_kernel(st, a, rw, suit_win, honor_win)
        if st[G.PHASE] == G.PH_OVER:
            G.reset_kernel(st, G.next_seed_kernel(st), 0, 0, G.DEFAULT_RULES, suit_win, honor_win)
    return out, acts


@njit
def _time_masks(states, reps):
    mask = np.zeros(G.NUM_ACTIONS, np.bool_)
    t = 0
    for _ in range(reps):
        for k in range(states.shape[0]):
            t += G.legal_mask_kernel(states[k], states[k, G.CUR], mask)
    return t


@njit
def _time_observe(states, reps):
    obs = np.zeros(OBS_SIZE, np.float32)
    t = 0.0
    for _ in range(reps):
        for k in range(states.shape[0]):
            observe_kernel(states[k], states[k, G.CUR], obs)
            t += obs[0]
    return t


@njit
def _time_steps(states, acts, sel, scratch, suit_win, honor_win):
    """Step a copy of every selected state with its action (the copy is timed too; see _time_copies)."""
    rw = np.zeros(4, np.float32)
    for k in sel:
        scratch[:] = states[k]
        G.step_kernel(scratch, acts[k], rw, suit_win, honor_win)


@njit
def _time_copies(states, sel, scratch):
    for k in sel:
        scratch[:] = states[k]


@njit
def _time_resets(n, scratch, suit_win, honor_win):
    for k in range(n):
        G.reset_kernel(scratch, k, 0, 0, G.DEFAULT_RULES, suit_win, honor_win)


def _cpu(fn, *args) -> float:
    c = time.process_time()
    fn(*args)
    return time.process_time() - c


def kernel_costs(n_states: int = 20000, seed: int = 1, reps: int | None = None) -> dict:
    """CPU microseconds per call of each engine kernel over a corpus of random-play states.

    A corpus of 256 states (0.7 MB) stays in the caches and gives the kernels' compute; 20000 states (54 MB)
    do not, and add the memory latency a large batch meets without prefetching. ``reps`` defaults to enough
    passes for ~200k calls.
    """
    tab = G.win_tables()
    states, acts = _corpus(n_states, seed, *tab)
    scratch = np.zeros(G.STATE_SIZE, np.int32)
    phase = states[:, G.PHASE]
    kinds = {
        "discard": np.flatnonzero((phase == G.PH_TURN) & (acts < A.CHOW)),
        "other turn action (kong, self-drawn win)": np.flatnonzero((phase == G.PH_TURN) & (acts >= A.CHOW)),
        "claim/rob answer": np.flatnonzero(phase != G.PH_TURN),
    }
    _time_masks(states[:10], 1), _time_observe(states[:10], 1), _time_resets(2, scratch, *tab)  # compile
    (
        _time_steps(states, acts, kinds["discard"][:5], scratch, *tab),
        _time_copies(states, kinds["discard"][:5], scratch),
    )
    reps = max(5, 200_000 // n_states) if reps is None else reps
    out = {
        "corpus_states": int(n_states),
        "legal_mask_kernel_us": 1e6 * _cpu(_time_masks, states, reps) / (reps * n_states),
        "observe_kernel_us": 1e6 * _cpu(_time_observe, states, reps) / (reps * n_states),
        "reset_kernel_us": 1e6 * _cpu(_time_resets, 5000, scratch, *tab) / 5000,
        "step_kernel_us": {},
        "decision_mix": {},
    }
    total_step = 0.0
    for name, sel in kinds.items():
        if len(sel) == 0:
            continue
        sel_r = np.tile(sel, reps)
        dt = _cpu(_time_steps, states, acts, sel_r, scratch, *tab) - _cpu(
            _time_copies, states, sel_r, scratch
        )
        us = 1e6 * dt / len(sel_r)
        out["step_kernel_us"][name] = us
        out["decision_mix"][name] = len(sel) / n_states
        total_step += us * len(sel) / n_states
    out["step_kernel_us"]["mean over decisions"] = total_step
    return out


def loop_split(tables: int, seconds: float, observations: bool, threads: int | None) -> dict:
    """Wall/CPU split of the batched random-play loop: policy, env.step, rest."""
    env = VectorEnv(tables, seed=0, observations=observations, threads=threads)
    rng = np.random.default_rng(0)
    _, masks, _ = env.reset()
    t_pol = t_step = 0.0
    c_pol = c_step = 0.0
    steps = 0
    c0, t0 = time.process_time(), time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        c1, t1 = time.process_time(), time.perf_counter()
        a = random_legal_actions(masks, rng, env.n_legal, env.legal_actions)
        c2, t2 = time.process_time(), time.perf_counter()
        _, masks, _, _, _ = env.step(a)
        c3, t3 = time.process_time(), time.perf_counter()
        t_pol += t2 - t1
        t_step += t3 - t2
        c_pol += c2 - c1
        c_step += c3 - c2
        steps += 1
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    n = steps * tables
    return {
        "tables": tables,
        "threads": env.threads,
        "observations": observations,
        "decisions": n,
        "wall_s": wall,
        "cpu_s": cpu,
        "decisions_per_s": n / wall,
        "decisions_per_cpu_s": n / cpu,
        "share_wall": {
            "policy": t_pol / wall,
            "env.step": t_step / wall,
            "rest": 1 - (t_pol + t_step) / wall,
        },
        "us_per_decision_cpu": {
            "policy": 1e6 * c_pol / n,
            "env.step": 1e6 * c_step / n,
            "rest": 1e6 * (cpu - c_pol - c_step) / n,
        },
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tables", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = p.parse_args(argv)
    compile_s = warmup(False) + warmup(True)
    rec = {"compile_s": compile_s, "numba_threads": numba.config.NUMBA_NUM_THREADS, "loops": []}
    for observations in (False, True):
        for threads in (1, 2):
            r = loop_split(args.tables, args.seconds, observations, threads)
            rec["loops"].append(r)
            print(
                f"loop N={r['tables']} threads={r['threads']} obs={observations}: "
                f"{r['decisions_per_s']:,.0f} decisions/s wall, {r['decisions_per_cpu_s']:,.0f} per CPU-s "
                f"(cpu/wall {r['cpu_s'] / r['wall_s']:.2f}); wall share policy {r['share_wall']['policy']:.1%} "
                f"env.step {r['share_wall']['env.step']:.1%} rest {r['share_wall']['rest']:.1%}; CPU us/decision "
                + ", ".join(f"{k} {v:.3f}" for k, v in r["us_per_decision_cpu"].items())
            )
    ks = [kernel_costs(256), kernel_costs(20000)]
    rec["kernels"] = ks[1]
    rec["kernels_in_cache"] = ks[0]
    names = ", ".join(f"{k['corpus_states']} states" for k in ks)
    print(f"\nper-table engine kernels, single thread, CPU microseconds per call ({names}):")
    print("  legal_mask_kernel" + " " * 35 + "  ".join(f"{k['legal_mask_kernel_us']:.3f}" for k in ks))
    for name in ks[1]["step_kernel_us"]:
        mix = ks[1]["decision_mix"].get(name)
        us = "  ".join(
            f"{k['step_kernel_us'][name]:.3f}" if name in k["step_kernel_us"] else "  -  " for k in ks
        )
        print(f"  step_kernel {name:<40s} {us}" + (f"  ({mix:.1%} of decisions)" if mix else ""))
    print("  observe_kernel" + " " * 38 + "  ".join(f"{k['observe_kernel_us']:.3f}" for k in ks))
    print("  reset_kernel (once per hand)" + " " * 24 + "  ".join(f"{k['reset_kernel_us']:.3f}" for k in ks))
    rec["ceiling"] = {}
    for label, k in zip(("in_cache", "out_of_cache"), ks, strict=True):
        per = k["legal_mask_kernel_us"] + k["step_kernel_us"]["mean over decisions"]
        per_obs = per + k["observe_kernel_us"]
        rec["ceiling"][label] = {
            "masks_only_us_per_decision": per,
            "obs_us_per_decision": per_obs,
            "masks_only_decisions_per_cpu_s": 1e6 / per,
            "obs_decisions_per_cpu_s": 1e6 / per_obs,
        }
        print(
            f"kernels alone, {k['corpus_states']} states: {per:.2f} us per decision masks-only -> "
            f"{1e6 / per:,.0f}/CPU-s; with observations {per_obs:.2f} us -> {1e6 / per_obs:,.0f}/CPU-s"
        )
    if args.json:
        args.json.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
