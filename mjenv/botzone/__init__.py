"""Botzone / IJCAI Chinese Standard Mahjong: the variant's drop-in judge (:mod:`mjenv.botzone.judge`), bots in
and out (:mod:`mjenv.botzone.runner`, :mod:`mjenv.botzone.bot`), human logs (:mod:`mjenv.botzone.humanlog`) and
the course agents' action layout (:mod:`mjenv.botzone.layout`).

The variant itself is a rule preset of the engine, :meth:`mjenv.rules.RuleConfig.botzone`; see
``docs/botzone.md``.
"""

from mjenv.botzone import humanlog, layout
from mjenv.botzone.bot import BotCore
from mjenv.botzone.humanlog import replay_human_log
from mjenv.botzone.judge import Judge, judge, parse_walltiles
from mjenv.botzone.runner import PolicyBot, SubprocessBot, play_engine, play_match, random_initdata

__all__ = [
    "BotCore",
    "Judge",
    "PolicyBot",
    "SubprocessBot",
    "humanlog",
    "judge",
    "layout",
    "parse_walltiles",
    "play_engine",
    "play_match",
    "random_initdata",
    "replay_human_log",
]
