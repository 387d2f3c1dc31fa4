"""Human logs of the Botzone variant as behaviour-cloning data: ``build_dataset(corpus) -> arrays``.

Rules
-----
A log (the course ``data.txt`` text format or Botzone JSON match logs, :mod:`mjenv.botzone.humanlog`) records
what each player did; every engine step of its replay is a decision of one player at one state. A claim line's
``Ignore Player j ...`` clauses (in JSON logs: the claims the judge did not take) are claims player ``j`` made in
that window and lost to a higher-priority claim: they are ``j``'s decisions too, at the state where ``j`` was
asked. A seat asked in a window without a claim in the log passed.

Specification in mjenv
----------------------
* Parsing and the wall rebuilt from the draws are :mod:`mjenv.botzone.humanlog`'s (Python); the replay, the
  observations (:func:`mjenv.observation.observe_kernel`, uint8 encoding), the legal masks
  (``mjenv.game.legal_mask_kernel``) and the label writes are one numba kernel (:func:`replay_rounds_kernel`)
  over a preallocated buffer, walking the same events as :func:`mjenv.botzone.humanlog.replay_round` with the same
  checks. A round the kernel refuses is replayed by ``replay_round`` for its error message (the round and line).
* Output, the ``train/bc.py`` dataset layout plus provenance: ``obs`` uint8 ``[K, OBS_SIZE]`` (the deciding
  player's observation just before the step), ``masks`` bit-packed uint8 ``[K, 14]`` (``np.packbits``, big
  bit order), ``actions`` uint8 ``[K]`` (mjenv action ids), ``types`` uint8 ``[K]`` (:data:`TYPE_NAMES`),
  ``seats`` uint8, ``round`` int32 (index into ``matches``), ``outvoted`` bool (the label is a claim that lost
  to another), ``matches`` str ``[R]`` (match id per round), ``round_scores`` int32 ``[R, 4]`` (the engine's
  payments) and ``log_scores`` int32 ``[R, 4]`` (the log's).
* Decisions with a single legal action (passes with nothing to claim, a forced discard) are left out unless
  ``forced=True``, as in ``train/bc.py``.
* ``on_error="raise"`` (default) raises the ``ValueError`` of the first bad round; ``"skip"`` leaves bad rounds
  out (and logs with flowers, which the replay refuses) and lists them in the result's ``skipped``.
"""

from __future__ import annotations

import gc
import gzip
import json
from pathlib import Path

import numpy as np
from tqdm import tqdm

from mjenv import _jit
from mjenv import actions as A
from mjenv import game as G
from mjenv.botzone import humanlog as H
from mjenv.observation import OBS_SIZE, observe_kernel
from mjenv.rules import PENALTY_TERMINATE, RuleConfig

# Imported as a module on purpose: mjenv._jit stamps the files containing the import statement form and drops
# every cached kernel of the package when one of them changes. No other kernel calls into this file, and a
# change of the engine files drops this file's cache as well, so it needs no stamp (numba itself invalidates its
# cache when this file changes).
njit = _jit.njit

__all__ = [
    "TYPE_NAMES",
    "build_dataset",
    "decision_types",
    "encode_round",
    "load_corpus",
    "replay_rounds_kernel",
]

TYPE_NAMES = ("discard", "claim", "kong", "win", "pass")  # train/bc.py's decision types, same order
MASK_BYTES = (A.NUM_ACTIONS + 7) // 8

# event rows: int32[EV_COLS]
EV_COLS = 13
EV_DRAW, EV_TURN, EV_CLAIM, EV_PENALTY = 0, 1, 2, 3
V_NONE, V_HU, V_PENG, V_GANG, V_CHI = 0, 1, 2, 3, 4
_VCODE = {"Hu": V_HU, "Peng": V_PENG, "Gang": V_GANG, "Chi": V_CHI}
END_HU, END_HUANG, END_VERDICT = 0, 1, 2
# error codes of the kernel (a round it refuses; humanlog.replay_round then gives the message)
E_DRAW, E_NO_WINDOW, E_ILLEGAL, E_TAKER, E_NOT_OVER, E_HUANG_WIN, E_NOT_ASKED = 1, 2, 3, 4, 5, 6, 7
E_BAD_CHOW, E_OFFER, E_TWICE, E_SEAT = 8, 9, 10, 11


