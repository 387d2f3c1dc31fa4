"""mjenv.determinize: redealing what one seat cannot see keeps its observation, the tiles and the table's play."""

import numpy as np
import pytest

from mjenv import game as G
from mjenv.determinize import determinize
from mjenv.observation import OBS_SIZE, observe_kernel
from mjenv.rules import RuleConfig


def _obs(st, seat):
    o = np.zeros(OBS_SIZE, np.float32)
    observe_kernel(st, seat, o)
    return o


def _hidden(st, seat):
    """Counts of the hidden tiles: the other hands, the wall and the other seats' concealed kong faces."""
    c = np.zeros(42, np.int64)
    for k in range(4):
        if k == seat:
            continue
        c[:34] += st[G.HAND + 34 * k : G.HAND + 34 * k + 34]
        for m in st[G.MELDS + 4 * k : G.MELDS + 4 * k + st[G.N_MELDS + k]]:
            if (m >> 8) & 3 == 3 and (m >> 6) & 3 == 0:
                c[m & 63] += 4
    np.add.at(c, st[G.WALL + st[G.FRONT] : G.WALL + st[G.BACK]], 1)
    return c


def _turns(rules, seeds, every=5):
    """Tables at some seat's own turn, from random play (the rng fixed: the same tables every run)."""
    rng = np.random.default_rng(0)
    for seed in seeds:
        st = G.new_state()
        G.reset(st, seed, rules=rules)
        n = 0
        while st[G.PHASE] != G.PH_OVER:
            s = int(st[G.CUR])
            if st[G.PHASE] == G.PH_TURN and n % every == 0:
                yield st.copy(), s
            n += 1
            G.step(st, int(rng.choice(np.flatnonzero(G.legal_mask(st, s)))))


@pytest.mark.parametrize("flowers", [True, False])
def test_redeal_keeps_what_the_seat_sees_and_plays_on(flowers):
    rng = np.random.default_rng(1)
    rules = RuleConfig(flowers=flowers)
    n = moved = 0
    for st, s in _turns(rules, range(40)):
        new = st.copy()
        determinize(new, s, int(rng.integers(2**62)))
        assert (_obs(new, s) == _obs(st, s)).all()
        assert (_hidden(new, s) == _hidden(st, s)).all()
        for k in range(4):
            assert (
                new[G.HAND + 34 * k : G.HAND + 34 * k + 34].sum()
                == st[G.HAND + 34 * k : G.HAND + 34 * k + 34].sum()
            )
            assert (new[G.HAND + 34 * k : G.HAND + 34 * k + 34] >= 0).all()
        assert (
            new[G.HAND : G.HAND + 4 * 34].reshape(4, 34)[s] == st[G.HAND : G.HAND + 4 * 34].reshape(4, 34)[s]
        ).all()
        # every field outside the hidden ones is untouched; the other seats' waits are those of their new hands
        same = np.ones(G.STATE_SIZE, bool)
        same[G.HAND : G.HAND + 4 * 34] = False
        same[G.WALL : G.WALL + 144] = False
        same[G.WAITS : G.WAITS + 8] = False
        same[G.MELDS : G.MELDS + 16] = False
        assert (new[same] == st[same]).all()
        for k in set(range(4)) - {s}:  # (the seat to act caches the waits of its hand before the draw)
            check = new.copy()
            G.update_waits_kernel(check, k, *G.win_tables())
            assert (
                check[G.WAITS + 2 * k : G.WAITS + 2 * k + 2] == new[G.WAITS + 2 * k : G.WAITS + 2 * k + 2]
            ).all()
        moved += not (new == st).all()
        while new[G.PHASE] != G.PH_OVER:  # the redealt table plays on as any other
            G.step(new, int(rng.choice(np.flatnonzero(G.legal_mask(new, int(new[G.CUR]))))))
        n += 1
    assert n > 100 and moved > 0.9 * n


def test_redeal_reads_nothing_hidden():
    """The result depends on the observation and the seed only: a table redealt once, then again with seed b,
    equals the original redealt with seed b (kong faces, flowers' places and all)."""
    rng = np.random.default_rng(2)
    for st, s in _turns(RuleConfig(), range(20), every=7):
        other = st.copy()
        determinize(other, s, int(rng.integers(2**62)))
        b = int(rng.integers(2**62))
        x, y = st.copy(), other.copy()
        determinize(x, s, b)
        determinize(y, s, b)
        assert (x == y).all()


