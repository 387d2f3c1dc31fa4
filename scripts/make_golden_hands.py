"""Write ``tests/golden/hands.json``: golden hand records that pin the engine's behaviour (``tests/test_golden.py``).

Each case is a hand (or a 16-hand match) played through the AEC front (:func:`mjenv.pettingzoo_env.raw_env`) by a
seeded scripted policy that likes claims and kongs, so that the cases cover flowers, every kong kind, a robbed
kong, a head-bump, an exhaustive draw, an illegal action in each illegal mode and one match. A case stores the
actions given to ``env.step`` (illegal ones included), who was asked at every step, the rewards, a digest of
every observation and mask the acting player saw, each hand's :mod:`mjenv.record` log (ops, events, result)
and the final scores. The test replays the actions and must reproduce all of it exactly.

Regenerate only for an intended change of behaviour (and say so in the commit)::

    PYTHONPATH=. python scripts/make_golden_hands.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mjenv.testing.golden import events_of, play_case

OUT = Path(__file__).resolve().parents[1] / "tests" / "golden" / "hands.json"


def find(pred, rules: dict, start: int, eager: bool = True, limit: int = 3000) -> dict:
    """The first seed from ``start`` whose scripted hand satisfies ``pred`` (with the seed's engine events)."""
    from mjenv import game as G
    from mjenv.record import replay

    for seed in range(start, start + limit):
        case = play_case(rules, seed, seed, eager)
        st = replay(case["hands"][-1])[-1]
        ev = {name for bit, name in G.EV_NAMES.items() if int(st[G.EVENTS]) & bit}
        if pred(ev, case):
            case["engine_events"] = sorted(ev)
            return case
    raise RuntimeError(f"no seed in {start}..{start + limit} satisfies the case")


def main() -> int:
    single = {"illegal": "terminate"}
    cases = {}
    cases["flowers_and_exposed_kong"] = find(
        lambda ev, c: {"initial_flower", "flower_in_play", "exposed_kong"} <= ev, single, 100
    )
    cases["concealed_kong"] = find(lambda ev, c: "concealed_kong" in ev, single, 200)
    cases["added_kong"] = find(lambda ev, c: "added_kong" in ev and "robbed_kong" not in ev, single, 300)
    cases["robbed_kong"] = find(lambda ev, c: "robbed_kong" in ev, single, 400, limit=20000)
    cases["head_bump"] = find(lambda ev, c: "head_bump" in ev, single, 500, limit=20000)
    cases["self_drawn_win"] = find(lambda ev, c: "self_drawn_win" in ev, single, 600)
    cases["exhaustive_draw"] = find(lambda ev, c: "exhaustive_draw" in ev, single, 700, eager=False)
    for mode in ("terminate", "penalty", "raise"):
        base = find(lambda ev, c: len(c["actions"]) > 40, {"illegal": mode}, 800)
        case = play_case({"illegal": mode}, base["seed"], base["seed"], True, illegal_at=20)
        cases[f"illegal_{mode}"] = case
    # a false win in penalty mode (WIN when it is not legal: pays 10 to each other player)
    from mjenv import actions as A

    cases["false_win_penalty"] = play_case(
        {"illegal": "penalty"}, 900, 900, True, illegal_at=12, illegal_action=A.WIN
    )
    cases["match_16_hands"] = play_case({"match": True, "illegal": "terminate"}, 1000, 1000, True)
    cases["dealer_south_prevalent_west"] = play_case({"dealer": 2, "prevalent_wind": 2}, 1100, 1100, True)
    for name, c in cases.items():
        print(
            f"{name:30s} seed {c['seed']:6d} steps {len(c['steps']):5d} hands {len(c['hands']):2d} "
            f"{sorted(events_of(c))}"
        )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