def decision_types(actions: np.ndarray) -> np.ndarray:
    """``uint8`` decision type of each action id (:data:`TYPE_NAMES` order, as ``train.bc.decision_types``)."""
    a = np.asarray(actions, np.int64)
    t = np.full(a.shape, 2, np.uint8)
    t[a < A.CHOW] = 0
    t[(a >= A.CHOW) & (a <= A.KONG)] = 1
    t[a == A.WIN] = 3
    t[a == A.PASS] = 4
    return t


# ---------------------------------------------------------------------------------------------- encoding
def encode_round(r: dict) -> np.ndarray:
    """The event rows (``int32[n, EV_COLS]``) of a parsed round (:func:`mjenv.botzone.humanlog.parse_text`).

    Columns: kind, player, value, line, then for a claim the verb (:data:`V_HU`...) of each seat 0..3 and the
    tile of each seat (a chow names its middle tile); a turn row's value is the engine action, a draw's the
    tile, a claim's the taker's verb, column 12 of a claim is 1 when a seat claims twice.
    """
    ev = r["events"]
    out = np.zeros((len(ev), EV_COLS), np.int32)
    for i, (ln, p, verb, t, ignores) in enumerate(ev):
        row = out[i]
        row[1], row[3] = p, ln
        if verb == "Draw":
            row[0], row[2] = EV_DRAW, t
        elif verb == "Penalty":
            row[0] = EV_PENALTY
        elif verb in _VCODE:
            row[0], row[2] = EV_CLAIM, _VCODE[verb]
            for s, v, tt in [(p, verb, t), *ignores]:
                if row[4 + s] != V_NONE:
                    row[12] = 1
                row[4 + s], row[8 + s] = _VCODE[v], tt
        else:
            row[0] = EV_TURN
            row[2] = {"Play": A.DISCARD, "AnGang": A.CONCEALED_KONG, "BuGang": A.ADDED_KONG}[verb] + t
    return out


# ---------------------------------------------------------------------------------------------- kernels
@njit
def _claim_action(v, tile, offer):
    if v == V_HU:
        return A.WIN
    if v == V_PENG:
        return A.PUNG
    if v == V_GANG:
        return A.KONG
    pos = offer - tile + 1  # a chow names its middle tile
    if 0 <= pos <= 2 and tile < 27 and offer // 9 == tile // 9:
        return A.CHOW + pos
    return -1


@njit
def _decide(
    st, seat, action, rnd, outv, forced, mask, obs, masks, actions, seats, rounds, outvoted, k, rew, sw, hw
):
    """One checked engine step of ``seat``; the decision is written at row ``k`` when kept. Returns the next
    row, or -1 (illegal: state untouched) / -2 (not this seat's move)."""
    if st[G.PHASE] == G.PH_OVER or st[G.CUR] != seat:
        return -2
    n = G.legal_mask_kernel(st, seat, mask)
    if action < 0 or action >= A.NUM_ACTIONS or not mask[action]:
        return -1
    if forced or n > 1:
        observe_kernel(st, seat, obs[k])
        for j in range(masks.shape[1]):
            b = 0
            for bit in range(8):
                a = 8 * j + bit
                if a < A.NUM_ACTIONS and mask[a]:
                    b |= 128 >> bit
            masks[k, j] = b
        actions[k] = action
        seats[k] = seat
        rounds[k] = rnd
        outvoted[k] = outv
        k += 1
    if G.step_kernel(st, action, rew, sw, hw) != G.OK:
        return -1
    return k


