"""Botzone / IJCAI Chinese Standard Mahjong: the variant's drop-in judge (:mod:`mjenv.botzone.judge`), bots in
and out (:mod:`mjenv.botzone.runner`, :mod:`mjenv.botzone.bot`), human logs (:mod:`mjenv.botzone.humanlog`),
training data from them (:mod:`mjenv.botzone.dataset`), export of games in both log formats
(:mod:`mjenv.botzone.export`), Botzone bots as arena policies (:mod:`mjenv.botzone.botpolicy`) and the course
agents' action layout (:mod:`mjenv.botzone.layout`).

The variant itself is a rule preset of the engine, :meth:`mjenv.rules.RuleConfig.botzone`; see
``docs/botzone.md``.

Importing the package imports none of its modules: each name below is loaded from its module on first use. So
``python -m mjenv.botzone.judge`` (a new process per call on Botzone) loads the judge and the kernels it calls,
not the bot, the runner or the dataset builder, and ``python -m`` finds neither entry module imported before it
runs it. ``mjenv.botzone.judge`` is the judge's module; the judge function is ``mjenv.botzone.judge.judge``.
"""

import importlib

#: public name -> the module that defines it (submodules: :data:`_SUBMODULES`)
_LAZY = {
    "BotCore": "mjenv.botzone.bot",
    "BotPolicy": "mjenv.botzone.botpolicy",
    "bot_policy": "mjenv.botzone.botpolicy",
    "build_dataset": "mjenv.botzone.dataset",
    "load_corpus": "mjenv.botzone.dataset",
    "export_human_log": "mjenv.botzone.export",
    "export_match_log": "mjenv.botzone.export",
    "replay_human_log": "mjenv.botzone.humanlog",
    "Judge": "mjenv.botzone.judge",
    "parse_walltiles": "mjenv.botzone.judge",
    "PolicyBot": "mjenv.botzone.runner",
    "SubprocessBot": "mjenv.botzone.runner",
    "play_engine": "mjenv.botzone.runner",
    "play_match": "mjenv.botzone.runner",
    "random_initdata": "mjenv.botzone.runner",
}
_SUBMODULES = ("bot", "botpolicy", "dataset", "export", "humanlog", "judge", "layout", "runner")

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


def __getattr__(name):
    if name in _SUBMODULES:  # the import binds the submodule as this package's attribute
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))
