"""The policy protocol: how every front, the arena and the trainers call an agent.

Specification in mjenv
----------------------
* **Batched policy** (:class:`Policy`): ``policy(obs, masks, seats) -> actions`` with ``obs``
  ``float32[N, OBS_SIZE]`` (:mod:`mjenv.observation`; ``None`` when the policy says
  ``needs_observations = False`` and the env runs masks-only), ``masks`` ``bool[N, NUM_ACTIONS]`` and ``seats``
  ``int32[N]`` (the absolute chair to act at each row); returns ``int64[N]``, one legal action per row. ``N``
  may be any number from 0 to the ``num_envs`` the policy was made for (the arena passes only the rows where
  this policy is to act). A policy sees only observations and masks, never the table state.
* **Optional per-decision info**: a policy may also define ``act_with_info(obs, masks, seats) ->
  (actions, info)`` with ``info`` a dict of arrays with first dimension ``N``: ``"probs"``
  (``float32[N, NUM_ACTIONS]``, the action distribution it sampled from) and/or ``"value"`` (``float32[N]``).
  Records keep them (:func:`policy_info`).
* **Optional arena hooks** (``docs/arena.md``): ``wants_tables``, ``max_tables``, ``take_notes()``,
  ``hands_done(tables)``, ``bot_summary()``; used by the Botzone bot policy (:mod:`mjenv.botzone.botpolicy`).
* **Per-table random streams** (optional): a stochastic policy that declares ``row_streams = True`` takes a
  keyword ``rng`` in ``__call__`` (and ``act_with_info``): a :class:`RowStreams`, whose ``random(n)`` gives one
  uniform per row, each from its own row's stream (:class:`TableStreams`: counter-based splitmix64, keyed per
  hand). The arena keys a table's stream by (seed, agent, wall, seat order), so the policy's draws at a table
  do not depend on which other tables share its batch, on ``tables``, on shards or on Ray workers. Called
  without ``rng`` (the fronts, ``mjenv selfplay``, training) it draws from its own generator as before.
* **Factories**: an agent is named by an import string ``"module:factory"`` with
  ``factory(num_envs, seed, **kwargs) -> policy`` (e.g. ``agents.rule:make``); :func:`load_policy` builds it
  with clear errors. A module that is not importable is looked for in the working directory too (so the
  ``mjenv`` command run from a checkout finds its ``agents/``). mjenv itself never imports ``agents`` or
  ``train``.
* **Optional factory keyword** ``threads`` (``int``): the most threads the policy may compute with in
  parallel (torch's intra-op threads, Numba's, its subprocesses'). A factory that names ``threads`` in its
  signature (:func:`takes_option`; ``**kwargs`` alone does not count) gets the arena's thread setting
  (``mjenv eval --threads``) unless the option was given explicitly; the policy should hold to it during its
  calls and leave the caller's own settings as they were (``agents.nn`` sets torch's count around each call
  and restores it).
* **Per-agent adapter** (:class:`AgentPolicy`): ``(observation, action_mask) -> action`` for the AEC and
  Gymnasium fronts, over a batched policy called with batches of one.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from mjenv._jit import njit
from mjenv.actions import NUM_ACTIONS
from mjenv.rng import GOLDEN, splitmix64


@runtime_checkable
class Policy(Protocol):
    """``policy(obs, masks, seats) -> int64[N]``; see the module docstring."""

    def __call__(self, obs: np.ndarray | None, masks: np.ndarray, seats: np.ndarray) -> np.ndarray: ...


def needs_observations(policy: object) -> bool:
    """Whether ``policy`` reads observations (its ``needs_observations`` attribute, True when absent)."""
    return bool(getattr(policy, "needs_observations", True))


def policy_info(
    policy: Policy, obs: np.ndarray | None, masks: np.ndarray, seats: np.ndarray
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``(actions, info)`` from ``policy``: its ``act_with_info`` when it has one, else ``(policy(...), {})``."""
    act = getattr(policy, "act_with_info", None)
    if act is None:
        return policy(obs, masks, seats), {}
    actions, info = act(obs, masks, seats)
    if not isinstance(info, dict):
        raise TypeError(f"act_with_info must return (actions, dict), got info of type {type(info).__name__}")
    return actions, info


