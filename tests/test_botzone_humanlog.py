"""Human logs (mjenv.botzone.humanlog): the corpus JSON logs, export/import of engine games, bad input."""

import numpy as np
import pytest

from mjenv import game as G
from mjenv.botzone import humanlog as H
from mjenv.botzone import replay_human_log
from tests._corpus import CORPUS
from tests._corpus import records as corpus_records


def _games(seed, n):
    rng = np.random.default_rng(seed)

    def pol(st, s, m):
        ids = np.flatnonzero(m)
        return 107 if m[107] else int(rng.choice(ids))

    out = []
    for g in range(n):
        w = np.repeat(np.arange(34), 4)
        rng.shuffle(w)
        out.append(H.record_round(w, g % 4, pol, str(g)))
    return out


@pytest.mark.skipif(not CORPUS.exists(), reason="shared Botzone corpus not present")
def test_corpus_scores_equal_the_judge():
    recs = corpus_records(CORPUS)
    n_ok = n_flowers = 0
    for r in recs:
        try:
            (out,) = replay_human_log(r)
        except ValueError as e:
            assert "flowers" in str(e)
            n_flowers += 1
            continue
        assert out["scores"] == out["log_scores"] == [r["scores"][str(s)] for s in range(4)], r["id"]
        n_ok += 1
    assert n_ok == 561 and n_flowers == 39


def test_export_import_replays_identically():
    rounds = _games(1, 40)
    text = H.export_text(rounds)
    res = replay_human_log(text)
    assert len(res) == 40
    for r, x in zip(rounds, res):
        assert x["ok"] and x["scores"] == r["scores"] and x["match"] == r["match"]
        a, b = r["state"], x["state"]
        for s in range(4):  # same hands, melds and discards at the end
            assert np.array_equal(G.seat_hand(a, s), G.seat_hand(b, s))
            assert G.seat_melds(a, s) == G.seat_melds(b, s)
            assert G.seat_discards(a, s) == G.seat_discards(b, s)
    # verbs in another case parse the same
    assert [x["scores"] for x in replay_human_log(text.replace(" Play ", " PLAY "))] == [
        x["scores"] for x in res
    ]


def _one():
    return H.export_text(_games(2, 1))


def test_malformed_lines_name_round_and_line():
    text = _one()
    lines = text.splitlines()
    bad = "\n".join(lines[:7] + ["Player 0 Frobnicate W1"] + lines[7:])
    with pytest.raises(ValueError, match=r"round 0 line 8: unknown verb"):
        replay_human_log(bad)
    with pytest.raises(ValueError, match="not a tile code"):
        replay_human_log(text.replace("Deal W", "Deal X", 1))
    with pytest.raises(ValueError, match="Score"):
        replay_human_log(text.replace("Score", "Scor"))
    with pytest.raises(ValueError, match="ends before"):
        replay_human_log("\n".join(lines[:-1]))
    with pytest.raises(ValueError, match="Ignore"):
        replay_human_log(text.replace("Player 0 Play", "Player 0 Play W1 Ignore", 1))
    with pytest.raises(ValueError, match="expected 'Match"):
        replay_human_log("Wind 0\n")


def test_illegal_action_and_unfit_draws():
    text = _one()
    lines = text.splitlines()
    k = next(i for i, ln in enumerate(lines) if " Play " in ln)
    p, tile = lines[k].split()[1], lines[k].split()[3]
    held = {ln.split()[3] for ln in lines[2:6]}
    other = next(c for c in ("J3", "J2", "J1", "F4") if c not in held and c != tile)
    lines[k] = f"Player {p} Play {other}"
    with pytest.raises(ValueError, match=rf"line {k + 1}: (illegal action|player)"):
        replay_human_log("\n".join(lines))
    r = H.parse_text(text)[0]
    r["events"] = r["events"] + [(999, 1, "Draw", 0, [])] * 30
    with pytest.raises(ValueError, match="do not fit a wall"):
        H.replay_round(r)
