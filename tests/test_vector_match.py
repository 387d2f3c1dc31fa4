"""16-hand matches in the VectorEnv (``RuleConfig(match=True)``) against the AEC env's match procedure.

Both fronts play the same matches from the same seeds with the same actions: a random legal action (or, rarely,
an illegal one that ends the hand and the match in ``illegal="terminate"``) chosen by a hash of
(table, match, hand, step), so a table's actions depend on nothing else. Per hand the two must agree on the
seed, dealer, prevailing wind, seating, every op, the payments per player, the winner and the match scores;
the AEC env's ``hand_log`` records equal the records :func:`mjenv.record.make_log` builds from the vector
env's hands. Run the 1,000-match comparison with ``pytest -m slow tests/test_vector_match.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from mjenv import game as G
from mjenv.pettingzoo_env import raw_env
from mjenv.record import make_log
from mjenv.rules import SEATING, RuleConfig, chair_of_player, placements
from mjenv.vector import VectorEnv, table_seeds

RULES = RuleConfig(match=True, illegal="terminate")
_M64 = (1 << 64) - 1
#: about one decision in this many plays an illegal action (ends the hand and the match)
ILLEGAL_ONE_IN = 20_000


def _mix_int(*keys: int) -> int:
    """splitmix64 over the keys (Python ints)."""
    x = 0x9E3779B97F4A7C15
    for k in keys:
        x = (x ^ (k & _M64)) & _M64
        x = (x + 0x9E3779B97F4A7C15) & _M64
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
        x ^= x >> 31
    return x


def _mix_np(*keys: np.ndarray) -> np.ndarray:
    """:func:`_mix_int` on arrays of keys (uint64 arithmetic wraps as the masks do)."""
    x = None
    for k in keys:
        k = np.asarray(k).astype(np.uint64)
        x = np.full(k.shape, 0x9E3779B97F4A7C15, np.uint64) if x is None else x
        x = x ^ k
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return x


def _choose(u: int, legal: np.ndarray, mask: np.ndarray) -> int:
    """The action of draw ``u`` at a decision: ``legal[u % n]``, or the lowest illegal action id."""
    if (u >> 40) % ILLEGAL_ONE_IN == 0:
        return int(np.argmin(mask))
    return int(legal[u % len(legal)])


def play_vector(tables: int, matches: int, seed: int, threads: int = 1) -> list[list[list[dict]]]:
    """Play until every table finished ``matches`` matches; ``out[table][match]`` lists the hands."""
    env = VectorEnv(tables, seed=seed, rules=RULES, observations=False, threads=threads)
    env.reset()
    out: list[list[list[dict]]] = [[[]] for _ in range(tables)]
    ops: list[list] = [[] for _ in range(tables)]
    steps = np.zeros(tables, np.int64)
    rows = np.arange(tables)
    while (env.matches_done < matches).any():
        mh, md = env.match_hand.copy(), env.matches_done.copy()
        setup = np.stack([env.dealers, env.prevalents]).T.copy()
        chairs, seats = env.chairs, env.seats.copy()
        assert (np.take_along_axis(env.players, chairs, axis=1) == np.arange(4)).all()
        u = _mix_np(rows, md, mh, steps)
        acts = env.legal_actions[rows, (u % env.n_legal.astype(np.uint64)).astype(np.int64)].astype(np.int64)
        bad = (u >> np.uint64(40)) % np.uint64(ILLEGAL_ONE_IN) == 0
        acts[bad] = np.argmin(env.masks[bad], axis=1)
        for i in range(tables):
            ops[i].append(("penalty", int(seats[i]), 0) if bad[i] else ("act", int(seats[i]), int(acts[i])))
        env.step(acts)
        assert (env.illegal == bad).all()
        steps += 1
        prew = env.player_rewards()
        for i in np.flatnonzero(env.terminated):
            r = env.results
            pay = [int(r.scores[i, chairs[i, p]]) for p in range(4)]
            assert prew[i].tolist() == pay  # all of a hand's payments come at its last step here
            over = bool(env.match_over[i])
            score = env.match_results.scores[i] if over else env.match_scores[i]
            w = int(r.winner[i])
            hand = {
                "seed": int(r.seed[i]),
                "dealer": int(setup[i, 0]),
                "prevalent": int(setup[i, 1]),
                "hand_index": int(r.match_hand[i]),
                "chairs": chairs[i].tolist(),
                "ops": ops[i],
                "payments": pay,
                "winner": None if w < 0 else int(np.flatnonzero(chairs[i] == w)[0]),
                "match_scores": score.tolist(),
            }
            assert hand["hand_index"] == mh[i]
            out[i][-1].append(hand)
            if over:
                assert env.match_results.hands[i] == mh[i] + 1 == len(out[i][-1])
                assert env.matches_done[i] == md[i] + 1 and env.match_hand[i] == 0
                out[i].append([])
            else:
                assert env.match_hand[i] == mh[i] + 1 and env.matches_done[i] == md[i]
            ops[i] = []
            steps[i] = 0
    return [t[:matches] for t in out]


def play_aec(table: int, seed: int, matches: int) -> tuple[list[list[dict]], raw_env, list]:
    """The same table's first ``matches`` matches in the AEC env (each from the last hand's next seed)."""
    aec = raw_env(rules=RULES)
    names = aec.possible_agents
    mask = np.zeros(109, np.bool_)
    out: list[list[dict]] = []
    logs = []
    for m in range(matches):
        aec.reset(seed=seed)
        hands: list[dict] = []
        step = 0
        while not all(aec.terminations.values()):
            st = aec.state_array
            G.legal_mask_kernel(st, int(st[G.CUR]), mask)
            n_hands = len(aec._hands)
            a = _choose(_mix_int(table, m, n_hands - 1, step), np.flatnonzero(mask), mask)
            aec.step(a)
            step += 1
            if len(aec._hands) > n_hands or all(aec.terminations.values()):  # the hand ended
                res = aec.infos[names[0]]["result"]
                seed_h, dealer, prevalent, ops, chairs = aec._hands[res["hand_index"]]
                hands.append(
                    {
                        "seed": seed_h,
                        "dealer": dealer,
                        "prevalent": prevalent,
                        "hand_index": res["hand_index"],
                        "chairs": chairs,
                        "ops": ops,
                        "payments": [res["payments"][n] for n in names],
                        "winner": None if res["winner"] is None else names.index(res["winner"]),
                        "match_scores": [res["match_scores"][n] for n in names],
                    }
                )
                step = 0
        out.append(hands)
        logs.append(aec.hand_log(0))
        seed = int(G.next_seed_kernel(aec.state_array))
    return out, aec, logs


def compare(tables: int, matches: int, seed: int) -> tuple[int, int, int, int]:
    """(matches compared, hands compared, matches an illegal action cut short, differences) over
    ``tables * matches`` matches."""
    vec = play_vector(tables, matches, seed)
    first = table_seeds(seed, tables)
    n_matches = n_hands = cut = diffs = 0
    for i in range(tables):
        aec, _env, logs = play_aec(i, int(first[i]), matches)
        for m in range(matches):
            n_matches += 1
            n_hands += len(aec[m])
            cut += len(aec[m]) < 16
            if vec[i][m] != aec[m]:
                diffs += 1
            # the AEC env's record of the match's first hand equals one built from the vector env's hand
            h = vec[i][m][0]
            log = make_log(h["seed"], h["dealer"], h["prevalent"], RULES, h["ops"])
            log["players"] = {f"player_{p}": h["chairs"][p] for p in range(4)}
            diffs += log != logs[m]
    return n_matches, n_hands, cut, diffs


def test_match_schedule_of_a_table():
    """Seating, dealer and wind of every hand follow RuleConfig.hand_setup and mjenv.rules.SEATING."""
    vec = play_vector(3, 2, seed=5)
    for matches in vec:
        for hands in matches:
            for h, hand in enumerate(hands):
                assert hand["hand_index"] == h
                assert (hand["prevalent"], hand["dealer"]) == RULES.hand_setup(h)
                assert hand["chairs"] == [chair_of_player(h // 4, p) for p in range(4)]
            total = np.sum([hand["payments"] for hand in hands], axis=0)
            assert hands[-1]["match_scores"] == total.tolist()


def test_vector_matches_equal_aec_matches():
    n_matches, n_hands, cut, diffs = compare(tables=50, matches=4, seed=11)
    assert n_matches == 200 and n_hands > 3000 and cut > 0
    assert diffs == 0


@pytest.mark.slow
def test_vector_matches_equal_aec_matches_1000():
    n_matches, n_hands, cut, diffs = compare(tables=125, matches=8, seed=2026)
    print(
        f"compared {n_matches} matches ({cut} cut short by an illegal action), {n_hands} hands: {diffs} differences"
    )
    assert n_matches == 1000 and diffs == 0


def test_match_results_and_placements():
    env = VectorEnv(16, seed=3, rules=RULES, observations=False, threads=1)
    _, masks, _ = env.reset()
    assert (env.match_hand == 0).all() and (env.dealers == 0).all() and (env.prevalents == 0).all()
    rng = np.random.default_rng(0)
    seen = 0
    while seen < 4:
        acts = env.legal_actions[np.arange(16), rng.integers(0, env.n_legal)]
        before = env.match_scores.copy()
        env.step(acts)
        for i in np.flatnonzero(env.match_over):
            seen += 1
            final = env.match_results.scores[i]
            assert final.tolist() == (before[i] + env.player_rewards()[i].astype(np.int32)).tolist()
            assert final.sum() == 0 and (env.match_scores[i] == 0).all()
            assert env.match_results.placements[i].tolist() == placements(final[None])[0].tolist()


def test_stop_after_one_match_and_reset():
    env = VectorEnv(4, seed=1, rules=RULES, observations=False, threads=1, after_schedule="stop")
    env.reset()
    rng = np.random.default_rng(1)
    while env.active.any():
        acts = np.zeros(4, np.int64)
        on = env.active
        acts[on] = env.legal_actions[on, rng.integers(0, env.n_legal[on])]
        env.step(acts)
    assert (env.matches_done == 1).all() and (env.match_results.hands == 16).all()
    assert (env.seats == -1).all() and env.match_over.any()  # the step that ended the last match
    env.step(np.zeros(4, np.int64))  # stopped tables ignore their actions
    assert not env.match_over.any() and not env.terminated.any() and (env.matches_done == 1).all()
    env.reset()
    assert env.active.all() and (env.matches_done == 0).all() and (env.match_hand == 0).all()


def test_match_mode_refuses_schedule_and_winds():
    env = VectorEnv(2, seed=0, rules=RULES, observations=False, threads=1)
    with pytest.raises(ValueError, match="match"):
        env.reset(dealers=1)
    env.reset()
    with pytest.raises(ValueError, match="match"):
        env.schedule(np.array([1, 2]))


def test_single_hands_have_no_match():
    env = VectorEnv(2, seed=0, observations=False, threads=1)
    env.reset()
    assert (env.match_hand == -1).all() and (env.results.match_hand == -1).all()
    assert (env.chairs == np.arange(4)).all() and (env.players == np.arange(4)).all()


def test_placements_share_ties():
    assert placements([[10, 0, 0, -10]]).tolist() == [[1.0, 2.5, 2.5, 4.0]]
    assert placements(np.zeros(4)).tolist() == [2.5] * 4
    assert (SEATING[np.arange(4)[:, None], np.argsort(SEATING, axis=1)] == np.arange(4)).all()
    with pytest.raises(ValueError):
        placements([1, 2, 3])


def test_two_threads_play_the_one_thread_matches():
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 Numba threads")
    assert play_vector(64, 1, seed=9, threads=2) == play_vector(64, 1, seed=9, threads=1)