@njit
def _bad_count_row(n_legal, n_actions):
    """The first row whose ``n_legal`` is not in ``1..n_actions``, else -1."""
    for i in range(n_legal.shape[0]):
        if n_legal[i] <= 0 or n_legal[i] > n_actions:
            return i
    return -1


@njit
def _pick_legal(u, rows, n_legal, legal_actions, out):
    """``out[k] = legal_actions[i, int(u[k] * n_legal[i])]`` with ``i = rows[k]`` (``i = k`` where ``rows`` is
    empty): the float64 product truncated, as numpy's ``astype`` (``n_legal`` checked by :func:`_bad_count_row`,
    or an env's own)."""
    subset = rows.shape[0] > 0
    for k in range(u.shape[0]):
        i = rows[k] if subset else k
        out[k] = legal_actions[i, np.int64(u[k] * np.float64(n_legal[i]))]


_ALL_ROWS = np.zeros(0, np.int64)


def random_legal_actions_at(
    rows: np.ndarray, rng: np.random.Generator, n_legal: np.ndarray, legal_actions: np.ndarray
) -> np.ndarray:
    """``random_legal_actions(masks[rows], rng, n_legal[rows], legal_actions[rows])`` (the same draws, the same
    actions) without gathering the rows: for a vector env's own ``n_legal`` / ``legal_actions`` (not checked)
    at tables ``rows`` (a non-empty ``int64`` array)."""
    out = np.empty(rows.shape[0], np.int64)
    _pick_legal(rng.random(rows.shape[0]), rows, n_legal, legal_actions, out)
    return out


def random_legal_actions(
    masks: np.ndarray,
    rng: np.random.Generator,
    n_legal: np.ndarray | None = None,
    legal_actions: np.ndarray | None = None,
) -> np.ndarray:
    """A uniformly random legal action per row of ``masks`` (``bool[N, NUM_ACTIONS]``).

    Draws one uniform per row (``rng.random``) and scales it by the row's number of legal actions ``k``. With
    the env's legal-action lists (``VectorEnv.legal_actions``, written by the step kernel) the scaled pick and
    the gather are one small kernel (:func:`_pick_legal`; half the time of the five numpy operations it
    replaced, which cost ~17 us per 1024 rows, a few percent of a VectorEnv step); from ``masks`` alone it
    takes that legal action from the row-major list of legal entries (``np.flatnonzero``, about 0.2-0.3 us per
    row). Both give the same actions for the same ``rng``.

    Parameters
    ----------
    masks : ndarray[bool, (N, A)]
    rng : numpy.random.Generator or RowStreams
        Anything with ``random(n) -> float64[n]`` (one uniform per row).
    n_legal : ndarray[int, (N,)], optional
        Legal actions per row (``VectorEnv.n_legal``); counted from ``masks`` when not given.
    legal_actions : ndarray[uint8, (N, A)], optional
        ``VectorEnv.legal_actions`` of the same env as ``masks`` (needs ``n_legal`` too).

    Returns
    -------
    ndarray[int64, (N,)]
    """
    if not isinstance(masks, np.ndarray) or masks.dtype != np.bool_ or masks.ndim != 2:
        raise ValueError(f"masks must be a 2-D bool array, got {getattr(masks, 'dtype', type(masks))}")
    if n_legal is None:
        if legal_actions is not None:
            raise ValueError("legal_actions needs n_legal (VectorEnv.n_legal)")
        if masks.shape[0] == 1:  # one row (bots, the Botzone runner): the same pick with fewer numpy calls
            row = np.flatnonzero(masks[0])
            if row.size == 0:
                raise ValueError("row 0 of masks has no legal action")
            return np.array([row[int(rng.random(1)[0] * row.size)]], np.int64)
        n_legal = np.count_nonzero(masks, axis=1)
    elif n_legal.shape != masks.shape[:1]:
        raise ValueError(f"n_legal must have shape {masks.shape[:1]}, got {n_legal.shape}")
    if legal_actions is not None and legal_actions.shape != masks.shape:
        raise ValueError(f"legal_actions must have shape {masks.shape}, got {legal_actions.shape}")
    bad = _bad_count_row(n_legal, masks.shape[1])
    if bad >= 0:  # checked before drawing: an error leaves rng as it was
        if n_legal[bad] <= 0:
            raise ValueError(f"row {bad} of masks has no legal action")
        raise ValueError(f"n_legal[{bad}] = {n_legal[bad]} is more than the {masks.shape[1]} actions")
    if legal_actions is not None:
        # the env's lists: one kernel call scales the uniforms and gathers (the numpy ops it replaces cost
        # ~17 us per 1024 rows, a few percent of a VectorEnv step)
        out = np.empty(masks.shape[0], np.int64)
        _pick_legal(rng.random(masks.shape[0]), _ALL_ROWS, n_legal, legal_actions, out)
        return out
    pick = (rng.random(masks.shape[0]) * n_legal).astype(np.int64)  # float64: u * k < k exactly
    flat = np.flatnonzero(masks)
    start = np.cumsum(n_legal) - n_legal
    return flat[start + pick] - np.arange(masks.shape[0], dtype=np.int64) * masks.shape[1]


