"""The vector env's threads share the tables out in work items (``vector.CHUNK`` tables each): each thread takes
the items of its own segment of the batch from the front, then those of the other segments from the back.
Whatever thread steps a table, every output is the same as with one thread."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from mjenv.vector import CHUNK, NUM_ACTIONS, VectorEnv

OUTPUTS = (
    "states",
    "obs",
    "masks",
    "seats",
    "n_legal",
    "rewards",
    "terminated",
    "illegal",
    "active",
    "hands_done",
)
RESULTS = (
    "winner",
    "loser",
    "fan_total",
    "win_flags",
    "fan_counts",
    "scores",
    "hand_steps",
    "events",
    "seed",
)


def _actions(env: VectorEnv, rng: np.random.Generator, p_illegal: float) -> np.ndarray:
    """A random legal action per active table, some replaced by a random (mostly illegal) action id."""
    n = env.num_envs
    k = np.maximum(env.n_legal, 1)
    a = env.legal_actions[np.arange(n), (rng.random(n) * k).astype(np.int64)].astype(np.int64)
    wild = rng.random(n) < p_illegal
    a[wild] = rng.integers(-1, NUM_ACTIONS + 1, int(wild.sum()))
    return a


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
@pytest.mark.parametrize(
    ("illegal", "n"),
    [("penalty", 5 * CHUNK + 3), ("terminate", 5 * CHUNK + 3), ("penalty", 2 * CHUNK + 1), ("penalty", 7)],
)
def test_two_threads_give_the_one_thread_outputs(illegal, n):
    """Batches of several work items (the last one short, an odd count: the threads' segments differ in size,
    one item only)."""
    envs = [
        VectorEnv(n, seed=7, threads=t, obs_dtype=np.uint8, illegal=illegal, after_schedule="stop")
        for t in (1, 2)
    ]
    for env in envs:
        env.reset()
        # a third of the tables stop after this hand, the others have hands queued: stopped tables skip their work
        rest = np.arange(n // 3, n)
        env.schedule(np.arange(rest.size * 20, dtype=np.int64).reshape(rest.size, 20) + 100, tables=rest)
    rng = np.random.default_rng(3)
    counts = []
    for step in range(400):
        a = _actions(envs[0], rng, 0.02)
        for env in envs:
            env.step(a)
        counts.append(int(envs[0].illegal.sum()))
        for name in OUTPUTS:
            np.testing.assert_array_equal(
                getattr(envs[0], name), getattr(envs[1], name), err_msg=f"{name}, {step}"
            )
        for name in RESULTS:
            np.testing.assert_array_equal(
                getattr(envs[0].results, name),
                getattr(envs[1].results, name),
                err_msg=f"results.{name}, {step}",
            )
    assert sum(counts) > 0 and (~envs[0].active).any() and envs[0].active.any()  # the test saw both kinds


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
def test_raise_mode_counts_illegal_actions_with_two_threads():
    n = 3 * CHUNK
    env = VectorEnv(n, seed=1, threads=2, observations=False)
    env.reset()
    before = env.states.copy()
    a = _actions(env, np.random.default_rng(0), 0.0)
    bad = [3, CHUNK + 1, n - 1]
    for i in bad:
        a[i] = int(np.flatnonzero(~env.masks[i])[0])
    with pytest.raises(ValueError, match="3 illegal action"):
        env.step(a)
    assert np.flatnonzero(env.illegal).tolist() == bad
    np.testing.assert_array_equal(env.states, before)  # nothing moved


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
def test_items_of_a_segment_whose_thread_never_comes_are_stolen(monkeypatch):
    """An env of two threads run by a team of one: the one thread steps its own segment, then takes every item
    of the other segment from its back (the path a thread that wakes late or is preempted leaves to the others)."""
    from mjenv import vector

    n = 4 * CHUNK + 5
    one = VectorEnv(n, seed=2, threads=1, obs_dtype=np.uint8, illegal="penalty")
    two = VectorEnv(n, seed=2, threads=2, obs_dtype=np.uint8, illegal="penalty")
    one.reset()
    two.reset()
    numba.set_num_threads(1)
    monkeypatch.setattr(vector.numba, "get_num_threads", lambda: 2)  # the env does not set its two threads
    rng = np.random.default_rng(5)
    for step in range(150):
        a = _actions(one, rng, 0.02)
        one.step(a)
        two.step(a)
        for name in OUTPUTS:
            np.testing.assert_array_equal(getattr(one, name), getattr(two, name), err_msg=f"{name}, {step}")
