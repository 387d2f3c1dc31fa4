"""Reusable checks for tests and fuzzing: state invariants, scenario builders, random playouts.

Rules
-----
Tile conservation (144 tiles: 136 suited/honour tiles, 4 of each kind, and 8 flowers) and hand sizes
(13 tiles per hand, counting a meld as 3, plus one for the player to move) follow from the MCR rules of
``docs/rules.md``.

Specification in mjenv
----------------------
``validate_state(state)`` recomputes every derived quantity of a :mod:`mjenv.game` state from scratch and raises
``AssertionError`` naming the first broken invariant (the Mortal ``validate()`` habit). ``build_state`` makes a
position directly from tile strings for scenario tests. ``random_playout`` plays one hand with a random legal
policy (preferring wins) on a state.
"""

from __future__ import annotations

import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv._jit import njit
from mjenv.melds import CHOW, is_concealed, kind_of, meld_kind, meld_tile, offer_of, tile_of
from mjenv.rules import RULE_WORDS, RuleConfig
from mjenv.tiles import parse_tiles


def _meld_tiles(m: int) -> list[int]:
    kind, t = kind_of(m), tile_of(m)
    if kind == 1:
        return [t - 1, t, t + 1]
    return [t] * (4 if kind == 3 else 3)


def validate_state(state: np.ndarray) -> None:
    """Check the invariants of a table state; raises AssertionError naming the first broken one."""
    G.check_state(state)
    front, back = int(state[G.FRONT]), int(state[G.BACK])
    assert 0 <= front <= back <= (144 if state[G.HAS_FLOWERS] else 136), f"wall pointers {front}..{back}"
    counts = np.zeros(42, np.int64)
    for t in state[G.WALL + front : G.WALL + back]:
        counts[t] += 1
    vis = np.zeros(34, np.int64)
    for s in range(4):
        hand = state[G.HAND + 34 * s : G.HAND + 34 * s + 34]
        assert (hand >= 0).all() and (hand <= 4).all(), f"seat {s} hand counts {hand}"
        counts[:34] += hand
        n_melds = int(state[G.N_MELDS + s])
        assert 0 <= n_melds <= 4
        for m in state[G.MELDS + 4 * s : G.MELDS + 4 * s + n_melds]:
            m = int(m)
            for t in _meld_tiles(m):
                counts[t] += 1
            concealed = is_concealed(m)
            if not concealed:
                for t in _meld_tiles(m):
                    vis[t] += 1
                vis[tile_of(m) if kind_of(m) != CHOW else tile_of(m) - 2 + offer_of(m)] -= (
                    1  # the claimed tile
                )
        n_disc = int(state[G.N_DISC + s])
        assert n_disc <= G.MAX_DISCARDS, f"seat {s} has {n_disc} discards > {G.MAX_DISCARDS}"
        for v in state[G.DISC + G.MAX_DISCARDS * s : G.DISC + G.MAX_DISCARDS * s + n_disc]:
            vis[v & 63] += 1
            if not v & G.CLAIMED_BIT:
                counts[v & 63] += 1
        counts[34:] += [(int(state[G.FLOWER_BITS + s]) >> f) & 1 for f in range(8)]
        assert bin(int(state[G.FLOWER_BITS + s])).count("1") == state[G.FLOWERS + s], "flower count vs bits"
        size = int(hand.sum()) + 3 * n_melds
        ph = int(state[G.PHASE])
        mover = ph == G.PH_TURN and s == state[G.TURN]
        mover |= ph == G.PH_OVER and (s == state[G.WINNER] or (state[G.WINNER] < 0 and s == state[G.TURN]))
        assert size == (14 if mover else 13) or (
            ph == G.PH_OVER and state[G.WINNER] < 0 and size in (13, 14)
        ), f"seat {s} holds {size} tiles (phase {ph})"
    if state[G.PHASE] == G.PH_ROB:  # the added-kong tile is on offer, in nobody's hand or meld
        counts[int(state[G.OFFER_TILE])] += 1
    n_flower = 1 if state[G.HAS_FLOWERS] else 0
    missing = [t for t in range(42) if counts[t] != (4 if t < 34 else n_flower)]
    assert not missing, f"tiles not conserved: {[(t, int(counts[t])) for t in missing]}"
    if state[G.PHASE] != G.PH_ROB:
        assert (vis == state[G.VIS : G.VIS + 34]).all(), "face-up tile counts (VIS) differ from a recompute"
    assert state[G.SCORES : G.SCORES + 4].sum() == 0, "scores do not sum to zero"


