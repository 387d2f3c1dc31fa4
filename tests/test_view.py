"""``mjenv.view``: the player's own view decoded from its observation, against the table it was observed from."""

from __future__ import annotations

import numpy as np
import pytest

from mjenv import game as G
from mjenv import melds as M
from mjenv import observation as O
from mjenv import view as V
from mjenv.policy import RandomPolicy
from mjenv.vector import VectorEnv

T = 34
MD = G.MAX_DISCARDS


def _table_view(state: np.ndarray, seat: int) -> dict[str, np.ndarray]:
    """What ``seat`` may know of ``state``, read from the table itself (relative seats as in the observation),
    and the copies it cannot see (the other hands, the wall, the faces of the others' concealed kongs)."""
    hand = state[G.HAND + T * seat : G.HAND + T * seat + T].astype(np.int64)
    melds = np.zeros((4, 4), np.int64)
    n_melds = np.zeros(4, np.int64)
    discards = np.zeros((4, MD), np.int64)
    n_discards = np.zeros(4, np.int64)
    visible = hand.copy()
    claimed = np.zeros(T, np.int64)
    by_others = np.zeros(T, bool)
    unseen = np.zeros(T, np.int64)
    for r in range(4):
        p = (seat + r) % 4
        n_melds[r] = state[G.N_MELDS + p]
        for i in range(n_melds[r]):
            m = int(state[G.MELDS + 4 * p + i])
            if r != 0 and M.is_concealed(m):
                unseen[M.tile_of(m)] += 4
                m = M.pack(M.KONG, 0, 0)  # the face an observer cannot see
            else:
                np.add.at(visible, M.meld_tiles(m), 1)
            melds[r, i] = m
        n_discards[r] = state[G.N_DISC + p]
        for j in range(n_discards[r]):
            v = int(state[G.DISC + MD * p + j])
            t, was_claimed = v & 63, bool(v & G.CLAIMED_BIT)
            discards[r, j] = -(t + 1) if was_claimed else t + 1
            if was_claimed:
                claimed[t] += 1
            else:
                visible[t] += 1
                by_others[t] |= r != 0
        if r != 0:
            unseen += state[G.HAND + T * p : G.HAND + T * p + T]
    wall = state[G.WALL + state[G.FRONT] : G.WALL + state[G.BACK]]
    unseen += np.bincount(wall[wall < T], minlength=T)
    return {"hand": hand, "melds": melds, "n_melds": n_melds, "discards": discards, "n_discards": n_discards,
            "visible": visible, "claimed": claimed, "by_others": by_others, "unseen": unseen}  # fmt: skip


def _play(dtype, steps: int = 160, n: int = 48, seed: int = 3):
    """``(obs, states, seats)`` of every decision of ``n`` tables of random play."""
    env = VectorEnv(n, seed=seed, obs_dtype=dtype)
    pol = RandomPolicy(seed)
    obs, masks, seats = env.reset()
    for _ in range(steps):
        yield obs.copy(), env.states.copy(), seats.copy()
        obs, masks, seats, _, _ = env.step(pol(obs, masks, seats))


@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_the_view_is_the_tables(dtype):
    """Hand, melds (packed as the table packs them; another seat's concealed kong without its face), discards,
    visible and unseen copies (unseen = the other hands, the wall and the faces of the others' concealed kongs),
    the tiles others discarded, and the winds, wall, flowers and concealed counts, for every decision of random
    play."""
    seen = {"chow": 0, "claimed": 0, "hidden kong": 0, "added kong": 0, "own kong": 0}
    rows = 0
    for obs, states, seats in _play(dtype):
        v = V.decode_views(obs)
        vc = V.decode_views(obs, count_claimed=True)
        for i in range(obs.shape[0]):
            st, seat = states[i], int(seats[i])
            want = _table_view(st, seat)
            for k in ("hand", "melds", "n_melds", "discards", "n_discards", "visible", "by_others", "unseen"):
                np.testing.assert_array_equal(getattr(v, k)[i], want[k], err_msg=k)
            np.testing.assert_array_equal(vc.visible[i], want["visible"] + want["claimed"])
            np.testing.assert_array_equal(v.unseen[i], np.maximum(0, 4 - want["visible"]))
            f = v.facts[i]
            assert f[V.FACT_SEAT] == (seat - st[G.DEALER]) % 4 and f[V.FACT_PREVALENT] == st[G.PREVALENT]
            assert f[V.FACT_WALL] == st[G.BACK] - st[G.FRONT] and f[V.FACT_TURN] == (st[G.TURN] - seat) % 4
            for r in range(4):
                p = (seat + r) % 4
                assert f[V.FACT_FLOWERS + r] == st[G.FLOWERS + p]
            assert f[V.FACT_CONCEALED] == want["hand"].sum()
            ms = [int(m) for m in v.melds[i].ravel() if m]
            seen["chow"] += sum(M.kind_of(m) == M.CHOW for m in ms)
            seen["added kong"] += sum(M.is_added(m) for m in ms)
            seen["hidden kong"] += sum(
                not V.face_shown(int(m), r) for r in range(4) for m in v.melds[i, r] if m
            )
            seen["own kong"] += sum(M.is_concealed(int(m)) for m in v.melds[i, 0])
            seen["claimed"] += int(want["claimed"].sum())
        rows += obs.shape[0]
    assert rows >= 7000 and all(seen.values()), seen