@njit
def _replay_one(
    st, ev, e0, e1, end, rnd, forced, mask, obs, masks, actions, seats, rounds, outvoted, k, scores, sw, hw
):
    """Replay events ``ev[e0:e1]`` on the dealt state ``st``; returns (next row, error code, event index)."""
    rew = np.zeros(4, np.float32)
    pen = np.zeros(4, np.float32)
    ans = np.full(4, -1, np.int64)
    i = e0
    while i < e1:
        kind = ev[i, 0]
        p = ev[i, 1]
        ei = i
        i += 1
        if kind == EV_DRAW:
            if st[G.PHASE] != G.PH_TURN or st[G.TURN] != p or st[G.DRAWN] != ev[ei, 2]:
                return k, E_DRAW, ei
            continue
        if kind == EV_PENALTY:
            G.penalize_kernel(st, p, PENALTY_TERMINATE, rew)
            for s in range(4):
                pen[s] += rew[s]
            continue
        if kind == EV_CLAIM:  # only a self-drawn Hu at the top level
            if ev[ei, 2] != V_HU or st[G.PHASE] != G.PH_TURN:
                return k, E_NO_WINDOW, ei
            if st[G.DRAWN] != ev[ei, 8 + p]:
                return k, E_NO_WINDOW, ei
            action = A.WIN
        else:
            action = ev[ei, 2]
        k2 = _decide(st, p, action, rnd, False, forced, mask, obs, masks, actions, seats, rounds, outvoted, k, rew, sw, hw)  # fmt: skip
        if k2 < 0:
            return k, E_ILLEGAL if k2 == -1 else E_SEAT, ei
        k = k2
        if st[G.PHASE] != G.PH_CLAIM and st[G.PHASE] != G.PH_ROB:
            continue
        offer = st[G.OFFER_TILE]
        taker = -1
        tverb = V_NONE
        ci = ei
        for s in range(4):
            ans[s] = -1
        if i < e1 and ev[i, 0] == EV_CLAIM and ev[i, 1] != p:
            ci = i
            i += 1
            taker = ev[ci, 1]
            tverb = ev[ci, 2]
            if ev[ci, 12] != 0:
                return k, E_TWICE, ci
            for s in range(4):
                v = ev[ci, 4 + s]
                if v == V_NONE:
                    continue
                tt = ev[ci, 8 + s]
                if v != V_CHI and tt != offer:
                    return k, E_OFFER, ci
                a = _claim_action(v, tt, offer)
                if a < 0:
                    return k, E_BAD_CHOW, ci
                if s == p:
                    return k, E_TWICE, ci
                ans[s] = a
        while st[G.PHASE] == G.PH_CLAIM or st[G.PHASE] == G.PH_ROB:
            s = st[G.CUR]
            a = A.PASS
            if ans[s] >= 0:
                a = ans[s]
                ans[s] = -1
            outv = a != A.PASS and s != taker
            k2 = _decide(st, s, a, rnd, outv, forced, mask, obs, masks, actions, seats, rounds, outvoted, k, rew, sw, hw)  # fmt: skip
            if k2 < 0:
                return k, E_ILLEGAL if k2 == -1 else E_SEAT, ci
            k = k2
        for s in range(4):
            if ans[s] >= 0:
                return k, E_NOT_ASKED, ci
        if taker >= 0:
            over = st[G.PHASE] == G.PH_OVER
            if tverb == V_HU:
                ok = over and st[G.WINNER] == taker
            else:
                ok = (st[G.PHASE] == G.PH_TURN and st[G.TURN] == taker) or (
                    tverb == V_GANG and over and st[G.WINNER] < 0
                )
            if not ok:
                return k, E_TAKER, ci
    last = e1 - 1 if e1 > e0 else e0
    if st[G.PHASE] != G.PH_OVER:
        return k, E_NOT_OVER, last
    if end == END_HUANG and st[G.WINNER] >= 0:
        return k, E_HUANG_WIN, last
    for s in range(4):
        scores[s] = int(pen[s]) if end == END_VERDICT else st[G.SCORES + s]
    return k, 0, -1


@njit
def replay_rounds_kernel(walls, quans, ends, rules, ev, ev_off, r0, forced, obs, masks, actions, seats, rounds,
                         outvoted, scores, errors, sw, hw):  # fmt: skip
    """Replay rounds ``r0, r0+1, ...`` (wall ``walls[r]``, prevalent wind ``quans[r]``, rules block
    ``rules[quans[r]]``, events ``ev[ev_off[r]:ev_off[r+1]]``, end ``ends[r]``) into the row buffers from row 0,
    while the next round surely fits (4 rows per event). A refused round writes no rows and gets
    ``errors[r] = (code, event index)``; a round that ends before its deal has ``ends[r] < 0`` (skipped).
    Returns (rounds done up to, rows written)."""
    st = np.zeros(G.STATE_SIZE, np.int32)
    mask = np.zeros(A.NUM_ACTIONS, np.bool_)
    cap = obs.shape[0]
    k = 0
    r = r0
    n = walls.shape[0]
    while r < n:
        e0 = ev_off[r]
        e1 = ev_off[r + 1]
        if k + 4 * (e1 - e0) + 4 > cap and r > r0:
            break
        if ends[r] >= 0:
            if G.reset_wall_kernel(st, walls[r], 0, quans[r], rules[quans[r]], sw, hw) != 0:
                errors[r, 0] = E_DRAW
                errors[r, 1] = e0
            else:
                k2, err, ei = _replay_one(st, ev, e0, e1, ends[r], r, forced, mask, obs, masks, actions, seats,
                                          rounds, outvoted, k, scores[r], sw, hw)  # fmt: skip
                if err != 0:
                    errors[r, 0] = err
                    errors[r, 1] = ei
                else:
                    k = k2
        r += 1
    return r, k


