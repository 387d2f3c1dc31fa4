"""Botzone / IJCAI Chinese Standard Mahjong: the variant's drop-in judge (:mod:`mjenv.botzone.judge`).

The variant itself is a rule preset of the engine, :meth:`mjenv.rules.RuleConfig.botzone`; see
``docs/botzone.md``.
"""

from mjenv.botzone import layout
from mjenv.botzone.judge import Judge, judge, parse_walltiles

__all__ = ["Judge", "judge", "layout", "parse_walltiles"]
