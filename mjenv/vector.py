"""Batched self-play: many independent MCR tables stepped together by one parallel Numba kernel.

Rules
-----
No rules of its own. Every table follows :mod:`mjenv.game` (MCR as decided in ``docs/rules.md``):
the vector env calls the engine's per-table kernels ``reset_kernel``, ``step_kernel``, ``legal_mask_kernel``,
``penalize_kernel``, ``next_seed_kernel`` and :func:`mjenv.observation.observe_kernel` on each row of a batch
of states, so a table of the vector env is exactly a table of the single-table engine (and of the AEC env).

Specification in mjenv
----------------------
* ``VectorEnv(num_envs, seed)`` holds ``states: int32[N, STATE_SIZE]`` (one :mod:`mjenv.game` state per row).
  Table ``i`` starts its first hand from ``table_seeds[i]`` (derived from ``seed`` by
  ``numpy.random.SeedSequence``, or given as an array); every later hand of a table is seeded from that
  table's own RNG (``next_seed_kernel``), exactly as a single table that is reset without a seed.
* Seats are absolute chairs 0..3 (the engine's); ``seats[i]`` is the chair to act at table ``i``. All tables
  always have a seat to act: a finished hand is reset inside the same step (auto-reset), and the batch returned
  is the first decision of the new hand, with ``terminated[i] = True`` and the finished hand's outcome in
  :attr:`VectorEnv.results`. A hand cannot be truncated (a hand always ends), so there is no ``truncated``.
  This is Gymnasium 1.x's same-step autoreset: ``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP``;
  ``single_observation_space`` and ``single_action_space`` describe one row (:mod:`mjenv.gym_vector` is the
  ``gymnasium.vector.VectorEnv`` for one learner per table).
* One kernel, ``_step_batch`` (``@njit(parallel=True)``, ``prange`` over its threads; the only ``prange`` in
  mjenv),
  applies one action per table and writes preallocated arrays that are reused every step (views of them stay
  valid and are overwritten in place; ``torch.from_numpy(env.masks)`` shares their memory, no copy):

  ==============  ======================  ===================================================================
  name            dtype, shape            meaning
  ==============  ======================  ===================================================================
  seats           int32[N]                chair (0..3) to act next (-1 at a stopped table)
  active          bool[N]                 the table is playing (False once stopped, see the seed schedule)
  masks           bool[N, NUM_ACTIONS]    legal actions of that chair
  n_legal         int32[N]                number of legal actions (>= 1)
  legal_actions   uint8[N, NUM_ACTIONS]   the legal action ids in increasing order; the first ``n_legal[i]``
                                          entries of row ``i`` are valid (for samplers; the rest is stale)
  obs             float32[N, OBS_SIZE]    what that chair knows (:mod:`mjenv.observation`); only with
                                          ``observations=True``, else ``None``; ``uint8`` with
                                          ``obs_dtype=np.uint8`` (the compact encoding)
  rewards         float32[N, 4]           score deltas of this step per chair (sum 0 at every table)
  terminated      bool[N]                 the table finished a hand this step (and was reset)
  illegal         bool[N]                 the action given for the table was illegal (see below)
  oracle          obs_dtype[N, ORACLE_SIZE]  hidden state of the chair to act, for training critics only
                                          (``oracle=True``; else ``None``; mjenv.observation "oracle block")
  results         :class:`HandResults`    outcome of the last finished hand of each table
  match_hand      int32[N]                in a match: index 0..15 of the current hand (-1: single hands)
  match_scores    int32[N, 4]             in a match: the current match's cumulative score per *player*
  match_over      bool[N]                 the table finished a match this step (and began a new one)
  matches_done    int64[N]                matches the table finished since ``reset``
  match_results   :class:`MatchResults`   final scores per player, hands and placements of the last match
  ==============  ======================  ===================================================================

* Illegal actions (an action that is not in the table's mask, or out of ``0..NUM_ACTIONS-1``), policy
  ``illegal=``:

  - ``"raise"`` (default): the whole batch is checked first; if any action is illegal no table moves and a
    ``ValueError`` names the first offending tables;
  - ``"terminate"``: the offender pays 30 (10 to each other chair; ``penalize_kernel`` mode 0) and the hand
    ends at once with no winner (``results.winner = -1``, ``results.aborted = True``); the table auto-resets;
  - ``"penalty"``: competition rules (``penalize_kernel``): a false win pays 10 to each other chair, any other
    illegal action only loses the right to win this hand; the same chair must choose again.

  ``illegal[i]`` marks the offending tables in the last two modes.
* Memory per table: ``STATE_SIZE * 4`` bytes of state, ``NUM_ACTIONS`` bytes of mask, ``NUM_FANS * 2`` bytes
  of fan counts, ~100 bytes of other outputs, plus ``OBS_SIZE * 4`` bytes of observation when enabled:
  :func:`bytes_per_table` (about 3.2 kB masks-only, 9.4 kB with observations; 10,000 tables take ~32/94 MB).
* **Seed schedule** (duplicate play, the arena): :meth:`VectorEnv.reset` takes per-table ``seed``,
  ``dealers`` and ``prevalents``; :meth:`VectorEnv.schedule` appends explicit ``(seed, dealer, prevalent)``
  hands to a per-table queue that auto-reset consumes in order (a hand dealt from seed ``s``, dealer ``d`` and
  prevailing wind ``p`` is exactly ``mjenv.game.reset_kernel(state, s, d, p, ...)``). A table whose queue is
  empty at the end of a hand goes on with its own RNG (``after_schedule="continue"``, the default, which is
  also the behaviour when nothing is ever scheduled) or stops (``after_schedule="stop"``): ``active[i]``
  becomes False, its mask row is all False, ``n_legal[i] = 0``, ``seats[i] = -1``, its action is ignored and
  it never terminates again, until the next ``reset``. ``reset`` empties the queues.
* **Row subsets and watched chairs**: ``step(actions, rows=rows)`` advances only the tables ``rows``
  (increasing, distinct; ``actions[k]`` for table ``rows[k]``) through the same kernel and per-table code, at a
  cost that scales with ``len(rows)``; the other tables do not move and their output rows keep what they held.
  ``step(..., watch=chairs, final_obs=buf)`` writes a table's observation only where the chair to act is
  ``chairs[i]`` (or a new hand began), and where a hand ends, chair ``chairs[i]``'s view of the finished hand
  into ``buf[i]``. :mod:`mjenv.gym_vector` uses both: its opponents' steps move only their tables, and nobody
  builds the opponents' observations unless an opponent reads them.
* **Snapshots**: :meth:`VectorEnv.snapshot` copies the whole state (every array but the kernels' scratch) and
  :meth:`VectorEnv.restore` continues from one, in this env or another of the same settings, exactly (a
  training checkpoint's resume); :meth:`VectorEnv.copy_tables` continues single tables of another env.
* **Matches** (``rules=RuleConfig(match=True)``): every table plays 16-hand matches exactly as the AEC env
  (``mjenv.pettingzoo_env``): hand ``h`` has prevailing wind ``h // 4`` and dealer chair ``h % 4``
  (``RuleConfig.hand_setup``) and player ``p`` sits at chair ``SEATING[h // 4, p]`` (``mjenv.rules``); hand
  ``h + 1`` is dealt from the finished hand's ``next_seed_kernel``. After hand 16, or a hand that an illegal
  action ended (``illegal="terminate"``; as the AEC env, which ends the episode there), the match is over:
  ``match_over[i]`` is set for that step, ``match_results`` holds its final scores per player, its hand count
  and placements, and the table deals hand 0 of a new match from its next seed (or stops, with
  ``after_schedule="stop"``). A table's first match starts from ``table_seeds[i]``, so a match of table ``i``
  is the AEC env's ``reset(seed=...)`` match from that seed (``tests/test_vector_match.py``). This is one
  branch of the kernel's auto-reset per finished table (``_match_next``): no Python per table.
  ``rewards`` stay per *chair* (the engine's seats, as for single hands); ``chairs[i, p]`` is the chair of
  player ``p`` in the current hand, ``players[i, c]`` the player at chair ``c``, and :meth:`player_rewards`
  maps a step's rewards to players with the seating of the hand they were paid in (at a ``terminated`` step
  the finished hand's: its round may differ from the new hand's). ``match_scores`` and
  ``match_results.scores`` are per *player*. :meth:`schedule` and ``reset(dealers=, prevalents=)`` are refused
  in a match (``ValueError``: a match deals its own hands).
* ``threads`` sets Numba's thread count for this env's kernels (default: every thread Numba has). Importing
  this module sets ``OMP_WAIT_POLICY=PASSIVE`` unless it is set already (Numba's OpenMP threads otherwise spin
  between steps and starve the working threads on a shared machine); set it to ``ACTIVE`` before importing
  for a machine of your own.
* Speed (``lab/probes/profile_vector.py``, 1024 tables, one thread, CPU time on a loaded 2-core machine): a
  decision costs about 0.55 us of CPU in ``env.step`` masks-only and 2.1 us with the observation; the numpy
  random policy 0.06 us (the observation figure predates the faster ``observe_kernel`` of 2026-12-01: about half
  the CPU per uint8 observation, ``lab/probes/vector_ab.py --kernel``; ``lab/performance-log.md``). The kernels' own
  work is smaller (on 256 states that stay in the caches: ``legal_mask_kernel`` ~0.04 us, ``step_kernel`` ~0.2,
  ``observe_kernel`` ~0.4 then): the rest is memory latency,
  since a batch's state rows (2.7 kB each) do not fit the caches and each step touches a few scattered lines of
  a row. ``_step_batch`` therefore prefetches (``llvm.prefetch`` hints, no effect on results) the hot prefix
  of the state row two tables ahead (``game.HOT_WORDS``: the layout puts the fields a step touches first),
  the wall and discard words the next table will touch, and the output rows (with observations: every seat's
  discards, which the observation reads); the batch check of the actions reads 16 bytes of legality bits per
  table. Win checks are bit tests on the engine's cached waits.
* Threads: the threads of a parallel region do not start together (on the 2-core VM the second
  starts 60-100 us after the first, measured under load, ``lab/probes/region_skew.py``), so a fixed split of
  the batch would leave the early thread idle. ``_step_batch`` hands out work items of ``CHUNK`` tables
  instead: each thread steps its own contiguous segment from the front, then takes the other segments' items
  from their back (one atomic counter word per segment), so the threads finish together and each writes
  contiguous output rows.
  Which thread steps a table never changes a result (``tests/test_vector_threads.py``). The small per-table
  arrays are rows of three packed buffers and the kernel's arguments are collected once, so a step passes
  24 arrays and scalars instead of 38 (numba unboxes each array argument on every call).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numba
import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from mjenv import actions as A
from mjenv import game as G
from mjenv._jit import njit
from mjenv.fans import NUM_FANS
from mjenv.observation import OBS_SIZE, ORACLE_SIZE, check_obs_dtype, observe_kernel, oracle_rows_kernel
from mjenv.policy import Policy, RandomPolicy, random_legal_actions  # noqa: F401  (re-exported)
from mjenv.rules import (
    HANDS_PER_MATCH,
    ILLEGAL_MODES,
    ILLEGAL_RAISE,
    R_ILLEGAL,
    SEATING,
    RuleConfig,
    check_rules,
    placements,
)

# Numba's OpenMP threads spin between parallel regions by default; on a shared or oversubscribed machine the
# spinning threads starve the ones doing work (measured: 2 threads 30x slower than 1 on a loaded 2-core box).
# Passive waiting costs ~nothing here (a step of a batch is milliseconds of work). A user's setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

NUM_ACTIONS = A.NUM_ACTIONS
ILLEGAL_POLICIES = ILLEGAL_MODES  # the values of RuleConfig.illegal (kept for existing code)
AFTER_SCHEDULE = ("continue", "stop")

#: above this many tables a warning would be pointless: memory is the only limit (see bytes_per_table)
MAX_ENVS = 1 << 22


# ------------------------------------------------------------------------------------------------ kernels
# llvm.prefetch is mangled by pointer type; with opaque pointers (LLVM >= 17: numba >= 0.62) it is ".p0". Older
# LLVMs get no hint (the same results, only without the prefetching).
_PREFETCH_OK = llvm_binding.llvm_version_info >= (17,)


@intrinsic
def _prefetch(typingctx, arr, i, j):
    """Hint the CPU to fetch ``arr[i, j]`` into the caches (LLVM ``llvm.prefetch``; no effect on results)."""
    sig = types.void(arr, i, j)

    def codegen(context, builder, signature, args):
        if not _PREFETCH_OK:
            return context.get_dummy_value()
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1], args[2]], wraparound=False)
        i32, i8p = ir.IntType(32), ir.IntType(8).as_pointer()
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0"
        )
        # read, high temporal locality (keep in all cache levels), data cache
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _fetch_add(typingctx, arr, i, v):
    """Atomically add ``v`` to ``arr[i]`` (a 1-D int64 array) and return the old value (LLVM ``atomicrmw``)."""
    sig = types.int64(arr, i, v)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        val = context.cast(builder, args[2], signature.args[2], types.int64)
        # monotonic: the counter only hands out work items; the parallel region's join orders the results
        return builder.atomic_rmw("add", ptr, val, "monotonic")

    return sig, codegen


if numba.config.DISABLE_JIT:  # pure-Python runs (coverage, debugging): an intrinsic cannot run there

    def _prefetch(arr, i, j):
        """No-op stand-in for the prefetch hint."""

    def _fetch_add(arr, i, v):
        """Serial stand-in for the atomic add (pure-Python runs are single-threaded)."""
        old = int(arr[i])
        arr[i] = old + v
        return old


#: tables per work item of ``_step_batch``: the threads take items from shared counters as they come free
CHUNK = 16
_PAD = 8  # int64 words between two counters of the work array (one 64-byte cache line each)
_BACK = 1 << 32  # a claim from a segment's back (the high half of its counter word)

# rows of VectorEnv's packed per-table buffers (views of them are the env's public arrays; see _step_batch)
_I32 = ("dealers", "prevalents", "seats", "n_legal", "winner", "loser", "fan_total", "win_flags", "hand_steps",
        "events", "match_hand", "result_hand", "match_score0", "match_score1", "match_score2", "match_score3",
        "final_score0", "final_score1", "final_score2", "final_score3", "final_hands")  # fmt: skip
_I64 = ("sq_head", "sq_len", "hands_done", "seed", "matches_done")
_B8 = ("active", "terminated", "illegal", "match_over")
# match mode (RuleConfig(match=True)): the rows _match_next keeps; match_hand is -1 at a table of single hands
_MATCH_HAND, _RESULT_HAND = _I32.index("match_hand"), _I32.index("result_hand")
_MATCH_SCORE, _FINAL_SCORE, _FINAL_HANDS = (
    _I32.index("match_score0"),
    _I32.index("final_score0"),
    _I32.index("final_hands"),
)
_MATCHES_DONE, _MATCH_OVER = _I64.index("matches_done"), _B8.index("match_over")
#: ``SEATING[round, player] = chair`` (mjenv.rules) for the kernel; its inverse ``[round, chair] = player``
_SEATING = SEATING.astype(np.int64)
_SEATING32 = SEATING.astype(np.int32)
_PLAYER_AT = np.argsort(SEATING, axis=1).astype(np.int32)


@njit
def _prefetch_hot(states, masks, legal, i):
    """Start fetching table ``i``'s hot state prefix (``game.HOT_WORDS``) and its mask and legal-list rows."""
    for k in range(0, G.HOT_WORDS, 16):  # one hint per 64-byte line of int32
        _prefetch(states, i, k)
    for k in range(0, NUM_ACTIONS, 64):
        _prefetch(masks, i, k)
        _prefetch(legal, i, k)


