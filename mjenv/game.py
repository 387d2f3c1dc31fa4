"""The MCR table state machine: Numba kernels over one flat ``int32[STATE_SIZE]`` array per table.

Rules
-----
MCR as decided in ``docs/rules.md`` (primary source 000, procedure 002): a seeded 144-tile wall with a
dice break point; the dealer gets 14 tiles, the others 13; flowers are replaced from the back of the wall (after
the deal the dealer first, then South, West, North; during play at once). Normal draws come from the front,
flower and kong replacements from the back. On a turn a player may win (self-drawn), declare a concealed or an
added kong, or discard. Any other player may claim a discard for a win, a pung or an exposed kong; only the
next player may chow. Priority: win > pung/kong > chow; of several winners the first in play order after the
discarder wins (截和). An added kong may be robbed (抢杠和); concealed kongs and exposed kongs cannot. No kong or
flower right after a chow or pung (the player must discard), no kong when the wall is empty, and the last
discard may only be claimed for a win. A win needs 8 fan without flowers. Self-drawn: every other player pays
8 + F; on a discard or a robbed kong: the discarder (kong declarer) pays 8 + F, the other two 8. An empty wall
ends the hand in a draw with no payments.

Specification in mjenv
----------------------
* One table is ONE flat ``int32[STATE_SIZE]`` array; a batch of tables is ``int32[N, STATE_SIZE]`` and the
  vector env steps every row with the same per-table kernels. Offsets (module constants, frozen in kernels),
  in this order: the scalars and the small per-seat fields most steps touch come first (the first
  ``HOT_WORDS`` words, which the vector env prefetches for the next table), the discards, the wall and the fan
  counts, of which a step touches one word or none, last::

    scalars: PHASE, CUR (seat to act, -1 when over), TURN (seat whose turn it is), OFFER_TILE OFFER_SEAT (tile on
    offer in a claim/rob window, -1 otherwise), DRAWN (tile just drawn by TURN, -1 after a claim), DRAW_KIND
    (0 normal, 1 kong replacement, 2 flower replacement), JUST_CLAIMED (1: must discard), FRONT, BACK, N_STEPS,
    N_DRAWS, LAST_ACTOR, LAST_ACTION, EVENTS (EV_* bits of what happened this hand), DEALER, PREVALENT, WINNER, LOSER, WIN_TILE, WIN_FLAGS, WIN_TOTAL, DICE (d1*10+d2), SEED_LO SEED_HI (episode seed),
    RNG_LO RNG_HI (splitmix64 state)
    RULES       9     the rules block (mjenv.rules.RULE_FIELDS: MIN_FAN, BASE_PAY, FALSE_WIN_PAY, ILLEGAL_PAY,
                      ILLEGAL_MODE, HAS_FLOWERS, ASK_ALL, PRIVATE_WALLS, KNITTED_WAIT), copied from
                      RuleConfig.encode() by reset_kernel: the only place the kernels read rule options and amounts
    PWALL       4     private walls (rules.private_walls): tiles left in each seat's own part of WALL (seat i
                      owns WALL[part*i : part*(i+1)], part = n_tiles // 4, and pops WALL[part*i + PWALL[i] - 1]);
                      FRONT stays 0 and BACK - FRONT is the total left, as with the shared wall
    CLAIM       4     claim window answers: -1 not asked, -2 still to answer, else the action chosen
    WIN_FAN     4     total fan of the win open to each seat right now (-1: none; cached for the mask)
    WIN_FLAGS_P 4     the win flags that go with WIN_FAN
    NO_WIN      4     1 when the seat lost the right to win this hand (penalty mode)
    WAITS       4*2   cached waits of each seat's waiting hand: bits of tiles 0..26, then bits of tiles 27..33;
                      recomputed whenever the seat's concealed hand becomes a waiting hand (deal, its discard,
                      a kong), so every win check is a bit test before the scorer runs
    N_MELDS     4     melds per seat
    N_DISC      4     discards per seat
    FLOWERS     4     flowers set aside per seat
    FLOWER_BITS 4     which flowers (bit f for flower 34+f)
    SCORES      4     score deltas of this hand (payments and penalties)
    MELDS       4*4   packed melds (mjenv.melds layout, 0 = none) in the order declared
    VIS         34    copies of each tile face up on the table (discards + exposed melds; not concealed kongs)
    HAND        4*34  concealed tiles of each seat, counts (flowers never stay in a hand)
    (HOT_WORDS ends here)
    DISC        4*48  discards of each seat in order: tile id, +64 when a player claimed it (chow/pung/kong/win)
    WALL        144   the wall read from the break point: WALL[FRONT] is the next draw, WALL[BACK-1] the next
                      replacement; tile ids 0..41 (flowers 34..41); 136 tiles and no flowers with flowers=False
    FANS        NUM_FANS  fan counts of the winning hand (mjenv.fans order)

  Code reads fields only through these names, never by position: the order is a memory-layout choice.

* Kernels: ``reset_kernel(state, seed, dealer, prevalent, rules, suit_win, honor_win)`` (``rules`` the
  ``int32[RULE_WORDS]`` block of :meth:`mjenv.rules.RuleConfig.encode`),
  ``legal_mask_kernel(state, seat, mask)``, ``step_kernel(state, action, rewards, suit_win, honor_win) -> err``
  (acting seat is ``state[CUR]``; rewards ``float32[4]`` are this step's score deltas),
  ``observe_kernel(state, seat, obs)`` (mjenv.observation), ``penalty_kind_kernel`` and ``penalize_kernel``
  (illegal actions). ``suit_win, honor_win`` are the
  rules core's win tables (:func:`win_tables`, from :func:`mjenv.hand.load_tables`): win tests are
  :mod:`mjenv.hand`'s kernels (there is no second win test in the engine).
  ``next_seed_kernel(state)`` draws the seed of the next hand from the table's own RNG (auto-reset).
* Phases: PH_TURN (TURN acts: discard, kongs, self-drawn win; after a chow/pung only discards), PH_CLAIM (after a
  discard the seats with a legal claim are asked one at a time in play order after the discarder; answers are
  kept hidden in CLAIM until everyone asked has answered, then priority decides), PH_ROB (the same for robbing an
  added kong, asking only seats that can win on it), PH_OVER.
* Win flags are derived from the table: self-drawn; 和绝张 when the other three copies are face up (VIS), never
  when robbing; WIN_ABOUT_KONG for a win on a kong replacement (not when the replacement was a flower and the
  win is on the flower's replacement) and for robbing; WIN_WALL_LAST when the wall is empty after the winning draw
  or at the winning discard.
* The dealer's first turn counts as a normal draw of the last tile dealt to the dealer (blessings are not
  scored, as in the reference calculator).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types as _nt

from mjenv import actions as A
from mjenv._jit import njit, shared_kernel
from mjenv.fans import (
    NUM_FANS,
    WIN_4TH_TILE,
    WIN_ABOUT_KONG,
    WIN_KNITTED_NO_WAIT,
    WIN_SELF_DRAWN,
    WIN_WALL_LAST,
    shared_score_kernel,
)
from mjenv.hand import waits_bits_kernel, win_tables  # win_tables: also the fronts' G.win_tables()
from mjenv.melds import CHOW, KONG, PUNG, meld_kind, meld_offer, meld_tile, pack_meld
from mjenv.rng import GOLDEN, splitmix64_mix
from mjenv.rules import (
    ILLEGAL_TERMINATE,
    PENALTY_FALSE_WIN,
    PENALTY_TERMINATE,
    PENALTY_WRONG_CLAIM,
    R_ASK_ALL,
    R_BASE_PAY,
    R_FALSE_WIN_PAY,
    R_FLOWERS,
    R_ILLEGAL,
    R_ILLEGAL_PAY,
    R_KNITTED_WAIT,
    R_MIN_FAN,
    R_PRIVATE_WALLS,
    RULE_WORDS,
    RuleConfig,
)

MAX_DISCARDS = 48  # per seat; a seat can discard at most ~40 times in a hand
NUM_ACTIONS = A.NUM_ACTIONS

# the fields most steps touch come first (the "hot" prefix of HOT_WORDS words, which the vector env prefetches
# for the next table); the discards, the wall and the fan counts, of which a step touches one word or none, last
_layout: list[tuple[str, int]] = [
    ("PHASE", 1),
    ("CUR", 1),
    ("TURN", 1),
    ("OFFER_TILE", 1),
    ("OFFER_SEAT", 1),
    ("DRAWN", 1),
    ("DRAW_KIND", 1),
    ("JUST_CLAIMED", 1),
    ("FRONT", 1),
    ("BACK", 1),
    ("N_STEPS", 1),
    ("N_DRAWS", 1),
    ("LAST_ACTOR", 1),
    ("LAST_ACTION", 1),
    ("EVENTS", 1),
    ("DEALER", 1),
    ("PREVALENT", 1),
    ("RULES", RULE_WORDS),
    ("WINNER", 1),
    ("LOSER", 1),
    ("WIN_TILE", 1),
    ("WIN_FLAGS", 1),
    ("WIN_TOTAL", 1),
    ("DICE", 1),
    ("SEED_LO", 1),
    ("SEED_HI", 1),
    ("RNG_LO", 1),
    ("RNG_HI", 1),
    ("PWALL", 4),
    ("CLAIM", 4),
    ("WIN_FAN", 4),
    ("WIN_FLAGS_P", 4),
    ("NO_WIN", 4),
    ("WAITS", 8),
    ("N_MELDS", 4),
    ("N_DISC", 4),
    ("FLOWERS", 4),
    ("FLOWER_BITS", 4),
    ("SCORES", 4),
    ("MELDS", 16),
    ("VIS", 34),
    ("HAND", 4 * 34),
    ("DISC", 4 * MAX_DISCARDS),
    ("WALL", 144),
    ("FANS", NUM_FANS),
]
OFFSETS: dict[str, int] = {}
_o = 0
for _name, _size in _layout:
    OFFSETS[_name] = _o
    _o += _size
STATE_SIZE = _o
HAND, MELDS, N_MELDS, DISC, N_DISC, WALL = (
    OFFSETS[k] for k in ("HAND", "MELDS", "N_MELDS", "DISC", "N_DISC", "WALL")
)
FLOWERS, FLOWER_BITS, VIS, CLAIM, WIN_FAN = (
    OFFSETS[k] for k in ("FLOWERS", "FLOWER_BITS", "VIS", "CLAIM", "WIN_FAN")
)
WIN_FLAGS_P, NO_WIN, SCORES, FANS = (OFFSETS[k] for k in ("WIN_FLAGS_P", "NO_WIN", "SCORES", "FANS"))
SEED_LO, SEED_HI, RNG_LO, RNG_HI, DICE = (
    OFFSETS[k] for k in ("SEED_LO", "SEED_HI", "RNG_LO", "RNG_HI", "DICE")
)
FRONT, BACK, PHASE, CUR, TURN = (OFFSETS[k] for k in ("FRONT", "BACK", "PHASE", "CUR", "TURN"))
OFFER_TILE, OFFER_SEAT, DRAWN, DRAW_KIND = (
    OFFSETS[k] for k in ("OFFER_TILE", "OFFER_SEAT", "DRAWN", "DRAW_KIND")
)
JUST_CLAIMED, DEALER, PREVALENT, RULES = (
    OFFSETS[k] for k in ("JUST_CLAIMED", "DEALER", "PREVALENT", "RULES")
)
#: words of the rules block (``mjenv.rules.RULE_FIELDS``), written once per hand by reset_kernel
MIN_FAN, BASE_PAY, FALSE_WIN_PAY = RULES + R_MIN_FAN, RULES + R_BASE_PAY, RULES + R_FALSE_WIN_PAY
ILLEGAL_PAY, ILLEGAL_MODE, HAS_FLOWERS, ASK_ALL = (
    RULES + R_ILLEGAL_PAY,
    RULES + R_ILLEGAL,
    RULES + R_FLOWERS,
    RULES + R_ASK_ALL,
)
WINNER, LOSER, WIN_TILE, WIN_FLAGS, WIN_TOTAL = (
    OFFSETS[k] for k in ("WINNER", "LOSER", "WIN_TILE", "WIN_FLAGS", "WIN_TOTAL")
)
N_STEPS, N_DRAWS, LAST_ACTOR, LAST_ACTION, EVENTS = (
    OFFSETS[k] for k in ("N_STEPS", "N_DRAWS", "LAST_ACTOR", "LAST_ACTION", "EVENTS")
)
WAITS = OFFSETS["WAITS"]
PWALL = OFFSETS["PWALL"]
PRIVATE_WALLS, KNITTED_WAIT = RULES + R_PRIVATE_WALLS, RULES + R_KNITTED_WAIT
HOT_WORDS = DISC  # the hot prefix: every field before the discards
del _o, _name, _size

A_CHOW, A_PUNG, A_KONG, A_CONCEALED_KONG, A_ADDED_KONG = (
    A.CHOW,
    A.PUNG,
    A.KONG,
    A.CONCEALED_KONG,
    A.ADDED_KONG,
)
A_WIN, A_PASS, A_DISCARD = A.WIN, A.PASS, A.DISCARD

PH_TURN, PH_CLAIM, PH_ROB, PH_OVER = 0, 1, 2, 3
KIND_NORMAL, KIND_KONG, KIND_FLOWER = 0, 1, 2
CLAIMED_BIT = 64
ASKED, NOT_ASKED = -2, -1

# error codes of step_kernel
OK = 0
ERR_ILLEGAL = -1
ERR_OVER = -2
ERR_SEAT = -4

# EV_* bits in state[EVENTS]: which rule events happened in this hand (coverage checks of the fuzz tests)
EV_CHOW, EV_PUNG, EV_EXPOSED_KONG, EV_CONCEALED_KONG = 1, 2, 4, 8
EV_ADDED_KONG, EV_ROBBED, EV_FLOWER_IN_PLAY, EV_SELF_DRAWN_WIN = 16, 32, 64, 128
EV_DISCARD_WIN, EV_HEAD_BUMP, EV_KONG_REPLACEMENT_WIN, EV_FLOWER_REPLACEMENT_WIN = 256, 512, 1024, 2048
EV_4TH_TILE_WIN, EV_WALL_LAST_SELF, EV_WALL_LAST_DISCARD, EV_EXHAUSTIVE = 4096, 8192, 16384, 32768
EV_SEVERAL_ASKED, EV_LAST_DISCARD_WINDOW, EV_PUNG_OVER_CHOW, EV_INITIAL_FLOWER = 65536, 131072, 262144, 524288
EV_NAMES = {
    EV_CHOW: "chow",
    EV_PUNG: "pung",
    EV_EXPOSED_KONG: "exposed_kong",
    EV_CONCEALED_KONG: "concealed_kong",
    EV_ADDED_KONG: "added_kong",
    EV_ROBBED: "robbed_kong",
    EV_FLOWER_IN_PLAY: "flower_in_play",
    EV_SELF_DRAWN_WIN: "self_drawn_win",
    EV_DISCARD_WIN: "discard_win",
    EV_HEAD_BUMP: "head_bump",
    EV_KONG_REPLACEMENT_WIN: "kong_replacement_win",
    EV_FLOWER_REPLACEMENT_WIN: "flower_replacement_win",
    EV_4TH_TILE_WIN: "fourth_tile_win",
    EV_WALL_LAST_SELF: "wall_last_self_drawn",
    EV_WALL_LAST_DISCARD: "wall_last_discard",
    EV_EXHAUSTIVE: "exhaustive_draw",
    EV_SEVERAL_ASKED: "several_seats_asked",
    EV_LAST_DISCARD_WINDOW: "last_discard_window",
    EV_PUNG_OVER_CHOW: "pung_over_chow",
    EV_INITIAL_FLOWER: "initial_flower",
}

_MASK32 = np.uint64(0xFFFFFFFF)


# ----------------------------------------------------------------------------------------------- RNG
@njit
def _rng_next(state):
    """splitmix64 step on the table's RNG state (two int32 words); returns a uint64."""
    x = (np.uint64(np.uint32(state[RNG_HI])) << np.uint64(32)) | np.uint64(np.uint32(state[RNG_LO]))
    x = x + GOLDEN
    state[RNG_HI] = np.int32(np.uint32(x >> np.uint64(32)))
    state[RNG_LO] = np.int32(np.uint32(x & _MASK32))
    return splitmix64_mix(x)