class TableStreams:
    """Counter-based random streams, one per table, for policies with ``row_streams = True``.

    :meth:`start` gives tables a new key (a new hand) and rewinds their counters; :meth:`rows` hands a policy
    the streams of the rows it is called on. Draw ``k`` (1, 2, ...) of a table is
    ``splitmix64(key + k * 0x9E3779B97F4A7C15) >> 11`` scaled to ``[0, 1)``: it depends on the table's key and
    on how many draws that table made, never on the other rows of a batch.
    """

    def __init__(self, num_tables: int) -> None:
        self.key = np.zeros(num_tables, np.uint64)
        self.count = np.zeros(num_tables, np.uint64)

    def start(self, tables: np.ndarray, keys: np.ndarray) -> None:
        """Key the streams of ``tables`` with ``keys`` (``uint64``) and rewind them."""
        self.key[tables] = keys
        self.count[tables] = 0

    def rows(self, rows: np.ndarray) -> RowStreams:
        """The streams of ``rows`` (table indices), in that order, as the ``rng`` of one policy call."""
        return RowStreams(self, np.asarray(rows, np.int64))


class RowStreams:
    """The streams of some tables (:meth:`TableStreams.rows`), passed as ``rng`` to a ``row_streams`` policy.

    Like ``numpy.random.Generator.random`` for one draw per row: ``random(n)`` with ``n`` the number of rows
    returns ``float64[n]``, row ``i``'s number from row ``i``'s stream, and advances those streams by one.
    """

    def __init__(self, streams: TableStreams, rows: np.ndarray) -> None:
        self._streams = streams
        self._rows = rows

    def __len__(self) -> int:
        return int(self._rows.size)

    def random(self, size: int | tuple[int] | None = None) -> np.ndarray:
        n = self._rows.size
        if size not in (n, (n,)):
            raise ValueError(f"row streams draw one number per row: size must be {n}, got {size!r}")
        st = self._streams
        st.count[self._rows] += np.uint64(1)
        z = splitmix64(st.key[self._rows] + st.count[self._rows] * GOLDEN)
        return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


