"""Viewer input beyond mjenv records: private walls (Botzone variant), given walls in records, Botzone JSON match
logs (the shared corpus) and human logs (``humanlog.export_text`` of engine games), and their bad-input errors.

The browser half (each seat's private wall count on the page) is in tests/test_viewer_browser.py.
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import mjenv
from mjenv import game as G
from mjenv.botzone import humanlog as H
from mjenv.cli import main
from mjenv.record import make_log, replay
from mjenv.rules import RuleConfig
from mjenv.viewer import build_view, load_records
from mjenv.viewer.logs import records_from_log
from tests._corpus import CORPUS

needs_corpus = pytest.mark.skipif(not CORPUS.exists(), reason="shared Botzone corpus not present")


def private_walls_seen(rec: dict) -> list[list[int]]:
    """The four private wall counts the page shows at every step (the deal, then the moves' ``pw``)."""
    hand = build_view(rec)["hands"][0]
    pw = hand["deal"]["pw"]
    out = [pw]
    for step in hand["steps"]:
        pw = step["mv"].get("pw", pw)
        out.append(pw)
    return out


def botzone_env_record(seed: int) -> dict:
    """A hand of the AEC env under ``RuleConfig.botzone()``, random legal actions, as ``hand_log()`` writes it."""
    env = mjenv.env(rules=RuleConfig.botzone())
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return env.unwrapped.hand_log()


def exported_rounds(seed: int, n: int) -> list[dict]:
    rng = np.random.default_rng(seed)

    def pol(st, s, m):
        return 107 if m[107] else int(rng.choice(np.flatnonzero(m)))

    out = []
    for g in range(n):
        w = np.repeat(np.arange(34), 4)
        rng.shuffle(w)
        out.append(H.record_round(w, g % 4, pol, str(g)))
    return out


def test_env_record_under_private_walls_shows_each_seats_wall():
    rec = botzone_env_record(3)
    assert RuleConfig.from_dict(rec["rules"]).private_walls and "wall_given" not in rec
    states = replay(rec)
    seen = private_walls_seen(rec)
    assert len(seen) == len(states)
    for k, st in enumerate(states):
        assert seen[k] == G.wall_counts(st), f"step {k}"
    assert seen[0] != seen[-1] and len({tuple(x) for x in seen}) > 10


def test_given_wall_records_replay_and_are_checked():
    rules = RuleConfig.botzone(2)
    wall = np.repeat(np.arange(34), 4)
    np.random.default_rng(7).shuffle(wall)
    st = G.new_state()
    G.reset_wall(st, wall, 0, 2, rules)
    rng, ops = np.random.default_rng(7), []
    mask = np.zeros(109, bool)
    while st[G.PHASE] != G.PH_OVER:
        s = int(st[G.CUR])
        G.legal_mask_kernel(st, s, mask)
        a = int(rng.choice(np.flatnonzero(mask)))
        G.step(st, a)
        ops.append(["act", s, a])
    log = make_log(0, 0, 2, rules, ops, wall=wall)
    assert log["wall_given"] is True and log["dice"] == [0, 0]
    log = json.loads(json.dumps(log))
    assert np.array_equal(replay(log)[-1], st)
    assert private_walls_seen(log)[-1] == G.wall_counts(st)
    bad = {**log, "wall": log["wall"][:-1] + [log["wall"][0]]}  # one tile 5 times
    with pytest.raises(ValueError, match="4 times"):
        replay(bad)
    seeded = {k: v for k, v in log.items() if k != "wall_given"}  # without the flag the seed must match
    with pytest.raises(ValueError, match="seed"):
        replay(seeded)


@needs_corpus
def test_corpus_games_become_records_with_the_judges_scores(tmp_path, capsys):
    games = [json.loads(line) for line, _ in zip(gzip.open(CORPUS, "rt"), range(80))]
    kinds = {}
    for g in games:
        end = g["log"][-1]["output"]["display"]["action"]
        if any(e.get("output", {}).get("display", {}).get("action") == "BUHUA" for e in g["log"][::2]):
            continue
        kinds.setdefault(end, g)
    assert {"HU", "HUANG", "WA"} <= set(kinds)
    for end, g in kinds.items():
        (rec,) = records_from_log(g)
        want = [g["scores"][str(s)] for s in range(4)]
        assert rec["source"]["ok"] and rec["source"]["scores"] == want and rec["wall_given"]
        states = replay(rec)
        assert [int(x) for x in states[-1][G.SCORES : G.SCORES + 4]] == want, end
        # the judge's walltiles are the wall used, and each seat's count is the judge's tileCnt at the end
        assert rec["wall"] == g["initdata"]["walltiles"].split(), end
        cnt = [d["output"]["display"].get("tileCnt") for d in g["log"][::2]]
        last_cnt = [c for c in cnt if c][-1]
        seen = private_walls_seen(rec)
        assert seen[-1] == G.wall_counts(states[-1])
        if end in ("HU", "HUANG"):  # a verdict is paid after the engine closed the claim window (a draw more)
            assert seen[-1] == last_cnt, end
        view = build_view(rec)["hands"][0]
        assert view["end"]["payments"] == want
        assert (view["end"]["type"] == "illegal") == (end not in ("HU", "HUANG"))
    # the CLI: a corpus line as a file, and gzip'd JSON lines of two games
    p = tmp_path / "game.json"
    p.write_text(json.dumps(kinds["HU"]))
    out = tmp_path / "game.html"
    assert main(["view", str(p), "--html", str(out)]) == 0 and out.stat().st_size > 0
    assert "Botzone match" in out.read_text()
    gz = tmp_path / "two.jsonl.gz"
    gz.write_bytes(
        gzip.compress((json.dumps(kinds["HU"]) + "\n" + json.dumps(kinds["HUANG"]) + "\n").encode())
    )
    assert len(load_records(gz)) == 2
    assert main(["view", str(gz), "--html", str(tmp_path / "two.html")]) == 0
    assert "2 hands" in capsys.readouterr().out


def test_human_log_of_engine_games(tmp_path, capsys):
    rounds = exported_rounds(11, 3)
    text = H.export_text(rounds)
    p = tmp_path / "data.txt"
    p.write_text(text)
    recs = load_records(p)
    assert len(recs) == 3
    for r, rec in zip(rounds, recs):
        st = replay(rec)[-1]
        keep = np.ones(G.STATE_SIZE, bool)
        keep[G.WALL : G.WALL + 144] = False
        assert np.array_equal(st[keep], r["state"][keep])  # the same hand as played in the engine
        assert rec["source"]["ok"] and rec["source"]["kind"] == "human-text"
        assert private_walls_seen(rec)[-1] == G.wall_counts(r["state"])
    out = tmp_path / "data.html"
    assert main(["view", str(p), "--html", str(out)]) == 0
    assert "3 hands" in capsys.readouterr().out and out.stat().st_size < 3 * 100 * 1024


@needs_corpus
def test_bad_logs_give_a_clear_cli_error_and_no_page(tmp_path, capsys):
    text = H.export_text(exported_rounds(5, 1))
    lines = text.splitlines()
    play = next(i for i, ln in enumerate(lines) if " Play " in ln)
    seat = lines[play].split()[1]
    held = set(next(ln for ln in lines if ln.startswith(f"Player {seat} Deal")).split()[3:])
    held |= {ln.split()[-1] for ln in lines[:play] if ln.startswith(f"Player {seat} Draw")}
    absent = next(c for c in ("J3", "J2", "J1", "F4", "F3", "W1", "T1", "B1") if c not in held)
    g = json.loads(next(iter(gzip.open(CORPUS, "rt"))))
    cases = {
        "truncated.txt": "\n".join(lines[: len(lines) // 2]) + "\n",
        "illegal.txt": "\n".join(
            lines[:play] + [lines[play].rsplit(" ", 1)[0] + " " + absent] + lines[play + 1 :]
        ),
        "garbage.txt": "hello world\n",
        "nofinish.json": json.dumps({**g, "log": g["log"][:-1]}),
        "badlog.json": json.dumps({"log": [{"output": {}}]}),
        "cut.jsonl.gz": gzip.compress(json.dumps(g).encode())[:-20],
    }
    for name, body in cases.items():
        p, out = tmp_path / name, tmp_path / (name + ".html")
        if isinstance(body, bytes):
            p.write_bytes(body)
        else:
            p.write_text(body)
        with pytest.raises(ValueError):
            load_records(p)
        rc = main(["view", str(p), "--html", str(out)])
        err = capsys.readouterr().err
        assert rc == 2 and "mjenv view: error:" in err and not out.exists(), (name, err)