def test_facts_are_the_observations_pieces():
    """The one-hot pieces as indices (-1 where none), the scalars as integers."""
    for obs, _, _ in _play(np.uint8, steps=40, n=16):
        f = V.decode_views(obs).facts
        pv = O.views(obs)
        for name, k in (("seat_wind", V.FACT_SEAT), ("prevalent_wind", V.FACT_PREVALENT), ("phase", V.FACT_PHASE),
                        ("drawn", V.FACT_DRAWN), ("offer_tile", V.FACT_OFFER), ("offer_from", V.FACT_FROM),
                        ("turn", V.FACT_TURN)):  # fmt: skip
            x = pv[name]
            np.testing.assert_array_equal(f[:, k], np.where(x.any(1), x.argmax(1), -1), err_msg=name)
        np.testing.assert_array_equal(f[:, V.FACT_WALL], pv["wall"][:, 0])
        np.testing.assert_array_equal(f[:, V.FACT_NO_WIN], pv["no_win"][:, 0])
        np.testing.assert_array_equal(f[:, V.FACT_CONCEALED : V.FACT_CONCEALED + 4], pv["concealed"])
        np.testing.assert_array_equal(f[:, V.FACT_FLOWERS : V.FACT_FLOWERS + 4], pv["flowers"])


def _every_meld():
    """Every packed meld an observation can hold (chows by a suited 2..8, pungs and kongs of every tile)."""
    out = []
    for t in range(T):
        for offer in (1, 2, 3):
            if t < 27 and t % 9 not in (0, 8):
                out.append(M.pack(M.CHOW, t, offer))
            out += [M.pack(M.PUNG, t, offer), M.pack(M.KONG, t, offer), M.pack(M.KONG, t, offer, True)]
        out.append(M.pack(M.KONG, t, 0))
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_meld_seq_entries_round_trip(dtype):
    """Each meld written as the observation writes it (kind code, tile + 1, offer) reads back as the same packed
    meld for the observer; another seat's concealed kong as one of tile 0 without a face."""
    melds = _every_meld()
    obs = np.zeros((len(melds), O.OBS_SIZE), dtype)
    for i, m in enumerate(melds):
        code = V.meld_seq_code(m)
        assert code == {M.CHOW: 1, M.PUNG: 2}.get(
            M.kind_of(m), 5 if M.is_concealed(m) else 4 if M.is_added(m) else 3
        )
        for r in range(4):
            hidden = r != 0 and code == V.SEQ_CONCEALED_KONG
            obs[i, O.O_MSEQ + 12 * r : O.O_MSEQ + 12 * r + 3] = (code, 0 if hidden else M.tile_of(m) + 1,
                                                                   M.offer_of(m))  # fmt: skip
    v = V.decode_views(obs)
    assert (v.n_melds == 1).all()
    np.testing.assert_array_equal(v.melds[:, 0, 0], melds)
    for r in (1, 2, 3):
        hidden = np.array([M.is_concealed(m) for m in melds])
        np.testing.assert_array_equal(v.melds[:, r, 0], np.where(hidden, M.pack(M.KONG, 0, 0), melds))
    shown = [len(M.meld_tiles(m)) * (1 if M.is_concealed(m) else 4) for m in melds]  # the others see no face
    np.testing.assert_array_equal(v.visible.sum(1), shown)


def test_random_observations_decode_alike_in_both_encodings():
    """Any bytes (hypothesis-style random observations, valid or not): the uint8 reading and the float32 one of
    :func:`mjenv.observation.decode` give the same view, every meld is a meld, every count is in range."""
    rng = np.random.default_rng(0)
    obs8 = rng.integers(0, 256, (4000, O.OBS_SIZE)).astype(np.uint8)
    small = rng.random(obs8.shape) < 0.7  # mostly small values, as real observations hold
    obs8[small] = rng.integers(0, 6, int(small.sum()))
    a, b = V.decode_views(obs8), V.decode_views(O.decode(obs8))
    for k in V.OwnView._fields:
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)
    assert ((a.hand >= 0) & (a.hand <= 4)).all() and ((a.unseen >= 0) & (a.unseen <= 4)).all()
    for m in np.unique(a.melds):
        if m:
            M.meld_tiles(int(m))  # a meld of its kind
            assert M.pack(M.kind_of(m), M.tile_of(m), M.offer_of(m), M.is_added(m)) == m


def test_bad_input_is_an_error():
    with pytest.raises(ValueError, match="shape"):
        V.decode_views(np.zeros((2, O.OBS_SIZE - 1), np.float32))
    with pytest.raises(ValueError, match="float32 or uint8"):
        V.decode_views(np.zeros((2, O.OBS_SIZE), np.float64))
    obs = np.zeros((2, O.OBS_SIZE), np.uint8)
    v = V.OwnView(*(np.zeros((3, *a.shape[1:]), a.dtype) for a in V.decode_views(obs)))
    assert V.views_kernel(obs, *v, False) == V.ERR_SHAPE
    assert V.decode_views(np.zeros((0, O.OBS_SIZE), np.uint8)).hand.shape == (0, T)