class RandomPolicy:
    """Uniformly random legal actions, chosen over the whole batch at once (:func:`random_legal_actions`).

    ``needs_observations = False``: ``mjenv selfplay`` runs it in the masks-only mode. Given ``env`` (a
    :class:`mjenv.vector.VectorEnv`), calls whose ``masks`` are that env's own array use its ``n_legal`` and
    ``legal_actions`` (the same actions, drawn 3-5x faster); other masks are handled from the mask alone.
    ``row_streams = True``: called with ``rng`` (:class:`RowStreams`, the arena's per-table streams) it draws
    from those instead of its own generator.
    """

    needs_observations = False
    row_streams = True

    def __init__(self, seed: int | None = 0, env: Any = None) -> None:
        # duck-typed, not isinstance: mjenv.vector imports this module (no import cycle)
        if env is not None and not all(hasattr(env, a) for a in ("masks", "n_legal", "legal_actions")):
            raise TypeError(f"env must be a VectorEnv or None, got {type(env).__name__}")
        self.rng = np.random.default_rng(seed)
        self.env = env

    def __call__(
        self, obs: np.ndarray | None, masks: np.ndarray, seats: np.ndarray, rng: RowStreams | None = None
    ) -> np.ndarray:
        gen = self.rng if rng is None else rng
        env = self.env
        if env is not None and masks is env.masks:
            return random_legal_actions(masks, gen, env.n_legal, env.legal_actions)
        return random_legal_actions(masks, gen)


def make_random(num_envs: int, seed: int, **kwargs: Any) -> RandomPolicy:
    """Factory of :class:`RandomPolicy` with the usual signature (``"mjenv.policy:make_random"``)."""
    if kwargs:
        raise TypeError(f"RandomPolicy takes no options, got {sorted(kwargs)}")
    return RandomPolicy(seed)


def _import_from_cwd(name: str):
    """``importlib.import_module(name)``; when its top package is not found, retry with the working directory on
    ``sys.path`` (as ``python -m`` has it), so that ``mjenv eval --agent rule=agents.rule:make`` run from a
    checkout finds the checkout's ``agents/`` package."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        cwd = os.getcwd()
        if e.name != name.split(".")[0] or cwd in sys.path or "" in sys.path:
            raise
        sys.path.insert(0, cwd)
        return importlib.import_module(name)


def resolve_factory(spec: str) -> Callable[..., Any]:
    """The factory named by ``"module:attribute"`` (``ValueError`` naming what is wrong)."""
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise ValueError(f"an agent is named 'module:factory' (e.g. 'agents.rule:make'), got {spec!r}")
    mod_name, attr = spec.split(":")
    try:
        mod = _import_from_cwd(mod_name)
    except ImportError as e:
        raise ValueError(f"cannot import module {mod_name!r} of agent {spec!r}: {e}") from e
    obj = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"module {mod_name!r} has no attribute {attr!r} (agent {spec!r})")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"agent factory {spec!r} is not callable")
    return obj


def factory_options(factory: Callable[..., Any]) -> list[str] | None:
    """The keyword options a factory takes after ``(num_envs, seed)``, in order; None when it takes any
    (``**kwargs``) or has no signature to read."""
    try:
        params = list(inspect.signature(factory).parameters.values())
    except ValueError:
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    named = [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:2]
    return [p.name for p in named if p not in positional]


def takes_option(spec: str | Callable[..., Any], name: str) -> bool:
    """Whether the factory ``spec`` (an import string or a factory) names the keyword option ``name`` in its
    signature (a factory that takes only ``**kwargs`` does not count; ``ValueError`` for a bad import string)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    factory = resolve_factory(spec) if isinstance(spec, str) else spec
    if not callable(factory):
        raise TypeError(f"an agent factory must be callable, got {type(factory).__name__}")
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False
    p = params.get(name)
    return p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)


