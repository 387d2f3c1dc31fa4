"""Botzone / IJCAI Chinese Standard Mahjong: the variant's drop-in judge (:mod:`mjenv.botzone.judge`).

The variant itself is a rule preset of the engine, :meth:`mjenv.rules.RuleConfig.botzone`; see
``docs/botzone.md``.
"""

from mjenv.botzone import humanlog, layout
from mjenv.botzone.humanlog import replay_human_log
from mjenv.botzone.judge import Judge, judge, parse_walltiles

__all__ = ["Judge", "judge", "humanlog", "layout", "parse_walltiles", "replay_human_log"]
