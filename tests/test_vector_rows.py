"""VectorEnv.step's row subset (``rows=``) and watched chairs (``watch=``, ``final_obs=``): the same tables as a
full step, only fewer of them moved, and only the observations asked for written."""

from __future__ import annotations

import numpy as np
import pytest

from mjenv import game as G
from mjenv.observation import observe_kernel
from mjenv.rules import RuleConfig
from mjenv.vector import VectorEnv, random_legal_actions

N = 24


def _outputs(env: VectorEnv, rows: np.ndarray) -> list[np.ndarray]:
    return [
        env.states[rows], env.seats[rows], env.masks[rows], env.n_legal[rows], env.legal_actions[rows],
        env.rewards[rows], env.terminated[rows], env.illegal[rows], env.obs[rows], env.hands_done[rows],
        env.results.scores[rows], env.results.seed[rows], env.match_scores[rows], env.match_over[rows],
    ]  # fmt: skip


@pytest.mark.parametrize(
    "kwargs",
    [
        {"illegal": "terminate"},
        {"illegal": "penalty"},
        {"rules": RuleConfig(match=True, illegal="terminate")},
        {"illegal": "terminate", "after_schedule": "stop"},
    ],
)
def test_a_row_subset_step_moves_those_tables_as_a_full_step(kwargs):
    """Stepping the tables in two disjoint subsets (odd-sized, random) gives the full step's trajectories,
    illegal actions, auto-resets, matches and stopped tables included; the other tables do not move."""
    full = VectorEnv(N, seed=5, threads=1, **kwargs)
    part = VectorEnv(N, seed=5, threads=1, **kwargs)
    full.reset()
    part.reset()
    if kwargs.get("after_schedule") == "stop":
        for env in (full, part):
            env.schedule(np.arange(N) + 100, 0, 0)
    rng = np.random.default_rng(0)
    ends = 0
    for t in range(400):
        on = full.active  # a stopped table takes any action
        acts = np.zeros(N, np.int64)
        if on.any():
            acts[on] = random_legal_actions(full.masks[on], rng, full.n_legal[on], full.legal_actions[on])
        if t % 13 == 0:  # an illegal action now and then
            acts[t % N] = 108 if not full.masks[t % N, 108] else 0
        full.step(acts)
        pick = rng.random(N) < 0.4
        first, second = np.flatnonzero(pick), np.flatnonzero(~pick)
        before = _outputs(part, second)
        part.step(acts[first], rows=first)
        for x, y in zip(before, _outputs(part, second)):  # the other tables did not move
            np.testing.assert_array_equal(x, y)
        for x, y in zip(_outputs(full, first), _outputs(part, first)):
            np.testing.assert_array_equal(x, y)
        part.step(acts[second], rows=second)
        for x, y in zip(_outputs(full, np.arange(N)), _outputs(part, np.arange(N))):
            np.testing.assert_array_equal(x, y)
        ends += int(full.terminated.sum())
    assert ends > 10
    if kwargs.get("after_schedule") == "stop":
        assert not full.active.all()


def test_watch_writes_the_watched_chairs_observations_and_the_final_ones():
    """With ``watch``, a table's observation is written where the watched chair is to act (or a hand began);
    ``final_obs`` holds that chair's view of each finished hand (the finished state replayed and observed)."""
    full = VectorEnv(N, seed=2, illegal="terminate", threads=1)
    env = VectorEnv(N, seed=2, illegal="terminate", threads=1)
    full.reset()
    env.reset()
    watch = (np.arange(N) % 4).astype(np.int32)
    final = np.full_like(env.obs, -7)
    rng = np.random.default_rng(1)
    finals = 0
    for _ in range(300):
        acts = random_legal_actions(full.masks, rng, full.n_legal, full.legal_actions)
        before = full.states.copy()
        full.step(acts)
        stale = env.obs.copy()
        env.step(acts, rows=np.arange(N), watch=watch, final_obs=final)
        np.testing.assert_array_equal(full.states, env.states)
        seen = (env.seats == watch) | env.terminated
        np.testing.assert_array_equal(env.obs[seen], full.obs[seen])
        np.testing.assert_array_equal(env.obs[~seen], stale[~seen])
        for i in np.flatnonzero(env.terminated):
            st = before[i].copy()
            G.step_kernel(st, acts[i], np.zeros(4, np.float32), *env._tab)
            assert st[G.PHASE] == G.PH_OVER
            want = np.zeros(env.obs.shape[1], np.float32)
            observe_kernel(st, watch[i], want)
            np.testing.assert_array_equal(final[i], want)
            finals += 1
    assert finals > 5


def test_bad_rows_and_watch_raise_and_nothing_moves():
    env = VectorEnv(4, seed=0)
    env.reset()
    states = env.states.copy()
    a = env.masks.argmax(axis=1)
    for rows in (
        np.array([2, 1]),
        np.array([1, 1]),
        np.array([0, 4]),
        np.array([-1, 2]),
        np.array([0.0, 1.0]),
    ):
        with pytest.raises(ValueError, match="rows"):
            env.step(a[:2], rows=rows)
    with pytest.raises(ValueError, match="shape"):
        env.step(a, rows=np.array([0, 1]))
    final = np.zeros_like(env.obs)
    with pytest.raises(ValueError, match="watch"):
        env.step(a, watch=np.zeros(4, np.int64), final_obs=final)
    with pytest.raises(ValueError, match="watch"):
        env.step(a, watch=np.full(4, 5, np.int32), final_obs=final)
    with pytest.raises(ValueError, match="final_obs"):
        env.step(a, watch=np.zeros(4, np.int32), final_obs=np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match="go together"):
        env.step(a, final_obs=final)
    with pytest.raises(ValueError, match="go together"):
        env.step(a, watch=np.zeros(4, np.int32))
    with pytest.raises(ValueError, match="observations"):
        blind = VectorEnv(4, observations=False)
        blind.reset()
        blind.step(a, watch=np.zeros(4, np.int32), final_obs=final)
    bad = a.copy()
    bad[1] = np.flatnonzero(~env.masks[1])[0]
    with pytest.raises(ValueError, match="table 1: action"):
        env.step(bad[1:3], rows=np.array([1, 2]))  # raise mode: the batch of the rows is checked first
    np.testing.assert_array_equal(env.states, states)
    env.step(a[[0, 3]], rows=np.array([0, 3]))  # a plain list of rows works too
    env.step(a[[1]], rows=[1])
    env.step(a[:0], rows=np.zeros(0, np.int64))  # no rows: nothing moves
