"""``agents.waits``: the waits a discard leaves, counted and valued from the player's own view, and the check of a
policy's discards by them (``agents.nn:make(waits=...)``, on by default in ``agents.nn:baseline``)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from agents import waits as W  # noqa: E402
from mjenv import game as G  # noqa: E402
from mjenv.actions import DISCARD, NUM_TILE_TYPES, PASS  # noqa: E402
from mjenv.hand import batch_waits  # noqa: E402
from mjenv.observation import O_DSEQ, O_MSEQ, ORACLE_OFFSETS  # noqa: E402
from mjenv.shanten import batch_shanten  # noqa: E402

T = NUM_TILE_TYPES


def _play(steps: int, n: int = 32, oracle: bool = False, seed: int = 35):
    """``steps`` decisions of ``n`` tables of the shipped network without the check (greedy): ``(obs, masks,
    oracle, melds)`` per step, ``melds`` the acting seat's packed melds read from the table."""
    import agents.nn as ann
    from mjenv.vector import VectorEnv

    env = VectorEnv(n, seed=seed, oracle=oracle)
    env.reset()
    net = ann.baseline(n, 0, waits=False)
    for _ in range(steps):
        seat = env.seats
        melds = env.states[np.arange(n)[:, None], G.MELDS + 4 * seat[:, None] + np.arange(4)[None, :]]
        yield env.obs.copy(), env.masks.copy(), (env.oracle.copy() if oracle else None), melds
        env.step(net(env.obs, env.masks))


def test_unseen_copies_and_melds_agree_with_the_table():
    """The copies the player cannot see are the other hands' and the wall's (where no other seat holds a faceless
    concealed kong), its hand is its concealed tiles and its melds packed from the observation are the table's."""
    hands, wall = ORACLE_OFFSETS["hands"], ORACLE_OFFSETS["wall_counts"]
    checked = 0
    for obs, masks, oracle, melds in _play(80, oracle=True):
        packed = W._packed_melds(obs)
        assert np.array_equal(packed.astype(np.int64), melds.astype(np.int64))
        hand, _, n_melds = W.own_view(obs)
        assert np.array_equal(hand, oracle[:, hands : hands + T]) and np.array_equal(
            n_melds, (melds != 0).sum(1)
        )
        others_ckong = np.zeros(obs.shape[0], dtype=bool)
        for p in (1, 2, 3):
            others_ckong |= (obs[:, O_MSEQ + 12 * p : O_MSEQ + 12 * p + 12 : 3] == 5).any(axis=1)
        rows = ~masks[:, PASS] & ~others_ckong
        _, unseen, _ = W.own_view(obs[rows])
        hidden = oracle[rows, hands + T : hands + 4 * T].reshape(-1, 3, T).sum(axis=1)
        assert np.array_equal(unseen, hidden + oracle[rows, wall : wall + T])
        checked += int(rows.sum())
    assert checked > 1000


def test_values_mark_the_discards_into_waiting_and_near_hands():
    tenpai = near = dead = 0
    for obs, masks, _, _ in _play(80):
        legal = masks[:, DISCARD : DISCARD + T]
        for fn, want in ((W.discard_values, 0), (W.near_values, 1)):
            vals = fn(obs, masks)
            assert (vals[masks[:, PASS]] == -1).all() and (vals[~legal] == -1).all()
            r, d = np.nonzero(vals >= 0)
            hand, _, n = W.own_view(obs[r])
            hand[np.arange(r.size), d] -= 1
            assert (batch_shanten(hand, n) == want).all()  # valued: the discard leaves that shanten
            if want == 0:
                assert batch_waits(hand, n).any(axis=1).all()
                tenpai, dead = tenpai + r.size, dead + int((vals[r, d] == 0).sum())
            else:
                near += r.size
    assert tenpai > 100 and near > 100 and dead > 0


def test_compact_observations_give_the_same_values():
    """uint8 observations (``discard_seq`` as int8 two's complement, claimed discards negative) value every
    discard as their float32 decoding does."""
    import agents.nn as ann
    from mjenv.observation import decode
    from mjenv.vector import VectorEnv

    env = VectorEnv(32, seed=7, obs_dtype=np.uint8)
    env.reset()
    net = ann.baseline(32, 0, waits=False)
    claimed = 0
    for _ in range(80):
        obs, masks = env.obs, env.masks
        for fn in (W.discard_values, W.near_values):
            np.testing.assert_array_equal(fn(obs, masks), fn(decode(obs), masks))
        claimed += int((decode(obs)[:, O_DSEQ:O_MSEQ] < 0).sum())
        env.step(net(obs, masks))
    assert claimed > 0


