"""The local Botzone runner's fast path (in-process seats on the judge's engine state), against the per-call
judge protocol and the request path."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from mjenv.botzone.runner import PolicyBot, play_engine, play_match, random_initdata
from mjenv.policy import RandomPolicy
from tests._bz_policies import BEHAVIOURS, HashPolicy, bot_command, limits

ROOT = Path(__file__).resolve().parents[1]


class _Scripted:
    """A seat object (send/receive) answering PASS / its drawn tile, and ``bad`` at its ``at``-th own draw."""

    def __init__(self, at: int, bad: str) -> None:
        self.at, self.bad, self.name = at, bad, f"scripted {bad!r}"
        self.draws = 0

    def new_game(self) -> None:
        self.draws = 0

    def send(self, request, history) -> None:
        w = request.split(" ")
        self.resp = "PASS"
        if w[0] == "2":
            self.draws += 1
            self.resp = self.bad if self.draws == self.at else f"PLAY {w[1]}"

    def receive(self) -> dict:
        return {"verdict": "OK", "response": self.resp}

    def close(self) -> None:
        pass


@pytest.mark.parametrize("seed", [0, 1, 2, 1003])
def test_fast_path_log_equals_per_call_judge(seed):
    """Four in-process policies: the engine-state path, the request path and the per-call judge (the whole log
    replayed every round) give the identical log; a random policy checks that the policies are asked exactly as
    often (the same random stream)."""
    init = random_initdata(seed, flowers=seed > 1000)
    fast = play_match([PolicyBot(HashPolicy()) for _ in range(4)], init)
    assert fast["meta"]["in_process"] == "engine"
    slow = play_match([PolicyBot(HashPolicy()) for _ in range(4)], init, judge_mode="per-call")
    assert slow["meta"]["in_process"] == "protocol"
    assert fast["log"] == slow["log"]
    rnd = [
        play_match([PolicyBot(RandomPolicy(seed * 4 + i)) for i in range(4)], init, in_process=m)
        for m in ("engine", "protocol")
    ]
    assert rnd[0]["log"] == rnd[1]["log"]
    assert fast["log"] != rnd[0]["log"]  # the policies do decide the game


@pytest.mark.parametrize("bad, verdict", [("HU", "WH"), ("PLAY J9", "WA"), ("GANG W1", "WA")])
def test_fast_path_with_a_misbehaving_seat(bad, verdict):
    """A seat that gets requests next to three fast in-process seats: WA / WH end the match as in the per-call
    protocol, with the identical log."""
    init = random_initdata(4)
    logs = []
    for mode in ("incremental", "per-call"):
        seats = [PolicyBot(HashPolicy()), _Scripted(3, bad), PolicyBot(HashPolicy()), PolicyBot(HashPolicy())]
        logs.append(play_match(seats, init, judge_mode=mode)["log"])
    assert logs[0] == logs[1]
    fin = logs[0][-1]["output"]
    assert fin["display"]["action"] == verdict and fin["display"]["player"] == 1
    assert fin["content"] == {"0": 10, "1": -30, "2": 10, "3": 10}


def test_fast_path_decisions_equal_the_engine():
    """The fast path shows each policy the engine's observations and masks (recorded decisions, incl. the discard
    after a claim only when the claim went through)."""
    for seed in (5, 6):
        init = random_initdata(seed)
        pols = [HashPolicy() for _ in range(4)]
        eng = play_engine(pols, init, record=True)
        bots = [PolicyBot(p, record=True) for p in pols]
        rec = play_match(bots, init)
        assert [rec["scores"][str(i)] for i in range(4)] == eng["scores"]
        for s in range(4):
            d_eng, d_run = eng["decisions"][s], bots[s].decisions
            assert len(d_eng) == len(d_run)
            for a, b in zip(d_eng, d_run):
                assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2]


def test_fast_path_policy_errors_do_not_stop_the_match():
    def boom(obs, mask, seats):
        raise RuntimeError("boom")

    rec = play_match(
        [PolicyBot(boom), PolicyBot(HashPolicy()), PolicyBot(HashPolicy()), PolicyBot(HashPolicy())],
        random_initdata(8),
    )
    assert rec["log"][-1]["output"]["command"] == "finish"
    assert any("boom" in d for d in rec["meta"]["debug"][0])
    with pytest.raises(ValueError, match="in_process"):
        play_match([PolicyBot(HashPolicy()) for _ in range(4)], random_initdata(0), in_process="fast")


def test_random_policy_one_row_path_draws_the_same_actions():
    """random_legal_actions on one row (the runner's and the bots' calls) takes a shorter path: the same actions
    from the same random stream as the batch path (given n_legal)."""
    from mjenv.policy import random_legal_actions

    rng = np.random.default_rng(0)
    masks = rng.random((300, 109)) < 0.05
    masks[:, 0] = True
    r1, r2 = np.random.default_rng(5), np.random.default_rng(5)
    for m in masks:
        m1 = m.reshape(1, -1)
        a = random_legal_actions(m1, r1)
        b = random_legal_actions(m1, r2, n_legal=np.count_nonzero(m1, axis=1))
        assert a.dtype == np.int64 and a.tolist() == b.tolist() and m[a[0]]
    with pytest.raises(ValueError, match="no legal action"):
        random_legal_actions(np.zeros((1, 109), bool), r1)


def test_runner_survives_a_missing_program_and_non_json_output():
    import sys
    from pathlib import Path

    from mjenv.botzone.runner import make_bot

    bots = Path(__file__).resolve().parent / "bz_bots"
    for spec, verdict in (
        ("simple:/nonexistent/botzone-bot", "RE"),
        (f"json:{sys.executable} {bots / 'garbage.py'}", "NJ"),  # not JSON
    ):
        seats = [PolicyBot(HashPolicy()), make_bot(spec, time_limit=2.0, first_time_limit=5.0)]
        seats += [PolicyBot(HashPolicy()), PolicyBot(HashPolicy())]
        rec = play_match(seats, random_initdata(2))
        fin = rec["log"][-1]["output"]
        assert fin["display"]["action"] == verdict and fin["display"]["player"] == 1, spec
        assert rec["scores"] == {"0": 10, "1": -30, "2": 10, "3": 10}


def test_runner_takes_an_initdata_with_srand_only():
    """Like the judge, the runner deals from srand alone (the C++ judge's shuffle); the per-call path passes the
    echoed initdata on later calls, as Botzone does."""
    init = {"srand": 77}  # quan drawn by rand() too
    fast = play_match([PolicyBot(HashPolicy()) for _ in range(4)], init)
    slow = play_match([PolicyBot(HashPolicy()) for _ in range(4)], init, judge_mode="per-call")
    assert fast["log"] == slow["log"] and fast["initdata"]["srand"] == 77
    assert (
        len(fast["initdata"]["walltiles"].split(" ")) == 136
        and fast["log"][0]["output"]["display"]["strlen"] == 0
    )
    eng = play_engine([HashPolicy() for _ in range(4)], init)
    assert eng["scores"] == [fast["scores"][str(i)] for i in range(4)]


def _judge_accepts(rec: dict) -> None:
    """The drop-in judge, given the record's log prefixes as Botzone gives them, prints every output of it."""
    from mjenv.botzone.judge import judge

    log = rec["log"]
    for k in range(0, len(log), 2):
        assert judge({"log": log[:k], "initdata": rec["initdata"]}) == log[k]["output"], k


@pytest.mark.parametrize("name, spec, verdict", BEHAVIOURS, ids=[b[0] for b in BEHAVIOURS])
def test_runner_behaviours(name, spec, verdict):
    """Each behaviour of a Botzone bot program at a runner table (seat 0, three in-process seats): the correct
    ones answer every request of the game, each faulty one ends it with its verdict; the drop-in judge accepts
    the log."""
    from mjenv.botzone.runner import make_bot

    seats = [make_bot(spec, **limits(verdict))] + [PolicyBot(HashPolicy()) for _ in range(3)]
    rec = play_match(seats, random_initdata(12))
    _judge_accepts(rec)
    answers = [e["0"] for e in rec["log"][1::2]]
    fin = rec["log"][-1]["output"]
    if verdict is None:
        assert all(a["verdict"] == "OK" for a in answers) and len(answers) > 50
        assert fin["display"]["action"] in ("HU", "HUANG") and rec["meta"]["faults"] == []
    else:
        assert fin["display"]["action"] == verdict and fin["display"]["player"] == 0
        assert rec["scores"] == {"0": -30, "1": 10, "2": 10, "3": 10}
        # a verdict of the program is in the record's meta with its request; a WA is the judge's
        want = [] if verdict == "WA" else [verdict]
        assert [f["verdict"] for f in rec["meta"]["faults"]] == want
    assert seats[0].proc is None  # stopped with the game


def test_runner_bot_in_three_seats_and_globaldata_across_matches():
    """One program in three seats (each its own process); a program's globaldata carried from match to match
    (a dict given to play_match), its data per seat and game (checked by the bot every turn)."""
    from mjenv.botzone.runner import make_bot

    keep = "simple-keep:" + bot_command("drawplayer.py")
    rec = play_match([keep, keep, keep, PolicyBot(HashPolicy())], random_initdata(13), time_limit=20.0)
    _judge_accepts(rec)
    assert all(e[str(i)]["verdict"] == "OK" for e in rec["log"][1::2] for i in range(3))
    mem = "simple:" + bot_command("memory.sh")
    store: dict = {}
    turns = 0
    for seed in (14, 15):
        seats = [make_bot(mem, time_limit=20.0, globaldata=store)] + [
            PolicyBot(HashPolicy()) for _ in range(3)
        ]
        rec = play_match(seats, random_initdata(seed), globaldata=store)
        assert rec["meta"]["faults"] == [] and rec["log"][-1]["output"]["display"]["action"] in (
            "HU",
            "HUANG",
        )
        turns += len(rec["log"]) // 2
    assert store == {mem: str(turns)}  # every turn counted once, over both matches


def test_subprocess_bot_turns_as_on_botzone():
    """One turn of a program that reads its input to the end (``json.load(sys.stdin)``): answered when the input
    is closed after it (one process per turn), a time-out when standard input stays open (the keep-running
    option); the JSON input carries data, globaldata and the limits."""
    from mjenv.botzone.runner import SubprocessBot

    reqs = ["0 1 0"]
    bot = SubprocessBot(bot_command("readall.py"), "json", time_limit=20.0)
    assert json.loads(bot.full_input(reqs, [])) == {
        "requests": reqs, "responses": [], "data": "", "globaldata": "", "time_limit": 20.0, "memory_limit": 256,
    }  # fmt: skip
    bot.send(reqs[0], (reqs, []))
    a = bot.receive()
    assert a["verdict"] == "OK" and a["response"] == "PASS" and bot.proc is None
    kept = SubprocessBot(bot_command("readall.py"), "json", keep_running=True, time_limit=1.5)
    kept.send(reqs[0], (reqs, []))
    assert kept.receive()["verdict"] == "TLE" and kept.proc is None
    simple = SubprocessBot(bot_command("memory.sh"), time_limit=20.0, globaldata={"x": "7"}, name="x")
    simple.data = "3"
    assert simple.full_input(["0 1 0", "1 0 0 0 0 W1", "2 W2"], ["PASS", "PASS"]) == (
        "3\n0 1 0\nPASS\n1 0 0 0 0 W1\nPASS\n2 W2\n3\n7\n"
    )


@pytest.mark.slow
def test_runner_python_program_reading_to_the_end():
    """A whole game of a Python program started for every request and reading its input to the end."""
    from mjenv.botzone.runner import make_bot

    seats = [make_bot("json:" + bot_command("readall.py"), time_limit=20.0)]
    rec = play_match(seats + [PolicyBot(HashPolicy()) for _ in range(3)], random_initdata(16))
    assert rec["meta"]["faults"] == [] and rec["log"][-1]["output"]["display"]["action"] in ("HU", "HUANG")
    _judge_accepts(rec)


def test_docs_worked_example_bot(tmp_path):
    """The bot written in docs/botzone.md ("A worked example") answers its turns as the docs say."""
    import re
    import sys
    from pathlib import Path

    from mjenv.botzone.runner import SubprocessBot

    text = (Path(__file__).resolve().parents[1] / "docs" / "botzone.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text[text.index("### A worked example") :], re.S).group(1)
    path = tmp_path / "mybot.py"
    path.write_text(code)
    bot = SubprocessBot([sys.executable, str(path)], time_limit=20.0)
    reqs = ["0 1 0", "1 0 0 0 0 W1 W1 W2 W3 W4 W5 W6 W7 W8 W9 B1 B2 B3", "2 T5"]
    resps: list[str] = []
    for k in range(3):
        bot.send(reqs[k], (reqs[: k + 1], resps))
        a = bot.receive()
        assert a["verdict"] == "OK" and a["debug"] == f"turn {k + 1}"
        resps.append(a["response"])
    assert resps == ["PASS", "PASS", "PLAY T5"] and bot.data == "3"


def test_subprocess_bot_kept_program_that_ends_is_re():
    """A program that asked to keep running but ends instead of answering its next request: RE."""
    from mjenv.botzone.runner import SubprocessBot

    once = "read n; read r; echo PASS; echo '>>>BOTZONE_REQUEST_KEEP_RUNNING<<<'"
    bot = SubprocessBot(["sh", "-c", once], keep_running=True, time_limit=20.0)
    reqs = ["0 1 0", "1 0 0 0 0 W1 W1 W2 W3 W4 W5 W6 W7 W8 W9 B1 B2 B3"]
    bot.send(reqs[0], (reqs[:1], []))
    assert bot.receive()["response"] == "PASS" and bot.proc is not None  # kept (stopped until its next turn)
    bot.send(reqs[1], (reqs, ["PASS"]))
    a = bot.receive()
    assert a["verdict"] == "RE" and "ended" in a["debug"] and bot.proc is None  # (stopped before or after it)


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_a_stopped_keep_running_bot_dies_with_its_evaluation(sig):
    """A keep-running bot is stopped between turns; when the evaluation is killed without closing it (SIGTERM,
    SIGKILL), the bot must not stay behind stopped forever (its process group is orphaned: SIGHUP, SIGCONT)."""
    import signal
    import subprocess
    import time

    forever = "while read r; do echo PASS; echo '>>>BOTZONE_REQUEST_KEEP_RUNNING<<<'; done"
    child = (
        "import sys, time\n"
        "from mjenv.botzone.runner import SubprocessBot\n"
        f"bot = SubprocessBot(['sh', '-c', {forever!r}], keep_running=True, time_limit=20.0)\n"
        "bot.send('0 1 0', (['0 1 0'], []))\n"
        "assert bot.receive()['response'] == 'PASS'\n"
        "print(bot.proc.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        pid = int(proc.stdout.readline())
        state = lambda: Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]  # noqa: E731
        deadline = time.monotonic() + 20
        while state() != "T" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state() == "T"  # stopped until its next turn, as on Botzone
        proc.send_signal(getattr(signal, sig))
        proc.wait(20)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if state() == "Z":  # dead, not yet reaped by init
                    break
            except FileNotFoundError:
                break
            time.sleep(0.05)
        else:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"the bot outlived the killed evaluation (state {state()})")
    finally:
        proc.kill()