@njit
def _prefetch_cold(states, i):
    """Start fetching the words of table ``i``'s cold part its next step may touch: the next draw and the next
    replacement of the wall, the acting chair's next discard slot and the offered discard (a claim marks it).
    Reads the hot prefix, so it follows :func:`_prefetch_hot` of the same table by one table."""
    st = states[i]
    _prefetch(states, i, G.WALL + min(max(st[G.FRONT], 0), 143))
    _prefetch(states, i, G.WALL + min(max(st[G.BACK] - 1, 0), 143))
    cur = st[G.CUR] & 3
    _prefetch(states, i, G.DISC + G.MAX_DISCARDS * cur + min(st[G.N_DISC + cur], G.MAX_DISCARDS - 1))
    off = st[G.OFFER_SEAT] & 3
    last = min(max(st[G.N_DISC + off] - 1, 0), G.MAX_DISCARDS - 1)
    _prefetch(states, i, G.DISC + G.MAX_DISCARDS * off + last)


@njit
def _prefetch_discards(states, i):
    """With observations: start fetching every seat's discards of table ``i`` (``observe_kernel`` reads them
    all; the step itself touches one slot). Reads the hot prefix (the discard counts), so it follows
    :func:`_prefetch_hot` of the same table by one table. (Prefetching the observation row as well measured no
    gain: its writes are sequential.)"""
    st = states[i]
    for p in range(4):
        nd = min(max(st[G.N_DISC + p], 0), G.MAX_DISCARDS)
        base = G.DISC + G.MAX_DISCARDS * p
        for k in range(0, nd, 16):  # one hint per 64-byte line of int32
            _prefetch(states, i, base + k)
        if nd > 0:
            _prefetch(states, i, base + nd - 1)


@njit
def _record(state, i, winner, loser, fan_total, win_flags, fan_counts, scores, hand_steps, events, seeds):
    """Copy the outcome of the finished hand in ``state`` into row ``i`` of the result arrays."""
    winner[i] = state[G.WINNER]
    loser[i] = state[G.LOSER]
    fan_total[i] = state[G.WIN_TOTAL] if state[G.WINNER] >= 0 else 0
    win_flags[i] = state[G.WIN_FLAGS]
    for f in range(NUM_FANS):
        fan_counts[i, f] = state[G.FANS + f]
    for p in range(4):
        scores[i, p] = state[G.SCORES + p]
    hand_steps[i] = state[G.N_STEPS]
    events[i] = state[G.EVENTS]
    seeds[i] = (np.int64(np.uint32(state[G.SEED_HI])) << 32) | np.int64(np.uint32(state[G.SEED_LO]))


