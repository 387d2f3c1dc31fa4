"""Replay viewer (mjenv.viewer): the embedded JSON rebuilds the engine's states, inputs are checked, images render.

The browser half (the page's script, keys, URL hash, screenshots) is tests/test_viewer_browser.py.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mjenv import game as G
from mjenv.cli import main
from mjenv.record import replay
from mjenv.viewer import build_view, load_records, meld_view, render_html, write_html
from tests._viewer_records import (
    SEED_ALL_KONGS,
    SEED_DRAW,
    SEED_ILLEGAL,
    SEED_ROBBED,
    play_ops,
    record,
    with_info,
)


@pytest.fixture(scope="module")
def records() -> dict[int, dict]:
    return {s: record(s) for s in (SEED_DRAW, SEED_ALL_KONGS, SEED_ROBBED, SEED_ILLEGAL)}


def _apply(snap: dict, step: dict) -> dict:
    """The page's move semantics (viewer.js apply()), written again to check the JSON against the engine."""
    s = json.loads(json.dumps(snap))
    mv = step["mv"]
    for seat, out, inn in mv.get("h", []):
        for t in out:
            s["hands"][seat].remove(t)
        s["hands"][seat] = sorted(s["hands"][seat] + inn)
    for seat, i, m in mv.get("m", []):
        if i < len(s["melds"][seat]):
            s["melds"][seat][i] = m
        else:
            assert i == len(s["melds"][seat])
            s["melds"][seat].append(m)
    for seat, ts in mv.get("r", []):
        s["river"][seat] += [[t, 0] for t in ts]
    for seat, i in mv.get("rc", []):
        s["river"][seat][i][1] = 1
    for seat, fl in mv.get("f", []):
        s["flowers"][seat] += fl
    s["wall"] = mv.get("w", s["wall"])
    s["scores"] = mv.get("sc", s["scores"])
    s["dr"] = step["dr"]
    return s


def engine_view(st: np.ndarray) -> dict:
    """What the page must show for an engine state (used by the browser test too)."""
    from mjenv.tiles import counts_to_tiles

    return {
        "hands": [counts_to_tiles(G.seat_hand(st, s)) for s in range(4)],
        "melds": [[meld_view(m, s) for m in G.seat_melds(st, s)] for s in range(4)],
        "river": [[[t, int(c)] for t, c in G.seat_discards(st, s)] for s in range(4)],
        "flowers": [[34 + f for f in range(8) if int(st[G.FLOWER_BITS + s]) >> f & 1] for s in range(4)],
        "wall": [int(st[G.FRONT]), int(st[G.BACK])],
        "scores": [int(x) for x in st[G.SCORES : G.SCORES + 4]],
    }


def test_records_have_what_they_are_chosen_for(records):
    ev = {s: set(G.events(replay(r)[-1])) for s, r in records.items()}
    assert {"exhaustive_draw", "flower_in_play"} <= ev[SEED_DRAW]
    assert {"exposed_kong", "concealed_kong", "added_kong"} <= ev[SEED_ALL_KONGS]
    assert "robbed_kong" in ev[SEED_ROBBED]
    assert records[SEED_ILLEGAL]["ops"][-1][0] == "penalty"


def test_moves_rebuild_every_engine_state(records):
    for seed, rec in records.items():
        states = replay(rec)
        hand = build_view(rec)["hands"][0]
        d = hand["deal"]
        snap = {
            "hands": [list(h) for h in d["hands"]],
            "melds": [[], [], [], []],
            "river": [[], [], [], []],
            "flowers": [list(f) for f in d["flowers"]],
            "wall": d["wall"],
            "scores": [0] * 4,
            "dr": d["dr"],
        }
        assert len(hand["steps"]) == len(states) - 1
        for k, st in enumerate(states):
            if k:
                snap = _apply(snap, hand["steps"][k - 1])
            want = engine_view(st)
            got = {key: snap[key] for key in want}
            got["flowers"] = [sorted(f) for f in got["flowers"]]  # the page keeps the order they came in
            assert got == want, f"seed {seed} step {k}"
            if snap["dr"] is not None:
                assert snap["dr"][1] in snap["hands"][snap["dr"][0]]


def test_end_screens(records):
    ends = {s: build_view(r)["hands"][0]["end"] for s, r in records.items()}
    assert ends[SEED_DRAW]["type"] == "draw" and ends[SEED_DRAW]["winner"] == -1
    e = ends[SEED_ROBBED]
    st = replay(records[SEED_ROBBED])[-1]
    assert e["type"] == "robbed_kong" and e["winner"] == int(st[G.WINNER]) and e["loser"] == int(st[G.LOSER])
    assert sum(p * n for _, _, p, n in e["fans"]) == e["fan_total"] == int(st[G.WIN_TOTAL])
    assert {en for _, en, _, _ in e["fans"]} == set(G.fan_breakdown(st)) and all(zh for zh, *_ in e["fans"])
    assert "Robbing The Kong" in {en for _, en, _, _ in e["fans"]}
    assert e["payments"] == [int(x) for x in st[G.SCORES : G.SCORES + 4]]
    ill = ends[SEED_ILLEGAL]
    assert ill["type"] == "illegal" and ill["illegal"]["mode"] == "terminate"
    assert ill["payments"][ill["illegal"]["seat"]] == -30
    steps = build_view(records[SEED_ALL_KONGS])["hands"][0]["steps"]
    said = " | ".join(s["say"] for s in steps)
    assert "concealed kong" in said and "added kong" in said and "exposed kong" in said and "draws" in said


