"""Botzone / IJCAI Chinese Standard Mahjong: the variant's drop-in judge (:mod:`mjenv.botzone.judge`), bots in
and out (:mod:`mjenv.botzone.runner`, :mod:`mjenv.botzone.bot`), human logs (:mod:`mjenv.botzone.humanlog`),
training data from them (:mod:`mjenv.botzone.dataset`), export of games in both log formats
(:mod:`mjenv.botzone.export`), Botzone bots as arena policies (:mod:`mjenv.botzone.botpolicy`) and the course
agents' action layout (:mod:`mjenv.botzone.layout`).

The variant itself is a rule preset of the engine, :meth:`mjenv.rules.RuleConfig.botzone`; see
``docs/botzone.md``.
"""

from mjenv.botzone import dataset, export, humanlog, layout
from mjenv.botzone.bot import BotCore
from mjenv.botzone.botpolicy import BotPolicy, bot_policy
from mjenv.botzone.dataset import build_dataset, load_corpus
from mjenv.botzone.export import export_human_log, export_match_log
from mjenv.botzone.humanlog import replay_human_log
from mjenv.botzone.judge import Judge, judge, parse_walltiles
from mjenv.botzone.runner import PolicyBot, SubprocessBot, play_engine, play_match, random_initdata

__all__ = [
    "BotCore",
    "BotPolicy",
    "bot_policy",
    "export",
    "export_human_log",
    "export_match_log",
    "Judge",
    "PolicyBot",
    "SubprocessBot",
    "build_dataset",
    "dataset",
    "humanlog",
    "judge",
    "layout",
    "load_corpus",
    "parse_walltiles",
    "play_engine",
    "play_match",
    "random_initdata",
    "replay_human_log",
]
