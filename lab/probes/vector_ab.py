"""A/B of the VectorEnv against a git ref: masks-only, float32 and uint8 observations, interleaved repeats.

``PYTHONPATH=. python -m lab.probes.vector_ab [--base main] [--tables 1024] [--threads 2] [--steps 30]
[--repeats 21] [--modes masks,float32,uint8] [--json PATH]``

The base's ``mjenv/observation.py``, ``mjenv/vector.py`` and ``mjenv/policy.py`` (``git show BASE:path``) are
loaded as separate modules (the base vector env calling the base observation kernel, stepped with the base's
``random_legal_actions``); every other module is the working tree's, so the comparison isolates those three
files (the rest of the engine is shared: a base whose ``game.py`` differs is not what this measures). Both envs of a mode run repeat by repeat in turn with the same random policy, so a
shared machine's load hits both alike; it prints medians of decisions/s (wall, and per CPU-second of the process)
and the ratio working tree / base. The base modules are compiled once into a cache folder under the system temp
directory named by the base files' contents.

``--kernel`` also times the two ``observe_kernel`` alone (one thread, inside Numba, CPU time): over the states of
a random-play corpus (``lab.probes.profile_vector``), each written into its own row of an ``[N, OBS_SIZE]``
buffer in table order, with the vector env's prefetch hints for the next tables, as ``_step_batch`` does.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mjenv import vector as vec_new

_ROOT = Path(__file__).resolve().parents[2]
MODES = ("masks", "float32", "uint8")


def load_base(ref: str):
    """The base ref's vector module (its own copies of the observation kernel and of the policy module: the
    base's ``random_legal_actions`` is ``module.random_legal_actions``), imported from a cache folder."""
    try:
        srcs = {
            f: subprocess.run(
                ["git", "show", f"{ref}:mjenv/{f}"], cwd=_ROOT, check=True, capture_output=True, text=True
            ).stdout
            for f in ("observation.py", "vector.py", "policy.py")
        }
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        raise SystemExit(
            f"cannot read mjenv/observation.py, vector.py and policy.py at {ref!r}: {e}"
        ) from None
    old = "from mjenv.observation import"
    if old not in srcs["vector.py"]:
        raise SystemExit(f"{ref}:mjenv/vector.py does not import mjenv.observation as expected")
    srcs["vector.py"] = srcs["vector.py"].replace(old, "from _ab_base_observation import", 1)
    old = "from mjenv.policy import"
    if old not in srcs["vector.py"]:
        raise SystemExit(f"{ref}:mjenv/vector.py does not import mjenv.policy as expected")
    srcs["vector.py"] = srcs["vector.py"].replace(old, "from _ab_base_policy import", 1)
    key = hashlib.blake2b("".join(srcs.values()).encode(), digest_size=8).hexdigest()
    folder = Path(tempfile.gettempdir()) / f"mjenv-vector-ab-{key}"
    folder.mkdir(exist_ok=True)
    for f, text in srcs.items():
        path = folder / f"_ab_base_{f}"
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
    sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    spec = importlib.util.find_spec("_ab_base_vector")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _kernel_timer(kern):
    """A Numba loop writing ``kern``'s observation of every corpus state into its own row, prefetching ahead."""
    from mjenv import game as G
    from mjenv._jit import njit

    @njit(cache=False)  # a closure: nothing to cache
    def run(states, out, masks, legal, reps):
        n = states.shape[0]
        for _ in range(reps):
            for i in range(n):
                if i + 2 < n:
                    vec_new._prefetch_hot(states, masks, legal, i + 2)
                if i + 1 < n:
                    vec_new._prefetch_discards(states, i + 1)
                kern(states[i], states[i, G.CUR], out[i])

    return run