def test_seeds_and_keep_hands():
    st, s = next(_turns(RuleConfig(), [3], every=11))
    a, b, c = st.copy(), st.copy(), st.copy()
    determinize(a, s, 5)
    determinize(b, s, 5)
    determinize(c, s, 6)
    assert (a == b).all() and not (a == c).all()
    k = st.copy()
    determinize(k, s, 5, keep_hands=True)
    assert (k[G.HAND : G.HAND + 4 * 34] == st[G.HAND : G.HAND + 4 * 34]).all()
    wall = slice(G.WALL + st[G.FRONT], G.WALL + st[G.BACK])
    assert sorted(k[wall]) == sorted(st[wall]) and not (k[wall] == st[wall]).all()


def test_expected_counts_steer_the_redeal():
    st, s = next(_turns(RuleConfig(), [4], every=13))
    other = (s + 1) % 4
    hidden = _hidden(st, s)
    t = int(np.flatnonzero(hidden[:34] >= 3)[0])
    expect = np.zeros((4, 34))
    expect[other] = 0.1
    expect[other, t] = 3.0
    hits = hits0 = 0
    for seed in range(200):
        x, y = st.copy(), st.copy()
        determinize(x, s, seed, expect=expect)
        determinize(y, s, seed)
        hits += x[G.HAND + 34 * other + t]
        hits0 += y[G.HAND + 34 * other + t]
    assert hits > 3 * hits0


def test_bad_calls_raise_and_leave_the_table():
    st, s = next(_turns(RuleConfig(), [5], every=9))
    before = st.copy()
    with pytest.raises(ValueError, match="own turn"):
        determinize(st, (s + 1) % 4, 1)
    with pytest.raises(ValueError, match="seat"):
        determinize(st, 4, 1)
    with pytest.raises(ValueError, match="expect"):
        determinize(st, s, 1, expect=np.ones((3, 34)))
    with pytest.raises(ValueError, match="seed"):
        determinize(st, s, -1)
    assert (st == before).all()
    pw = G.new_state()
    G.reset(pw, 1, rules=RuleConfig(private_walls=True, flowers=False))
    with pytest.raises(ValueError, match="private walls"):
        determinize(pw, int(pw[G.CUR]), 1)


def test_rows_of_a_vector_env():
    """determinize_rows on copied tables of a VectorEnv: the acting seat's observation is still the env's row,
    the copies play to the end, and a row not at its own turn is refused before anything changes."""
    from mjenv.determinize import determinize_rows
    from mjenv.observation import observe_kernel as observe
    from mjenv.vector import VectorEnv

    env = VectorEnv(16, seed=3, threads=1)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.masks]))
    turn = np.flatnonzero(env.states[:, G.PHASE] == G.PH_TURN)
    other = np.flatnonzero(env.states[:, G.PHASE] != G.PH_TURN)
    assert turn.size and other.size
    roll = VectorEnv(turn.size, seed=9, threads=1, after_schedule="stop")
    roll.reset()
    roll.copy_tables(env, turn, np.arange(turn.size))
    before = roll.states.copy()
    determinize_rows(roll.states, np.arange(turn.size), np.arange(turn.size) + 100)
    assert not (roll.states == before).all()
    for i in range(turn.size):
        o = np.zeros(OBS_SIZE, np.float32)
        observe(roll.states[i], int(roll.seats[i]), o)
        assert (o == roll.obs[i]).all()
    while roll.active.any():
        roll.step(np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in roll.masks]))
    states = env.states.copy()
    with pytest.raises(ValueError, match="own turn"):
        determinize_rows(env.states, np.array([turn[0], other[0]]), np.array([1, 2]))
    with pytest.raises(ValueError, match="seeds"):
        determinize_rows(env.states, turn, np.zeros(turn.size + 1, np.int64))
    with pytest.raises(ValueError, match="expect"):
        determinize_rows(env.states, turn, np.arange(turn.size), expect=np.zeros((turn.size, 3, 34)))
    assert (env.states == states).all()


def test_expected_counts_of_the_real_hands_give_them_back():
    for st, s in _turns(RuleConfig(), [6, 7], every=9):
        expect = st[G.HAND : G.HAND + 4 * 34].reshape(4, 34).astype(np.float64)
        expect[s] = 0
        x = st.copy()
        determinize(x, s, 11, expect=expect)
        assert (x[G.HAND : G.HAND + 4 * 34] == st[G.HAND : G.HAND + 4 * 34]).all()
