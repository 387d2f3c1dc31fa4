"""mjenv: a Chinese Official Mahjong (MCR, 国标麻将) reinforcement-learning environment.

The rules core (tiles, hands, scoring, game engine) is Numba kernels over numpy arrays; the PettingZoo,
Gymnasium and vector envs are thin fronts over those kernels.
"""

__version__ = "0.1.0"

from mjenv.tiles import format_tiles, parse_tiles  # noqa: E402

__all__ = [
    "__version__",
    "format_tiles",
    "parse_tiles",
    "env",
    "raw_env",
    "MahjongGymEnv",
    "RuleConfig",
    "VectorEnv",
    "RandomPolicy",
    "score",
    "warmup",
]

_LAZY = {
    "env": "mjenv.pettingzoo_env",
    "raw_env": "mjenv.pettingzoo_env",
    "MahjongGymEnv": "mjenv.gym_env",
    "RuleConfig": "mjenv.rules",
    "VectorEnv": "mjenv.vector",
    "RandomPolicy": "mjenv.policy",
    "score": "mjenv.fans",
}


def __getattr__(name):  # lazy fronts: importing mjenv imports neither pettingzoo nor the kernels
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mjenv' has no attribute {name!r}")


WARMUP_MODULES = ("mjenv.hand", "mjenv.fans", "mjenv.game", "mjenv.vector")


def warmup(
    verbose: bool = False,
    modules=WARMUP_MODULES,
    progress: bool | None = None,
    imports=(),
    **kwargs,
) -> dict[str, float]:
    """Compile (or load from numba's on-disk cache) the kernels of ``modules``; returns seconds per module.

    Kernels compile lazily on first use, so calling this is optional; benchmarks and long runs call it first
    so that compile time is reported apart from run time. The first run on a machine compiles (about a
    minute on 2 cores); later runs load the cache (about a second). ``progress`` shows a tqdm bar on stderr
    (which module, how far, which kernel is compiling; default: when stderr is a terminal); ``verbose``
    prints the seconds per module. ``kwargs`` go to every module's ``warmup`` that takes them (the vector
    env's ``observations``).

    ``imports`` are modules only imported first, each a step of the bar (their shared kernels compile or load
    on import), without their own ``warmup``: ``mjenv selfplay`` passes ``("mjenv.fans", "mjenv.game")`` and
    ``modules=("mjenv.vector",)``, so that its first result does not wait for kernels the vector env never
    calls (the batch scorer, the single-table fronts' masks and observations).
    """
    import importlib
    import inspect
    import time

    from tqdm import tqdm

    from mjenv import _jit

    imports = tuple(m for m in imports if m not in modules)
    out: dict[str, float] = {}
    disable = None if progress is None else not progress  # None: tqdm shows the bar only on a terminal
    bar = tqdm(total=len(imports) + len(modules), desc="mjenv kernels", unit="module", disable=disable)
    old_hook = _jit.note_hook
    _jit.note_hook = lambda text: bar.set_postfix_str(text.removeprefix("compiling mjenv."), refresh=True)
    try:
        for name in (*imports, *modules):
            bar.set_postfix_str(name.removeprefix("mjenv."), refresh=True)
            t0 = time.perf_counter()
            mod = importlib.import_module(name)  # shared kernels compile (or load) on import
            if name in modules:
                fn = mod.warmup
                params = inspect.signature(fn).parameters
                fn(**{k: v for k, v in kwargs.items() if k in params})
            out[name] = time.perf_counter() - t0
            bar.update(1)
            if verbose:
                bar.write(f"{name}: {out[name]:.1f} s")
    finally:
        _jit.note_hook = old_hook
        bar.close()
    return out


def _register_gymnasium() -> None:
    """Make ``gymnasium.make("mjenv/Mahjong-v0")`` work after ``import mjenv``."""
    try:
        import gymnasium
    except ImportError:  # pragma: no cover - gymnasium is a dependency
        return
    if "mjenv/Mahjong-v0" not in gymnasium.registry:
        gymnasium.register(id="mjenv/Mahjong-v0", entry_point="mjenv.gym_env:MahjongGymEnv")


_register_gymnasium()
