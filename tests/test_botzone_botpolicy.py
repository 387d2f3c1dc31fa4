"""Duplicate evaluation of Botzone bots with mjenv.arena: a bot program is a policy (mjenv.botzone.botpolicy)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from mjenv.arena import run_arena
from mjenv.botzone.botpolicy import BotPolicy, bot_policy
from mjenv.botzone.runner import PolicyBot
from mjenv.rules import RuleConfig
from tests._bz_policies import HashPolicy

BOTS = Path(__file__).resolve().parent / "bz_bots"
BOT = "mjenv.botzone.botpolicy:bot_policy"
HASH = "tests._bz_policies:make_hash"


def _py(name: str) -> str:
    return f"{sys.executable} {BOTS / name}"


def _arena(agents, walls=2, seed=3, **kw):
    return run_arena(
        agents,
        "1v3",
        walls=walls,
        seed=seed,
        tables=1,
        rules=RuleConfig.botzone(),
        progress=False,
        records=0,
        **kw,
    )


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
    a = _arena({"bot": BOT, "hash": HASH}, walls=3, agent_kwargs={"bot": {"bot": seat}})
    b = _arena({"direct": HASH, "hash": HASH}, walls=3)
    assert a["table"] == b["table"]
    assert _Counting.games == 12  # one game per hand: no hand was mistaken for a new one
    verbs = {r.split(" ")[2] for r in _Counting.seen if r.startswith("3 ")}
    assert verbs >= {"DRAW", "PLAY", "PENG", "CHI", "GANG"}, verbs  # claims and kongs were derived too
    assert a["agents"]["bot"]["illegal_actions"]["count"] == 0
    assert a["settings"]["rules"]["private_walls"] and set(a["seeds"]["dealers"]) == {0}


def test_bot_policy_subprocess_bots():
    """External programs: a legal keep-running bot; a keep-running bot printing garbage (WA), a bot that crashes
    (RE) and one that hangs (TLE), run one process per turn, give illegal actions: every hand ends at the fault
    and the offender pays 30 to each other player."""
    pol = bot_policy(1, 0, bot="simple:" + _py("drawplayer.py"))
    r = _arena({"bot": lambda n, s, p=pol: p, "hash": HASH}, walls=2)
    assert r["agents"]["bot"]["illegal_actions"]["count"] == 0 and not pol.verdicts
    assert r["agents"]["bot"]["hands"] == 8 and pol.hands == 8
    pol.close()
    # the bots that answer or die at once get limits no loaded machine's process start reaches (a crash seen as
    # TLE was the flake); only the hanging one is waited for, briefly
    for name, verdict, limit in (
        ("garbage.py", "WA", 10.0),
        ("crash.py", "RE", 10.0),
        ("hang.py", "TLE", 0.3),
    ):
        pol = bot_policy(1, 0, bot="simple:" + _py(name), time_limit=limit, first_time_limit=max(limit, 0.5))
        r = _arena({"bot": lambda n, s, p=pol: p, "hash": HASH}, walls=1)
        assert r["agents"]["bot"]["illegal_actions"]["count"] == 4, name  # every hand ends at its fault
        assert [v["verdict"] for v in pol.verdicts] == [verdict] * 4
        assert r["agents"]["bot"]["points_per_hand"]["mean"] == -30
        pol.close()
        assert pol.bot.proc is None


def test_bot_policy_answers_map_to_actions():
    from mjenv import actions as A
    from mjenv.botzone.botpolicy import _parse

    assert _parse("PLAY W3", ("draw",), None) == (A.DISCARD + 2, -1)
    assert _parse("GANG B1", ("draw",), None) == (A.CONCEALED_KONG + 18, -1)
    assert _parse("HU", ("draw",), None) == (A.WIN, -1)
    assert _parse("PENG J1", ("window", 1, 5), None) == (A.PUNG, 31)
    assert _parse("CHI W5 W1", ("window", 1, 3), None) == (A.CHOW + 0, 0)  # W4 claimed: first of W4 W5 W6
    assert _parse("CHI W5 W1", ("window", 1, 5), None) == (A.CHOW + 2, 0)
    assert _parse("CHI W9 W1", ("window", 1, 7), None) == (None, -1)  # the run would leave the suit
    assert _parse("GANG", ("rob", 1, 5), None) == (None, -1)
    assert _parse("PLAY  W1", ("draw",), None) == (None, -1)


def test_bot_policy_bad_arguments():
    with pytest.raises(ValueError, match="tables=1"):
        bot_policy(4, 0, bot="simple:true")
    with pytest.raises(ValueError, match="seat spec"):
        bot_policy(1, 0, bot="nope:x")
    pol = BotPolicy(PolicyBot(HashPolicy()))
    with pytest.raises(ValueError, match="observations"):
        pol(None, np.ones((1, 109), bool), np.zeros(1, np.int32))
    with pytest.raises(ValueError, match="tables=1"):
        run_arena({"bot": BOT, "hash": HASH}, "1v3", walls=1, tables=4, rules=RuleConfig.botzone(),
                  agent_kwargs={"bot": {"bot": "simple:true"}}, progress=False)  # fmt: skip


def test_eval_command_variant_botzone(tmp_path, capsys):
    """``mjenv eval --variant botzone`` runs the arena in the variant, with a bot program as an agent."""
    import json

    from mjenv.cli import main

    out = tmp_path / "r.json"
    bot = "simple:" + _py("drawplayer.py")
    argv = ["eval", "--variant", "botzone", "--agent", f"bot={BOT}", "--agent", f"hash={HASH}"]
    argv += [
        "--agent-opt",
        f"bot.bot={bot}",
        "--walls",
        "1",
        "--tables",
        "1",
        "--no-progress",
        "--json",
        str(out),
    ]
    assert main(argv) == 0
    rep = json.loads(out.read_text())
    assert rep["settings"]["rules"] == RuleConfig.botzone().to_dict()
    assert rep["agents"]["bot"]["hands"] == 4 and rep["agents"]["bot"]["illegal_actions"]["count"] == 0
    assert "bot" in capsys.readouterr().out


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