# ---------------------------------------------------------------------------------------------- corpus
def load_corpus(paths) -> list:
    """Read log files into a list of sources for :func:`build_dataset`: ``.txt`` (the text format, one str per
    file), ``.json`` (one Botzone JSON log or a list of them), ``.jsonl`` (one JSON log per line); any of them
    gzip-compressed (``.gz``)."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list = []
    for p in paths:
        p = Path(p)
        if not p.is_file():
            raise FileNotFoundError(f"botzone logs: no file {p}")
        name = p.name[:-3] if p.name.endswith(".gz") else p.name
        text = gzip.open(p, "rt", encoding="utf-8").read() if p.name.endswith(".gz") else p.read_text("utf-8")
        if name.endswith(".jsonl"):
            for i, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        raise ValueError(f"{p} line {i}: malformed JSON: {e}") from None
        elif name.endswith(".json"):
            try:
                d = json.loads(text)
            except json.JSONDecodeError as e:
                raise ValueError(f"{p}: malformed JSON: {e}") from None
            out.extend(d if isinstance(d, list) else [d])
        else:
            out.append(text)
    return out


def _parse(source) -> list:
    """``[(round dict | None, error str | None)]`` of one source (a text log, a JSON log or its text)."""
    if isinstance(source, str) and source.lstrip()[:1] not in ("{", "["):
        return [(r, None) for r in H.parse_text(source)]
    if isinstance(source, (str, dict)) or (isinstance(source, list) and not source):
        return [(r, None) for r in H.parse_json(source)]
    raise TypeError(
        f"a log is a str (text or JSON) or a dict (a Botzone JSON log), got {type(source).__name__}"
    )


def _sources(corpus) -> list:
    if isinstance(corpus, (str, dict)):
        return [corpus]
    if isinstance(corpus, (list, tuple)):
        return list(corpus)
    raise TypeError(
        f"corpus must be a log (str or dict) or a list of logs, got {type(corpus).__name__}; "
        "read files with load_corpus(paths)"
    )


def build_dataset(
    corpus, *, forced: bool = False, on_error: str = "raise", progress: bool = False, chunk_rows: int = 16384
) -> dict:
    """Behaviour-cloning arrays of a log corpus (module docstring for the layout).

    ``corpus``: a text log (``data.txt`` format), a Botzone JSON log (dict or JSON text), or a list of them
    (e.g. :func:`load_corpus`). ``forced``: keep decisions with a single legal action. ``on_error``: ``"raise"``
    (``ValueError`` naming the round and line of the first bad round) or ``"skip"`` (bad rounds left out, listed
    as ``(source index, match, message)`` in ``result["skipped"]``). Returns a dict of arrays plus ``skipped``.
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    # the parse makes millions of small objects: the cyclic GC would rescan them over and over (about half the
    # time of a corpus); none of them form cycles, so it is paused and restored
    was = gc.isenabled()
    gc.disable()
    try:
        return _build(corpus, forced, on_error, progress, chunk_rows)
    finally:
        if was:
            gc.enable()


