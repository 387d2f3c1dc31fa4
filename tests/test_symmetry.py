"""agents.symmetry: hands played on relabelled walls see exactly the mapped observations and masks."""

from __future__ import annotations

import numpy as np
import pytest

from agents import symmetry as S
from mjenv import game as G
from mjenv import observation as O
from mjenv.rules import RuleConfig


def _play_pair(view: S.View, seed: int, rules: RuleConfig) -> int:
    """Play one hand of random legal actions on a wall and, in step, on its relabelled wall; check every
    seat's observation and mask each step. Returns the number of steps."""
    rng = np.random.default_rng(seed)
    n = 144 if rules.flowers else 136
    wall = rng.permutation(np.concatenate([np.repeat(np.arange(34), 4), np.arange(34, 34 + n - 136)]))
    tmap = np.concatenate([view.tmap, np.arange(34, 42)])  # flowers stay
    a, b = G.new_state(), G.new_state()
    G.reset_wall(a, wall, dealer=seed % 4, prevalent=(seed // 4) % 4, rules=rules)
    G.reset_wall(b, tmap[wall], dealer=seed % 4, prevalent=(seed // 4) % 4, rules=rules)
    oa, ob = np.zeros(O.OBS_SIZE, np.uint8), np.zeros(O.OBS_SIZE, np.uint8)
    ma, mb = np.zeros(G.NUM_ACTIONS, np.int8), np.zeros(G.NUM_ACTIONS, np.int8)
    steps = 0
    while a[G.PHASE] != G.PH_OVER:
        cur = int(a[G.CUR])
        assert int(b[G.CUR]) == cur
        for seat in range(4):
            O.observe_mask_kernel(a, seat, seat == cur, oa, ma)
            O.observe_mask_kernel(b, seat, seat == cur, ob, mb)
            np.testing.assert_array_equal(view.obs(oa[None])[0], ob)
            np.testing.assert_array_equal(view.mask(ma[None])[0], mb)
        O.observe_mask_kernel(a, cur, True, oa, ma)
        legal = np.flatnonzero(ma)
        act = int(rng.choice(legal))
        ra = G.step(a, act)
        rb = G.step(b, int(view.amap[act]))
        np.testing.assert_array_equal(ra, rb)
        steps += 1
    assert b[G.PHASE] == G.PH_OVER
    return steps


@pytest.mark.parametrize("k", range(len(S.VIEWS)))
def test_relabelled_tables_see_the_mapped_observations(k):
    view = S.View(*S.VIEWS[k])
    steps = sum(_play_pair(view, 10 * k + j, RuleConfig(flowers=bool(j % 2))) for j in range(4))
    assert steps > 100


def test_views_are_the_twelve_symmetries():
    maps = {tuple(S.View(*v).tmap) for v in S.VIEWS}
    assert len(maps) == 12 and tuple(range(34)) in maps
    assert S.VIEWS[0] == ((0, 1, 2), False)
    for v in S.VIEWS:
        view = S.View(*v)
        assert sorted(view.amap) == list(range(G.NUM_ACTIONS))
        x = np.random.default_rng(0).random((3, G.NUM_ACTIONS))
        # back() undoes mask(): a value written at the relabelled action comes back at the original one
        np.testing.assert_array_equal(view.back(view.mask(x)), x)
    with pytest.raises(ValueError, match="permutation"):
        S.tile_map((0, 0, 1))


def test_float32_and_uint8_observations_map_alike():
    from mjenv.vector import VectorEnv

    env = VectorEnv(8, seed=3, obs_dtype=np.uint8)
    env.reset()
    rng = np.random.default_rng(1)
    view = S.View((2, 0, 1), True)
    claimed = 0
    for _ in range(80):
        np.testing.assert_array_equal(view.obs(O.decode(env.obs)), view.obs(env.obs))
        claimed += int((O.views(env.obs)["discard_seq"] < 0).sum())
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.masks]))
    assert claimed > 0  # negative discard_seq entries were mapped too


def test_symmetric_policy_averages_the_views():
    torch = pytest.importorskip("torch")
    from agents import nn as N
    from mjenv.vector import VectorEnv

    env = VectorEnv(16, seed=5, obs_dtype=np.uint8)
    env.reset()
    base = N.latest(16, 0)  # the network alone, which agents.nn:symmetric averages
    one, sym = N.symmetric(16, 0, views=1), N.symmetric(16, 0)
    obs, masks = [], []
    for _ in range(40):
        obs.append(env.obs.copy())
        masks.append(env.masks.copy())
        env.step(base(env.obs, env.masks))
    o, m = np.concatenate(obs), np.concatenate(masks)
    np.testing.assert_array_equal(one(o, m), base(o, m))  # one view: the network itself
    a = sym(o, m)
    assert m[np.arange(len(a)), a].all()
    # by hand: the summed floored log-probabilities of the twelve views, mapped back to the original actions
    with torch.no_grad():
        total = np.zeros(m.shape)
        for v in S.VIEWS:
            view = S.View(*v)
            ov, mv = view.obs(o), view.mask(m)
            p = base._probs(base.net.features(ov, mv), mv)[0].numpy()
            total += view.back(np.log(np.maximum(p, N.PROB_FLOOR)))
    total[~m] = -np.inf
    np.testing.assert_array_equal(a, total.argmax(1))
    assert "12 tile views" in sym.describe()
    with pytest.raises(ValueError, match="views must be 1..12"):
        N.symmetric(1, 0, views=13)
    with pytest.raises(TypeError, match="views must be an int"):
        N.symmetric(1, 0, views=2.0)