def test_a_dead_wait_is_worth_nothing_and_a_live_one_its_unseen_copies_times_its_takings():
    """All chows and little else: waits short of 8 fan are dead (value 0); a hand with one live wait is worth that
    wait's unseen copies times the takings of its win, by the formula of the module docstring."""
    from mjenv.fans import WIN_SELF_DRAWN, score_batch
    from mjenv.hand import Hand

    def value(text: str, p: float = 0.3) -> float:
        counts = Hand.parse(text).counts.astype(np.int8)[None, :T]
        ctx = {"melds": np.zeros((1, 4), np.int16), "n_melds": np.zeros(1, np.int64), "seat": np.zeros(1, np.int64),
               "prev": np.zeros(1, np.int64), "flowers": np.zeros(1, np.int64)}  # fmt: skip
        v, ready = W._wait_values(counts, ctx, np.clip(4 - counts, 0, 4).astype(np.int64), p)
        assert ready[0]
        return float(v[0])

    assert value("123m345p567s78s55p") == 0  # waits 6s and 9s: 4 fan by a discard, 6 self-drawn
    # waits 1s (5 / 7 fan: dead) and 4s (11 / 13 fan: live, 4 unseen copies)
    counts = Hand.parse("123m345p567s23s55p").counts.astype(np.int8)[None, :T]
    fans = [int(score_batch(counts, np.zeros((1, 4), np.int16), 0, t, f, 0, 0, 0)[0][0]) for t in (9, 12)
            for f in (0, WIN_SELF_DRAWN)]  # fmt: skip
    assert fans == [5, 7, 11, 13]
    for p in (0.0, 0.3, 1.0):
        assert value("123m345p567s23s55p", p) == pytest.approx(4 * (p * 3 * (13 + 8) + (1 - p) * (11 + 24)))


def test_check_discards_moves_only_discards_to_better_valued_ones():
    moved = 0
    import agents.nn as ann

    net = ann.baseline(32, 0, waits=False)
    for obs, masks, _, _ in _play(80):
        a = net(obs, masks)
        b = W.check_discards(obs, masks, a, margin=0.5, near=0.5)
        c = W.check_discards(obs, masks, a, margin=0.5)
        t, n = W.discard_values(obs, masks), W.near_values(obs, masks)
        diff = np.flatnonzero(a != c)  # the tenpai check alone: a better-valued discard into a waiting hand
        assert (t[diff, a[diff]] >= 0).all() and (t[diff, c[diff]] > 1.5 * t[diff, a[diff]]).all()
        more = np.flatnonzero(b != c)  # the near check on top: only discards that leave shanten 1
        assert (n[more, c[more]] >= 0).all() and (n[more, b[more]] > 1.5 * n[more, c[more]]).all()
        assert masks[np.arange(b.size), b].all()
        moved += diff.size + more.size
    assert moved > 0
    for bad in ({"margin": -0.1}, {"p_self": 1.5}, {"margin": float("nan")}, {"near": True}):
        with pytest.raises(ValueError):
            W.check_settings(**{"margin": 0.5, "near": None, "p_self": 0.3, **bad})


def test_the_baseline_checks_its_discards_by_default():
    """``agents.nn:baseline`` is the network with :data:`agents.nn.WAIT_CHECK`; ``waits=False`` is the network
    alone; ``agents.nn:make(waits=...)`` takes the settings; bad ones fail before play."""
    import agents.nn as ann

    checked, plain = ann.baseline(32, 0), ann.baseline(32, 0, waits=False)
    custom = ann.make(32, 0, checkpoint=ann.BASELINE_PATH, greedy=True, waits={"near": None})
    assert checked.waits == ann.WAIT_CHECK and plain.waits is None and "wait value" in checked.describe()
    differ = 0
    for obs, masks, _, _ in _play(60):
        a = plain(obs, masks)
        np.testing.assert_array_equal(checked(obs, masks), W.check_discards(obs, masks, a, **ann.WAIT_CHECK))
        np.testing.assert_array_equal(
            custom(obs, masks), W.check_discards(obs, masks, a, margin=0.5, near=None)
        )
        differ += int((checked(obs, masks) != a).sum())
    assert differ > 0
    with pytest.raises(ValueError, match="margin, near and p_self"):
        ann.make(1, 0, waits={"depth": 2})
    with pytest.raises(TypeError, match="waits"):
        ann.make(1, 0, waits="yes")
