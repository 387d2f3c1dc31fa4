"""The policy protocol (mjenv.policy): factories by import string, clear errors, the per-agent adapter."""

from __future__ import annotations

import numpy as np
import pytest

import mjenv
from mjenv import actions as A
from mjenv.policy import (
    AgentPolicy,
    RandomPolicy,
    TableStreams,
    load_policy,
    make_random,
    policy_info,
    resolve_factory,
)


def test_load_policy_by_import_string():
    pol = load_policy("mjenv.policy:make_random", 4, 0)
    assert isinstance(pol, RandomPolicy)
    masks = np.zeros((3, A.NUM_ACTIONS), np.bool_)
    masks[:, [2, 5]] = True
    acts = pol(None, masks, np.zeros(3, np.int32))
    assert acts.dtype == np.int64 and set(acts.tolist()) <= {2, 5}


@pytest.mark.parametrize(
    "spec, match",
    [
        ("mjenv.policy", "module:factory"),
        ("a:b:c", "module:factory"),
        (":make", "module:factory"),
        ("no_such_module_xyz:make", "cannot import"),
        ("mjenv.policy:nope", "no attribute"),
    ],
)
def test_bad_import_strings(spec, match):
    with pytest.raises(ValueError, match=match):
        load_policy(spec, 1, 0)


def test_bad_factories():
    with pytest.raises(TypeError, match="not callable"):
        resolve_factory("mjenv.policy:__doc__")
    with pytest.raises(TypeError, match=r"\(num_envs, seed, \*\*kwargs\)"):
        load_policy(lambda n: None, 1, 0)
    with pytest.raises(TypeError, match="not a policy"):
        load_policy(lambda n, s: 42, 1, 0)
    with pytest.raises(TypeError, match="no options"):
        make_random(1, 0, temperature=2)
    # an unknown option: the message names the key and the options the factory takes, not the signature
    with pytest.raises(TypeError, match="unexpected option 'extra'; its options: none"):
        load_policy(lambda num_envs, seed: RandomPolicy(seed), 1, 0, extra=1)
    with pytest.raises(TypeError, match="unexpected option 'gredy'; its options: env, greedy"):
        load_policy(lambda num_envs, seed, *, env=None, greedy=False: None, 1, 0, gredy=True)


def test_policy_info_uses_act_with_info_when_present():
    class WithInfo:
        def __call__(self, obs, masks, seats):
            return np.argmax(masks, axis=1)

        def act_with_info(self, obs, masks, seats):
            a = self(obs, masks, seats)
            return a, {"value": np.zeros(len(a), np.float32)}

    masks = np.eye(A.NUM_ACTIONS, dtype=np.bool_)[[3, 7]]
    a, info = policy_info(WithInfo(), None, masks, np.zeros(2, np.int32))
    assert a.tolist() == [3, 7] and info["value"].shape == (2,)
    a, info = policy_info(RandomPolicy(0), None, masks, np.zeros(2, np.int32))
    assert a.tolist() == [3, 7] and info == {}


def test_agent_policy_plays_the_aec_env():
    env = mjenv.env()
    env.reset(seed=3)
    adapter = AgentPolicy(RandomPolicy(1))
    steps = 0
    while not all(env.terminations.values()):
        env.step(adapter(env.observe(env.agent_selection)))
        steps += 1
    assert steps > 10
    with pytest.raises(ValueError, match="no legal action"):
        adapter(np.zeros(10, np.float32), np.zeros(A.NUM_ACTIONS, np.int8))
    with pytest.raises(ValueError, match="entries"):
        adapter(None, np.ones(5, np.int8))
    with pytest.raises(TypeError):
        AgentPolicy(3)


def test_table_streams_depend_only_on_their_key_and_draw_count():
    a, b = TableStreams(4), TableStreams(3)
    keys = np.array([11, 12, 13, 14], np.uint64)
    a.start(np.arange(4), keys)
    b.start(np.array([2, 0, 1]), keys[[0, 2, 3]])  # the same hands on other tables
    first = a.rows(np.arange(4)).random(4)
    assert ((0 <= first) & (first < 1)).all() and len(set(first.tolist())) == 4
    # the same keys on other tables, drawn in other batches and orders, give the same numbers
    assert b.rows(np.array([1, 2])).random(2).tolist() == [first[3], first[0]]
    assert b.rows(np.array([0])).random((1,)).tolist() == [first[2]]
    second = a.rows(np.array([0])).random(1)  # a table's second draw: the next number of its own stream
    assert second[0] != first[0] and b.rows(np.array([2])).random(1).tolist() == second.tolist()
    a.start(np.array([0]), keys[:1])  # a new hand with the same key rewinds the stream
    assert a.rows(np.array([0])).random(1)[0] == first[0]
    with pytest.raises(ValueError, match="one number per row"):
        a.rows(np.arange(2)).random(3)


def test_random_policy_draws_from_the_row_streams_it_is_given():
    masks = np.zeros((3, A.NUM_ACTIONS), np.bool_)
    masks[:, :14] = True
    seats = np.zeros(3, np.int32)
    acts = []
    for own_seed in (0, 1):  # its own generator is not used when it is given rng
        st = TableStreams(3)
        st.start(np.arange(3), np.array([5, 6, 7], np.uint64))
        acts.append(RandomPolicy(own_seed)(None, masks, seats, rng=st.rows(np.arange(3))).tolist())
    assert acts[0] == acts[1]
    st = TableStreams(3)
    st.start(np.arange(3), np.array([5, 6, 7], np.uint64))
    assert acts[0] == [int(u * 14) for u in st.rows(np.arange(3)).random(3)]