def _build(corpus, forced: bool, on_error: str, progress: bool, chunk_rows: int) -> dict:
    if not isinstance(forced, bool):
        raise TypeError(f"forced must be a bool, got {type(forced).__name__}")
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1024:
        raise ValueError(f"chunk_rows must be an int >= 1024, got {chunk_rows!r}")
    skipped: list = []
    rounds: list[dict] = []
    srcs = _sources(corpus)
    for si, src in enumerate(tqdm(srcs, disable=not progress, unit="log", desc="parse")):
        try:
            parsed = _parse(src)
        except ValueError as e:
            if on_error == "raise":
                raise (ValueError(f"log {si}: {e}") if len(srcs) > 1 else e) from None
            skipped.append((si, None, str(e)))
            continue
        for r, _ in parsed:
            r["_src"] = si
            rounds.append(r)
    # walls and event rows (Python), per round
    keep: list[dict] = []
    walls, quans, ends, evs = [], [], [], []
    for k, r in enumerate(rounds):
        try:
            if r["deals"] is None:
                wall = np.repeat(np.arange(34, dtype=np.int32), 4)
                end = -1
            else:
                wall = H.rebuild_wall(r, k).astype(np.int32)
                end = END_HU if r["end"] == "Hu" else (END_HUANG if r["end"] == "Huang" else END_VERDICT)
            rows = encode_round(r) if r["deals"] is not None else np.zeros((0, EV_COLS), np.int32)
        except ValueError as e:
            if on_error == "raise":
                raise
            skipped.append((r["_src"], r["match"], str(e)))
            continue
        r["_k"] = k
        keep.append(r)
        walls.append(wall)
        quans.append(r["quan"] if r["quan"] is not None else 0)
        ends.append(end)
        evs.append(rows)
    n = len(keep)
    walls_a = np.stack(walls) if n else np.zeros((0, 136), np.int32)
    quans_a = np.asarray(quans, np.int64)
    ends_a = np.asarray(ends, np.int64)
    ev_off = np.zeros(n + 1, np.int64)
    ev_off[1:] = np.cumsum([len(e) for e in evs])
    ev = np.concatenate(evs) if n else np.zeros((0, EV_COLS), np.int32)
    rules = np.stack([G.rules_block(RuleConfig.botzone(q)) for q in range(4)])
    sw, hw = G.win_tables()
    cap = max(chunk_rows, 4 * int(np.diff(ev_off).max(initial=0)) + 4)
    scores = np.zeros((n, 4), np.int32)
    errors = np.zeros((n, 2), np.int64)
    parts: list = []
    r0 = 0
    with tqdm(total=n, disable=not progress, unit="round", desc="replay") as bar:
        while r0 < n:
            # fresh buffers per call (every row the kernel reports is fully written), kept as trimmed views
            buf = (np.empty((cap, OBS_SIZE), np.uint8), np.empty((cap, MASK_BYTES), np.uint8),
                   np.empty(cap, np.uint8), np.empty(cap, np.uint8), np.empty(cap, np.int32),
                   np.empty(cap, np.bool_))  # fmt: skip
            r1, rows = replay_rounds_kernel(walls_a, quans_a, ends_a, rules, ev, ev_off, r0, forced, *buf,
                                            scores, errors, sw, hw)  # fmt: skip
            parts.append(tuple(x[:rows] for x in buf))
            bar.update(r1 - r0)
            r0 = r1
    bad = np.flatnonzero(errors[:, 0])
    for j in bad:
        r = keep[j]
        msg = _error_message(r, int(errors[j, 0]), int(errors[j, 1] - ev_off[j]))
        if on_error == "raise":
            raise ValueError(msg)
        skipped.append((r["_src"], r["match"], msg))
    empty = ((0, OBS_SIZE), (0, MASK_BYTES), 0, 0, 0, 0)
    dts = (np.uint8, np.uint8, np.uint8, np.uint8, np.int32, np.bool_)
    cat = [
        (np.concatenate([p[i] for p in parts]) if len(parts) > 1 else parts[0][i].copy())
        if parts
        else np.zeros(empty[i], dts[i])
        for i in range(6)
    ]
    obs, masks, act, seat, rnd, outv = cat
    good = np.ones(n, np.bool_)
    good[bad] = False
    good &= ends_a >= 0
    # renumber rounds to the kept ones
    new_index = np.cumsum(good) - 1
    log_scores = np.array([x["log_scores"] for x in keep], np.int32).reshape(n, 4)
    return {
        "obs": obs,
        "masks": masks,
        "actions": act,
        "types": decision_types(act),
        "seats": seat,
        "round": new_index[rnd].astype(np.int32) if rnd.size else rnd,
        "outvoted": outv,
        "matches": np.array([keep[j]["match"] for j in np.flatnonzero(good)], dtype=str),
        "round_scores": scores[good],
        "log_scores": log_scores[good],
        "skipped": skipped,
    }


_CODE_TEXT = {
    E_DRAW: "a draw the engine does not have",
    E_NO_WINDOW: "a claim without a discard or kong to claim",
    E_ILLEGAL: "an illegal action",
    E_TAKER: "the engine gave the tile to another player",
    E_NOT_OVER: "the round is not over in the engine",
    E_HUANG_WIN: "the log says Huang but the engine scored a win",
    E_NOT_ASKED: "a claim of a player who was never asked",
    E_BAD_CHOW: "no such chow on the offered tile",
    E_OFFER: "a claim of a tile other than the offered one",
    E_TWICE: "a player claims twice or claims its own tile",
    E_SEAT: "a move of a player who is not to act",
}


def _error_message(r: dict, code: int, ei: int) -> str:
    """The message of a round the kernel refused: humanlog.replay_round's error, which names round and line."""
    try:
        H.replay_round(r, r["_k"])
    except ValueError as e:
        return str(e)
    ln = r["events"][ei][0] if 0 <= ei < len(r["events"]) else r["line"]
    return f"round {r['_k']} (match {r['match']}) line {ln}: {_CODE_TEXT.get(code, f'error {code}')}"