def kernel_ab(base, n_states: int = 1024, repeats: int = 9) -> dict:
    """CPU nanoseconds per ``observe_kernel`` call, base against working tree, both dtypes (medians)."""
    from lab.probes.profile_vector import _corpus
    from mjenv import game as G
    from mjenv.observation import OBS_SIZE, observe_kernel

    states, _ = _corpus(n_states, 1, *G.win_tables())
    masks = np.zeros((n_states, vec_new.NUM_ACTIONS), np.bool_)
    legal = np.zeros((n_states, vec_new.NUM_ACTIONS), np.uint8)
    timers = {"base": _kernel_timer(base.observe_kernel), "new": _kernel_timer(observe_kernel)}
    reps = max(3, 100_000 // n_states)
    out = {}
    for dt in ("uint8", "float32"):
        bufs = {k: np.zeros((n_states, OBS_SIZE), dt) for k in timers}
        for k, f in timers.items():
            f(states, bufs[k], masks, legal, 1)
        if not np.array_equal(bufs["base"], bufs["new"]):
            raise SystemExit(f"the observations differ from the base's ({dt})")
        ns: dict[str, list[float]] = {k: [] for k in timers}
        for _ in range(repeats):
            for k, f in timers.items():
                c = time.process_time()
                f(states, bufs[k], masks, legal, reps)
                ns[k].append(1e9 * (time.process_time() - c) / (reps * n_states))
        row = {k: statistics.median(v) for k, v in ns.items()}
        row["ratio"] = row["new"] / row["base"]
        out[dt] = row
        print(
            f"observe_kernel {dt:8s} base {row['base']:7.1f} ns  working tree {row['new']:7.1f} ns per call "
            f"(CPU, {n_states} states, median of {repeats})  ratio {row['ratio']:.2f}"
        )
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="main", help="git ref to compare the working tree with (default main)")
    ap.add_argument("--tables", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30, help="steps per timed repeat")
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of " + ",".join(MODES))
    ap.add_argument("--kernel", action="store_true", help="also time observe_kernel alone (see above)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    modes = a.modes.split(",")
    if not set(modes) <= set(MODES) or not modes:
        ap.error(f"--modes must be a comma-separated subset of {','.join(MODES)}, got {a.modes!r}")
    if a.tables < 1 or a.steps < 1 or a.repeats < 1:
        ap.error("--tables, --steps and --repeats must be >= 1")
    base = load_base(a.base)
    runs = {}
    for mode in modes:
        kw = {"observations": False} if mode == "masks" else {"obs_dtype": mode}
        for side, mod in (("base", base), ("new", vec_new)):
            env = mod.VectorEnv(a.tables, seed=0, threads=a.threads, **kw)
            env.reset()
            rng = np.random.default_rng(0)
            pick = mod.random_legal_actions  # each side's own sampler (the same actions)
            for _ in range(20):  # compile or load, and leave the first deals
                env.step(pick(env.masks, rng, env.n_legal, env.legal_actions))
            runs[mode, side] = (env, rng, pick, [], [])
    for _ in range(a.repeats):
        for env, rng, pick, wall, cpu in runs.values():
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(a.steps):
                env.step(pick(env.masks, rng, env.n_legal, env.legal_actions))
            n = a.tables * a.steps
            wall.append(n / (time.perf_counter() - t0))
            cpu.append(n / (time.process_time() - c0))
    out: dict = {"settings": vars(a)}
    for mode in modes:
        row = {}
        for side in ("base", "new"):
            _, _, _, wall, cpu = runs[mode, side]
            row[side] = {
                "median": statistics.median(wall),
                "per_cpu_s_median": statistics.median(cpu),
                "all": wall,
            }
        row["ratio"] = row["new"]["median"] / row["base"]["median"]
        row["ratio_per_cpu_s"] = row["new"]["per_cpu_s_median"] / row["base"]["per_cpu_s_median"]
        out[mode] = row
        print(
            f"{mode:8s} base {row['base']['median'] / 1e6:6.3f}M/s ({row['base']['per_cpu_s_median'] / 1e6:.3f}M "
            f"per CPU-s)  working tree {row['new']['median'] / 1e6:6.3f}M/s "
            f"({row['new']['per_cpu_s_median'] / 1e6:.3f}M per CPU-s)  ratio {row['ratio']:.2f} "
            f"(per CPU-s {row['ratio_per_cpu_s']:.2f})"
        )
    if a.kernel:
        out["observe_kernel_ns"] = kernel_ab(base)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
