"""Export of games in both Botzone log formats (mjenv.botzone.export): round trips on engine games (random,
kong-happy and rule-agent play) and on the judge corpus, where the exported judge outputs equal the real judge's."""

from __future__ import annotations

import numpy as np
import pytest

from mjenv import actions as A
from mjenv import game as G
from mjenv.botzone import humanlog as H
from mjenv.botzone import replay_human_log
from mjenv.botzone.export import export_human_log, export_match_log, main
from mjenv.observation import OBS_SIZE, observe_kernel
from tests._corpus import CORPUS
from tests._corpus import records as corpus_records


def _kong_happy(rng):
    """Wins, kongs and pungs whenever legal, else random: many kongs, added kongs and claims."""

    def pol(st, s, m):
        for a in [A.WIN, A.KONG, A.PUNG, *range(A.CONCEALED_KONG, A.WIN)]:
            if m[a]:
                return a
        return int(rng.choice(np.flatnonzero(m)))

    return pol


def _engine_games(n: int, seed: int, policy_of) -> list[dict]:
    rng = np.random.default_rng(seed)
    pol = policy_of(rng)
    out = []
    for g in range(n):
        w = np.repeat(np.arange(34), 4)
        rng.shuffle(w)
        out.append(H.record_round(w, g % 4, pol, f"e{seed}-{g}"))
    return out


def _same_game(a: np.ndarray, b: np.ndarray) -> None:
    for s in range(4):
        assert np.array_equal(G.seat_hand(a, s), G.seat_hand(b, s))
        assert G.seat_melds(a, s) == G.seat_melds(b, s)
        assert G.seat_discards(a, s) == G.seat_discards(b, s)
    assert list(a[G.SCORES : G.SCORES + 4]) == list(b[G.SCORES : G.SCORES + 4])
    assert a[G.WINNER] == b[G.WINNER] and a[G.WIN_TOTAL] == b[G.WIN_TOTAL]


def _round_trips(rounds: list[dict]) -> None:
    text = export_human_log(rounds)
    back_text = replay_human_log(text)
    back_json = [replay_human_log(export_match_log(r))[0] for r in rounds]
    for r, x, y in zip(rounds, back_text, back_json):
        assert x["ok"] and y["ok"] and x["scores"] == y["scores"] == r["scores"]
        _same_game(r["state"], x["state"])
        _same_game(r["state"], y["state"])


def _verbs(rounds):
    return {e[2] for r in rounds for e in r["events"]} | {r["end"] for r in rounds}


def test_engine_games_round_trip_both_formats():
    rounds = _engine_games(12, 1, _kong_happy) + _engine_games(8, 2, lambda rng: _kong_happy(rng))
    rnd = np.random.default_rng(3)
    rounds += _engine_games(8, 3, lambda rng: lambda st, s, m: int(rnd.choice(np.flatnonzero(m))))
    assert _verbs(rounds) >= {"AnGang", "BuGang", "Gang", "Peng", "Chi", "Hu", "Huang"}
    _round_trips(rounds)


def test_rule_agent_games_round_trip():
    pytest.importorskip("agents.rule")
    from mjenv.policy import load_policy

    rule = load_policy("agents.rule:make", 1, 0)
    obs = np.zeros((1, OBS_SIZE), np.float32)

    def pol(st, s, m):
        observe_kernel(st, s, obs[0])
        return int(np.asarray(rule(obs, m.reshape(1, -1), np.full(1, s, np.int32)))[0])

    rounds = _engine_games(6, 7, lambda rng: pol)
    assert any(r["end"] == "Hu" for r in rounds)
    _round_trips(rounds)


@pytest.mark.skipif(not CORPUS.exists(), reason="shared Botzone corpus not present")
def test_corpus_exports_equal_the_real_judge():
    """The judge corpus (games without flowers): every judge output of the exported match log but INIT (its
    srand / walltiles are ours) equals the real judge's, incl. robbed kongs, head-bumps and WA / WH / verdict
    endings; the text export replays with the judge's scores."""
    recs = corpus_records(CORPUS)
    kinds = set()
    n = 0
    for rec in recs:
        fans = {f["name"] for e in rec["log"][::2] for f in e["output"]["display"].get("fan", [])}
        end = rec["log"][-1]["output"]["display"]["action"]
        if not (rec["id"] % 16 == 0 or "抢杠和" in fans or end not in ("HU", "HUANG")):
            continue
        try:
            (r,) = H.parse_json(rec)
        except ValueError as e:
            assert "flowers" in str(e)
            continue
        ex = export_match_log(rec, srand=rec["id"])
        assert [e["output"] for e in ex["log"][2::2]] == [e["output"] for e in rec["log"][2::2]], rec["id"]
        assert ex["log"][0]["output"]["content"] == rec["log"][0]["output"]["content"]
        assert ex["scores"] == rec["scores"]
        if r["end"] in ("Hu", "Huang"):
            (x,) = replay_human_log(export_human_log(rec))
            assert x["ok"] and x["scores"] == [rec["scores"][str(s)] for s in range(4)]
        kinds.add("rob" if "抢杠和" in fans else end)
        n += 1
    assert n > 100 and kinds >= {"rob", "HU", "HUANG", "WA", "WH", "TLE", "RE", "MLE"}


def test_export_bad_input():
    (r,) = _engine_games(1, 5, _kong_happy)
    with pytest.raises(TypeError, match="games"):
        export_human_log("Match 1")
    with pytest.raises(ValueError, match="neither a round"):
        export_human_log([{"foo": 1}])
    with pytest.raises(ValueError, match="one round"):
        export_match_log([r, r])
    broken = dict(r, events=[e for e in r["events"] if e[2] != "Play"][:5])
    with pytest.raises(ValueError, match="round 0"):
        export_match_log(broken)
    wa = dict(r, end="WA")
    with pytest.raises(ValueError, match="only Hu and Huang"):
        export_human_log(wa)
    wrong = dict(r, log_scores=[1, 2, 3, 4])
    with pytest.raises(ValueError, match="pays"):
        export_match_log(wrong)


def test_export_command_line(tmp_path, capsys):
    rounds = _engine_games(3, 9, _kong_happy)
    src = tmp_path / "g.txt"
    src.write_text(export_human_log(rounds))
    js = tmp_path / "g.jsonl"
    assert main([str(src), "--to", "json", "-o", str(js)]) == 0
    assert main([str(js), "--to", "text"]) == 0
    text = capsys.readouterr().out
    assert [x["scores"] for x in replay_human_log(text)] == [r["scores"] for r in rounds]
    bad = tmp_path / "bad.txt"
    bad.write_text("Match 1\nWind 9\n")
    assert main([str(bad), "--to", "json"]) == 2
    assert "Wind" in capsys.readouterr().err
