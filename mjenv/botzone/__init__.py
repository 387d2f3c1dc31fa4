"""Botzone / IJCAI Chinese Standard Mahjong: the variant's drop-in judge (:mod:`mjenv.botzone.judge`).

The variant itself is a rule preset of the engine, :meth:`mjenv.rules.RuleConfig.botzone`; see
``docs/botzone.md``.
"""

from mjenv.botzone.bot import BotCore
from mjenv.botzone.judge import Judge, judge, parse_walltiles
from mjenv.botzone.runner import PolicyBot, SubprocessBot, play_engine, play_match, random_initdata

__all__ = [
    "BotCore", "Judge", "PolicyBot", "SubprocessBot", "judge", "parse_walltiles", "play_engine", "play_match",
    "random_initdata",
]