@njit
def _match_next(i, aborted, scores, i32, i64, b8):
    """Table ``i`` of a match finished hand ``match_hand[i]`` (its payments per chair in ``scores[i]``): add
    them to the players' match scores (the round's seating, ``SEATING``) and set up the next hand's index,
    dealer and prevailing wind (``RuleConfig.hand_setup``). After the last hand, or a hand that an illegal
    action ended (``aborted``, as the AEC env's ``_end_hand`` decides), the match is over: its scores and hand
    count go to the final rows, and the next hand is hand 0 of a new match. Returns whether the match ended."""
    h = i32[_MATCH_HAND, i]
    rnd = h // 4
    for p in range(4):
        i32[_MATCH_SCORE + p, i] += scores[i, _SEATING[rnd, p]]
    i32[_RESULT_HAND, i] = h
    over = aborted or h + 1 >= HANDS_PER_MATCH
    b8[_MATCH_OVER, i] = over
    if over:
        for p in range(4):
            i32[_FINAL_SCORE + p, i] = i32[_MATCH_SCORE + p, i]
            i32[_MATCH_SCORE + p, i] = 0
        i32[_FINAL_HANDS, i] = h + 1
        i64[_MATCHES_DONE, i] += 1
        h = 0
    else:
        h += 1
    i32[_MATCH_HAND, i] = h
    i32[0, i] = h % 4  # dealers: the dealer chair of hand h
    i32[1, i] = h // 4  # prevalents: its prevailing wind
    return over


@njit
def _list_legal(m, row, bits, n):
    """Write the ``n`` legal action ids of mask ``m`` into ``row`` in increasing order and as bits of ``bits``.

    Branch-free scans (``k`` advances by the mask byte). A decision's actions lie in ``DISCARD..KONG`` (a turn's
    discards, a claim window's chow/pung/kong), ``WIN`` and ``PASS``; the kong range ``CONCEALED_KONG..WIN`` is
    scanned only when the count says it holds some.
    """
    k = 0
    for a in range(A.CONCEALED_KONG):
        row[k] = a
        k += m[a]
    if k + m[A.WIN] + m[A.PASS] < n:
        for a in range(A.CONCEALED_KONG, A.WIN):
            row[k] = a
            k += m[a]
    row[k] = A.WIN
    k += m[A.WIN]
    row[k] = A.PASS
    b0 = np.uint64(0)
    b1 = np.uint64(0)
    for j in range(n):
        a = row[j]
        if a < 64:
            b0 |= np.uint64(1) << np.uint64(a)
        else:
            b1 |= np.uint64(1) << np.uint64(a - 64)
    bits[0] = b0
    bits[1] = b1


@njit
def _prepare(state, i, observe, seats, masks, n_legal, legal, bits, obs):
    """Write the acting chair, its mask, its legal-action list and bits (and, where ``observe``, its observation)
    of table ``i``."""
    seat = state[G.CUR]
    seats[i] = seat
    n = G.legal_mask_kernel(state, seat, masks[i])
    n_legal[i] = n
    _list_legal(masks[i], legal[i], bits[i], n)
    if observe:
        observe_kernel(state, seat, obs[i])


@njit
def _is_legal(bits, i, a):
    """Is ``a`` one of the legal actions ``_prepare`` wrote for table ``i`` (any integer, range-checked)?"""
    if a < 0 or a >= NUM_ACTIONS:
        return False
    if a < 64:
        return (bits[i, 0] >> np.uint64(a)) & np.uint64(1) == np.uint64(1)
    return (bits[i, 1] >> np.uint64(a - 64)) & np.uint64(1) == np.uint64(1)


@njit
def _stop_table(i, active, seats, masks, n_legal, bits):
    """Table ``i`` stops (``after_schedule="stop"``): inactive, no seat to act, an empty mask."""
    active[i] = False
    seats[i] = -1
    masks[i, :] = False
    n_legal[i] = 0
    bits[i, 0] = 0
    bits[i, 1] = 0


@njit(parallel=True)
def _step_batch(
    states, actions, rows, watch, final, do_reset, threads, reset_seeds, rules, observe, sq_seed, sq_dealer,
    sq_prev, stop_when_empty, i32, i64, b8, masks, legal, bits, obs, rewards, fan_counts, scores, suit_win,
    honor_win, work,
):  # fmt: skip
    """Apply ``actions[i]`` at every table, auto-reset finished hands, write the next decision's outputs.

    ``rows`` (None: every table) and ``watch`` (None, or ``int32[N]``, a chair per table, with ``final``) are
    :meth:`VectorEnv.step`'s: only the tables ``rows`` (increasing, distinct) move, table ``rows[k]`` with
    ``actions[k]``, and the outputs of the other tables are not written; with ``watch`` a table's observation
    is written only where the chair to act is ``watch[i]`` or a new hand began, and a table whose hand ends
    writes the observation of chair ``watch[i]`` of the finished hand into ``final[i]`` (before its auto-reset).
    Both are None in a plain step: numba compiles the kernel once per combination of types and prunes the
    ``is None`` branches, so a plain step runs the same code as without them.

    ``do_reset`` instead deals a new hand at every table from ``reset_seeds[i]``, ``dealers[i]``,
    ``prevalents[i]`` (``reset``) with the rules block ``rules`` (``RuleConfig.encode()``); later hands copy the
    same block. What an illegal action does is read from the table's rules block (``mjenv.rules.R_ILLEGAL``).
    Returns the number of illegal actions; in raise mode nothing moves when it is > 0. Legality is read from
    ``bits`` (the legal actions of the masks this kernel wrote for the current decisions, as two uint64 words
    per table, so the serial check of the raise mode reads 16 bytes per table; ``step_kernel`` checks again).
    A finished hand is followed by the table's next scheduled hand
    (``sq_*[i, sq_head[i]]`` while ``sq_head[i] < sq_len[i]``), else by a hand from the table's own RNG with
    ``dealers[i]`` and ``prevalents[i]``, or (``stop_when_empty``) the table stops (``active[i] = False``:
    its actions are ignored, its mask is empty and its seat -1). At a table in a match (``match_hand[i] >= 0``)
    the next hand is the match's next one, or hand 0 of a new match (:func:`_match_next`), dealt from the table's
    RNG; with ``stop_when_empty`` the table stops when its match ends.
    """
    # the small per-table arrays come packed as rows of three buffers (VectorEnv._I32 / _I64 / _B8)
    dealers, prevalents, seats, n_legal = i32[0], i32[1], i32[2], i32[3]
    winner, loser, fan_total, win_flags, hand_steps, events = i32[4], i32[5], i32[6], i32[7], i32[8], i32[9]
    sq_head, sq_len, hands_done, seeds = i64[0], i64[1], i64[2], i64[3]
    active, terminated, illegal = b8[0], b8[1], b8[2]
    if rows is None:
        n = states.shape[0]
    else:
        n = rows.shape[0]
    if do_reset:
        for i in prange(states.shape[0]):
            G.reset_kernel(states[i], reset_seeds[i], dealers[i], prevalents[i], rules, suit_win, honor_win)
            active[i] = True
            _prepare(states[i], np.int64(i), observe, seats, masks, n_legal, legal, bits, obs)
        return 0
    n_bad = 0
    raise_mode = rules[R_ILLEGAL] == ILLEGAL_RAISE
    if raise_mode:  # check the whole batch first (serially: one 16-byte bits row per table)
        for k in range(n):
            i = k
            if rows is not None:
                i = rows[k]
            a = actions[k]
            bad = active[i] and not _is_legal(bits, i, a)
            illegal[i] = bad
            n_bad += 1 if bad else 0
        if n_bad > 0:
            return n_bad
    # work sharing (see CHUNK): thread w owns the w-th of `workers` equal segments of the batch and takes its
    # work items from the segment's front; when they are gone it takes items from the back of the other segments.
    # A segment's counter word holds both claim counts (front: low 32 bits, back: high 32 bits), so one atomic add
    # claims an item and tells whether it was still free. Each thread steps contiguous runs of tables (their
    # output rows share cache lines only where two runs meet), and a thread that starts late (woken from sleep)
    # or is preempted on a shared machine does not hold up the batch: the others take its items.
    n_items = (n + CHUNK - 1) // CHUNK
    workers = min(threads, n_items)
    seg = (n_items + workers - 1) // workers if workers > 0 else 0
    for w in range(workers):
        work[_PAD * w] = 0
    for w in prange(workers):  # one iteration per thread
        for k in range(workers):  # its own segment first, then the others'
            sg = (w + k) % workers
            first = sg * seg
            size = min(seg, n_items - first)
            while size > 0:
                old = _fetch_add(work, _PAD * sg, 1 if k == 0 else _BACK)
                front = old & 0xFFFFFFFF
                back = old >> 32
                if front + back >= size:
                    break
                item = first + front if k == 0 else first + size - 1 - back
                lo = item * CHUNK
                hi = min(lo + CHUNK, n)
                nxt = hi if k == 0 else lo - CHUNK  # where the next item likely starts
                for k in range(lo, hi):
                    i = k
                    if rows is not None:
                        i = rows[k]
                    # the match rows are read and written through the buffers: one more unpacked view of b8 above
                    # made numba's parfor pass drop the reset loop's writes to `active` (a dead-store removal)
                    b8[_MATCH_OVER, i] = False
                    if not active[i]:  # a stopped table (schedule exhausted): nothing happens
                        terminated[i] = False
                        illegal[i] = False
                        for p in range(4):
                            rewards[i, p] = 0
                        continue
                    # memory latency, not work, bounds a step: fetch ahead (hints only, no effect on results) the
                    # tables this thread likely steps next: the rest of this item, then the item after it in the
                    # thread's own segment, or the one before it in a segment it steals from
                    j = k + 2 if k + 2 < hi else nxt + (k + 2 - hi)
                    if 0 <= j < n:
                        if rows is not None:
                            j = rows[j]
                        _prefetch_hot(states, masks, legal, j)
                    j = k + 1 if k + 1 < hi else nxt
                    if 0 <= j < n:
                        if rows is not None:
                            j = rows[j]
                        _prefetch_cold(states, j)
                        if observe:
                            _prefetch_discards(states, j)
                    st = states[i]
                    rw = rewards[i]
                    a = actions[k]
                    bad = False
                    if not raise_mode:
                        bad = not _is_legal(bits, i, a)
                        illegal[i] = bad
                    if bad:
                        G.penalize_kernel(st, st[G.CUR], G.penalty_kind_kernel(st, a), rw)
                    else:
                        G.step_kernel(st, a, rw, suit_win, honor_win)
                    done = st[G.PHASE] == G.PH_OVER
                    terminated[i] = done
                    if done:
                        if watch is not None:  # the watched chair's last view of the hand
                            if observe:
                                observe_kernel(st, watch[i], final[i])
                        _record(
                            st, i, winner, loser, fan_total, win_flags, fan_counts, scores, hand_steps, events, seeds
                        )  # fmt: skip
                        hands_done[i] += 1
                        h = sq_head[i]
                        if i32[_MATCH_HAND, i] >= 0:  # a match: its next hand, or a new match (or a stop)
                            if _match_next(i, bad, scores, i32, i64, b8) and stop_when_empty:
                                _stop_table(i, active, seats, masks, n_legal, bits)
                                continue
                            seed_next = G.next_seed_kernel(st)
                            G.reset_kernel(
                                st, seed_next, dealers[i], prevalents[i], rules, suit_win, honor_win
                            )
                        elif h < sq_len[i]:
                            sq_head[i] = h + 1
                            G.reset_kernel(
                                st, sq_seed[i, h], sq_dealer[i, h], sq_prev[i, h], rules, suit_win, honor_win
                            )
                        elif stop_when_empty:
                            _stop_table(i, active, seats, masks, n_legal, bits)
                            continue
                        else:
                            G.reset_kernel(
                                st,
                                G.next_seed_kernel(st),
                                dealers[i],
                                prevalents[i],
                                rules,
                                suit_win,
                                honor_win,
                            )
                    see = observe
                    # watched: that chair's decisions, and a new hand's first (its watched chair may change)
                    if watch is not None:
                        see = observe and (done or st[G.CUR] == watch[i])
                    _prepare(st, i, see, seats, masks, n_legal, legal, bits, obs)
    if not raise_mode:  # counted here, not as a reduction of the parallel loop
        for k in range(n):
            i = k
            if rows is not None:
                i = rows[k]
            n_bad += illegal[i]
    return n_bad


