"""The vector env's seed schedule: per-table seeds, dealers and winds; queued hands; stopping tables."""

from __future__ import annotations

import numpy as np
import pytest

from mjenv import game as G
from mjenv.policy import random_legal_actions
from mjenv.rules import RuleConfig
from mjenv.vector import VectorEnv


def _single(seed: int, dealer: int, prevalent: int) -> np.ndarray:
    st = G.new_state()
    G.reset(st, seed, dealer, prevalent, RuleConfig(illegal="raise"))  # the vector env's default rules
    return st


def test_reset_with_dealers_and_winds_matches_the_engine():
    seeds = np.array([5, 6, 7, 8, 5], np.int64)
    dealers = np.array([0, 1, 2, 3, 2])
    prevalents = np.array([3, 2, 1, 0, 1])
    env = VectorEnv(5, seed=0, observations=False, threads=1)
    _, _masks, seats = env.reset(seeds, dealers=dealers, prevalents=prevalents)
    for i in range(5):
        np.testing.assert_array_equal(
            env.states[i], _single(int(seeds[i]), int(dealers[i]), int(prevalents[i]))
        )
        assert seats[i] == dealers[i]
    assert env.active.all() and (env.scheduled == 0).all()
    env.reset()  # the same deals again (seeds, dealers and winds are kept)
    np.testing.assert_array_equal(env.states[3], _single(8, 3, 0))


@pytest.mark.parametrize("after", ["stop", "continue"])
def test_queued_hands_follow_in_order_then_stop_or_continue(after):
    n, k = 6, 3
    env = VectorEnv(n, seed=0, observations=False, threads=1, illegal="raise", after_schedule=after)
    env.reset(np.arange(100, 100 + n), dealers=1, prevalents=2)
    q_seeds = 1000 + np.arange(n * k).reshape(n, k)
    q_dealers = np.arange(n * k).reshape(n, k) % 4
    env.schedule(q_seeds[:, :1], q_dealers[:, :1], prevalents=3)  # in two parts: tests the queue's growth
    env.schedule(q_seeds[:, 1:], q_dealers[:, 1:], prevalents=3)
    assert (env.scheduled == k).all()
    rng = np.random.default_rng(0)
    played = [[] for _ in range(n)]  # seeds of the finished hands per table
    for _ in range(6000):
        if after == "stop" and not env.active.any():
            break
        acts = np.zeros(n, np.int64)
        live = np.flatnonzero(env.active)
        acts[live] = random_legal_actions(env.masks[live], rng)
        acts[~env.active] = 999  # ignored at stopped tables (out of range would be illegal elsewhere)
        _, masks, seats, rewards, term = env.step(acts)
        for i in np.flatnonzero(term):
            played[i].append(int(env.results.seed[i]))
            h = len(played[i])
            if h <= k and env.active[i]:  # the new hand is the next queued one: exactly the engine's deal
                np.testing.assert_array_equal(
                    env.states[i], _single(int(q_seeds[i, h - 1]), int(q_dealers[i, h - 1]), 3)
                )
        stopped = ~env.active
        assert (
            (masks[stopped] == 0).all() and (seats[stopped] == -1).all() and (env.n_legal[stopped] == 0).all()
        )
        assert (rewards[stopped] == 0).all()
        if after == "stop" and len(min(played, key=len)) > k:
            break
        if after == "continue" and len(min(played, key=len)) >= k + 2:
            break
    for i in range(n):
        assert played[i][: k + 1] == [100 + i, *q_seeds[i].tolist()][: k + 1]
    if after == "stop":
        assert not env.active.any() and all(len(p) == k + 1 for p in played)
        with pytest.raises(ValueError, match="stopped"):
            env.schedule(np.array([1]), tables=[0])
        env.reset()
        assert env.active.all()
    else:
        assert env.active.all() and (env.dealers == 1).all()
        assert all(len(set(p)) == len(p) for p in played)  # own-RNG hands after the queue


def test_schedule_bad_inputs():
    env = VectorEnv(3, seed=0, observations=False, threads=1)
    with pytest.raises(RuntimeError, match="reset"):
        env.schedule(np.arange(3))
    env.reset()
    with pytest.raises(ValueError, match="shape"):
        env.schedule(np.arange(4))
    with pytest.raises(ValueError, match=r"\[0, 2\*\*63\)"):
        env.schedule(np.array([-1, 0, 0]))
    with pytest.raises(ValueError, match="dealers"):
        env.schedule(np.arange(3), dealers=4)
    with pytest.raises(ValueError, match="prevalents"):
        env.schedule(np.arange(3), prevalents=np.array([0, 1]))
    with pytest.raises(ValueError, match="repeat"):
        env.schedule(np.arange(2), tables=[1, 1])
    with pytest.raises(ValueError, match="table indices"):
        env.schedule(np.arange(1), tables=[3])
    with pytest.raises(ValueError, match="dealers"):
        env.reset(dealers=np.array([0, 1]))
    with pytest.raises(ValueError, match="after_schedule"):
        VectorEnv(2, after_schedule="loop")
    assert (env.scheduled == 0).all()  # nothing was queued by the failed calls
    env.schedule(np.array([7]), tables=np.array([2]))
    env.schedule(np.array([8, 9]), dealers=np.array([3, 2]), prevalents=np.array([1, 0]), tables=[2, 0])
    assert env.scheduled.tolist() == [1, 0, 2]
    assert env._sq_dealer[2, :2].tolist() == [0, 3] and env._sq_prev[0, :1].tolist() == [0]