@njit
def _rng_int(state, n):
    """Int in [0, n) by multiply-shift of the high 32 bits (n <= 144: bias below n / 2**32)."""
    return np.int64(((_rng_next(state) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit
def next_seed_kernel(state):
    """A fresh 62-bit episode seed from the table's RNG (used for auto-reset and the hands of a match)."""
    return np.int64(_rng_next(state) >> np.uint64(2))


# ----------------------------------------------------------------------------------------------- scoring
@njit
def _update_waits_body(state, s, suit_win, honor_win):
    """Cache in ``WAITS`` the tiles that complete the waiting concealed hand of ``s``
    (:func:`mjenv.hand.waits_bits_kernel`).

    Called whenever a seat's concealed hand becomes a waiting hand (after the deal, its discard, a kong), so
    that every later win check of the seat (a claim, robbing, a self-draw) is a bit test. Uses no scratch of
    the state.
    """
    lo, hi = waits_bits_kernel(state, HAND + 34 * s, state[N_MELDS + s], suit_win, honor_win)
    state[WAITS + 2 * s] = lo
    state[WAITS + 2 * s + 1] = hi


@njit
def update_waits_kernel(state, s, suit_win, honor_win):
    """:func:`_update_waits_body`, compiled once and called through a symbol (the engine calls it from five
    places)."""
    _update_waits_shared(state, s, suit_win, honor_win)


@njit
def waits_on_kernel(state, s, t):
    """Is ``t`` one of the cached waits of ``s``?"""
    if t < 27:
        return (state[WAITS + 2 * s] >> t) & 1 == 1
    return (state[WAITS + 2 * s + 1] >> (t - 27)) & 1 == 1


@njit
def _update_waits_without(state, s, tile, suit_win, honor_win):
    """:func:`update_waits_kernel` of ``s``'s hand less ``tile`` (a 14-tile hand whose last tile is ``tile``)."""
    state[HAND + 34 * s + tile] -= 1
    update_waits_kernel(state, s, suit_win, honor_win)
    state[HAND + 34 * s + tile] += 1


@njit
def raw_score_kernel(state, seat, tile, flags, in_hand, fan_counts):
    """The scorer's raw result for ``seat`` winning on ``tile`` with ``flags``: the total fan, flowers included
    and no minimum applied, or the scorer's negative code (``mjenv.fans.ERR_NOT_WIN`` -3, ...). ``in_hand``: the
    tile is already in the seat's hand (a draw). The rules block's scorer option applies (Botzone ``canHu``)."""
    conc = np.empty(34, np.int8)
    for t in range(34):
        conc[t] = state[HAND + 34 * seat + t]
    if in_hand:
        conc[tile] -= 1
    melds = np.zeros(4, np.int16)
    n = state[N_MELDS + seat]
    for i in range(n):
        melds[i] = state[MELDS + 4 * seat + i]
    if state[KNITTED_WAIT] == 0:
        flags |= WIN_KNITTED_NO_WAIT
    return shared_score_kernel(
        conc,
        melds,
        np.int64(n),
        np.int64(tile),
        np.int64(flags),
        np.int64((seat - state[DEALER]) % 4),
        np.int64(state[PREVALENT]),
        np.int64(state[FLOWERS + seat]),
        fan_counts,
    )


@njit
def _score(state, seat, tile, flags, in_hand, fan_counts):
    """Total fan of ``seat`` winning on ``tile`` (-1 when not a win or below the minimum)."""
    total = raw_score_kernel(state, seat, tile, flags, in_hand, fan_counts)
    if total < 0 or total - state[FLOWERS + seat] < state[MIN_FAN]:
        return -1
    return total


@njit
def _set_win_option(state, seat, tile, flags, in_hand):
    """Cache the win of ``seat`` on ``tile`` open right now (WIN_FAN, WIN_FLAGS_P): scored only when ``tile`` is
    one of the seat's cached waits (:func:`update_waits_kernel`)."""
    if state[NO_WIN + seat] != 0 or not waits_on_kernel(state, seat, tile):
        state[WIN_FAN + seat] = -1
    else:
        state[WIN_FAN + seat] = _score(state, seat, tile, flags, in_hand, np.zeros(NUM_FANS, np.int16))
    state[WIN_FLAGS_P + seat] = flags


# ----------------------------------------------------------------------------------------------- walls
@njit
def wall_empty_kernel(state, s):
    """Is the wall seat ``s`` draws from empty (its own part with private walls, else the shared wall)?"""
    if state[PRIVATE_WALLS] != 0:
        return state[PWALL + s] <= 0
    return state[FRONT] >= state[BACK]


@njit
def last_tile_kernel(state, s):
    """The last-tile situation after ``s`` drew or discarded: the shared wall is empty, or with private walls
    the part of the next seat (who would draw next) is empty. Then only a win may claim ``s``'s discard."""
    if state[PRIVATE_WALLS] != 0:
        return state[PWALL + (s + 1) % 4] <= 0
    return state[FRONT] >= state[BACK]


@njit
def kong_blocked_kernel(state, s):
    """No concealed or added kong for ``s`` now: the wall is empty, or with private walls the part of ``s`` or of
    the next seat is."""
    if state[PRIVATE_WALLS] != 0:
        return state[PWALL + s] <= 0 or state[PWALL + (s + 1) % 4] <= 0
    return state[FRONT] >= state[BACK]


@njit
def wall_part_kernel(state):
    """Tiles in each private part: a quarter of the wall (34, or 36 with flowers)."""
    return 36 if state[HAS_FLOWERS] != 0 else 34


@njit
def _pop_private(state, s):
    """Pop the last tile of ``s``'s own part (private walls; the part must not be empty)."""
    state[PWALL + s] -= 1
    state[BACK] -= 1
    return state[WALL + wall_part_kernel(state) * s + state[PWALL + s]]


# ----------------------------------------------------------------------------------------------- reset
@njit
def _seed_rng(state, seed):
    s = np.uint64(seed)
    state[SEED_LO] = np.int32(np.uint32(s & _MASK32))
    state[SEED_HI] = np.int32(np.uint32(s >> np.uint64(32)))
    state[RNG_LO] = state[SEED_LO]
    state[RNG_HI] = state[SEED_HI]
    _rng_next(state)


@njit
def reset_kernel(state, seed, dealer, prevalent, rules, suit_win, honor_win):
    """Start a hand: copy the rules block, shuffle the wall from ``seed``, roll the dice, deal, replace flowers.

    ``rules`` is ``int32[RULE_WORDS]`` (:meth:`mjenv.rules.RuleConfig.encode`); every kernel reads the rules from
    the copy in the state. The dealer (``dealer`` chair) then has 14 tiles and the turn. ``state`` is
    ``int32[STATE_SIZE]`` and the tables those of :func:`win_tables` (C-contiguous; called through a symbol as
    :func:`step_kernel`). Without flowers (``rules[R_FLOWERS] == 0``) the wall holds the 136 suited and honour
    tiles only (``WALL[136:]`` stays 0 and unused).
    """
    _reset_shared(state, seed, dealer, prevalent, rules, suit_win, honor_win)


@njit
def _reset(state, seed, dealer, prevalent, rules, suit_win, honor_win):
    """The body of :func:`reset_kernel`."""
    state[:] = 0
    for i in range(RULE_WORDS):
        state[RULES + i] = rules[i]
    _seed_rng(state, seed)
    n_tiles = 144 if rules[R_FLOWERS] != 0 else 136
    for i in range(n_tiles):
        state[WALL + i] = i // 4 if i < 136 else 34 + (i - 136)
    for i in range(n_tiles - 1, 0, -1):
        j = _rng_int(state, i + 1)
        tmp = state[WALL + i]
        state[WALL + i] = state[WALL + j]
        state[WALL + j] = tmp
    state[DICE] = 10 * (_rng_int(state, 6) + 1) + _rng_int(state, 6) + 1
    _deal(state, dealer, prevalent, n_tiles, suit_win, honor_win)


@njit
def reset_wall_kernel(state, wall, dealer, prevalent, rules, suit_win, honor_win):
    """Start a hand on a given wall (``wall`` int-like[136] without flowers, [144] with, tile ids 0..41): copy the
    rules block, deal and replace flowers as :func:`reset_kernel` does from the wall it shuffles (no dice: 0).

    With private walls ``wall`` is in the Botzone ``walltiles`` order: seat i owns ``wall[part*i:part*(i+1)]``
    and draws from its end. Returns 0, or -1 (state untouched) when ``wall`` does not hold each of the 34 tiles 4
    times (and each flower once with flowers).
    """
    n_tiles = 144 if rules[R_FLOWERS] != 0 else 136
    if wall.shape[0] != n_tiles:
        return -1
    cnt = np.zeros(42, np.int64)
    for i in range(n_tiles):
        t = wall[i]
        if t < 0 or t >= 42:
            return -1
        cnt[t] += 1
    for t in range(42):
        if cnt[t] != (4 if t < 34 else (1 if n_tiles == 144 else 0)):
            return -1
    state[:] = 0
    for i in range(RULE_WORDS):
        state[RULES + i] = rules[i]
    _seed_rng(state, 0)
    for i in range(n_tiles):
        state[WALL + i] = wall[i]
    _deal(state, dealer, prevalent, n_tiles, suit_win, honor_win)
    return 0


@njit
def _deal(state, dealer, prevalent, n_tiles, suit_win, honor_win):
    """Deal from ``WALL`` (filled): 13 tiles each and the dealer's 14th, flowers set aside and replaced."""
    state[DEALER] = dealer
    state[PREVALENT] = prevalent
    state[FRONT] = 0
    state[BACK] = n_tiles
    for k in range(4):
        state[CLAIM + k] = NOT_ASKED
        state[WIN_FAN + k] = -1
    state[WINNER] = -1
    state[LOSER] = -1
    state[WIN_TILE] = -1
    state[OFFER_TILE] = -1
    state[OFFER_SEAT] = -1
    state[LAST_ACTOR] = -1
    state[LAST_ACTION] = -1
    if state[PRIVATE_WALLS] != 0:
        _deal_private(state, dealer, n_tiles, suit_win, honor_win)
        return
    need = np.zeros(4, np.int64)
    last = -1
    for rnd in range(4):  # 3 rounds of 4 tiles, then 1 tile each, then the dealer's 14th
        for k in range(4):
            s = (dealer + k) % 4
            n = 4 if rnd < 3 else 1
            for _ in range(n):
                last = _deal_one(state, s, need, last, dealer)
    last = _deal_one(state, dealer, need, last, dealer)
    for k in range(4):  # flower replacement, dealer first
        s = (dealer + k) % 4
        while need[s] > 0:
            need[s] -= 1
            state[BACK] -= 1
            last = _give(state, s, state[WALL + state[BACK]], need, last, dealer)
    for s in range(4):
        if s == dealer:
            _update_waits_without(state, s, last, suit_win, honor_win)
        else:
            update_waits_kernel(state, s, suit_win, honor_win)
    _start_turn(state, dealer, last, KIND_NORMAL)


@njit
def _deal_private(state, dealer, n_tiles, suit_win, honor_win):
    """Private walls: every seat pops its own part until it holds 13 tiles (flowers met are set aside), then the
    dealer draws its first tile from its part like any draw."""
    part = n_tiles // 4
    for s in range(4):
        state[PWALL + s] = part
    for s in range(4):
        held = 0
        while held < 13 and state[PWALL + s] > 0:
            t = _pop_private(state, s)
            if t >= 34:
                state[FLOWERS + s] += 1
                state[FLOWER_BITS + s] |= 1 << (t - 34)
                state[EVENTS] |= EV_INITIAL_FLOWER
            else:
                state[HAND + 34 * s + t] += 1
                held += 1
    for s in range(4):
        update_waits_kernel(state, s, suit_win, honor_win)
    _draw(state, dealer, False, KIND_NORMAL)


@njit
def _deal_one(state, s, need, last, dealer):
    t = state[WALL + state[FRONT]]
    state[FRONT] += 1
    return _give(state, s, t, need, last, dealer)


@njit
def _give(state, s, t, need, last, dealer):
    if t >= 34:
        state[FLOWERS + s] += 1
        state[FLOWER_BITS + s] |= 1 << (t - 34)
        state[EVENTS] |= EV_INITIAL_FLOWER
        need[s] += 1
        return last
    state[HAND + 34 * s + t] += 1
    return t if s == dealer else last


# ----------------------------------------------------------------------------------------------- turn flow
@njit
def _turn_fields(state, s, tile, kind):
    """``s`` has just drawn ``tile``: the fields that make it s's turn (no win cached yet)."""
    state[PHASE] = PH_TURN
    state[TURN] = s
    state[CUR] = s
    state[DRAWN] = tile
    state[DRAW_KIND] = kind
    state[JUST_CLAIMED] = 0
    state[OFFER_TILE] = -1
    state[OFFER_SEAT] = -1
    for k in range(4):
        state[WIN_FAN + k] = -1
        state[CLAIM + k] = NOT_ASKED


@njit
def draw_flags_kernel(state, s, tile, kind):
    """The win flags of a self-drawn win of ``s`` on ``tile``, drawn just now by a draw of ``kind``: self-drawn,
    about a kong for a kong replacement, the last tile when the wall (or the next part) is empty now, and 和绝张
    when the other three copies are face up."""
    flags = WIN_SELF_DRAWN
    if kind == KIND_KONG:
        flags |= WIN_ABOUT_KONG
    if last_tile_kernel(state, s):
        flags |= WIN_WALL_LAST
    if state[VIS + tile] == 3:
        flags |= WIN_4TH_TILE
    return flags


@njit
def self_draw_fan_kernel(state, s, tile, kind):
    """Total fan of the self-drawn win open to ``s`` that has just drawn ``tile`` (already in its hand) by a
    draw of ``kind``: what the engine caches in ``WIN_FAN[s]`` at that draw (-1: no win), without writing the
    state. The luck-adjusted evaluation (:mod:`mjenv.arena.luck`) asks it of every tile the draw could have
    been; ``s``'s cached waits must be those of its hand without ``tile`` (as after any draw)."""
    if state[NO_WIN + s] != 0 or not waits_on_kernel(state, s, tile):
        return -1
    return _score(state, s, tile, draw_flags_kernel(state, s, tile, kind), True, np.zeros(NUM_FANS, np.int16))


@njit
def _start_turn(state, s, tile, kind):
    """``s`` has just drawn ``tile``: it is s's turn, with a self-drawn win cached if there is one."""
    _turn_fields(state, s, tile, kind)
    _set_win_option(state, s, tile, draw_flags_kernel(state, s, tile, kind), True)


@njit
def _draw(state, s, from_back, kind):
    """``s`` draws (from the front, or the back for replacements); flowers are set aside and replaced."""
    t, kind = _draw_tile(state, s, from_back, kind)
    if t >= 0:
        _start_turn(state, s, t, kind)


@njit
def _draw_tile(state, s, from_back, kind):
    """The tiles of :func:`_draw`: ``(tile, kind)`` of the tile now in s's hand (``kind`` KIND_FLOWER when it
    replaced a flower), or ``(-1, kind)`` when the wall ran out (the hand is then over, drawn)."""
    while True:
        if wall_empty_kernel(state, s):
            state[PHASE] = PH_OVER
            state[CUR] = -1
            state[EVENTS] |= EV_EXHAUSTIVE
            return -1, kind
        if state[PRIVATE_WALLS] != 0:
            t = _pop_private(state, s)
        elif from_back:
            state[BACK] -= 1
            t = state[WALL + state[BACK]]
        else:
            t = state[WALL + state[FRONT]]
            state[FRONT] += 1
        if t >= 34:
            state[FLOWERS + s] += 1
            state[FLOWER_BITS + s] |= 1 << (t - 34)
            state[EVENTS] |= EV_FLOWER_IN_PLAY
            from_back = True
            kind = KIND_FLOWER
            continue
        state[HAND + 34 * s + t] += 1
        state[N_DRAWS] += 1
        return t, kind


@njit
def add_meld_kernel(state, s, meld):
    """Append the packed ``meld`` (:func:`mjenv.melds.pack_meld`) to ``s``'s melds."""
    n = state[N_MELDS + s]
    state[MELDS + 4 * s + n] = meld
    state[N_MELDS + s] = n + 1


@njit
def pung_index_kernel(state, s, t):
    """Index of s's exposed pung of ``t`` (-1 if none)."""
    for i in range(state[N_MELDS + s]):
        m = state[MELDS + 4 * s + i]
        if meld_kind(m) == PUNG and meld_tile(m) == t:
            return i
    return -1


@njit
def _chow_ok(state, s, t, p):
    """Can ``s`` chow ``t`` as tile ``p`` (0 lowest .. 2 highest) of the run?"""
    if t >= 27:
        return False
    r = t % 9
    if r - p < 0 or r - p + 2 > 8:
        return False
    lo = t - p
    for i in range(3):
        if i != p and state[HAND + 34 * s + lo + i] == 0:
            return False
    return True


@njit
def _discard(state, s, t, suit_win, honor_win):
    """``s`` discards ``t``; open the claim window for seats with a legal claim, else the next player draws."""
    state[HAND + 34 * s + t] -= 1
    update_waits_kernel(state, s, suit_win, honor_win)
    n = state[N_DISC + s]
    if n < MAX_DISCARDS:
        state[DISC + MAX_DISCARDS * s + n] = t
    state[N_DISC + s] = n + 1
    state[VIS + t] += 1
    state[OFFER_TILE] = t
    state[OFFER_SEAT] = s
    state[JUST_CLAIMED] = 0
    last = last_tile_kernel(state, s)
    if last:
        state[EVENTS] |= EV_LAST_DISCARD_WINDOW
    flags = WIN_WALL_LAST if last else 0
    if state[VIS + t] == 4:
        flags |= WIN_4TH_TILE
    first = -1
    n_asked = 0
    ask_all = state[ASK_ALL] != 0
    for k in range(1, 4):
        o = (s + k) % 4
        state[CLAIM + o] = NOT_ASKED
        _set_win_option(state, o, t, flags, False)
        ok = state[WIN_FAN + o] >= 0
        if not last:
            if state[HAND + 34 * o + t] >= 2:
                ok = True
            if k == 1 and (_chow_ok(state, o, t, 0) or _chow_ok(state, o, t, 1) or _chow_ok(state, o, t, 2)):
                ok = True
        if ok:
            n_asked += 1
        if ok or ask_all:
            state[CLAIM + o] = ASKED
            if first < 0:
                first = o
    state[WIN_FAN + s] = -1
    if first < 0:
        _draw(state, (s + 1) % 4, False, KIND_NORMAL)
        return
    if n_asked > 1:
        state[EVENTS] |= EV_SEVERAL_ASKED
    state[PHASE] = PH_CLAIM
    state[CUR] = first


@njit
def _claimed_turn(state, s):
    """``s`` took a discard for a chow or pung and must discard now."""
    state[PHASE] = PH_TURN
    state[TURN] = s
    state[CUR] = s
    state[DRAWN] = -1
    state[JUST_CLAIMED] = 1
    state[OFFER_TILE] = -1
    state[OFFER_SEAT] = -1
    for k in range(4):
        state[WIN_FAN + k] = -1


@njit
def _finish_win(state, w, loser, tile, in_hand, rewards):
    """Score the win of ``w`` on ``tile`` (``loser`` -1 when self-drawn), pay, end the hand."""
    flags = state[WIN_FLAGS_P + w]
    fans = np.zeros(NUM_FANS, np.int16)
    total = _score(state, w, tile, flags, in_hand, fans)
    if not in_hand:
        state[HAND + 34 * w + tile] += 1
    for i in range(NUM_FANS):
        state[FANS + i] = fans[i]
    state[WINNER] = w
    state[LOSER] = loser
    state[WIN_TILE] = tile
    state[WIN_FLAGS] = flags
    state[WIN_TOTAL] = total
    base = state[BASE_PAY]
    for p in range(4):
        if p != w:
            pay = base + total if (loser < 0 or loser == p) else base
            state[SCORES + p] -= pay
            state[SCORES + w] += pay
            rewards[p] -= pay
            rewards[w] += pay
    ev = EV_SELF_DRAWN_WIN if loser < 0 else EV_DISCARD_WIN
    if flags & WIN_4TH_TILE:
        ev |= EV_4TH_TILE_WIN
    if flags & WIN_WALL_LAST:
        ev |= EV_WALL_LAST_SELF if loser < 0 else EV_WALL_LAST_DISCARD
    if loser < 0 and state[DRAW_KIND] == KIND_KONG:
        ev |= EV_KONG_REPLACEMENT_WIN
    if loser < 0 and state[DRAW_KIND] == KIND_FLOWER:
        ev |= EV_FLOWER_REPLACEMENT_WIN
    state[EVENTS] |= ev
    state[PHASE] = PH_OVER
    state[CUR] = -1


@njit
def _resolve_claims(state, rewards, suit_win, honor_win):
    """Everyone asked has answered: win > pung/kong > chow, ties to the first in play order after the discarder."""
    d = state[OFFER_SEAT]
    t = state[OFFER_TILE]
    best = -1
    best_prio = 0
    best_action = A_PASS
    n_win = 0
    has_chow = False
    for k in range(1, 4):
        o = (d + k) % 4
        a = state[CLAIM + o]
        state[CLAIM + o] = NOT_ASKED
        if a < 0:
            continue
        prio = 0
        if a == A_WIN:
            prio = 3
            n_win += 1
        elif a == A_PUNG or a == A_KONG:
            prio = 2
        elif A_CHOW <= a < A_PUNG:
            prio = 1
            has_chow = True
        if prio > best_prio:
            best, best_prio, best_action = o, prio, a
    if n_win > 1:
        state[EVENTS] |= EV_HEAD_BUMP
    if best_prio == 2 and has_chow:
        state[EVENTS] |= EV_PUNG_OVER_CHOW
    if best < 0:
        _draw(state, (d + 1) % 4, False, KIND_NORMAL)
        return
    n = state[N_DISC + d] - 1
    if n < MAX_DISCARDS:
        state[DISC + MAX_DISCARDS * d + n] |= CLAIMED_BIT
    if best_action == A_WIN:
        _finish_win(state, best, d, t, False, rewards)
    elif best_action == A_PUNG:
        state[HAND + 34 * best + t] -= 2
        state[VIS + t] += 2
        add_meld_kernel(state, best, pack_meld(PUNG, t, (best - d) % 4, 0))
        state[EVENTS] |= EV_PUNG
        _claimed_turn(state, best)
    elif best_action == A_KONG:
        state[HAND + 34 * best + t] -= 3
        state[VIS + t] += 3
        add_meld_kernel(state, best, pack_meld(KONG, t, (best - d) % 4, 0))
        state[EVENTS] |= EV_EXPOSED_KONG
        update_waits_kernel(state, best, suit_win, honor_win)
        _draw(state, best, True, KIND_KONG)
    else:
        p = best_action - A_CHOW
        lo = t - p
        for i in range(3):
            if i != p:
                state[HAND + 34 * best + lo + i] -= 1
                state[VIS + lo + i] += 1
        add_meld_kernel(state, best, pack_meld(CHOW, lo + 1, p + 1, 0))
        state[EVENTS] |= EV_CHOW
        _claimed_turn(state, best)


@njit
def _open_rob(state, s, t, suit_win, honor_win):
    """``s`` declares an added kong of ``t``: ask the seats that can win on it, else complete the kong."""
    state[HAND + 34 * s + t] -= 1
    state[OFFER_TILE] = t
    state[OFFER_SEAT] = s
    state[WIN_FAN + s] = -1
    first = -1
    for k in range(1, 4):
        o = (s + k) % 4
        state[CLAIM + o] = NOT_ASKED
        _set_win_option(state, o, t, WIN_ABOUT_KONG, False)
        if state[WIN_FAN + o] >= 0 or state[ASK_ALL] != 0:
            state[CLAIM + o] = ASKED
            if first < 0:
                first = o
    if first < 0:
        _complete_added_kong(state, s, t, suit_win, honor_win)
    else:
        state[PHASE] = PH_ROB
        state[CUR] = first


@njit
def _stand_added_kong(state, s, t):
    """Nobody robbed the added kong of ``t`` by ``s``: its pung becomes the kong."""
    i = pung_index_kernel(state, s, t)
    m = state[MELDS + 4 * s + i]
    state[MELDS + 4 * s + i] = pack_meld(KONG, t, meld_offer(m), 1)
    state[VIS + t] += 1
    state[EVENTS] |= EV_ADDED_KONG


@njit
def _complete_added_kong(state, s, t, suit_win, honor_win):
    _stand_added_kong(state, s, t)
    update_waits_kernel(state, s, suit_win, honor_win)
    _draw(state, s, True, KIND_KONG)


@njit
def window_drawer_kernel(state):
    """The seat that draws when every seat asked in the open claim (robbing) window passes: the discarder's next
    player (the kong declarer); -1 when no window is open."""
    ph = state[PHASE]
    if ph == PH_CLAIM:
        return (state[OFFER_SEAT] + 1) % 4
    if ph == PH_ROB:
        return state[OFFER_SEAT]
    return -1


@njit
def unclaimed_view_kernel(state, view):
    """Write into ``view`` (``int32[STATE_SIZE]``) the table ``state`` as it will be if every seat asked in its
    open claim or robbing window passes, pending answers ignored: the next player draws (a claim window), or the
    added kong stands and its declarer draws a replacement (a robbing window), by the engine's own code.

    For the observation of a seat that is not being asked (:func:`mjenv.observation.observe_kernel`), so that it
    shows the same table whether or not a window is open; never play on ``view``. The draw is shown as one tile
    that is no flower whatever the wall holds (the flowers set aside and the wall count are those of a plain
    draw), so the view tells nothing of the wall; only when every tile left for the drawer is a flower (then the
    hand ends in a draw) does the view show them set aside. The cached waits and win options in ``view`` are
    not updated (that needs the win tables and the scorer, which the observation kernel does not compile in;
    the observation does not read them)."""
    view[:] = state
    d = window_drawer_kernel(state)
    if d < 0:
        return
    rob = state[PHASE] == PH_ROB
    if rob:
        _stand_added_kong(view, d, state[OFFER_TILE])
    t, kind = _draw_tile(view, d, rob, KIND_KONG if rob else KIND_NORMAL)
    if t < 0:
        return
    _turn_fields(view, d, t, kind)
    if view[FLOWERS + d] != state[FLOWERS + d]:  # as a draw of one plain tile
        view[FLOWERS + d] = state[FLOWERS + d]
        view[FLOWER_BITS + d] = state[FLOWER_BITS + d]
        view[BACK] = view[FRONT] + state[BACK] - state[FRONT] - 1


@njit
def _resolve_rob(state, rewards, suit_win, honor_win):
    s = state[OFFER_SEAT]
    t = state[OFFER_TILE]
    winner = -1
    for k in range(1, 4):
        o = (s + k) % 4
        if state[CLAIM + o] == A_WIN and winner < 0:
            winner = o
        state[CLAIM + o] = NOT_ASKED
    if winner < 0:
        _complete_added_kong(state, s, t, suit_win, honor_win)
    else:
        state[EVENTS] |= EV_ROBBED
        _finish_win(state, winner, s, t, False, rewards)


# ----------------------------------------------------------------------------------------------- legality
@njit
def _legal(state, s, a):
    """Is action ``a`` legal for seat ``s`` now? (s must be the seat to act)"""
    ph = state[PHASE]
    if ph == PH_OVER or s != state[CUR] or a < 0 or a >= NUM_ACTIONS:
        return False
    if ph == PH_TURN:
        if a < A_CHOW:
            return state[HAND + 34 * s + a] > 0
        if a == A_WIN:
            return state[JUST_CLAIMED] == 0 and state[WIN_FAN + s] >= 0
        if state[JUST_CLAIMED] != 0 or kong_blocked_kernel(state, s):
            return False
        if A_CONCEALED_KONG <= a < A_ADDED_KONG:
            return state[HAND + 34 * s + a - A_CONCEALED_KONG] == 4
        if A_ADDED_KONG <= a < A_WIN:
            t = a - A_ADDED_KONG
            return state[HAND + 34 * s + t] > 0 and pung_index_kernel(state, s, t) >= 0
        return False
    if a == A_PASS:
        return True
    if a == A_WIN:
        return state[WIN_FAN + s] >= 0
    if ph == PH_ROB or last_tile_kernel(state, state[OFFER_SEAT]):
        return False
    t = state[OFFER_TILE]
    c = state[HAND + 34 * s + t]
    if a == A_PUNG:
        return c >= 2
    if a == A_KONG:
        return c == 3
    if A_CHOW <= a < A_PUNG:
        return s == (state[OFFER_SEAT] + 1) % 4 and _chow_ok(state, s, t, a - A_CHOW)
    return False


@njit
def legal_mask_kernel(state, seat, mask):
    """Fill ``mask`` (``bool[NUM_ACTIONS]``) with the legal actions of ``seat`` (all False when it is not to act).

    Returns the number of legal actions. Agrees with ``_legal`` action by action (tested).
    """
    ph = state[PHASE]
    if ph == PH_OVER or seat != state[CUR]:
        mask[:] = False
        return 0
    h = HAND + 34 * seat
    n = 0
    if ph == PH_TURN:  # every entry written once, without branches on the tile counts
        jc = state[JUST_CLAIMED] != 0
        kong_ok = not jc and not kong_blocked_kernel(state, seat)
        for t in range(34):
            c = state[h + t]
            d = c > 0
            k = kong_ok and c == 4
            mask[A_DISCARD + t] = d
            mask[A_CONCEALED_KONG + t] = k
            mask[A_ADDED_KONG + t] = False
            n += np.int64(d) + np.int64(k)  # np.int64: numpy bools add as a logical or (NUMBA_DISABLE_JIT)
        for a in range(A_CHOW, A_CONCEALED_KONG):
            mask[a] = False
        w = not jc and state[WIN_FAN + seat] >= 0
        mask[A_WIN] = w
        mask[A_PASS] = False
        n += w
        if kong_ok:
            for i in range(state[N_MELDS + seat]):
                m = state[MELDS + 4 * seat + i]
                t = meld_tile(m)
                if meld_kind(m) == PUNG and state[h + t] > 0:
                    mask[A_ADDED_KONG + t] = True
                    n += 1
        return n
    mask[:] = False
    mask[A_PASS] = True
    n = 1
    if state[WIN_FAN + seat] >= 0:
        mask[A_WIN] = True
        n += 1
    if ph == PH_ROB or last_tile_kernel(state, state[OFFER_SEAT]):
        return n
    t = state[OFFER_TILE]
    if state[h + t] >= 2:
        mask[A_PUNG] = True
        n += 1
    if state[h + t] == 3:
        mask[A_KONG] = True
        n += 1
    if seat == (state[OFFER_SEAT] + 1) % 4:
        for p in range(3):
            if _chow_ok(state, seat, t, p):
                mask[A_CHOW + p] = True
                n += 1
    return n


@njit
def step_kernel(state, action, rewards, suit_win, honor_win):
    """Apply ``action`` of the seat to act (``state[CUR]``); ``rewards`` (float32[4]) get this step's deltas.

    Returns 0, or ERR_ILLEGAL (-1, state unchanged) / ERR_OVER (-2, the hand is over). ``state`` must be
    ``int32[STATE_SIZE]`` and the tables those of :func:`win_tables` (C-contiguous): the engine is compiled
    once and called through a symbol (:func:`mjenv._jit.shared_kernel`), so this wrapper is all its callers
    compile.
    """
    return _step_shared(state, action, rewards, suit_win, honor_win)


@njit
def _step(state, action, rewards, suit_win, honor_win):
    """The body of :func:`step_kernel`."""
    for i in range(4):
        rewards[i] = 0
    ph = state[PHASE]
    if ph == PH_OVER:
        return ERR_OVER
    s = state[CUR]
    if not _legal(state, s, action):
        return ERR_ILLEGAL
    state[N_STEPS] += 1
    state[LAST_ACTOR] = s
    state[LAST_ACTION] = action
    if ph == PH_TURN:
        if action < A_CHOW:
            _discard(state, s, action, suit_win, honor_win)
        elif action < A_ADDED_KONG:
            t = action - A_CONCEALED_KONG
            state[HAND + 34 * s + t] -= 4
            add_meld_kernel(state, s, pack_meld(KONG, t, 0, 0))
            state[EVENTS] |= EV_CONCEALED_KONG
            update_waits_kernel(state, s, suit_win, honor_win)
            _draw(state, s, True, KIND_KONG)
        elif action < A_WIN:
            _open_rob(state, s, action - A_ADDED_KONG, suit_win, honor_win)
        else:
            _finish_win(state, s, -1, state[DRAWN], True, rewards)
        return OK
    state[CLAIM + s] = action
    d = state[OFFER_SEAT]
    k = (s - d) % 4 + 1
    while k < 4 and state[CLAIM + (d + k) % 4] != ASKED:
        k += 1
    if k < 4:
        state[CUR] = (d + k) % 4
    elif ph == PH_CLAIM:
        _resolve_claims(state, rewards, suit_win, honor_win)
    else:
        _resolve_rob(state, rewards, suit_win, honor_win)
    return OK


@njit
def front_step_kernel(state, action, rewards, suit_win, honor_win):
    """:func:`step_kernel` for the single-table fronts: returns the seat to act next (0..3), 4 when the hand is
    over, or the negative error code (the state is then unchanged)."""
    err = step_kernel(state, action, rewards, suit_win, honor_win)
    if err < 0:
        return err
    if state[PHASE] == PH_OVER:
        return 4
    return state[CUR]


@njit
def penalty_kind_kernel(state, action):
    """What an illegal ``action`` costs at this table (``mjenv.rules.PENALTY_*``), from its illegal mode: the
    terminate mode ends the hand; the penalty mode fines a false win (``action == WIN``) and only takes the right
    to win otherwise. (The raise mode is the fronts' business: they reject the action before any kernel runs.)"""
    if state[ILLEGAL_MODE] == ILLEGAL_TERMINATE:
        return PENALTY_TERMINATE
    return PENALTY_FALSE_WIN if action == A_WIN else PENALTY_WRONG_CLAIM


@njit
def penalize_kernel(state, seat, kind, rewards):
    """Illegal-action handling shared by the fronts; ``kind`` from :func:`penalty_kind_kernel`.

    PENALTY_TERMINATE: ``seat`` pays ``illegal_payment`` (10) to each other seat and the hand ends with no winner.
    PENALTY_FALSE_WIN: ``seat`` pays ``false_win_payment`` (10) to each other seat and may no longer win this hand.
    PENALTY_WRONG_CLAIM (any other illegal action in penalty mode): ``seat`` may no longer win this hand.
    """
    for i in range(4):
        rewards[i] = 0
    if kind != PENALTY_WRONG_CLAIM:
        pay = state[ILLEGAL_PAY] if kind == PENALTY_TERMINATE else state[FALSE_WIN_PAY]
        for p in range(4):
            if p != seat:
                state[SCORES + p] += pay
                state[SCORES + seat] -= pay
                rewards[p] += pay
                rewards[seat] -= pay
    if kind == PENALTY_TERMINATE:
        state[PHASE] = PH_OVER
        state[CUR] = -1
        return
    state[NO_WIN + seat] = 1
    state[WIN_FAN + seat] = -1


# ----------------------------------------------------------------------------------------------- shared kernels
# The engine's big kernels are compiled once each (C-callable, cached) and called through symbols, so that no
# caller (the fronts, the vector env, the other engine kernels) compiles a copy of them: see
# mjenv._jit.shared_kernel. Array arguments are fixed-size: the state, four rewards and the win tables.
_SUIT_WIN_LEN, _HONOR_WIN_LEN = 5**9, 5**7
_P_STATE, _P_TAB = _nt.CPointer(_nt.int32), _nt.CPointer(_nt.uint8)


def _update_waits_c(state, s, suit_win, honor_win):
    _update_waits_body(
        numba.carray(state, STATE_SIZE), s, numba.carray(suit_win, _SUIT_WIN_LEN),
        numba.carray(honor_win, _HONOR_WIN_LEN),
    )  # fmt: skip


def _step_c(state, action, rewards, suit_win, honor_win):
    return _step(
        numba.carray(state, STATE_SIZE), action, numba.carray(rewards, 4), numba.carray(suit_win, _SUIT_WIN_LEN),
        numba.carray(honor_win, _HONOR_WIN_LEN),
    )  # fmt: skip


def _reset_c(state, seed, dealer, prevalent, rules, suit_win, honor_win):
    _reset(
        numba.carray(state, STATE_SIZE), seed, dealer, prevalent, numba.carray(rules, RULE_WORDS),
        numba.carray(suit_win, _SUIT_WIN_LEN), numba.carray(honor_win, _HONOR_WIN_LEN),
    )  # fmt: skip


_update_waits_shared = (
    shared_kernel(
        "mjenv_game_update_waits_v1", _nt.void(_P_STATE, _nt.int64, _P_TAB, _P_TAB), _update_waits_c
    )
    or _update_waits_body
)
_step_shared = (
    shared_kernel(
        "mjenv_game_step_kernel_v1",
        _nt.int64(_P_STATE, _nt.int64, _nt.CPointer(_nt.float32), _P_TAB, _P_TAB),
        _step_c,
    )
    or _step
)
_reset_shared = (
    shared_kernel(
        "mjenv_game_reset_kernel_v2",
        _nt.void(_P_STATE, *([_nt.int64] * 3), _P_STATE, _P_TAB, _P_TAB),
        _reset_c,
    )
    or _reset
)


# ----------------------------------------------------------------------------------------------- Python API
def new_state(n: int | None = None) -> np.ndarray:
    """A zeroed state: ``int32[STATE_SIZE]``, or ``int32[n, STATE_SIZE]`` for a batch of tables."""
    if n is None:
        return np.zeros(STATE_SIZE, np.int32)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    return np.zeros((int(n), STATE_SIZE), np.int32)


def check_state(state: object) -> np.ndarray:
    """Validate that ``state`` is a C-contiguous ``int32[STATE_SIZE]`` array and return it."""
    if not isinstance(state, np.ndarray):
        raise TypeError(f"state must be a numpy array, got {type(state).__name__}")
    if state.dtype != np.int32 or state.shape != (STATE_SIZE,) or not state.flags.c_contiguous:
        raise ValueError(
            f"state must be a C-contiguous int32[{STATE_SIZE}] array, got {state.dtype}{state.shape}"
        )
    return state


def check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2**63:
        raise ValueError(f"seed must be an int in [0, 2**63), got {seed!r}")
    return int(seed)


DEFAULT_RULES = RuleConfig().encode()
DEFAULT_RULES.setflags(write=False)


def rules_block(rules: RuleConfig | None = None) -> np.ndarray:
    """The ``int32[RULE_WORDS]`` rules block of ``rules`` (default :class:`~mjenv.rules.RuleConfig`) for
    :func:`reset_kernel`."""
    if rules is None:  # a writable copy: kernels are compiled for writable blocks only (one specialization)
        return DEFAULT_RULES.copy()
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    return rules.encode()


def reset(
    state: np.ndarray, seed: int, dealer: int = 0, prevalent: int = 0, rules: RuleConfig | None = None
) -> None:
    """Validated :func:`reset_kernel` (``rules`` default: MCR, ``RuleConfig()``)."""
    check_state(state)
    for name, v in (("dealer", dealer), ("prevalent", prevalent)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) <= 3:
            raise ValueError(f"{name} must be 0..3, got {v!r}")
    block = rules_block(rules)
    reset_kernel(state, check_seed(seed), int(dealer), int(prevalent), block, *win_tables())


def reset_wall(
    state: np.ndarray, wall, dealer: int = 0, prevalent: int = 0, rules: RuleConfig | None = None
) -> None:
    """:func:`reset_kernel` on a given wall instead of a shuffled one (:func:`reset_wall_kernel`).

    ``wall``: 136 tile ids (144 with ``rules.flowers``; flowers are 34..41), each tile 4 times and each flower
    once. With ``rules.private_walls`` it is in Botzone ``walltiles`` order (seat i owns the i-th quarter and
    draws from its end); else ``wall[0]`` is the first tile dealt and ``wall[-1]`` the first replacement.
    Raises ValueError (state unchanged) on a bad wall.
    """
    check_state(state)
    for name, v in (("dealer", dealer), ("prevalent", prevalent)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) <= 3:
            raise ValueError(f"{name} must be 0..3, got {v!r}")
    block = rules_block(rules)
    arr = np.asarray(wall)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"wall must be a 1-d sequence of int tile ids, got {arr.dtype}{arr.shape}")
    n = 144 if block[R_FLOWERS] else 136
    if arr.shape[0] != n:
        raise ValueError(
            f"wall must hold {n} tiles with flowers={bool(block[R_FLOWERS])}, got {arr.shape[0]}"
        )
    if reset_wall_kernel(state, arr.astype(np.int64), int(dealer), int(prevalent), block, *win_tables()) != 0:
        raise ValueError(
            "wall must hold each of the 34 tiles 4 times" + (" and each flower once" if n == 144 else "")
        )


def wall_counts(state: np.ndarray) -> list[int]:
    """Tiles left in each seat's own part of the wall (private walls), or ``[total]`` for the shared wall."""
    check_state(state)
    if state[PRIVATE_WALLS]:
        return [int(x) for x in state[PWALL : PWALL + 4]]
    return [int(state[BACK] - state[FRONT])]


def legal_mask(state: np.ndarray, seat: int) -> np.ndarray:
    """``bool[NUM_ACTIONS]`` legal actions of ``seat`` (all False unless it is the seat to act)."""
    check_state(state)
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
        raise ValueError(f"seat must be 0..3, got {seat!r}")
    mask = np.zeros(NUM_ACTIONS, np.bool_)
    legal_mask_kernel(state, int(seat), mask)
    return mask


def step(state: np.ndarray, action: int) -> np.ndarray:
    """Apply ``action`` of the seat to act; returns the ``float32[4]`` score deltas of this step.

    ``action``: an integer as the fronts take it (:func:`mjenv.actions.as_action`: a Python or numpy integer or a
    0-d integer array). Raises ValueError (state unchanged) for an illegal action or when the hand is over, and
    TypeError for a value that is not an integer.
    """
    check_state(state)
    action = A.as_action(action)
    rewards = np.zeros(4, np.float32)
    err = step_kernel(state, action, rewards, *win_tables())
    if err == ERR_OVER:
        raise ValueError("the hand is over; reset the state")
    if err != OK:
        what = A.action_to_str(int(action)) if 0 <= int(action) < NUM_ACTIONS else str(action)
        raise ValueError(
            f"illegal action {int(action)} ({what}) for seat {int(state[CUR])} in phase {int(state[PHASE])}"
        )
    return rewards


def illegal_reason(state: np.ndarray, seat: int, action: int) -> str:
    """Why ``action`` of ``seat`` is not legal in ``state``, in one line that names the action and its tile.

    The answer follows :func:`_legal`'s checks in its order, each made by the engine's own kernels (the wall
    kernels, :func:`pung_index_kernel`, :func:`_chow_ok`; for a win the scorer through :func:`raw_score_kernel`
    with the flags the engine cached for that win, so a false win names its fan count against the minimum and
    the fans), e.g. ``"pung W5 on the last discard: the next seat's part of the wall is empty, so only a win may
    claim it"`` or ``"win on W5 with 6 fan (< 8): All Chows 2, Concealed Hand 2, Short Straight 1 x2"``. A legal
    action gives ``"<action> is legal"``.
    """
    from mjenv.fans import ERR_NOT_WIN, FAN_NAME_EN, FAN_POINTS
    from mjenv.tiles import BOTZONE_CODES

    check_state(state)
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
        raise ValueError(f"seat must be 0..3, got {seat!r}")
    s, a = int(seat), A.as_action(action)
    if not 0 <= a < NUM_ACTIONS:
        return f"action {a} is not an action (0..{NUM_ACTIONS - 1})"
    ph, cur = int(state[PHASE]), int(state[CUR])
    name = A.action_to_str(a)
    if ph == PH_OVER:
        return f"{name}: the hand is over"
    if s != cur:
        return f"{name}: seat {s} is not to act (seat {cur} is)"
    if _legal(state, s, a):
        return f"{name} is legal"
    hand = state[HAND + 34 * s : HAND + 34 * s + 34]

    def code(t: int) -> str:
        return BOTZONE_CODES[t]

    def held(t: int) -> str:
        return f"{int(hand[t])} {code(t)} in hand"

    def wall_reason(who: int, own: bool) -> str:
        """Why the wall blocks ``who``'s kong (``own``: its own part counts) or the claim of its discard."""
        if not state[PRIVATE_WALLS]:
            return "the wall is empty"
        if own and state[PWALL + who] <= 0:
            return "its own part of the wall is empty"
        return "the next seat's part of the wall is empty"

    def win_reason(tile: int, in_hand: bool) -> str:
        if tile < 0:
            return f"{name}: no tile to win on"
        on = f"win on {code(tile)}"
        if state[NO_WIN + s] != 0:
            return f"{on}: the seat lost the right to win this hand (an earlier false win)"
        counts = np.zeros(NUM_FANS, np.int16)
        total = int(raw_score_kernel(state, s, tile, int(state[WIN_FLAGS_P + s]), in_hand, counts))
        if total < 0:
            tiles = [t for t in range(34) for _ in range(int(hand[t]) - (in_hand and t == tile))]
            melds = int(state[N_MELDS + s])
            shown = " ".join(code(t) for t in tiles) + (f" and {melds} melds" if melds else "")
            what = "not a winning hand" if total == ERR_NOT_WIN else f"the scorer's error {total}"
            return f"{on}: {what} ({shown} + {code(tile)})"
        flowers = int(state[FLOWERS + s])
        base, need = total - flowers, int(state[MIN_FAN])
        fans = ", ".join(
            f"{FAN_NAME_EN[f]} {int(FAN_POINTS[f])}" + (f" x{int(n)}" if n > 1 else "")
            for f, n in enumerate(counts)
            if n
        )
        extra = f" (flowers do not count toward the {need})" if flowers else ""
        return f"{on} with {base} fan (< {need}): {fans}{extra}"

    if ph == PH_TURN:
        claimed = state[JUST_CLAIMED] != 0
        if a < A_CHOW:
            return f"{name} with no {code(a)} in hand"
        if a == A_WIN:
            if claimed:
                return f"{name} right after a chow or pung: the claimer must discard"
            return win_reason(int(state[DRAWN]), True)
        if not A_CONCEALED_KONG <= a < A_WIN:
            return f"{name} on its own turn: no discard is on offer"
        t = (a - A_CONCEALED_KONG) % 34
        if claimed:
            return f"{name} right after a chow or pung: the claimer must discard"
        if kong_blocked_kernel(state, s):
            return f"{name} while {wall_reason(s, True)}"
        if a < A_ADDED_KONG:
            return f"{name} with {held(t)} (a concealed kong needs 4)"
        if hand[t] == 0:
            return f"{name} with no {code(t)} in hand"
        return f"{name} with no exposed pung of {code(t)} to add it to"
    t, o = int(state[OFFER_TILE]), int(state[OFFER_SEAT])
    what = f"seat {o}'s added kong of {code(t)}" if ph == PH_ROB else f"seat {o}'s discard {code(t)}"
    if a == A_WIN:
        return win_reason(t, False)
    if a < A_CHOW or a >= A_CONCEALED_KONG:
        return f"{name} out of turn: seat {s} is answering {what}"
    claim = f"{name} {code(t)}" if a != A_PASS else name
    if ph == PH_ROB:
        return f"{claim} on {what}: only a win (robbing the kong) or a pass may answer it"
    if last_tile_kernel(state, o):
        return f"{claim} on the last discard: {wall_reason(o, False)}, so only a win may claim it"
    if a == A_PUNG:
        return f"{claim} with {held(t)} (a pung needs 2)"
    if a == A_KONG:
        return f"{claim} with {held(t)} (an exposed kong needs 3)"
    p = a - A_CHOW
    if s != (o + 1) % 4:
        return f"{claim}: only the next seat ({(o + 1) % 4}) may chow seat {o}'s discard"
    if t >= 27:
        return f"{claim}: an honour makes no run"
    lo = t - p
    if lo % 9 > 6 or lo // 9 != t // 9 or lo < 0:
        return f"{claim}: {code(t)} cannot be the {('low', 'middle', 'high')[p]} tile of a run"
    need = [lo + i for i in range(3) if i != p]
    return f"{claim} needs {code(need[0])} and {code(need[1])} in hand ({held(need[0])}, {held(need[1])})"


def seat_hand(state: np.ndarray, seat: int) -> np.ndarray:
    """``int8[34]`` concealed tiles of ``seat`` (a copy)."""
    return state[HAND + 34 * seat : HAND + 34 * seat + 34].astype(np.int8)


def seat_melds(state: np.ndarray, seat: int) -> list[int]:
    """Packed melds of ``seat`` in declaration order."""
    n = int(state[N_MELDS + seat])
    return [int(m) for m in state[MELDS + 4 * seat : MELDS + 4 * seat + n]]


def seat_discards(state: np.ndarray, seat: int) -> list[tuple[int, bool]]:
    """``(tile, claimed)`` of every discard of ``seat`` in order."""
    n = min(int(state[N_DISC + seat]), MAX_DISCARDS)
    return [
        (int(v) & 63, bool(v & CLAIMED_BIT))
        for v in state[DISC + MAX_DISCARDS * seat : DISC + MAX_DISCARDS * seat + n]
    ]


def wall_tiles(state: np.ndarray) -> list[int]:
    """The tiles still in the wall, front (next draw) to back (next replacement); with private walls the parts
    left of seats 0..3 in wall order (each seat draws from the end of its part)."""
    if state[PRIVATE_WALLS]:
        part = 36 if state[HAS_FLOWERS] else 34
        return [int(state[WALL + part * s + i]) for s in range(4) for i in range(int(state[PWALL + s]))]
    return [int(t) for t in state[WALL + state[FRONT] : WALL + state[BACK]]]


def events(state: np.ndarray) -> list[str]:
    """Names of the rule events (EV_*) that happened in this hand."""
    ev = int(state[EVENTS])
    return [name for bit, name in EV_NAMES.items() if ev & bit]


@njit
def begin_turn_kernel(state, seat, tile, kind, suit_win, honor_win):
    """Make it ``seat``'s turn having just drawn ``tile`` (already in the hand) by a draw of ``kind``.

    Used to build states directly (scenario tests, replays of positions); normal play never needs it. The
    cached waits of every seat are computed from scratch (``seat``'s without ``tile``).
    """
    for s in range(4):
        if s == seat:
            _update_waits_without(state, s, tile, suit_win, honor_win)
        else:
            update_waits_kernel(state, s, suit_win, honor_win)
    _start_turn(state, seat, tile, kind)


def win_record(state: np.ndarray) -> dict | None:
    """The winner's final hand in Botzone codes, ready for the reference calculator (None without a winner).

    Keys follow ``MahjongGB.MahjongFanCalculator``: ``pack`` (meld tuples), ``hand`` (standing tiles without the
    win tile), ``winTile``, ``flowerCount``, ``isSelfDrawn``, ``is4thTile``, ``isAboutKong``, ``isWallLast``,
    ``seatWind``, ``prevalentWind``.
    """
    from mjenv.melds import to_pack
    from mjenv.tiles import counts_to_tiles, tile_to_botzone

    check_state(state)
    w = int(state[WINNER])
    if w < 0:
        return None
    tile = int(state[WIN_TILE])
    conc = seat_hand(state, w)
    conc[tile] -= 1
    flags = int(state[WIN_FLAGS])
    return {
        "pack": tuple(to_pack(m) for m in seat_melds(state, w)),
        "hand": tuple(tile_to_botzone(t) for t in counts_to_tiles(conc)),
        "winTile": tile_to_botzone(tile),
        "flowerCount": int(state[FLOWERS + w]),
        "isSelfDrawn": bool(flags & WIN_SELF_DRAWN),
        "is4thTile": bool(flags & WIN_4TH_TILE),
        "isAboutKong": bool(flags & WIN_ABOUT_KONG),
        "isWallLast": bool(flags & WIN_WALL_LAST),
        "seatWind": (w - int(state[DEALER])) % 4,
        "prevalentWind": int(state[PREVALENT]),
    }


def fan_breakdown(state: np.ndarray) -> dict[str, int]:
    """``{English fan name: count}`` of the winning hand (empty without a winner)."""
    from mjenv.fans import FAN_NAME_EN

    return {FAN_NAME_EN[i]: int(c) for i, c in enumerate(state[FANS : FANS + NUM_FANS]) if c}


def result(state: np.ndarray) -> dict:
    """Outcome of a finished hand: winner seat, loser, win type, total fan, fans, payments, winner's hand."""
    check_state(state)
    if state[PHASE] != PH_OVER:
        raise ValueError("the hand is not over")
    w, loser = int(state[WINNER]), int(state[LOSER])
    if w < 0:
        kind = "draw" if state[EVENTS] & EV_EXHAUSTIVE else "aborted"
    elif loser < 0:
        kind = "self_drawn"
    else:
        kind = "robbed_kong" if state[EVENTS] & EV_ROBBED else "discard"
    return {
        "winner": w if w >= 0 else None,
        "loser": loser if loser >= 0 else None,
        "win_type": kind,
        "fan_total": int(state[WIN_TOTAL]) if w >= 0 else 0,
        "fans": fan_breakdown(state) if w >= 0 else {},
        "payments": [int(x) for x in state[SCORES : SCORES + 4]],
        "hand": win_record(state),
        "events": events(state),
    }


def warmup() -> float:
    """Compile (or load from the on-disk cache) every engine kernel by playing one hand; returns seconds taken.
    The observation kernels the single-table fronts call with it are :func:`mjenv.observation.warmup`'s (both
    run by :func:`mjenv.warmup`)."""
    import time

    t0 = time.perf_counter()
    tab = win_tables()
    st = new_state()
    reset_kernel(st, 0, 0, 0, rules_block(), *tab)
    mask = np.zeros(NUM_ACTIONS, np.bool_)
    rewards = np.zeros(4, np.float32)
    while st[PHASE] != PH_OVER:  # the argument types the fronts use: Python ints (int64)
        seat = int(st[CUR])
        legal_mask_kernel(st, seat, mask)
        step_kernel(st, int(np.flatnonzero(mask)[-1]), rewards, *tab)
    reset_kernel(st, 1, 0, 0, rules_block(), *tab)
    front_step_kernel(st, A_DISCARD + int(np.flatnonzero(st[HAND : HAND + 34])[0]), rewards, *tab)
    penalize_kernel(st, 0, 2, rewards)
    next_seed_kernel(st)
    return time.perf_counter() - t0