# ------------------------------------------------------------------------------------------------ results
@dataclass
class HandResults:
    """Outcome of the last finished hand of each table (row ``i`` is rewritten when table ``i`` finishes).

    Rows of tables with ``terminated[i]`` in the latest step describe the hand that just ended; other rows
    keep the previous finished hand (or the initial values: ``winner = -1``, ``seed = -1``).

    Attributes
    ----------
    winner : ndarray[int32, (N,)]
        Winning chair, -1 for a draw or an aborted hand.
    loser : ndarray[int32, (N,)]
        Chair that discarded the winning tile (or whose added kong was robbed), -1 for a self-drawn win or none.
    fan_total : ndarray[int32, (N,)]
        Total fan of the win, flowers included (0 without a winner).
    win_flags : ndarray[int32, (N,)]
        ``mjenv.fans.WIN_*`` bits of the win.
    fan_counts : ndarray[int16, (N, NUM_FANS)]
        How many times each fan (``mjenv.fans.Fan`` order) counted in the win.
    scores : ndarray[int32, (N, 4)]
        Score deltas of the whole hand per chair (payments and penalties; sum 0).
    hand_steps : ndarray[int32, (N,)]
        Decisions (engine steps) the hand took.
    events : ndarray[int32, (N,)]
        ``mjenv.game.EV_*`` bits of what happened in the hand.
    seed : ndarray[int64, (N,)]
        The seed the hand was dealt from (``mjenv.game.reset(state, seed)`` replays it).
    match_hand : ndarray[int32, (N,)]
        In a match: the index 0..15 of the finished hand in its match (its seating is
        ``mjenv.rules.SEATING[match_hand // 4]``); -1 outside a match.
    """

    winner: np.ndarray
    loser: np.ndarray
    fan_total: np.ndarray
    win_flags: np.ndarray
    fan_counts: np.ndarray
    scores: np.ndarray
    hand_steps: np.ndarray
    events: np.ndarray
    seed: np.ndarray
    match_hand: np.ndarray

    @classmethod
    def empty(cls, n: int) -> HandResults:
        return cls(
            winner=np.full(n, -1, np.int32),
            loser=np.full(n, -1, np.int32),
            fan_total=np.zeros(n, np.int32),
            win_flags=np.zeros(n, np.int32),
            fan_counts=np.zeros((n, NUM_FANS), np.int16),
            scores=np.zeros((n, 4), np.int32),
            hand_steps=np.zeros(n, np.int32),
            events=np.zeros(n, np.int32),
            seed=np.full(n, -1, np.int64),
            match_hand=np.full(n, -1, np.int32),
        )

    def clear(self) -> None:
        """Back to the initial values, in place (views of the arrays stay valid)."""
        for name, value in (("winner", -1), ("loser", -1), ("seed", -1), ("match_hand", -1)):
            getattr(self, name)[:] = value
        for name in ("fan_total", "win_flags", "fan_counts", "scores", "hand_steps", "events"):
            getattr(self, name)[:] = 0

    @property
    def aborted(self) -> np.ndarray:
        """``bool[N]``: the hand ended without a winner and without an exhaustive draw (illegal-action end)."""
        return (self.winner < 0) & ((self.events & G.EV_EXHAUSTIVE) == 0)

    @property
    def self_drawn(self) -> np.ndarray:
        """``bool[N]``: the hand was won by a self-drawn tile."""
        return (self.winner >= 0) & (self.loser < 0)


@dataclass
class MatchResults:
    """Outcome of the last finished match of each table (``RuleConfig(match=True)``; row ``i`` is rewritten
    when table ``i`` finishes a match: ``match_over[i]`` in that step).

    Attributes
    ----------
    scores : ndarray[int32, (N, 4)]
        Final match scores per *player* (the sum of the player's payments over the match's hands). A view of
        the env's packed buffers (not C-contiguous).
    hands : ndarray[int32, (N,)]
        Hands the match took: 16, or fewer when an illegal action ended it (``illegal="terminate"``); 0 before
        the first finished match.
    """

    scores: np.ndarray
    hands: np.ndarray

    def clear(self) -> None:
        """Back to zeros, in place."""
        self.scores[:] = 0
        self.hands[:] = 0

    @property
    def placements(self) -> np.ndarray:
        """``float64[N, 4]``: place 1..4 of each player by final score, players level sharing the mean of
        their places (:func:`mjenv.rules.placements`, as the arena's placements)."""
        return placements(self.scores)


def bytes_per_table(observations: bool = True) -> int:
    """Bytes of preallocated memory one table of a :class:`VectorEnv` takes (state, outputs, results).

    Every array of the env has the table count as its leading dimension, so this is the size of a one-table
    env (no kernel runs): about 3.2 kB masks-only and 9.4 kB with observations for the current engine.
    """
    return VectorEnv(1, observations=observations).nbytes


def table_seeds(seed: int, num_envs: int) -> np.ndarray:
    """The first-hand seeds of the tables of ``VectorEnv(num_envs, seed)``: ``int64[num_envs]`` in [0, 2**62).

    Derived with ``numpy.random.SeedSequence(seed)``, so nearby seeds give unrelated tables.
    """
    seed = G.check_seed(seed)
    _check_count(num_envs)
    words = np.random.SeedSequence(seed).generate_state(num_envs, dtype=np.uint64)
    return (words >> np.uint64(2)).astype(np.int64)


def _check_count(num_envs: object) -> int:
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
        raise TypeError(f"num_envs must be an int, got {type(num_envs).__name__}")
    if not 1 <= int(num_envs) <= MAX_ENVS:
        raise ValueError(f"num_envs must be in 1..{MAX_ENVS}, got {num_envs}")
    return int(num_envs)


