"""``observe_kernel`` against a plain-Python reading of the observation spec (``mjenv.observation``'s docstring).

The kernel is written for speed (unsigned indices, branch-free writes, an inlined per-player writer); this
reference is written for reading, from the spec table, and the two must agree bit for bit on states of random
play, for every seat (not only the one to act), in both dtypes, with flowers, penalties and every meld kind.
"""

import numpy as np
import pytest

from mjenv import actions as A
from mjenv import game as G
from mjenv import observation as O
from mjenv.melds import meld_added, meld_kind, meld_offer, meld_tile
from mjenv.policy import random_legal_actions
from mjenv.rules import RuleConfig
from mjenv.vector import VectorEnv


def after_unclaimed_window(st: np.ndarray) -> np.ndarray:
    """The table after ``st``'s open window closes with every seat asked passing (answers given so far
    ignored), by stepping the engine, with the draw shown as one tile that is no flower (the spec: the view of
    a seat that is not asked)."""
    alt = st.copy()
    drawer = int(st[G.OFFER_SEAT]) if st[G.PHASE] == G.PH_ROB else (int(st[G.OFFER_SEAT]) + 1) % 4
    alt[G.CLAIM : G.CLAIM + 4] = np.where(alt[G.CLAIM : G.CLAIM + 4] >= 0, A.PASS, alt[G.CLAIM : G.CLAIM + 4])
    while alt[G.PHASE] in (G.PH_CLAIM, G.PH_ROB):
        G.step(alt, A.PASS)
    if alt[G.PHASE] != G.PH_OVER and alt[G.FLOWERS + drawer] != st[G.FLOWERS + drawer]:
        alt[G.FLOWERS + drawer] = st[G.FLOWERS + drawer]
        alt[G.BACK] = alt[G.FRONT] + st[G.BACK] - st[G.FRONT] - 1
    return alt


def reference_observation(st: np.ndarray, seat: int) -> np.ndarray:
    """The float32 observation of ``seat`` in state ``st``, written piece by piece from the spec table."""
    if st[G.PHASE] in (G.PH_CLAIM, G.PH_ROB) and st[G.ASK_ALL] == 0 and seat != st[G.CUR]:
        drawer = int(st[G.OFFER_SEAT]) if st[G.PHASE] == G.PH_ROB else (int(st[G.OFFER_SEAT]) + 1) % 4
        if seat != drawer:  # not asked: the table as it will be if nobody claims
            st = after_unclaimed_window(st)
    o = np.zeros(O.OBS_SIZE, np.float32)
    v = O.views(o)  # views share o's memory
    for r in range(4):
        p = (seat + r) % 4
        hand = st[G.HAND + 34 * p : G.HAND + 34 * p + 34]
        if r == 0:
            for k in range(4):
                v["hand"][k] = hand > k
        melded = np.zeros(34, int)
        for i in range(int(st[G.N_MELDS + p])):
            m = int(st[G.MELDS + 4 * p + i])
            kind, t, offer = int(meld_kind(m)), int(meld_tile(m)), int(meld_offer(m))
            code = kind if kind != 3 else (5 if offer == 0 else (4 if meld_added(m) else 3))
            hidden = code == 5 and r != 0  # the face of another player's concealed kong
            v["meld_seq"][r, i] = (code, 0 if hidden else t + 1, offer)
            if not hidden:
                for x in [t - 1, t, t + 1] if kind == 1 else [t] * (4 if kind == 3 else 3):
                    melded[x] += 1
        discarded = np.zeros(34, int)
        for i in range(min(int(st[G.N_DISC + p]), G.MAX_DISCARDS)):
            d = int(st[G.DISC + G.MAX_DISCARDS * p + i])
            t = d & 63
            v["discard_seq"][r, i] = -(t + 1) if d & G.CLAIMED_BIT else t + 1
            discarded[t] += 1
        for k in range(4):
            v["melds"][r, k] = melded > k
            v["discards"][r, k] = discarded > k
        v["flowers"][r] = st[G.FLOWERS + p]
        v["concealed"][r] = hand.sum()
    ph, turn = int(st[G.PHASE]), int(st[G.TURN])
    if ph == G.PH_TURN and turn == seat and st[G.DRAWN] >= 0:
        v["drawn"][st[G.DRAWN]] = 1
    v["seat_wind"][(seat - st[G.DEALER]) % 4] = 1
    v["prevalent_wind"][st[G.PREVALENT]] = 1
    v["wall"][0] = st[G.BACK] - st[G.FRONT]
    if ph == G.PH_TURN:
        v["phase"][st[G.JUST_CLAIMED]] = 1
    elif st[G.CUR] == seat and ph in (G.PH_CLAIM, G.PH_ROB):
        v["phase"][2 if ph == G.PH_CLAIM else 3] = 1
        v["offer_tile"][st[G.OFFER_TILE]] = 1
        v["offer_from"][(st[G.OFFER_SEAT] - seat) % 4] = 1
    if ph != G.PH_OVER:
        v["turn"][(turn - seat) % 4] = 1
    v["no_win"][0] = st[G.NO_WIN + seat]
    return o


