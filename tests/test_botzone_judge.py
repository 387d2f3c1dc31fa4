"""The Botzone variant (RuleConfig.botzone) and the drop-in judge against the corpus of real judge outputs.

The corpus (``judge_games_dev.jsonl.gz``, 600 games, 78,756 judge outputs; not part of the repository, read from
``shared/botzone/`` beside the repository, or ``MJENV_BOTZONE_CORPUS``) is the oracle; the tests skip when it is not there.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mjenv import _jit
from mjenv import game as G
from mjenv.botzone.judge import Judge, judge, parse_walltiles
from mjenv.rules import RuleConfig
from tests._corpus import CORPUS as _CORPUS
from tests._corpus import records as corpus_records

CORPUS = str(_CORPUS)
needs_corpus = pytest.mark.skipif(not os.path.exists(CORPUS), reason="Botzone judge corpus not found")

# two games of each ending and feature: WA, HUANG, HU, robbed kong, flowers, WH, kong-replacement win, claims on
# an empty wall, TLE, RE, MLE, and game 45 (the judge's knitted-straight wait rule)
RANDOM = "mjenv.policy:make_random"
SUBSET = (1, 4, 2, 3, 5, 6, 17, 95, 19, 30, 43, 77, 44, 54, 87, 97, 255, 364, 404, 45)


@pytest.fixture(scope="module")
def corpus() -> dict[int, dict]:
    return {r["id"]: r for r in corpus_records(CORPUS)}


def _expected_init(rec: dict) -> dict:
    # the first call without walltiles shuffles with glibc rand (not rebuilt): our INIT comes from the echoed
    # initdata, whose walltiles string the display's strlen then measures
    out = json.loads(json.dumps(rec["log"][0]["output"]))
    out["display"]["strlen"] = len(rec["initdata"]["walltiles"])
    return out


def _replay(rec: dict) -> tuple[int, int, list]:
    j = Judge(rec["initdata"])
    same = int(j.output == _expected_init(rec))
    n = 1
    bad = [] if same else [0]
    log = rec["log"]
    for k in range(1, len(log) // 2 + 1):
        if 2 * k >= len(log):
            break
        out = j.feed(log[2 * k - 1])
        n += 1
        if out == log[2 * k]["output"]:
            same += 1
        else:
            bad.append(k)
    return n, same, bad


@needs_corpus
def test_judge_matches_every_output_of_the_corpus(corpus):
    n = same = 0
    bad_games = {}
    for gid, rec in corpus.items():
        a, b, bad = _replay(rec)
        n += a
        same += b
        if bad:
            bad_games[gid] = bad[:3]
    assert n == 78756 and not bad_games, (n, same, dict(list(bad_games.items())[:5]))


@needs_corpus
@pytest.mark.parametrize("gid", (45, 17, 87))
def test_judge_is_a_function_of_each_log_prefix(corpus, gid):
    rec = corpus[gid]
    log = rec["log"]
    for k in range(1, len(log) // 2 + 1):
        if 2 * k >= len(log):
            break
        assert judge({"log": log[: 2 * k], "initdata": rec["initdata"]}) == log[2 * k]["output"], k
    out = judge({"log": [], "initdata": rec["initdata"]})
    assert out == _expected_init(rec)


@pytest.mark.slow
@needs_corpus
def test_judge_prefixes_of_the_whole_corpus(corpus):
    for rec in corpus.values():
        log = rec["log"]
        for k in range(1, len(log) // 2 + 1):
            if 2 * k < len(log):
                assert judge({"log": log[: 2 * k], "initdata": rec["initdata"]}) == log[2 * k]["output"]


@needs_corpus
def test_knitted_straight_wait_rule_is_the_scorer_option(corpus):
    # game 45, log index 292: W5 completes a knitted straight; the judge's calculator gives 16, PyMahjongGB 17
    rec = corpus[45]
    j = Judge(rec["initdata"])
    for k in range(1, 147):
        out = j.feed(rec["log"][2 * k - 1])
    assert out == rec["log"][292]["output"]
    s = next(i for i, v in enumerate(out["display"]["canHu"]) if v == 16)
    st = j.state.copy()
    t, o = int(st[G.OFFER_TILE]), int(st[G.OFFER_SEAT])
    flags = int(st[G.WIN_FLAGS_P + (o + 1) % 4])
    fans = np.zeros(G.NUM_FANS, np.int16)
    assert G.raw_score_kernel(st, s, t, flags, False, fans) == 16
    st[G.KNITTED_WAIT] = 1  # knitted_wait_fans=True: PyMahjongGB's scoring
    assert G.raw_score_kernel(st, s, t, flags, False, fans) == 17


@needs_corpus
def test_command_line_judge(corpus):
    rec = corpus[5]
    inp = {"log": rec["log"][:20], "initdata": rec["initdata"]}
    p = subprocess.run(
        [sys.executable, "-m", "mjenv.botzone.judge"],
        check=False,
        input=json.dumps(inp),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == rec["log"][20]["output"]
    bad = subprocess.run(
        [sys.executable, "-m", "mjenv.botzone.judge"],
        check=False,
        input="{not json",
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert bad.returncode == 2 and "error" in bad.stderr


def _wall(seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    from mjenv.tiles import BOTZONE_CODES

    return " ".join(BOTZONE_CODES[t] for t in rng.permutation(np.repeat(np.arange(34), 4)))


def test_bad_judge_input_is_a_clear_error():
    with pytest.raises(ValueError, match="'srand'.*walltiles missing"):
        judge({"log": [], "initdata": {"quan": 0}})  # the C++ judge would shuffle with a clock seed
    with pytest.raises(ValueError, match="'srand'.*quan 7"):
        judge({"log": [], "initdata": {"quan": 7, "walltiles": _wall()}})
    with pytest.raises(ValueError, match="'srand'"):
        judge({"log": [], "initdata": {"srand": "3", "quan": 0}})
    with pytest.raises(ValueError, match="token 0 'X1'"):
        parse_walltiles("X1 " + _wall()[3:])
    with pytest.raises(ValueError, match="136 or 144"):
        parse_walltiles(_wall()[3:])
    with pytest.raises(ValueError, match="4 times"):
        judge(
            {"log": [], "initdata": {"quan": 0, "walltiles": "W1 " + _wall()[3:].replace("W2", "W1", 1) + ""}}
        )
    with pytest.raises(TypeError):
        judge([])


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "empty input: the judge reads one JSON object"),
        (" \n\t", "empty input"),
        ("{not json", "input is not one JSON object: Expecting property name"),
        (
            '{"initdata": {"srand": 1}}\n{"initdata": {"srand": 2}}',
            "input is not one JSON object: Extra data",
        ),
        ("[]", "judge input must be a dict, got list"),
        ('{"log": 5, "initdata": {"srand": 1}}', "'log' must be a list, got int"),
        ('{"initdata": "{srand"}', "'initdata' is a string but not JSON"),
        ('{"initdata": 3}', "initdata must be a dict, got int"),
    ],
)
def test_command_line_judge_names_the_problem_of_bad_input(text, problem, monkeypatch, capsys):
    from mjenv.botzone.judge import main

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert main() == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err  # one line
    assert json.loads(err)["error"].startswith(problem), err


def _entry_env() -> dict:
    return {**os.environ, "PYTHONPATH": os.getcwd(), "MJENV_QUIET": "1"}


def test_entry_points_start_without_runpy_warning_and_judge_loads_only_its_kernels():
    """``python -m`` of either entry module: no runpy RuntimeWarning (the package imports none of its
    modules), and the judge's process imports neither the fronts' libraries nor the package's other parts."""
    for args, stdin in (
        (["-m", "mjenv.botzone.bot", "--help"], ""),
        (["-m", "mjenv.botzone.judge"], '{"initdata": {"srand": 1, "quan": 0}}'),
    ):
        p = subprocess.run(
            [sys.executable, "-W", "error::RuntimeWarning", "-X", "importtime", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=300,
            env=_entry_env(),
            check=False,
        )
        assert p.returncode == 0, p.stderr[-2000:]
        assert "RuntimeWarning" not in p.stderr and "found in sys.modules" not in p.stderr
        imported = {line.rsplit("|", 1)[-1].strip() for line in p.stderr.splitlines() if "|" in line}
        assert "mjenv.botzone" in imported
    assert json.loads(p.stdout)["display"]["action"] == "INIT"
    heavy = {"gymnasium", "pettingzoo", "tqdm", "torch", "ray", "mjenv.observation", "mjenv.vector"}
    heavy |= {f"mjenv.botzone.{m}" for m in ("bot", "botpolicy", "dataset", "export", "humanlog", "runner")}
    assert not heavy & imported, sorted(heavy & imported)
    assert {"mjenv.game", "mjenv.fans", "mjenv.hand"} <= imported  # the kernels it calls


@pytest.mark.skipif(not _jit.CACHE, reason="numba's on-disk cache is off (MJENV_NO_CACHE)")
def test_command_line_judge_reuses_its_cached_kernels():
    """A second call of ``python -m mjenv.botzone.judge`` loads its kernels from numba's cache and saves none
    (a per-call judge that recompiled or rewrote its kernels would pay seconds per call)."""
    inp = json.dumps({"initdata": {"srand": 5, "quan": 1}})
    runs = []
    for _ in range(2):
        p = subprocess.run(
            [sys.executable, "-m", "mjenv.botzone.judge"],
            input=inp,
            capture_output=True,
            text=True,
            timeout=300,
            env={**_entry_env(), "NUMBA_DEBUG_CACHE": "1"},  # numba's cache log, on stdout before the output
            check=False,
        )
        assert p.returncode == 0, p.stderr[-2000:]
        runs.append(p.stdout.splitlines())
    second = runs[1]
    assert json.loads(second[-1])["display"]["action"] == "INIT"
    log = second[:-1]
    assert any(line.startswith("[cache] data loaded from") for line in log), log
    assert not [line for line in log if "saved" in line], log


def test_malformed_answers_are_wa_not_crashes():
    init = {"srand": 1, "quan": 2, "walltiles": _wall(1)}
    ok = {str(i): {"verdict": "OK", "response": "PASS"} for i in range(4)}
    for bad in (
        {},
        {"verdict": "OK"},
        {"verdict": "OK", "response": 5},
        {"verdict": "OK", "response": "PLAY"},
        {"verdict": "OK", "response": "PLAY  W1"},
    ):
        j = Judge(init)
        j.feed(ok)
        j.feed(ok)  # the dealer's first draw
        ans = dict(ok)
        ans["0"] = bad
        out = j.feed(ans)
        code = "WA" if "verdict" in bad else ""  # no verdict: the judge's jsoncpp reads it as ""
        assert (
            out["command"] == "finish" and out["display"]["action"] == code and out["display"]["player"] == 0
        )
        assert out["content"] == {"0": -30, "1": 10, "2": 10, "3": 10}
        with pytest.raises(ValueError, match="over"):
            j.feed(ok)
    j = Judge(init)
    out = j.feed({**ok, "2": {"verdict": "TLE"}})
    assert out["display"] == {
        "action": "TLE",
        "canHu": [-4] * 4,
        "player": 2,
        "score": [10, 10, -30, 10],
        "strlen": 407,
    }


# --------------------------------------------------------------------------------------------- the engine
def _conservation(st: np.ndarray) -> None:
    cnt = np.zeros(42, np.int64)
    for t in G.wall_tiles(st):
        cnt[t] += 1
    for s in range(4):
        cnt[:34] += st[G.HAND + 34 * s : G.HAND + 34 * s + 34]
        for m in G.seat_melds(st, s):
            from mjenv.melds import meld_tiles

            tiles = meld_tiles(m)
            for t in tiles:
                cnt[t] += 1
        for t, claimed in G.seat_discards(st, s):
            cnt[t] += not claimed
        cnt[34:] += [(int(st[G.FLOWER_BITS + s]) >> f) & 1 for f in range(8)]
    if st[G.PHASE] == G.PH_ROB:  # the added kong's tile is out of the hand, the meld still a pung
        cnt[int(st[G.OFFER_TILE])] += 1
    n_fl = 1 if st[G.HAS_FLOWERS] else 0
    assert cnt[:34].tolist() == [4] * 34 and cnt[34:].tolist() == [n_fl] * 8


@pytest.mark.parametrize("flowers", (False, True))
def test_private_walls_random_play(flowers):
    rules = RuleConfig.botzone(quan=1, flowers=flowers)
    part = 36 if flowers else 34
    rng = np.random.default_rng(7)
    st = G.new_state()
    ends = set()
    for seed in range(30):
        G.reset(st, seed, *rules.hand_setup(0)[::-1], rules=rules)
        assert st[G.DEALER] == 0 and st[G.PREVALENT] == 1
        while st[G.PHASE] != G.PH_OVER:
            counts = G.wall_counts(st)
            assert sum(counts) == st[G.BACK] - st[G.FRONT] and max(counts) <= part
            _conservation(st)
            seat = int(st[G.CUR])
            mask = G.legal_mask(st, seat)
            s = int(st[G.TURN])
            if st[G.PHASE] == G.PH_TURN and (counts[s] == 0 or counts[(s + 1) % 4] == 0):
                assert not mask[G.A_CONCEALED_KONG : G.A_WIN].any()  # no kong on an empty part
            if st[G.PHASE] == G.PH_CLAIM and counts[(int(st[G.OFFER_SEAT]) + 1) % 4] == 0:
                assert not mask[G.A_CHOW : G.A_CONCEALED_KONG].any()  # only a win claims then
            legal = np.flatnonzero(mask)
            prefer = [
                a for a in legal if a in (G.A_WIN, G.A_PUNG, G.A_KONG) or G.A_CONCEALED_KONG <= a < G.A_WIN
            ]
            G.step(st, int(rng.choice(prefer if prefer and rng.random() < 0.7 else legal)))
        ends.add(G.result(st)["win_type"])
        if G.result(st)["win_type"] == "draw":
            assert 0 in G.wall_counts(st)
    assert "draw" in ends and ends & {"self_drawn", "discard", "robbed_kong"}


def test_default_rules_block_keeps_the_shared_wall():
    st = G.new_state()
    G.reset(st, 3)
    assert G.wall_counts(st) == [int(st[G.BACK] - st[G.FRONT])] and st[G.KNITTED_WAIT] == 1
    with pytest.raises(ValueError, match="136 tiles"):
        G.reset_wall(st, list(range(34)) * 4 + [0], rules=RuleConfig.botzone())
    with pytest.raises(ValueError, match="4 times"):
        G.reset_wall(st, [0] * 136, rules=RuleConfig.botzone())


def test_every_front_accepts_the_variant():
    from mjenv import env as aec_env
    from mjenv.arena import run_arena
    from mjenv.vector import VectorEnv

    e = aec_env(rules=RuleConfig.botzone(quan=2))
    e.reset(seed=5)
    st = e.unwrapped.state_array
    assert st[G.PRIVATE_WALLS] == 1 and G.wall_counts(st)[0] == 34 - 14
    n = 0
    for _agent in e.agent_iter(max_iter=3000):
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
        n += 1
    assert n > 10
    v = VectorEnv(num_envs=2, rules=RuleConfig.botzone())
    v.reset(seed=1)
    assert (v.states[:, G.PRIVATE_WALLS] == 1).all()
    rep = run_arena(
        {"a": RANDOM, "b": RANDOM}, walls=2, seed=0, tables=8, rules=RuleConfig.botzone(), progress=False
    )
    assert rep["settings"]["rules"]["private_walls"] is True and rep["settings"]["hands"] == 8


@needs_corpus
def test_first_output_from_srand_alone():
    """The wall (glibc rand + libstdc++ random_shuffle) and a drawn quan from srand: the first judge output of
    every corpus game, given the first call's initdata (init_input), is the real judge's, initdata included."""
    from mjenv.botzone.judge import GlibcRand, srand_wall

    g = GlibcRand(1)
    assert [g.rand() for _ in range(3)] == [1804289383, 846930886, 1681692777]
    assert GlibcRand(0).rand() == GlibcRand(1).rand()  # glibc: seed 0 is seed 1
    recs = corpus_records(CORPUS)
    n_shuffled = n_drawn_quan = 0
    for rec in recs:
        assert judge({"log": [], "initdata": rec["init_input"]}) == rec["log"][0]["output"], rec["id"]
        n_shuffled += "walltiles" not in rec["init_input"]
        q = rec["init_input"].get("quan")
        n_drawn_quan += not (isinstance(q, int) and 0 <= q <= 3)
    assert n_shuffled == 495 and n_drawn_quan == 26
    assert srand_wall(5)[0] != srand_wall(5, 1)[0]  # drawing quan spends one rand() before the shuffle
    with pytest.raises(TypeError):
        srand_wall("5")