def test_claims_are_shown_once_resolved(records):
    steps = build_view(records[SEED_ALL_KONGS])["hands"][0]["steps"]
    claims = [s for s in steps if "claims" in s]
    assert any(a != "pass" for s in claims for _, a in s["claims"])
    hidden = [s for s in steps if "hidden until" in s["say"]]
    assert all("claims" not in s for s in hidden)


def test_policy_info_top_actions_and_value(records):
    rec = with_info(records[SEED_ROBBED])
    steps = build_view(rec)["hands"][0]["steps"]
    for i, (step, (_, _, a)) in enumerate(zip(steps, rec["ops"])):
        if i % 3 == 2:
            assert "info" not in step
            continue
        from mjenv.actions import action_to_str

        top = step["info"]["top"]
        assert top[0] == [action_to_str(a), 0.6] and len(top) == 3
        assert math.isclose(sum(p for _, p in top), 1.0) and step["info"]["value"] == round(i / 100, 4)
    bad = [
        ({**rec, "info": rec["info"][:-1]}, "aligned"),
        ({**rec, "info": [{"probs": {"discard X9": 1.0}}] + rec["info"][1:]}, "unknown action"),
        ({**rec, "info": [{"probs": [0.5] * 3}] + rec["info"][1:]}, "109"),
        ({**rec, "info": [{"value": float("nan")}] + rec["info"][1:]}, "finite"),
    ]
    for r, msg in bad:
        with pytest.raises(ValueError, match=msg):
            build_view(r)


def test_several_hands_and_match_totals(records):
    a, b = records[SEED_ROBBED], records[SEED_ILLEGAL]
    view = build_view({"hands": [a, b, a]})
    assert len(view["hands"]) == 3
    pa, pb = view["hands"][0]["end"]["payments"], view["hands"][1]["end"]["payments"]
    assert view["hands"][2]["totals_before"] == [x + y for x, y in zip(pa, pb)]


def test_bad_input_clear_errors_and_no_page(records, tmp_path, capsys):
    good = records[SEED_ROBBED]
    text = json.dumps(good)
    cases = {
        "truncated": text[: len(text) // 2],
        "empty": "",
        "not_a_record": '{"format": "x"}',
        "missing": json.dumps({k: v for k, v in good.items() if k != "ops"}),
        "wall": json.dumps({**good, "seed": good["seed"] + 1}),
        "bad_op": json.dumps({**good, "ops": good["ops"][:5] + [["act", 0, 999]]}),
    }
    for name, body in cases.items():
        p, out = tmp_path / f"{name}.json", tmp_path / f"{name}.html"
        p.write_text(body)
        with pytest.raises(ValueError):
            load_records(p) if name in ("truncated", "empty", "not_a_record", "missing") else build_view(
                load_records(p)
            )
        rc = main(["view", str(p), "--html", str(out)])
        err = capsys.readouterr().err
        assert rc == 2 and "mjenv view: error:" in err and not out.exists(), (name, err)
    p = tmp_path / "ok.jsonl"
    p.write_text(json.dumps(good) + "\n" + json.dumps(records[SEED_DRAW]) + "\n")
    assert main(["view", str(p), "--html", str(tmp_path / "ok.html")]) == 0
    assert "2 hands" in capsys.readouterr().out and (tmp_path / "ok.html").stat().st_size > 0


def test_page_is_self_contained_and_small(records, tmp_path):
    for seed, rec in records.items():
        n = write_html(rec, tmp_path / f"{seed}.html")
        assert n <= 100 * 1024, f"seed {seed}: {n} bytes"
    page = render_html(records[SEED_ALL_KONGS])
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    assert "<link" not in page and "src=" not in page and page.count('<symbol id="f') == 43
    assert "{{" not in page


def test_cli_play_html(tmp_path, capsys):
    out = tmp_path / "p.html"
    assert main(["play", "--seed", "5", "--html", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()  # the page is the replay: one line, not the hand as text
    assert len(lines) == 1 and lines[0].startswith("replay page of the hand (a draw) written to"), lines
    page = out.read_text()
    data = json.loads(page.split('id="game">')[1].split("</script>")[0])
    _, ops = play_ops(5)  # the CLI's bot differs; only check the seed and that the hand ended
    assert data["hands"][0]["seed"] == 5 and data["hands"][0]["end"] is not None and ops


def test_rgb_array_render(records):
    from pettingzoo.test import render_test

    from mjenv.gym_env import MahjongGymEnv
    from mjenv.pettingzoo_env import env
    from mjenv.viewer.raster import HEIGHT, WIDTH, render_rgb

    render_test(lambda render_mode=None: env(render_mode=render_mode))
    g = MahjongGymEnv(render_mode="rgb_array")
    g.reset(seed=3)
    img = g.render()
    assert img.shape == (HEIGHT, WIDTH, 3) and img.dtype == np.uint8
    states = replay(records[SEED_ALL_KONGS])
    a, b = render_rgb(states[10]), render_rgb(states[11])
    assert (a != b).any() and len(np.unique(a.reshape(-1, 3), axis=0)) > 20
    hidden = render_rgb(states[10], reveal=False, viewer=0)
    assert (hidden != a).any()
    with pytest.raises(ValueError, match="names"):
        render_rgb(states[0], names=["a"])