def _states(rules: RuleConfig, n_tables: int, steps: int, every: int, seed: int, wrong: float = 0.0):
    """Snapshots of ``n_tables`` tables under random play (``wrong``: share of tables given an illegal pass)."""
    env = VectorEnv(n_tables, seed=seed, rules=rules, observations=False, threads=1)
    _, masks, _ = env.reset()
    rng = np.random.default_rng(seed)
    out = []
    for k in range(steps):
        a = random_legal_actions(masks, rng, env.n_legal, env.legal_actions)
        if wrong:
            bad = (rng.random(n_tables) < wrong) & ~masks[:, A.PASS]
            a[bad] = A.PASS
        _, masks, *_ = env.step(a)
        if k % every == 0:
            out.append(env.states.copy())
    return np.concatenate(out)


def test_observe_kernel_equals_the_spec_reference():
    states = np.concatenate([
        _states(RuleConfig(illegal="raise"), 24, 200, 10, seed=1),
        _states(RuleConfig(flowers=False, illegal="penalty"), 24, 200, 10, seed=2, wrong=0.02),
        _states(RuleConfig(claim_windows="all"), 8, 120, 10, seed=3),
    ])  # fmt: skip
    f32 = np.empty(O.OBS_SIZE, np.float32)
    u8 = np.empty(O.OBS_SIZE, np.uint8)
    seen = dict.fromkeys(("claimed discard", "chow", "pung", "exposed kong", "added kong", "concealed kong",
                          "flower", "no_win", "claim window", "rob window", "hidden kong face",
                          "window not asked", "window drawer"), 0)  # fmt: skip
    for st in states:
        for seat in range(4):
            if st[G.PHASE] in (G.PH_CLAIM, G.PH_ROB) and st[G.ASK_ALL] == 0 and seat != st[G.CUR]:
                seen["window drawer" if seat == G.window_drawer_kernel(st) else "window not asked"] += 1
            ref = reference_observation(st, seat)
            f32.fill(7)  # the kernel must overwrite every feature
            u8.fill(7)
            O.observe_kernel(st, seat, f32)
            O.observe_kernel(st, seat, u8)
            assert np.array_equal(f32, ref)
            assert np.array_equal(O.decode(u8), ref)
            v = O.views(ref)
            seen["claimed discard"] += int((v["discard_seq"] < 0).sum())
            codes = v["meld_seq"][..., 0]
            for name, code in (("chow", 1), ("pung", 2), ("exposed kong", 3), ("added kong", 4)):
                seen[name] += int((codes == code).sum())
            seen["concealed kong"] += int((codes[0] == 5).sum())
            seen["hidden kong face"] += int(((codes[1:] == 5) & (v["meld_seq"][1:, :, 1] == 0)).sum())
            seen["flower"] += int(v["flowers"].sum())
            seen["no_win"] += int(v["no_win"][0])
            seen["claim window"] += int(v["phase"][2])
            seen["rob window"] += int(v["phase"][3])
    # every branch of the writer was exercised (each needs only a few occurrences over ~3.8k observations; the
    # rarest, a concealed kong, occurs 33 times)
    missing = [k for k, n in seen.items() if n == 0 and k != "rob window"]
    assert not missing, seen


def test_observe_kernel_rejects_a_bad_seat():
    st = G.new_state()
    G.reset(st, 3)
    obs = np.zeros(O.OBS_SIZE, np.uint8)
    for seat in (-1, 4):
        with pytest.raises(ValueError, match="seat must be 0..3"):
            O.observe_kernel(st, seat, obs)


def test_observe_kernel_on_finished_hands_equals_the_spec_reference():
    """A finished hand (won by discard or self-draw, drawn, or aborted by an illegal action) is the one state
    whose concealed counts the kernel sums instead of deriving them from the meld counts: the winner of a
    discard holds the winning tile, an abort leaves any hand size."""
    rng = np.random.default_rng(5)
    f32 = np.empty(O.OBS_SIZE, np.float32)
    u8 = np.empty(O.OBS_SIZE, np.uint8)
    kinds = {"discard win": 0, "self-drawn win": 0, "draw": 0, "abort": 0}
    for seed in range(120):
        st = G.new_state()
        G.reset(st, seed, rules=RuleConfig(illegal="terminate"))
        abort_at = int(rng.integers(5, 60)) if seed % 8 == 0 else -1
        k = 0
        while st[G.PHASE] != G.PH_OVER:
            mask = G.legal_mask(st, int(st[G.CUR]))
            if k == abort_at and not mask[A.PASS]:
                # an illegal pass in a turn: in terminate mode the hand ends at once
                G.penalize_kernel(st, st[G.CUR], G.penalty_kind_kernel(st, A.PASS), np.zeros(4, np.float32))
            else:
                win = mask[A.WIN]
                G.step(st, A.WIN if win else int(rng.choice(np.flatnonzero(mask))))
            k += 1
        if st[G.WINNER] >= 0:
            kinds["self-drawn win" if st[G.LOSER] < 0 else "discard win"] += 1
        else:
            kinds["abort" if (st[G.EVENTS] & G.EV_EXHAUSTIVE) == 0 else "draw"] += 1
        for seat in range(4):
            ref = reference_observation(st, seat)
            f32.fill(7)
            u8.fill(7)
            O.observe_kernel(st, seat, f32)
            O.observe_kernel(st, seat, u8)
            assert np.array_equal(f32, ref)
            assert np.array_equal(O.decode(u8), ref)
    assert all(kinds.values()), kinds
