"""Duplicate evaluation of Botzone bots with mjenv.arena: a bot program is a policy (mjenv.botzone.botpolicy), in
any seats of any number of tables, run as Botzone runs it; the report says what each bot did."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mjenv import actions as A
from mjenv.arena import run_arena
from mjenv.botzone.botpolicy import BotPolicy, bot_policy
from mjenv.botzone.runner import PolicyBot
from mjenv.rules import RuleConfig
from mjenv.viewer import load_records
from tests._bz_policies import BEHAVIOURS, HashPolicy, bot_command, limits

BOT = "mjenv.botzone.botpolicy:bot_policy"
HASH = "tests._bz_policies:make_hash"


def _arena(agents, walls=2, seed=3, seating="1v3", **kw):
    kw.setdefault("tables", 1)
    return run_arena(
        agents, seating, walls=walls, seed=seed, rules=RuleConfig.botzone(), progress=False, **kw
    )


def _same_play(a: dict, b: dict) -> None:
    """Two reports of the same hands: every outcome and statistic equal (the agents' specs and the bot's own
    entry aside)."""
    assert a["table"] == b["table"]
    assert a["differences"] == b["differences"] and a["convergence"] == b["convergence"]
    assert a["illegal_actions"] == b["illegal_actions"]
    for nm in a["agents"]:
        x = {k: v for k, v in a["agents"][nm].items() if k not in ("spec", "bot")}
        y = {k: v for k, v in b["agents"][nm].items() if k not in ("spec", "bot")}
        assert x == y, nm


class _Counting(PolicyBot):
    """An in-process wrapped policy (BotCore: the game rebuilt from the requests alone) counting its games."""

    games = 0
    seen: list[str] = []

    def new_game(self) -> None:
        type(self).games += 1
        super().new_game()

    def send(self, request, history) -> None:
        type(self).seen.append(request)
        super().send(request, history)


def test_bot_policy_plays_the_same_duplicate_as_the_policy_itself():
    """The requests derived from the observations rebuild each hand exactly: a policy behind the Botzone
    protocol (BotCore, which sees only the requests) plays every hand of a 1v3 duplicate as the policy itself."""
    _Counting.games = 0
    seat = _Counting(HashPolicy())
    a = _arena({"bot": BOT, "hash": HASH}, walls=3, agent_kwargs={"bot": {"bot": seat}}, adjust=True)
    b = _arena({"direct": HASH, "hash": HASH}, walls=3, adjust=True)
    assert a["table"] == b["table"]
    # the luck-adjusted evaluation takes a bot like any agent: the same corrections as for the policy itself
    assert a["agents"]["bot"]["adjusted"] == b["agents"]["direct"]["adjusted"]
    assert _Counting.games == 12  # one game per hand: no hand was mistaken for a new one
    verbs = {r.split(" ")[2] for r in _Counting.seen if r.startswith("3 ")}
    assert verbs >= {"DRAW", "PLAY", "PENG", "CHI", "GANG"}, verbs  # claims and kongs were derived too
    assert a["agents"]["bot"]["illegal_actions"]["count"] == 0
    assert a["settings"]["rules"]["private_walls"] and set(a["seeds"]["dealers"]) == {0}


@pytest.mark.parametrize("seating, bot_first", [("1v3", False), ("2v2", True), ("perm24", True)])
def test_bot_policy_any_seats_many_tables(seating, bot_first):
    """One bot program in any seats (the three seats of 1v3's B side, two of 2v2, one of perm24) on many tables
    at once (the arena's default: each seat of each table its own program, turns run concurrently): every hand
    is the policy's own."""
    _Counting.games = 0
    others = {"1v3": ["hash"], "2v2": ["hash"], "perm24": ["h1", "h2", "h3"]}[seating]
    names = ["bot", *others] if bot_first else [*others, "bot"]
    mk = {nm: (BOT if nm == "bot" else HASH) for nm in names}
    direct = {nm: HASH for nm in names}
    kw = {"bot": {"bot": lambda: _Counting(HashPolicy()), "jobs": 4}}
    a = _arena(mk, walls=1, seating=seating, tables=1024, agent_kwargs=kw)
    b = _arena(direct, walls=1, seating=seating, tables=1024)
    _same_play(a, b)
    seats = {"1v3": 3, "2v2": 2, "perm24": 1}[seating]
    assert _Counting.games == a["settings"]["hands"] * seats
    assert a["settings"]["tables"] == min(64, a["settings"]["hands"])  # the bot policy's max_tables
    assert a["agents"]["bot"]["bot"]["verdicts"]["OK"] > 0 and a["agents"]["bot"]["bot"]["faults"] == []


def _eval(tmp_path, spec: str, verdict: str | None, *, b_side: bool = False, seating: str = "1v3") -> dict:
    """``mjenv eval --variant botzone`` with the bot (1 wall, the arena's default tables); the JSON report."""
    from mjenv.cli import main

    out = tmp_path / "r.json"
    agents = ["--agent", f"hash={HASH}", "--agent", f"bot={BOT}"] if b_side else ["--agent", f"bot={BOT}"]
    if not b_side:
        agents += ["--agent", f"hash={HASH}"]
    opts = ["--agent-opt", f"bot.bot={spec}"]
    for k, v in limits(verdict).items():
        opts += ["--agent-opt", f"bot.{k}={v}"]
    argv = ["eval", "--variant", "botzone", "--seating", seating, *agents, *opts, "--walls", "1"]
    assert main([*argv, "--no-progress", "--json", str(out)]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("name, spec, verdict", BEHAVIOURS, ids=[b[0] for b in BEHAVIOURS])
def test_eval_behaviours(tmp_path, capsys, name, spec, verdict):
    """Each behaviour of a Botzone bot program through ``mjenv eval --variant botzone``: the correct ones are
    never faulted; each faulty one gets its verdict in every hand (-30: the judge's penalty), named in the report
    (counts, each fault's request history and answer, the markdown table by kind) and in the records."""
    rep = _eval(tmp_path, spec, verdict)
    bot = rep["agents"]["bot"]
    b = bot["bot"]
    assert b["command"] == spec and b["memory_limit"] == 256
    md = capsys.readouterr().out
    assert "| bot | command | answers | TLE | RE | MLE | NJ | WA | WH |" in md
    if verdict is None:
        assert bot["illegal_actions"]["count"] == 0 and b["faults"] == [] and b["verdicts"]["OK"] > 100
        assert b["reproducible"] and rep["timing"]["bots"]["bot"]["answers"] == b["verdicts"]["OK"]
        return
    assert bot["illegal_actions"]["count"] == 4 and bot["points_per_hand"]["mean"] == -30
    assert b["verdicts"][verdict] == 4 and b["faults_count"] == 4
    assert b["reproducible"] == (verdict != "TLE")
    f = b["faults"][0]
    assert f["verdict"] == verdict and f["requests"][-1] == f["request"] and f["requests"][0].startswith("0 ")
    assert {"wall", "order", "chair", "decision", "answer", "why", "responses"} <= set(f)
    if verdict in ("WA", "NJ"):
        assert f["answer"] is not None or verdict == "NJ"
    if verdict == "MLE":
        assert "MemoryError" in f["stderr"]
    notes = [i["note"] for r in rep["records"] for i in r["info"] if i and "note" in i]
    assert len(notes) == 4 and all(n.startswith(f"bot fault {verdict}") for n in notes)
    assert len(load_records(tmp_path / "r.json")) == len(rep["records"])  # mjenv view opens the report


def test_eval_bot_holds_three_seats(tmp_path):
    """The B side of 1v3: three seats of the keep-running program at each table, every one its own process."""
    rep = _eval(tmp_path, "simple-keep:" + bot_command("drawplayer.py"), None, b_side=True)
    assert rep["agents"]["bot"]["hands"] == 12 and rep["agents"]["bot"]["illegal_actions"]["count"] == 0


def test_reports_with_faults_are_reproducible_and_the_viewer_shows_them():
    """No verdict caused by time: the report is a function of the seed (timing aside); the fault records open
    in the viewer, which names the fault at its decision."""
    from mjenv.viewer import build_view

    kw = {"bot": {"bot": "simple:" + bot_command("crash.py"), "time_limit": 20.0}}
    reps = [_arena({"bot": BOT, "hash": HASH}, walls=1, tables=64, agent_kwargs=kw) for _ in range(2)]
    for r in reps:
        r.pop("timing")
    assert reps[0] == reps[1] and reps[0]["agents"]["bot"]["bot"]["reproducible"]
    rec = next(r for r in reps[0]["records"] if "illegal" in r["reasons"])
    view = build_view(rec)
    says = [s["say"] for h in view["hands"] for s in h["steps"]]
    assert any("bot fault RE" in s for s in says)


def test_bot_entry_merges_over_shards():
    """The bot's report entry (verdict counts, faults, limits) is the same whether its hands are played in one
    shard or split over two (each shard's policy counts its own; the arena's outcome merge adds them)."""
    kw = {"bot": {"bot": "simple:" + bot_command("crash.py"), "time_limit": 20.0}}
    reps = [_arena({"bot": BOT, "hash": HASH}, walls=2, tables=64, agent_kwargs=kw, shards=n) for n in (1, 2)]
    for r in reps:
        r["settings"].pop("shards")
        assert r["timing"]["bots"]["bot"]["answers"] == r["agents"]["bot"]["bot"]["verdicts"].get("OK", 0)
        r.pop("timing")
    assert reps[0] == reps[1]
    b = reps[0]["agents"]["bot"]["bot"]
    assert b["verdicts"]["RE"] == 8 and b["faults_count"] == 8 and len(b["faults"]) == 8
    assert [(f["wall"], f["order"]) for f in b["faults"]] == [(w, o) for w in range(2) for o in range(4)]


def test_bot_policy_bad_arguments():
    with pytest.raises(ValueError, match="seat spec"):
        bot_policy(1, 0, bot="nope:x")
    with pytest.raises(ValueError, match="time_limit"):
        bot_policy(1, 0, bot="simple:true", time_limit=0)
    with pytest.raises(ValueError, match="memory_limit"):
        bot_policy(1, 0, bot="simple:true", memory_limit=-1)
    with pytest.raises(ValueError, match="max_tables"):
        bot_policy(1, 0, bot="simple:true", max_tables=0)
    with pytest.raises(TypeError, match="bot must be"):
        bot_policy(1, 0, bot=3)
    pol = BotPolicy(PolicyBot(HashPolicy()))
    with pytest.raises(ValueError, match="observations"):
        pol(None, np.ones((1, 109), bool), np.zeros(1, np.int32))
    with pytest.raises(ValueError, match="one seat object"):  # one seat object cannot play two seats
        run_arena({"hash": HASH, "bot": BOT}, "1v3", walls=1, tables=1, rules=RuleConfig.botzone(),
                  agent_kwargs={"bot": {"bot": PolicyBot(HashPolicy())}}, progress=False)  # fmt: skip


def test_bot_policy_needs_the_variant():
    """Under table rules (only seats with a claim are asked) the requests cannot be derived: a clear error."""
    with pytest.raises(ValueError, match=r"RuleConfig.botzone\(\)"):
        run_arena(
            {"bot": BOT, "hash": HASH},
            "1v3",
            walls=1,
            tables=1,
            rules=RuleConfig(flowers=False),
            agent_kwargs={"bot": {"bot": PolicyBot(HashPolicy())}},
            progress=False,
        )


def _mirror(spec: str, agent: str, walls: int, **kw) -> tuple[dict, dict]:
    """The report of the bot ``spec`` (A in 1v3 against agents.rule) and of the agent it mirrors."""
    common = dict(walls=walls, seed=7, records=0, tables=64)
    a = _arena({"bot": BOT, "rule": "agents.rule:make"}, agent_kwargs={"bot": {"bot": spec, **kw}}, **common)
    b = _arena({"bot": agent, "rule": "agents.rule:make"}, **common)
    return a, b


@pytest.mark.parametrize("walls", [2, pytest.param(50, marks=pytest.mark.slow)])
def test_mirror_per_turn(walls):
    """A correct bot is never faulted by the adapter: a one-process-per-turn JSON program (reads its input to the
    end, multi-line answers, data checked every turn) mirroring a light deterministic policy gives that policy's
    own duplicate report bit for bit (2 walls = 8 hands; ``-m slow``: 50 walls = 200 hands)."""
    a, b = _mirror(
        "json:" + bot_command("mirror_turn.sh"), "tests._bz_policies:make_drawplayer", walls, time_limit=20.0
    )
    _same_play(a, b)
    assert a["agents"]["bot"]["bot"]["faults_count"] == 0 and a["agents"]["rule"]["win_rate"] > 0


@pytest.mark.parametrize("walls", [2, pytest.param(50, marks=pytest.mark.slow)])
def test_mirror_keep_running(walls):
    """The same in keep-running mode: mjenv's rule agent wrapped as a keep-running Botzone program
    (``python -m mjenv.botzone.bot``, one process per hand as on Botzone) gives agents.rule's own report bit for
    bit (2 walls = 8 hands; ``-m slow``: 200; ``scripts/botzone_mirror.py`` runs any number)."""
    a, b = _mirror(
        "agent:agents.rule:make", "agents.rule:make", walls, time_limit=20.0, first_time_limit=120.0
    )
    _same_play(a, b)
    assert a["agents"]["bot"]["bot"]["faults_count"] == 0 and a["agents"]["bot"]["win_rate"] > 0


def test_thread_setting_bounds_the_bot_programs(tmp_path):
    """``mjenv eval --threads N`` reaches the bot policy (its factory takes ``threads``): each program runs with
    ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and ``NUMBA_NUM_THREADS`` = N, and N turns
    run at once unless ``jobs`` says otherwise."""
    import shlex
    import sys

    from mjenv.botzone.runner import THREAD_VARS, make_bot, thread_env
    from mjenv.policy import takes_option

    assert takes_option(BOT, "threads")
    assert thread_env(None) is None and thread_env(None, {"A": "1"}) == {"A": "1"}
    assert thread_env(2, {"A": "1"}) == {"A": "1", **dict.fromkeys(THREAD_VARS, "2")}
    with pytest.raises(ValueError, match="threads"):
        thread_env(0)
    with pytest.raises(TypeError, match="threads"):
        thread_env("2")
    with pytest.raises(ValueError, match="threads"):
        bot_policy(1, 0, bot="simple:true", threads=0)
    pol = bot_policy(1, 0, bot="simple:true", threads=1)
    assert pol.jobs == 1 and bot_policy(1, 0, bot="simple:true", threads=1, jobs=3).jobs == 3
    assert pol._factory().env["OMP_NUM_THREADS"] == "1"
    seat = make_bot("agent:tests._bz_policies:make_hash", threads=3)
    assert all(seat.env[k] == "3" for k in THREAD_VARS) and "PYTHONPATH" in seat.env
    assert make_bot("simple:true").env is None  # no setting: the program inherits this environment
    # a program that writes its environment, then plays as the draw-player
    out = tmp_path / "env.txt"
    player = bot_command("drawplayer.py").split(" ", 1)[1]
    script = f"env > {shlex.quote(str(out))}; exec {shlex.quote(sys.executable)} {shlex.quote(player)}"
    spec = "simple-keep:sh -c " + shlex.quote(script)
    rep = _arena({"bot": BOT, "hash": HASH}, walls=1, threads=1, agent_kwargs={"bot": {"bot": spec}})
    assert rep["agents"]["bot"]["bot"]["faults_count"] == 0
    env = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    assert all(env[k] == "1" for k in THREAD_VARS)


class _Answers:
    """A seat object: ``on_draw`` to its own draws (default: plays the tile drawn), ``on_play(tile)`` to another
    seat's discard (default ``PASS``), ``PASS`` to everything else."""

    def __init__(self, on_draw=None, on_play=None) -> None:
        self.on_draw, self.on_play = on_draw, on_play
        self.request = ""
        self.me = ""

    def send(self, request, history) -> None:
        self.request = request
        if request.startswith("0 "):
            self.me = request.split(" ")[1]

    def receive(self) -> dict:
        w = self.request.split(" ")
        if w[0] == "2":
            resp = self.on_draw or f"PLAY {w[1]}"
        elif w[0] == "3" and w[1] != self.me and w[2] == "PLAY" and self.on_play is not None:
            resp = self.on_play(w[3])
        else:
            resp = "PASS"
        return {"verdict": "OK", "response": resp, "time": 0.0}


def test_wa_and_wh_verdicts_say_which_move_and_why():
    """A false ``HU`` (WH) and an illegal claim (WA) are named in the report with the engine's reason: the
    action, its tile and why (not a winning hand, with the tiles; a pung without two copies in hand), in the
    faults and in the records' notes; the policy's own list names the move."""
    import re

    pol = BotPolicy(lambda: _Answers("HU", lambda t: "HU"))
    rep = _arena({"bot": lambda n, s, **kw: pol, "hash": HASH}, walls=1)
    faults = rep["agents"]["bot"]["bot"]["faults"]
    assert len(faults) == 4 and {f["verdict"] for f in faults} == {"WH"}
    for f in faults:
        assert f["action"] == A.WIN and f["answer"] == "HU"
        assert re.fullmatch(r"win on [WBTFJ]\d: not a winning hand \(.+ \+ [WBTFJ]\d\)", f["why"]), f["why"]
    notes = [i["note"] for r in rep["records"] for i in r["info"] if i and "note" in i]
    assert len(notes) == 4 and all("bot fault WH" in n and "not a winning hand" in n for n in notes)
    assert [v["why"] for v in pol.verdicts] == ["an illegal move (win)"] * 4

    def peng(tile):  # claim every discard for a pung (and discard the same tile if it goes through)
        return f"PENG {tile}"

    kw = {"bot": {"bot": lambda: _Answers(on_play=peng)}}
    rep = _arena({"bot": BOT, "hash": HASH}, walls=2, agent_kwargs=kw)
    faults = rep["agents"]["bot"]["bot"]["faults"]
    assert faults and {f["verdict"] for f in faults} == {"WA"}
    for f in faults:
        tile = f["request"].split(" ")[3]
        assert f["action"] == A.PUNG and f["answer"] == f"PENG {tile}"
        want = rf"pung {tile} (with [01] {tile} in hand \(a pung needs 2\)|on the last discard: .+)"
        assert re.fullmatch(want, f["why"]), f["why"]
    # an answer that is no move at all says what the request takes
    kw = {"bot": {"bot": lambda: _Answers(on_play=lambda t: f"PLAY {t}")}}
    faults = _arena({"bot": BOT, "hash": HASH}, walls=1, agent_kwargs=kw)["agents"]["bot"]["bot"]["faults"]
    assert faults and all("action" not in f for f in faults)
    assert {f["why"] for f in faults} == {
        "not an answer to this request (a discard takes PASS, HU, GANG, PENG t or CHI mid t with mid next to or "
        "on the discard)"
    }