# ------------------------------------------------------------------------------------------------ env
class VectorEnv:
    """``num_envs`` independent MCR tables stepped together (see the module docstring).

    Parameters
    ----------
    num_envs : int
        Number of tables N.
    seed : int or array_like of int
        An int in [0, 2**63) from which every table's first seed is derived (:func:`table_seeds`), or an
        integer array of N per-table first seeds in [0, 2**63).
    rules : RuleConfig, optional
        Table options (dealer chair, prevailing wind, minimum fan, flowers, payments, what an illegal action
        does: ``rules.illegal``). ``match=True`` plays 16-hand matches at every table ("Matches" in the module
        docstring; ``rules.dealer`` and ``rules.prevalent_wind`` are then unused). Default:
        ``RuleConfig(illegal="raise")``.
    observations : bool
        Also write the acting chair's observation (``float32[N, OBS_SIZE]``); False is the fast masks-only
        mode for pure simulation.
    threads : int, optional
        Numba threads for this env's kernels (1..``numba.config.NUMBA_NUM_THREADS``); default all.
    illegal : str, optional
        Shorthand for ``rules=RuleConfig(illegal=...)``: ``"raise"``, ``"terminate"`` or ``"penalty"``. Given
        together with ``rules``, it must agree with ``rules.illegal`` (a conflict is a ``ValueError``).
    after_schedule : str
        ``"continue"`` (default): a table whose schedule (:meth:`schedule`) is empty deals its next hand from
        its own RNG; ``"stop"``: it stops (``active[i] = False``) until the next :meth:`reset`. In a match
        (no schedule) ``"stop"`` stops a table when its match ends: one match per table and :meth:`reset`.
    obs_dtype : numpy dtype
        ``np.float32`` (default) or ``np.uint8``: the compact encoding of :mod:`mjenv.observation` (4x fewer
        bytes; every feature fits, ``discard_seq`` is stored as int8 two's complement: decode with
        :func:`mjenv.observation.decode` or read it through :func:`mjenv.observation.views`).
    oracle : bool
        Training only: also fill :attr:`oracle` (``[N, ORACLE_SIZE]``, dtype ``obs_dtype``) after every reset
        and step with the hidden-state block of the chair to act (every hand, the wall in order, every seat's
        waits: "oracle block" in :mod:`mjenv.observation`), for a critic that sees the hidden information
        (``train.ppo --critic oracle``). Never a policy input: the arena and the other fronts never ask for it.

    Examples
    --------
    >>> env = VectorEnv(8, seed=0, observations=False)
    >>> obs, masks, seats = env.reset()
    >>> policy = RandomPolicy(seed=0)
    >>> obs, masks, seats, rewards, terminated = env.step(policy(obs, masks, seats))
    >>> masks.shape, rewards.shape, bool((rewards.sum(axis=1) == 0).all())
    ((8, 109), (8, 4), True)

    Zero-copy into PyTorch (the arrays are reused, so copy what you keep)::

        masks_t = torch.from_numpy(env.masks)  # shares memory; updated in place by every step

    16-hand matches (``rewards`` stay per chair; follow a player with ``chairs`` / :meth:`player_rewards`)::

        env = VectorEnv(1024, seed=0, rules=RuleConfig(match=True, illegal="terminate"), observations=False)
        obs, masks, seats = env.reset()
        for _ in range(100_000):
            obs, masks, seats, rewards, terminated = env.step(policy(obs, masks, seats))
            mover = env.players[np.arange(env.num_envs), seats]  # the player to act at each table
            per_player = env.player_rewards()  # this step's rewards by player
            for i in np.flatnonzero(env.match_over):  # tables that finished a match in this step
                final, places = env.match_results.scores[i], env.match_results.placements[i]
    """

    #: attributes that are kernel scratch, not state: every step overwrites them before reading, and what is
    #: left in them depends on the threads' schedule (which thread claimed which work item), so a snapshot of
    #: the env (a training checkpoint) leaves them out
    SCRATCH_ARRAYS = frozenset({"_work"})

    # Gymnasium conventions (built on first use: importing this module does not import gymnasium). These describe
    # the env for Gymnasium-aware code; the API above is unchanged (mjenv.gym_vector is the Gymnasium VectorEnv).
    @functools.cached_property
    def metadata(self) -> dict:
        """``{"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}``: a finished table is reset inside the
        step that finished it (the returned batch is the new hand's first decision)."""
        from gymnasium.vector import AutoresetMode

        return {"autoreset_mode": AutoresetMode.SAME_STEP}

    @functools.cached_property
    def single_observation_space(self):
        """One row of :attr:`obs`: ``Box(-42, 144, (OBS_SIZE,), float32)`` (the AEC and Gymnasium fronts' space),
        ``Box(0, 255, (OBS_SIZE,), uint8)`` with ``obs_dtype=np.uint8``; None with ``observations=False``."""
        if not self.observations:
            return None
        from gymnasium import spaces

        if self.obs_dtype == np.uint8:
            return spaces.Box(0, 255, (OBS_SIZE,), np.uint8)
        return spaces.Box(-42.0, 144.0, (OBS_SIZE,), np.float32)

    @functools.cached_property
    def single_action_space(self):
        """One table's action: ``Discrete(NUM_ACTIONS)`` (:mod:`mjenv.actions`)."""
        from gymnasium import spaces

        return spaces.Discrete(NUM_ACTIONS)

    def __init__(
        self,
        num_envs: int,
        seed: int | np.ndarray = 0,
        *,
        rules: RuleConfig | None = None,
        observations: bool = True,
        threads: int | None = None,
        illegal: str | None = None,
        after_schedule: str = "continue",
        obs_dtype: type | np.dtype = np.float32,
        oracle: bool = False,
    ) -> None:
        n = _check_count(num_envs)
        self.obs_dtype = check_obs_dtype(obs_dtype)
        self.num_envs = n
        if rules is None and illegal is None:
            illegal = "raise"  # the vector env's default: a bad batch is an error, nothing moves
        rules = check_rules(rules, illegal=illegal)
        self.rules = rules
        self.match = rules.match
        if not isinstance(observations, bool):
            raise TypeError(f"observations must be a bool, got {type(observations).__name__}")
        self.observations = observations
        if not isinstance(oracle, bool):
            raise TypeError(f"oracle must be a bool, got {type(oracle).__name__}")
        self.threads = self._check_threads(threads)
        self.illegal_policy = rules.illegal
        self._rules = rules.encode()
        self.table_seeds = self._seeds(seed)
        if after_schedule not in AFTER_SCHEDULE:
            raise ValueError(f"after_schedule must be one of {AFTER_SCHEDULE}, got {after_schedule!r}")
        self.after_schedule = after_schedule
        # the small per-table arrays are rows of three packed buffers (_I32, _I64, _B8): _step_batch takes 24
        # arguments instead of 38 (numba unboxes every array argument of every call, ~0.5 us each). dealers and
        # prevalents: per-table dealer and prevailing wind of the hands not taken from the schedule
        self._i32 = np.zeros((len(_I32), n), np.int32)
        self._i64 = np.zeros((len(_I64), n), np.int64)
        self._b8 = np.zeros((len(_B8), n), np.bool_)
        self.dealers, self.prevalents, self.seats, self.n_legal = self._i32[:4]
        self.dealers[:] = int(rules.dealer)
        self.prevalents[:] = int(rules.prevalent_wind)
        self._sq_head, self._sq_len, self.hands_done = self._i64[:3]
        self.active, self.terminated, self.illegal = self._b8[:3]
        self.active[:] = True
        self._match_views()
        # the seed schedule: row i holds table i's queued hands sq_*[i, sq_head[i]:sq_len[i]]
        self._sq_seed = np.zeros((n, 1), np.int64)
        self._sq_dealer = np.zeros((n, 1), np.int32)
        self._sq_prev = np.zeros((n, 1), np.int32)

        self.states = np.zeros((n, G.STATE_SIZE), np.int32)
        self.masks = np.zeros((n, NUM_ACTIONS), np.bool_)
        self.legal_actions = np.zeros((n, NUM_ACTIONS), np.uint8)
        self._legal_bits = np.zeros((n, 2), np.uint64)  # the same as bits (action a: word a // 64, a % 64)
        self.obs = np.zeros((n, OBS_SIZE), self.obs_dtype) if observations else None
        self._obs_arg = self.obs if observations else np.zeros((1, OBS_SIZE), self.obs_dtype)
        #: the hidden-state block of the chair to act (mjenv.observation "oracle block"), for training critics only
        self.oracle = np.zeros((n, ORACLE_SIZE), self.obs_dtype) if oracle else None
        self.rewards = np.zeros((n, 4), np.float32)
        i32 = self._i32
        self.results = HandResults(
            winner=i32[4], loser=i32[5], fan_total=i32[6], win_flags=i32[7],
            fan_counts=np.zeros((n, NUM_FANS), np.int16), scores=np.zeros((n, 4), np.int32),
            hand_steps=i32[8], events=i32[9], seed=self._i64[3], match_hand=i32[_RESULT_HAND],
        )  # fmt: skip
        self.results.clear()
        self.match_results = MatchResults(
            scores=i32[_FINAL_SCORE : _FINAL_SCORE + 4].T, hands=i32[_FINAL_HANDS]
        )  # fmt: skip
        self._actions = np.zeros(n, np.int64)
        self._tab = G.win_tables()
        self._work = np.zeros(_PAD * self.threads, np.int64)  # _step_batch's work counters
        self._started = False
        self._bind()

    # ---------------------------------------------------------------------------------------- helpers
    def _match_views(self) -> None:
        """The match fields: views of rows of the packed buffers (see "Matches" in the module docstring)."""
        self.match_hand = self._i32[_MATCH_HAND]
        self.match_scores = self._i32[_MATCH_SCORE : _MATCH_SCORE + 4].T
        self.match_over = self._b8[_MATCH_OVER]
        self.matches_done = self._i64[_MATCHES_DONE]
        self._new_matches()

    def _new_matches(self) -> None:
        """Every table at hand 0 of a match (match mode; else ``match_hand = -1``: single hands)."""
        self.match_hand[:] = 0 if self.match else -1
        self.match_scores[:] = 0
        self.match_over[:] = False
        self.matches_done[:] = 0
        if self.match:
            self.dealers[:], self.prevalents[:] = 0, 0  # RuleConfig.hand_setup(0)

    @staticmethod
    def _check_threads(threads: object) -> int:
        top = numba.config.NUMBA_NUM_THREADS
        if threads is None:
            return top
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
            raise TypeError(f"threads must be an int or None, got {type(threads).__name__}")
        if not 1 <= int(threads) <= top:
            raise ValueError(f"threads must be in 1..{top} (numba.config.NUMBA_NUM_THREADS), got {threads}")
        return int(threads)

    def _seeds(self, seed: object) -> np.ndarray:
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            return table_seeds(int(seed), self.num_envs)
        if isinstance(seed, (np.ndarray, list, tuple)):
            arr = np.asarray(seed)
            if arr.shape != (self.num_envs,) or not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(
                    f"per-table seeds must be an integer array of shape ({self.num_envs},), "
                    f"got {arr.dtype}{arr.shape}"
                )
            if (arr < 0).any() or (arr.astype(np.uint64) >= np.uint64(2**63)).any():
                raise ValueError("per-table seeds must be in [0, 2**63)")
            return arr.astype(np.int64)
        raise TypeError(f"seed must be an int or an integer array, got {type(seed).__name__}")

    def _bind(self) -> None:
        """Collect the kernel's arguments after ``actions`` once (again whenever one of those arrays is
        replaced: new seeds, a grown schedule): a step then passes them without looking each one up."""
        r = self.results
        self._kargs = (
            self.threads, self.table_seeds, self._rules, self.observations, self._sq_seed, self._sq_dealer,
            self._sq_prev, self.after_schedule == "stop", self._i32, self._i64, self._b8, self.masks,
            self.legal_actions, self._legal_bits, self._obs_arg, self.rewards, r.fan_counts, r.scores,
            *self._tab, self._work,
        )  # fmt: skip

    def _call(
        self,
        actions: np.ndarray,
        do_reset: bool,
        rows: np.ndarray | None = None,
        watch: np.ndarray | None = None,
        final: np.ndarray | None = None,
    ) -> int:
        if numba.get_num_threads() != self.threads:  # numba's thread count is per calling thread
            numba.set_num_threads(self.threads)
        return int(
            _step_batch(
                self.states,
                actions,
                rows,
                watch,
                final,
                do_reset,
                *self._kargs,
            )
        )

    # ---------------------------------------------------------------------------------------- API
    def reset(
        self,
        seed: int | np.ndarray | None = None,
        *,
        dealers: int | np.ndarray | None = None,
        prevalents: int | np.ndarray | None = None,
    ):
        """Deal a new hand at every table (and empty the seed schedule; every table is active again).

        Parameters
        ----------
        seed : int or array_like of int, optional
            New seeds (as in the constructor); default: the last ones, so ``reset()`` replays the same deals.
        dealers, prevalents : int or array_like of int (N,), optional
            Dealer chair and prevailing wind (0..3) of each table's hand; they stay the tables' values for
            the hands that do not come from the schedule. Default: the last ones (initially the rules').

        Returns
        -------
        obs : ndarray[float32, (N, OBS_SIZE)] or None
        masks : ndarray[bool, (N, NUM_ACTIONS)]
        seats : ndarray[int32, (N,)]
        """
        if self.match and (dealers is not None or prevalents is not None):
            raise ValueError(
                "a match deals every hand with the dealer and prevailing wind of RuleConfig.hand_setup; "
                "reset() takes no dealers or prevalents with RuleConfig(match=True)"
            )
        d = None if dealers is None else self._winds(dealers, "dealers", (self.num_envs,))
        p = None if prevalents is None else self._winds(prevalents, "prevalents", (self.num_envs,))
        if seed is not None:
            self.table_seeds = self._seeds(seed)
            self._bind()
        if d is not None:
            self.dealers[:] = d
        if p is not None:
            self.prevalents[:] = p
        self._sq_head[:] = 0
        self._sq_len[:] = 0
        self._new_matches()
        self.match_results.clear()
        self._call(self._actions, True)
        self.rewards[:] = 0
        self.terminated[:] = False
        self.illegal[:] = False
        self.hands_done[:] = 0
        self.results.clear()
        self._started = True
        if self.oracle is not None:
            oracle_rows_kernel(self.states, self.seats, self.oracle)
        return self.obs, self.masks, self.seats

    def schedule(
        self,
        seeds: np.ndarray,
        dealers: int | np.ndarray | None = None,
        prevalents: int | np.ndarray | None = None,
        tables: np.ndarray | None = None,
    ) -> None:
        """Queue explicit hands for tables' next auto-resets (see "Seed schedule" in the module docstring).

        Parameters
        ----------
        seeds : array_like of int, shape (T,) or (T, K)
            Seeds in [0, 2**63) of the next hand (or the next ``K`` hands, in order) of each table, appended
            after the hands already queued. ``T`` is ``num_envs`` or ``len(tables)``.
        dealers, prevalents : int or array_like of int, optional
            Shape (T,) with one-dimensional ``seeds``, else broadcastable to their shape (T, K):
            dealer chair and prevailing wind (0..3) of those hands; default: each table's current ones
            (:attr:`dealers`, :attr:`prevalents`).
        tables : array_like of int (T,), optional
            Distinct table indices the rows of ``seeds`` are for (default: every table, in order).

        Raises
        ------
        RuntimeError
            Before the first :meth:`reset` (which empties the schedule).
        ValueError
            Bad shapes or values, repeated tables, or a stopped table (it restarts only at ``reset``);
            nothing is queued then.
        """
        if self.match:
            raise ValueError(
                "a match deals its hands itself (the finished hand's next seed, RuleConfig.hand_setup); "
                "schedule() needs RuleConfig(match=False)"
            )
        if not self._started:
            raise RuntimeError("call reset() before schedule(): reset() empties the schedule")
        n = self.num_envs
        if tables is None:
            idx = np.arange(n, dtype=np.int64)
        else:
            idx = np.asarray(tables)
            if idx.ndim != 1 or not (np.issubdtype(idx.dtype, np.integer) or idx.size == 0):
                raise ValueError(f"tables must be a 1-D integer array, got {idx.dtype}{idx.shape}")
            idx = idx.astype(np.int64)
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise ValueError(f"table indices must be in 0..{n - 1}")
            if np.unique(idx).size != idx.size:
                raise ValueError("tables must not repeat a table")
        arr = np.asarray(seeds)
        one_d = arr.ndim == 1
        if one_d:  # one hand per table: dealers / prevalents given per table line up with it
            arr = arr[:, None]
        if (
            arr.ndim != 2
            or arr.shape[0] != idx.size
            or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0)
        ):
            raise ValueError(
                f"seeds must be an integer array of shape ({idx.size},) or ({idx.size}, K), "
                f"got {arr.dtype}{np.shape(seeds)}"
            )
        if arr.size and ((arr < 0).any() or (arr.astype(np.uint64) >= np.uint64(2**63)).any()):
            raise ValueError("seeds must be in [0, 2**63)")
        shape = arr.shape
        d = self.dealers[idx][:, None] if dealers is None else np.asarray(dealers)
        p = self.prevalents[idx][:, None] if prevalents is None else np.asarray(prevalents)
        if one_d:
            d = d[:, None] if d.ndim == 1 else d
            p = p[:, None] if p.ndim == 1 else p
        d = self._winds(d, "dealers", shape)
        p = self._winds(p, "prevalents", shape)
        stopped = idx[~self.active[idx]]
        if stopped.size:
            raise ValueError(
                f"tables {stopped[:5].tolist()} are stopped (their schedule ran out); call reset()"
            )
        k = shape[1]
        if idx.size == 0 or k == 0:
            return
        self._make_room(idx, k)
        cols = self._sq_len[idx][:, None] + np.arange(k)
        rows = idx[:, None]
        self._sq_seed[rows, cols] = arr
        self._sq_dealer[rows, cols] = d
        self._sq_prev[rows, cols] = p
        self._sq_len[idx] += k

    def _make_room(self, idx: np.ndarray, k: int) -> None:
        """Make room for ``k`` more queued hands at tables ``idx`` (drop consumed entries, grow the queues)."""
        cap = self._sq_seed.shape[1]
        full = idx[self._sq_len[idx] + k > cap]
        if full.size == 0:
            return
        # shift the pending entries of the full rows to the front
        head = self._sq_head[full]
        pending = self._sq_len[full] - head
        src = np.minimum(head[:, None] + np.arange(cap), cap - 1)
        rows = full[:, None]
        for q in (self._sq_seed, self._sq_dealer, self._sq_prev):
            q[rows, np.arange(cap)] = q[rows, src]
        self._sq_head[full] = 0
        self._sq_len[full] = pending
        need = int(pending.max()) + k
        if need > cap:
            new_cap = max(need, 2 * cap)
            grow = ((0, 0), (0, new_cap - cap))
            self._sq_seed = np.pad(self._sq_seed, grow)
            self._sq_dealer = np.pad(self._sq_dealer, grow)
            self._sq_prev = np.pad(self._sq_prev, grow)
            self._bind()

    @property
    def scheduled(self) -> np.ndarray:
        """``int64[N]``: hands still queued per table (see :meth:`schedule`)."""
        return self._sq_len - self._sq_head

    @staticmethod
    def _winds(value: object, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """``value`` (an int or an integer array broadcastable to ``shape``) as int32 in 0..3."""
        arr = np.asarray(value)
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name} must be ints 0..3, got {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() > 3):
            raise ValueError(f"{name} must be ints 0..3, got values from {arr.min()} to {arr.max()}")
        try:
            return np.broadcast_to(arr, shape).astype(np.int32)
        except ValueError:
            raise ValueError(f"{name} must broadcast to shape {shape}, got {arr.shape}") from None

    def step(
        self,
        actions,
        *,
        rows: np.ndarray | None = None,
        watch: np.ndarray | None = None,
        final_obs: np.ndarray | None = None,
    ):
        """Apply one action per table (for the chair ``seats[i]``) and return the next batch.

        Parameters
        ----------
        actions : array_like of int, shape (N,), or (k,) with ``rows``
            Action ids 0..NUM_ACTIONS-1 (any integer dtype; a ``torch`` tensor's ``.numpy()`` works).
        rows : ndarray of int, shape (k,), optional
            Advance only these tables (increasing, distinct, in ``0..N-1``), table ``rows[j]`` with
            ``actions[j]``; the other tables do not move, and their rows of every output array (``obs``,
            ``masks``, ``rewards``, ``terminated``, ``illegal``, ...) keep what they held. Each stepped table
            goes exactly as in a full step (the same kernel, the same per-table code), at a cost that scales with
            ``k``, not ``N`` (:mod:`mjenv.gym_vector` steps the tables where an opponent is to act with it).
        watch : ndarray[int32, (N,)], optional
            With observations: write a stepped table's observation only where the chair to act next is
            ``watch[i]`` or a new hand began (elsewhere its ``obs`` row keeps what it held), saving the
            observations nobody reads (a single learner's chair per table). Default: every stepped table's.
        final_obs : ndarray[obs_dtype, (N, OBS_SIZE)], optional
            Given with ``watch`` (and only with it): where a stepped table's hand ends, ``final_obs[i]``
            receives chair ``watch[i]``'s observation of the finished hand (before the auto-reset; rows of other
            tables are not written).

        Returns
        -------
        obs : ndarray[float32, (N, OBS_SIZE)] or None
            Observation of the chair to act next (of the new hand where ``terminated``).
        masks : ndarray[bool, (N, NUM_ACTIONS)]
        seats : ndarray[int32, (N,)]
        rewards : ndarray[float32, (N, 4)]
            Score deltas of this step per chair.
        terminated : ndarray[bool, (N,)]
            Tables whose hand ended in this step (their outcome is in :attr:`results`; they were reset).

        Raises
        ------
        TypeError
            A non-integer dtype (bool, float, str, object); nothing moved then.
        ValueError
            Wrong shape, an action outside int64, bad ``rows`` / ``watch`` / ``final_obs``, or
            (``illegal="raise"``) an illegal action; nothing moved then. (An integer outside
            0..NUM_ACTIONS-1 is an illegal action, as in the AEC env.)
        RuntimeError
            ``step`` before ``reset``.
        """
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if rows is not None:
            rows = self._check_rows(rows)
        if watch is not None or final_obs is not None:
            watch, final_obs = self._check_watch(watch, final_obs)
        acts = self._check_actions(actions, self.num_envs if rows is None else rows.size)
        return self._step(acts, rows, watch, final_obs)

    def _step(
        self,
        acts: np.ndarray,
        rows: np.ndarray | None = None,
        watch: np.ndarray | None = None,
        final_obs: np.ndarray | None = None,
    ):
        """:meth:`step` with checked arguments (``acts`` int64, one per stepped table)."""
        n_bad = self._call(acts, False, rows, watch, final_obs)
        if n_bad and self.illegal_policy == "raise":
            bad = np.flatnonzero(self.illegal if rows is None else self.illegal[rows])
            shown = ", ".join(
                f"table {i if rows is None else int(rows[i])}: action {int(acts[i])} "
                f"({A.action_to_str(int(acts[i])) if 0 <= acts[i] < NUM_ACTIONS else 'out of range'}) "
                f"for chair {int(self.seats[i if rows is None else rows[i]])}"
                for i in bad[:5]
            )
            raise ValueError(
                f"{n_bad} illegal action(s), nothing was applied: {shown}{' ...' if n_bad > 5 else ''}"
            )
        if self.oracle is not None:
            oracle_rows_kernel(self.states, self.seats, self.oracle)
        return self.obs, self.masks, self.seats, self.rewards, self.terminated

    def _check_rows(self, rows: object) -> np.ndarray:
        arr = np.asarray(rows) if isinstance(rows, (list, tuple)) else rows
        if not isinstance(arr, np.ndarray) or arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"rows must be a 1-D integer array of table indices, got {rows!r}")
        arr = np.ascontiguousarray(arr, np.int64)
        if arr.size and (arr[0] < 0 or arr[-1] >= self.num_envs or (arr[1:] <= arr[:-1]).any()):
            raise ValueError(f"rows must be increasing, distinct table indices in 0..{self.num_envs - 1}")
        return arr

    def _check_watch(self, watch: object, final_obs: object) -> tuple[np.ndarray, np.ndarray | None]:
        if not self.observations:
            raise ValueError("watch= and final_obs= need observations=True")
        if watch is None or final_obs is None:
            raise ValueError(
                "watch= and final_obs= go together (the watched chair's observation of a finished hand goes to "
                "final_obs)"
            )
        if not isinstance(watch, np.ndarray) or watch.shape != (self.num_envs,) or watch.dtype != np.int32:
            raise ValueError(f"watch must be an int32 array of shape ({self.num_envs},), one chair per table")
        if ((watch < 0) | (watch > 3)).any():
            raise ValueError("watch must hold chairs 0..3")
        if final_obs is not None and (
            not isinstance(final_obs, np.ndarray)
            or final_obs.shape != self.obs.shape
            or final_obs.dtype != self.obs.dtype
            or not final_obs.flags.c_contiguous
        ):
            raise ValueError(
                f"final_obs must be a C-contiguous {self.obs.dtype} array of shape {self.obs.shape}"
            )
        return np.ascontiguousarray(watch), final_obs

    def _check_actions(self, actions, size: int | None = None) -> np.ndarray:
        size = self.num_envs if size is None else size
        if isinstance(actions, np.ndarray):
            arr = actions
        elif hasattr(actions, "__array__") or isinstance(actions, (list, tuple)):
            arr = np.asarray(actions)
        else:
            raise TypeError(f"actions must be an array of ints, got {type(actions).__name__}")
        if arr.shape != (size,):
            raise ValueError(f"actions must have shape ({size},), got {arr.shape}")
        if arr.dtype == np.int64 and arr.flags.c_contiguous:
            return arr
        if not np.issubdtype(arr.dtype, np.integer):
            if arr.dtype == object and all(type(a) is int for a in arr):  # Python ints too big for int64
                raise ValueError(f"actions must fit in int64 (actions are 0..{NUM_ACTIONS - 1})")
            raise TypeError(f"actions must have an integer dtype, got {arr.dtype}")
        if arr.dtype == np.uint64 and int(arr.max()) > np.iinfo(np.int64).max:  # would wrap to negative ids
            raise ValueError(f"actions must fit in int64 (actions are 0..{NUM_ACTIONS - 1})")
        out = self._actions[:size]
        np.copyto(out, arr, casting="unsafe")
        return out

    def table(self, i: int) -> np.ndarray:
        """The state row of table ``i`` (a view: ``mjenv.game`` functions work on it directly)."""
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.num_envs:
            raise ValueError(f"table index must be in 0..{self.num_envs - 1}, got {i!r}")
        return self.states[i]

    def copy_tables(self, src: VectorEnv, src_tables, dst_tables) -> None:
        """Continue the tables ``src_tables`` of ``src`` (this env or another started one with the same rules)
        at this env's tables ``dst_tables``: the state rows (the hand, its wall and the table's random stream),
        the chair to act, its mask and observation, the hand counters and whether the table is active are
        copied, so a copy plays on exactly as its source would under the same actions (e.g. Monte Carlo
        rollouts of several actions from one decision). The destination tables' seed schedules are emptied
        (``after_schedule`` then decides what follows their hand); their ``rewards``, ``terminated`` and
        ``illegal`` rows are cleared and ``results`` rows left as they were.

        Raises
        ------
        RuntimeError
            Either env not started (:meth:`reset`).
        TypeError, ValueError
            ``src`` not a VectorEnv; other rules, observation settings or dtype; indices out of range, of
            another length, or repeated among ``dst_tables``. Nothing is copied then.
        """
        if not isinstance(src, VectorEnv):
            raise TypeError(f"src must be a VectorEnv, got {type(src).__name__}")
        if not (self._started and src._started):
            raise RuntimeError("call reset() on both envs before copy_tables()")
        if src.rules != self.rules:
            raise ValueError("copy_tables needs envs with the same rules")
        if src.observations != self.observations or src.obs_dtype != self.obs_dtype:
            raise ValueError("copy_tables needs envs with the same observations and obs_dtype")
        if (src.oracle is None) != (self.oracle is None):
            raise ValueError("copy_tables needs envs that both or neither fill the oracle block")
        rows = []
        for name, env, idx in (("src_tables", src, src_tables), ("dst_tables", self, dst_tables)):
            arr = np.asarray(idx)
            if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
                raise ValueError(f"{name} must be a 1-D array of table indices, got {arr.dtype}{arr.shape}")
            arr = arr.astype(np.int64)
            if arr.size and (arr.min() < 0 or arr.max() >= env.num_envs):
                raise ValueError(f"{name} must be in 0..{env.num_envs - 1}")
            rows.append(arr)
        s, d = rows
        if s.size != d.size:
            raise ValueError(f"src_tables and dst_tables differ in length ({s.size} and {d.size})")
        if np.unique(d).size != d.size:
            raise ValueError("dst_tables has repeated tables")
        self.states[d] = src.states[s]
        self._i32[:, d] = src._i32[:, s]
        self._i64[2:, d] = src._i64[2:, s]  # hands_done, seed; not the source's schedule position
        self._sq_head[d] = 0
        self._sq_len[d] = 0
        self.active[d] = src.active[s]
        self.match_over[d] = False
        self.terminated[d] = False
        self.illegal[d] = False
        self.rewards[d] = 0
        self.masks[d] = src.masks[s]
        self.legal_actions[d] = src.legal_actions[s]
        self._legal_bits[d] = src._legal_bits[s]
        if self.obs is not None:
            self.obs[d] = src.obs[s]
        if self.oracle is not None:
            self.oracle[d] = src.oracle[s]

    #: the seed schedule's queues: their second dimension (the capacity) may differ between envs
    _QUEUES = ("_sq_seed", "_sq_dealer", "_sq_prev")

    def _state_views(self) -> dict[str, np.ndarray]:
        """Every array of the env but the kernels' scratch (``SCRATCH_ARRAYS``), the live ones, by name."""
        out = {
            k: v for k, v in vars(self).items() if isinstance(v, np.ndarray) and k not in self.SCRATCH_ARRAYS
        }
        out.update({f"results.{k}": v for k, v in vars(self.results).items() if isinstance(v, np.ndarray)})
        return out

    def snapshot(self) -> dict[str, np.ndarray]:
        """A copy of the env's whole state, for :meth:`restore` (e.g. in a training checkpoint).

        Returns a dict of numpy arrays (copies) named after the env's attributes (private ones included, and
        ``results.<field>`` for :attr:`results`): every array of the env but the kernels' scratch
        (``SCRATCH_ARRAYS``), whose contents follow the threads' schedule. Treat it as opaque: the names and
        shapes follow this version of the env, and :meth:`restore` checks them.
        """
        return {k: v.copy() for k, v in self._state_views().items()}

    def restore(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Continue from ``arrays``, a :meth:`snapshot` of this env or of another one with the same settings.

        Afterwards the env is started (no :meth:`reset` needed) and is, table for table, the env the snapshot
        was taken from: the same actions give the same observations, masks, seats, rewards, terminations,
        results and oracle blocks, and the same next hands. The thread count may differ. Some arrays of the
        env are views of others (``seats`` is a row of a packed buffer); a snapshot's copies of them must
        agree, as a snapshot's do.

        Raises
        ------
        TypeError
            ``arrays`` is not a mapping of names to arrays.
        ValueError
            A missing or unknown name, a shape or dtype other than this env's (other ``num_envs``,
            observation settings, ``obs_dtype`` or ``oracle``), another encoding of the rules (the
            ``_rules`` entry, which is compared, never copied), seed-schedule queues of different
            capacities, or copies of the same memory that disagree. Nothing changes then.
        """
        if not isinstance(arrays, Mapping):
            raise TypeError(
                f"arrays must be a mapping of names to arrays (a snapshot), got {type(arrays).__name__}"
            )
        mine = self._state_views()
        arrays = self._upgrade_snapshot(arrays)
        missing, unknown = sorted(set(mine) - set(arrays)), sorted(set(arrays) - set(mine))
        if missing or unknown:
            raise ValueError(f"not a snapshot of this env: missing {missing}, unknown {unknown}")
        caps = {np.shape(arrays[k])[1:] for k in self._QUEUES}
        if len(caps) != 1 or len(cap := caps.pop()) != 1 or cap[0] < 1:
            raise ValueError(f"the seed schedule's queues {self._QUEUES} must have the same capacity >= 1")
        src: dict[str, np.ndarray] = {}
        for k, cur in mine.items():
            a = np.asarray(arrays[k])
            want = (self.num_envs, *cap) if k in self._QUEUES else cur.shape
            if a.shape != want or a.dtype != cur.dtype:
                raise ValueError(
                    f"snapshot array {k!r} is {a.dtype}{a.shape}, this env's is {cur.dtype}{want}"
                )
            src[k] = a
        if not np.array_equal(src.pop("_rules"), self._rules):
            raise ValueError("the snapshot is of an env with other rules")
        backup = self.snapshot()
        old_queues = [getattr(self, k) for k in self._QUEUES]
        if src["_sq_seed"].shape != self._sq_seed.shape:  # another capacity: new queues
            for k in self._QUEUES:
                setattr(self, k, np.zeros_like(src[k]))
        views = self._state_views()
        for k, a in src.items():
            np.copyto(views[k], a)
        if not all(
            np.array_equal(views[k], a) for k, a in src.items()
        ):  # a later copy overwrote an earlier one
            for k, q in zip(self._QUEUES, old_queues, strict=True):
                setattr(self, k, q)
            views = self._state_views()
            for k, a in backup.items():
                np.copyto(views[k], a)
            raise ValueError("the snapshot's copies of the same memory disagree (e.g. seats and _i32)")
        self._bind()
        self._started = True

    #: rows of the packed per-table buffers in mjenv 0.1.0, before the match rows were appended
    _ROWS_0_1 = {"_i32": 10, "_i64": 4, "_b8": 3}

    def _upgrade_snapshot(self, arrays: Mapping[str, np.ndarray]) -> Mapping[str, np.ndarray]:
        """A snapshot of mjenv 0.1.0 (packed buffers without the match rows: a training checkpoint written
        before matches) as one of this version: the match rows appended as a fresh env of single hands has them
        (``match_hand`` -1, the rest 0). Other snapshots are returned as they are."""
        rows = {k: np.shape(arrays[k])[0] for k in self._ROWS_0_1 if k in arrays and np.ndim(arrays[k]) == 2}
        if self.match or rows != self._ROWS_0_1:
            return arrays
        out = dict(arrays)
        for k, old in self._ROWS_0_1.items():
            cur = getattr(self, k)
            a = np.asarray(arrays[k])
            pad = np.zeros((cur.shape[0] - old, a.shape[1]), a.dtype)
            if k == "_i32":
                pad[_MATCH_HAND - old] = -1
            out[k] = np.concatenate([a, pad])
        i32, i64, b8 = out["_i32"], out["_i64"], out["_b8"]
        views = {
            "match_hand": i32[_MATCH_HAND],
            "match_scores": i32[_MATCH_SCORE : _MATCH_SCORE + 4].T,
            "match_over": b8[_MATCH_OVER],
            "matches_done": i64[_MATCHES_DONE],
            "results.match_hand": i32[_RESULT_HAND],
        }
        for k, v in views.items():
            out.setdefault(k, v)
        return out

    @property
    def chairs(self) -> np.ndarray:
        """``int32[N, 4]``: ``chairs[i, p]`` is the chair of player ``p`` at table ``i`` in its current hand (the
        round's seating ``mjenv.rules.SEATING[match_hand // 4]`` in a match; ``p`` itself for single hands).
        A new array at every call."""
        if not self.match:
            return np.broadcast_to(np.arange(4, dtype=np.int32), (self.num_envs, 4)).copy()
        return _SEATING32[self.match_hand // 4]

    @property
    def players(self) -> np.ndarray:
        """``int32[N, 4]``: ``players[i, c]`` is the player at chair ``c`` of table ``i`` (the inverse of
        :attr:`chairs`); ``players[np.arange(N), seats]`` is the player to act. A new array at every call."""
        if not self.match:
            return np.broadcast_to(np.arange(4, dtype=np.int32), (self.num_envs, 4)).copy()
        return _PLAYER_AT[self.match_hand // 4]

    def player_rewards(self) -> np.ndarray:
        """``float32[N, 4]``: the last step's :attr:`rewards` per *player*: ``rewards[i, c]`` under the seating
        of the hand they were paid in (the finished hand's where ``terminated[i]``, whose round may differ from
        the new hand's: :attr:`chairs` already shows the new one). Equal to ``rewards`` for single hands.
        A new array at every call."""
        if not self.match:
            return self.rewards.copy()
        h = np.where(self.terminated, self.results.match_hand, self.match_hand)
        return np.take_along_axis(self.rewards, _SEATING[np.maximum(h, 0) // 4], axis=1)

    @property
    def nbytes(self) -> int:
        """Bytes of the preallocated arrays of this env."""
        arrays = [self.states, self.seats, self.masks, self.n_legal, self.legal_actions, self._legal_bits,
                  self.rewards, self.terminated, self.illegal, self.hands_done, self._actions, self.active,
                  self.dealers, self.prevalents, self._sq_seed, self._sq_dealer, self._sq_prev, self._sq_head,
                  self._sq_len,
                  *vars(self.results).values()]  # fmt: skip
        if self.obs is not None:
            arrays.append(self.obs)
        if self.oracle is not None:
            arrays.append(self.oracle)
        arrays += [self.match_hand, self.match_scores, self.match_over, self.matches_done,
                   *vars(self.match_results).values()]  # fmt: skip
        return int(sum(a.nbytes for a in arrays))


# ------------------------------------------------------------------------------------------------ policies
# the policy protocol lives in mjenv.policy (Policy, RandomPolicy, random_legal_actions are re-exported here)


def warmup(observations: bool = True) -> float:
    """Compile (or load from the on-disk cache) the vector kernels; returns the seconds it took."""
    t0 = time.perf_counter()
    env = VectorEnv(2, seed=0, observations=observations, threads=1)
    _, masks, _seats = env.reset()
    rng = np.random.default_rng(0)
    env.step(random_legal_actions(masks, rng, env.n_legal, env.legal_actions))
    # the row-subset variant (mjenv.gym_vector steps the opponents' tables only), with watched chairs
    rows = np.array([1], np.int64)
    acts = random_legal_actions(masks, rng, env.n_legal, env.legal_actions)[rows]
    if observations:
        env.step(acts, rows=rows, watch=np.zeros(2, np.int32), final_obs=np.zeros_like(env.obs))
    else:
        env.step(acts, rows=rows)
    return time.perf_counter() - t0