def build_state(
    hands: dict[int, str],
    *,
    melds: dict[int, list[int]] | None = None,
    turn: int = 0,
    drawn: str | None = None,
    wall: str = "",
    wall_back: str = "",
    wall_left: int | None = None,
    discards: dict[int, str] | None = None,
    flowers: dict[int, int] | None = None,
    dealer: int = 0,
    prevalent: int = 0,
    min_fan: int = 8,
    draw_kind: int = G.KIND_NORMAL,
    rules: RuleConfig | None = None,
) -> np.ndarray:
    """A state built from tile strings, with ``turn`` to move having just drawn ``drawn``.

    Parameters
    ----------
    hands : dict seat -> str
        Concealed tiles (any notation of :func:`mjenv.tiles.parse_tiles`); the turn seat holds 14 - 3*melds.
    melds : dict seat -> list of packed melds (:mod:`mjenv.melds`)
    drawn : str
        The tile ``turn`` just drew (default: the last tile of its hand string).
    wall, wall_back : str
        The next front draws in order, and the next replacement draws (back) in order. The tiles not used
        anywhere else fill the middle of the wall (sorted, flowers in the middle).
    wall_left : int
        If given, the wall is cut to this many tiles (taken from the back end of the filled wall).
    discards : dict seat -> str  (face-up discards, unclaimed)
    flowers : dict seat -> number of flowers set aside (flowers 34.. are taken in order)
    rules : RuleConfig, optional
        Written to the state's rules block (default ``RuleConfig(min_fan=min_fan)``).
    """
    st = G.new_state()
    rules = RuleConfig(min_fan=min_fan) if rules is None else rules
    if rules.min_fan != min_fan and min_fan != 8:
        raise ValueError("pass min_fan or rules, not both")
    st[G.RULES : G.RULES + RULE_WORDS] = rules.encode()
    st[G.DEALER], st[G.PREVALENT] = dealer, prevalent
    for k in ("WINNER", "LOSER", "WIN_TILE", "OFFER_TILE", "OFFER_SEAT", "LAST_ACTOR", "LAST_ACTION"):
        st[G.OFFSETS[k]] = -1
    st[G.CLAIM : G.CLAIM + 4] = G.NOT_ASKED
    used = np.zeros(42, np.int64)
    for s, text in hands.items():
        for t in parse_tiles(text):
            st[G.HAND + 34 * s + t] += 1
            used[t] += 1
    for s, ms in (melds or {}).items():
        for m in ms:
            G.add_meld_kernel(st, s, m)
            for t in _meld_tiles(m):
                used[t] += 1
                if not is_concealed(m):
                    st[G.VIS + t] += 1
    for s, text in (discards or {}).items():
        for t in parse_tiles(text):
            st[G.DISC + G.MAX_DISCARDS * s + st[G.N_DISC + s]] = t
            st[G.N_DISC + s] += 1
            st[G.VIS + t] += 1
            used[t] += 1
    f = 34
    for s, n in (flowers or {}).items():
        for _ in range(n):
            st[G.FLOWERS + s] += 1
            st[G.FLOWER_BITS + s] |= 1 << (f - 34)
            used[f] += 1
            f += 1
    front, back = parse_tiles(wall), parse_tiles(wall_back)
    for t in front + back:
        used[t] += 1
    if (used[:34] > 4).any() or (used[34:] > 1).any():
        raise ValueError(f"more copies than exist: {np.flatnonzero(used[:34] > 4)}")
    rest = [t for t in range(42) for _ in range((4 if t < 34 else 1) - used[t])]
    n_plain = sum(1 for t in rest if t < 34)
    rest = rest[: n_plain // 2] + rest[n_plain:] + rest[n_plain // 2 : n_plain]  # flowers mid-wall
    full = front + rest + back[::-1]
    st[G.WALL : G.WALL + len(full)] = full
    st[G.BACK] = len(full)
    st[G.FRONT] = 0 if wall_left is None else len(full) - wall_left
    tile = parse_tiles(drawn)[0] if drawn else parse_tiles(hands[turn])[-1]
    G.begin_turn_kernel(st, turn, tile, draw_kind, *G.win_tables())
    return st


def random_playout(
    state: np.ndarray,
    rng: np.random.Generator,
    *,
    win_always: bool = True,
    check: bool = False,
    max_steps: int = 2000,
) -> int:
    """Play the hand in ``state`` to its end with random legal actions; returns the number of steps.

    ``win_always`` takes every legal win. ``check`` runs :func:`validate_state` after every step and checks that
    the acting seat always has a legal action and every step's rewards sum to zero.
    """
    mask = np.zeros(G.NUM_ACTIONS, np.bool_)
    rewards = np.zeros(4, np.float32)
    tab = G.win_tables()
    n = 0
    while state[G.PHASE] != G.PH_OVER:
        seat = int(state[G.CUR])
        k = G.legal_mask_kernel(state, seat, mask)
        assert k > 0, "no legal action for the seat to act"
        a = A.WIN if (win_always and mask[A.WIN]) else int(rng.choice(np.flatnonzero(mask)))
        err = G.step_kernel(state, a, rewards, *tab)
        assert err == 0, f"legal action {a} rejected with {err}"
        assert rewards.sum() == 0
        if check:
            validate_state(state)
        n += 1
        assert n <= max_steps, "hand did not end"
    return n


# ----------------------------------------------------------------------------------------------- compiled fuzzing

# The kernels below freeze mjenv.game's state offsets at compile time; numba's on-disk cache does not see
# changes in other files, so mjenv._jit drops the package's cached kernels whenever a kernel module changes.

ERR_TILES, ERR_SIZES, ERR_MASK, ERR_REWARDS, ERR_STEP, ERR_LENGTH = -11, -12, -13, -14, -15, -16
CHECK_ERRORS = {
    ERR_TILES: "tiles not conserved",
    ERR_SIZES: "hand sizes inconsistent",
    ERR_MASK: "empty mask for the seat to act",
    ERR_REWARDS: "rewards do not sum to zero",
    ERR_STEP: "a legal action was rejected",
    ERR_LENGTH: "hand longer than MAX_STEPS",
}
MAX_STEPS = 2000


@njit
def check_kernel(state):
    """Compiled subset of :func:`validate_state`: every tile (144, or 136 without flowers) conserved and hand sizes; 0 or ERR_TILES/ERR_SIZES."""
    counts = np.zeros(42, np.int64)
    for i in range(state[G.FRONT], state[G.BACK]):
        counts[state[G.WALL + i]] += 1
    for s in range(4):
        n = 0
        for t in range(34):
            c = state[G.HAND + 34 * s + t]
            if c < 0 or c > 4:
                return ERR_TILES
            counts[t] += c
            n += c
        for i in range(state[G.N_MELDS + s]):
            m = state[G.MELDS + 4 * s + i]
            kind, t = meld_kind(m), meld_tile(m)
            if kind == 1:
                counts[t - 1] += 1
                counts[t] += 1
                counts[t + 1] += 1
            else:
                counts[t] += 4 if kind == 3 else 3
            n += 3
        for i in range(min(state[G.N_DISC + s], G.MAX_DISCARDS)):
            v = state[G.DISC + G.MAX_DISCARDS * s + i]
            if v & G.CLAIMED_BIT == 0:
                counts[v & 63] += 1
        for f in range(8):
            counts[34 + f] += (state[G.FLOWER_BITS + s] >> f) & 1
        mover = state[G.PHASE] == G.PH_TURN and s == state[G.TURN]
        mover = mover or (state[G.PHASE] == G.PH_OVER and s == state[G.WINNER])
        if state[G.PHASE] == G.PH_OVER and state[G.WINNER] < 0 and s == state[G.TURN]:
            mover = n == 14
        if n != (14 if mover else 13) or state[G.N_DISC + s] > G.MAX_DISCARDS:
            return ERR_SIZES
    if state[G.PHASE] == G.PH_ROB:  # the added-kong tile is on offer, in nobody's hand or meld
        counts[state[G.OFFER_TILE]] += 1
    n_flower = 1 if state[G.HAS_FLOWERS] != 0 else 0
    for t in range(42):
        if counts[t] != (4 if t < 34 else n_flower):
            return ERR_TILES
    return 0


@njit
def _prng(rs):
    rs[0] ^= rs[0] << np.uint64(13)
    rs[0] ^= rs[0] >> np.uint64(7)
    rs[0] ^= rs[0] << np.uint64(17)
    return rs[0]


@njit
def _biased_action(state, seat, mask, rs):
    """Fuzzing policy: always win; claim and kong often; discard the tile with the fewest neighbours."""
    if mask[A.WIN]:
        return A.WIN
    n_claims = 0
    for a in range(A.CHOW, A.WIN):
        n_claims += mask[a]
    if n_claims > 0 and _prng(rs) % np.uint64(100) < np.uint64(70):  # kongs and claims with probability 0.7
        j = np.int64(_prng(rs) % np.uint64(n_claims))
        for a in range(A.CHOW, A.WIN):
            if mask[a]:
                if j == 0:
                    return a
                j -= 1
    if mask[A.PASS]:
        return A.PASS
    best, best_score = -1, 1 << 30
    for t in range(34):
        if not mask[A.DISCARD + t]:
            continue
        sc = 4 * state[G.HAND + 34 * seat + t]
        if t < 27:
            for d in (-2, -1, 1, 2):
                u = t + d
                if 0 <= u < 27 and u // 9 == t // 9:
                    sc += (3 - abs(d)) * state[G.HAND + 34 * seat + u]
        sc = sc * 8 + np.int64(_prng(rs) % np.uint64(8))
        if sc < best_score:
            best, best_score = t, sc
    return A.DISCARD + best


@njit
def playout_kernel(state, policy, rs, checks, suit_win, honor_win):
    """Play the hand in ``state`` to its end; policy 0 uniform random legal, 1 the biased fuzzing policy.

    ``rs`` is the policy RNG (``uint64[1]``, non-zero); ``suit_win, honor_win`` are :func:`mjenv.game.win_tables`. With ``checks`` every step is validated by
    :func:`check_kernel`, mask non-emptiness and zero-sum rewards. Returns the number of steps or an ERR_* code.
    """
    mask = np.zeros(A.NUM_ACTIONS, np.bool_)
    rewards = np.zeros(4, np.float32)
    n = 0
    while state[G.PHASE] != G.PH_OVER:
        seat = state[G.CUR]
        k = G.legal_mask_kernel(state, seat, mask)
        if k == 0:
            return ERR_MASK
        if policy == 1:
            a = _biased_action(state, seat, mask, rs)
        else:
            j = np.int64(_prng(rs) % np.uint64(k))
            a = 0
            while True:
                if mask[a]:
                    if j == 0:
                        break
                    j -= 1
                a += 1
        if G.step_kernel(state, a, rewards, suit_win, honor_win) != 0:
            return ERR_STEP
        n += 1
        if checks:
            if rewards[0] + rewards[1] + rewards[2] + rewards[3] != 0:
                return ERR_REWARDS
            e = check_kernel(state)
            if e != 0:
                return e
        if n > MAX_STEPS:
            return ERR_LENGTH
    return n