def option_value(text: str) -> Any:
    """A factory option given as text on a command line (``mjenv eval --agent-opt``, ``train.bc --teacher-opt``):
    its JSON value when it parses as JSON (``3``, ``false``, ``[1, 2]``), else the text itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def check_factory(
    spec: str | Callable[..., Any], num_envs: int, seed: int, **kwargs: Any
) -> Callable[..., Any]:
    """The factory named by ``spec`` once it is known to take ``(num_envs, seed, **kwargs)``, without calling it:
    ``ValueError`` for a bad import string, ``TypeError`` for a factory that is not callable, for an option it
    does not take (naming the options it does take) or for a signature without ``(num_envs, seed)``."""
    factory = resolve_factory(spec) if isinstance(spec, str) else spec
    if not callable(factory):
        raise TypeError(f"an agent factory must be callable, got {type(factory).__name__}")
    name = spec if isinstance(spec, str) else getattr(factory, "__qualname__", repr(factory))
    options = factory_options(factory)
    unknown = [] if options is None else [k for k in kwargs if k not in options]
    if unknown:
        raise TypeError(
            f"agent factory {name!r} got an unexpected option {', '.join(map(repr, unknown))}; "
            f"its options: {', '.join(options) if options else 'none'}"
        )
    try:
        inspect.signature(factory).bind(num_envs, seed, **kwargs)
    except TypeError as e:
        raise TypeError(f"agent factory {name!r} must accept (num_envs, seed, **kwargs): {e}") from e
    except ValueError:  # builtins without a signature: let the call decide
        pass
    return factory


def load_policy(spec: str | Callable[..., Any], num_envs: int, seed: int, **kwargs: Any) -> Policy:
    """Build a policy from ``"module:factory"`` (or a factory): ``factory(num_envs, seed, **kwargs)``.

    Raises ``ValueError`` for a bad import string and ``TypeError`` for a factory whose signature does not take
    ``(num_envs, seed, **kwargs)`` (an unknown option: the message lists the ones it takes) or that returns
    something that is not callable (:func:`check_factory`).
    """
    factory = check_factory(spec, num_envs, seed, **kwargs)
    name = spec if isinstance(spec, str) else getattr(factory, "__qualname__", repr(factory))
    policy = factory(num_envs, seed, **kwargs)
    if not callable(policy):
        raise TypeError(f"agent factory {name!r} returned {type(policy).__name__}, not a policy (a callable)")
    return policy


class AgentPolicy:
    """Per-agent adapter: ``adapter(observation, action_mask) -> int`` over a batched ``policy``.

    For the AEC loop (``env.step(adapter(**env.observe(agent)))`` style) and the Gymnasium wrapper. ``seat`` is
    the chair passed to the batched policy (observations are relative to the player, so most policies ignore
    it). Also accepts the AEC observation dict: ``adapter(env.observe(agent))``.
    """

    def __init__(self, policy: Policy, seat: int = 0) -> None:
        if not callable(policy):
            raise TypeError(f"policy must be callable, got {type(policy).__name__}")
        self.policy = policy
        self.seat = int(seat)
        self._seats = np.full(1, self.seat, np.int32)

    def __call__(self, observation: Any, action_mask: np.ndarray | None = None) -> int:
        if action_mask is None:
            if not isinstance(observation, dict):
                raise TypeError("pass (observation, action_mask) or the AEC observation dict")
            observation, action_mask = observation["observation"], observation["action_mask"]
        mask = np.asarray(action_mask).astype(np.bool_, copy=False).reshape(1, -1)
        if mask.shape[1] != NUM_ACTIONS:
            raise ValueError(f"action_mask must have {NUM_ACTIONS} entries, got {mask.shape[1]}")
        if not mask.any():
            raise ValueError("action_mask has no legal action (this agent is not to act)")
        obs = None if observation is None else np.asarray(observation, dtype=np.float32).reshape(1, -1)
        if obs is None and needs_observations(self.policy):
            raise ValueError("this policy needs observations")
        return int(np.asarray(self.policy(obs, mask, self._seats)).reshape(-1)[0])
