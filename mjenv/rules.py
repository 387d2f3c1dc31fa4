"""Rule options of a table (:class:`RuleConfig`), the match schedule and the payments.

Rules
-----
MCR (``docs/rules.md``, "Seats, winds, match" and "Scoring"): a match is 16 hands, four rounds with
the prevailing wind East, South, West, North; the dealer passes to the next seat every hand; between rounds the
players change seats (commentary 001: before round 2 East<->South and West<->North swap, before round 3
East->West, South->North, West->South, North->East, before round 4 the first swap again), so that every player
sits once in each position. A win needs 8 fan without flowers. Self-drawn win with F fan: each other player pays
8 + F; win on a discard (or a robbed kong): the discarder pays 8 + F and the other two pay 8.

Specification in mjenv
----------------------
* Engine seats ("chairs") 0..3 are the four positions in play order. In hand ``h`` (0..15) of a match the
  prevailing wind is ``h // 4`` and the dealer is chair ``h % 4``; a chair's seat wind is
  ``(chair - dealer) % 4``. Player ``i`` sits at chair :func:`chair_of_player` ``(h // 4, i)``.
* A single hand (``match=False``, the default) uses ``prevalent_wind`` and ``dealer`` from the config
  (defaults East and chair 0).
* Every option and amount is a field of :class:`RuleConfig`; :meth:`RuleConfig.encode` writes them into the
  rules block (``RULE_WORDS`` words, :data:`RULE_FIELDS`) that ``mjenv.game.reset_kernel`` copies into each
  table's state, and the kernels read them only from there.
* ``flowers=False``: 136 tiles, no flowers (the competition variants).
* ``private_walls=True`` (Botzone/IJCAI, :meth:`RuleConfig.botzone`): the wall is split into four equal private
  parts (34 tiles each without flowers); seat ``i`` owns ``WALL[part*i : part*(i+1)]`` and every one of its draws
  (the deal, normal draws, kong and flower replacements) pops the last tile of its own part. The hand is drawn
  (exhaustive) when the drawer's own part is empty, even if other parts still hold tiles. A chow, pung or exposed
  kong on a discard of ``d`` is illegal when the part of ``d + 1`` is empty (only a win may claim it); a
  concealed or added kong is illegal when the kong maker's or the next seat's part is empty. The last-tile flag
  (海底捞月 / 河底捞鱼) is set when the part of the seat after the current player (the drawer, the discarder) is
  empty.
* ``knitted_wait_fans=False`` (the Botzone judge's bundled calculator): no edge, closed or single-wait fan in a
  knitted-straight reading when the winning tile lies inside the knitted straight (a scorer option, the
  ``mjenv.fans.WIN_KNITTED_NO_WAIT`` bit; default True is PyMahjongGB's scoring).
* ``illegal``: ``"terminate"`` (PettingZoo convention: the offender gets ``-30`` and every other player ``+10``,
  the hand ends), ``"raise"`` (``ValueError``, state unchanged) or ``"penalty"`` (competition rules: a false
  win pays 10 to each other player and the offender may no longer win this hand; any other illegal action only
  loses the right to win; either way the offender must then choose again).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

MIN_WIN_FAN = 8
BASE_PAYMENT = 8
FALSE_WIN_PAYMENT = 10
ILLEGAL_PAYMENT = 10  # terminate mode: the offender pays this to each other player (-30 / +10, Botzone's WA)
ILLEGAL_LOSS, ILLEGAL_GAIN = -3 * ILLEGAL_PAYMENT, ILLEGAL_PAYMENT
HANDS_PER_MATCH = 16
#: ``RuleConfig.illegal`` values; the index is the code stored in the rules block (``R_ILLEGAL``)
ILLEGAL_MODES = ("terminate", "raise", "penalty")
ILLEGAL_TERMINATE, ILLEGAL_RAISE, ILLEGAL_PENALTY = 0, 1, 2
#: ``RuleConfig.claim_windows`` values (code = index, ``R_ASK_ALL``)
CLAIM_WINDOWS = ("claimants", "all")
#: what ``mjenv.game.penalize_kernel`` does to an offender (chosen by ``game.penalty_kind_kernel``)
PENALTY_TERMINATE, PENALTY_FALSE_WIN, PENALTY_WRONG_CLAIM = 0, 1, 2
PENALTY_NAMES = ("terminate", "false_win", "wrong_claim")

#: The rules block: ``RULE_WORDS`` int32 words that :meth:`RuleConfig.encode` writes and ``reset_kernel`` copies
#: into every table's state (``mjenv.game.RULES``); the kernels read the rules only from there.
RULE_FIELDS = (
    "min_fan",
    "base_payment",
    "false_win_payment",
    "illegal_payment",
    "illegal",
    "flowers",
    "claim_windows",
    "private_walls",
    "knitted_wait_fans",
)
(
    R_MIN_FAN,
    R_BASE_PAY,
    R_FALSE_WIN_PAY,
    R_ILLEGAL_PAY,
    R_ILLEGAL,
    R_FLOWERS,
    R_ASK_ALL,
    R_PRIVATE_WALLS,
    R_KNITTED_WAIT,
) = range(9)
RULE_WORDS = len(RULE_FIELDS)

#: ``SEATING[round, player] = chair`` (commentary 001 seat rotation)
SEATING = np.array([[0, 1, 2, 3], [1, 0, 3, 2], [3, 2, 0, 1], [2, 3, 1, 0]], dtype=np.int8)
SEATING.setflags(write=False)


def _check_int(name: str, v: object, lo: int, hi: int) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= int(v) <= hi:
        raise ValueError(f"{name} must be an int in {lo}..{hi}, got {v!r}")


@dataclass(frozen=True)
class RuleConfig:
    """Options of a table: the single source of every rule option and amount.

    Parameters
    ----------
    match : bool
        False: every episode is one hand (the default). True: a 16-hand match with wind rounds and seat rotation.
    prevalent_wind : int
        Prevailing wind 0..3 (E S W N) of a single hand; ignored in a match.
    dealer : int
        Chair 0..3 of the dealer (seat wind East) of a single hand; ignored in a match.
    min_fan : int
        Minimum fan of a win, flowers excluded (8 in MCR).
    illegal : str
        ``"terminate"``, ``"raise"`` or ``"penalty"`` (see the module docstring).
    flowers : bool
        True: the 144-tile wall with 8 flowers, set aside and replaced from the back (MCR). False: 136 tiles, no
        flowers (the Botzone/IJCAI competitions).
    claim_windows : str
        ``"claimants"`` (default): after a discard (or an added kong) only the seats with a legal claim are asked.
        ``"all"``: every other seat is asked in every window (pass-only masks for seats without a claim), as on
        Botzone, so that not even the order of play reveals who could claim. In both modes only the player
        being asked sees the window; with ``"claimants"`` the others see the table as it will be if nobody
        claims (what leaks: docs/rules.md, "Claim windows reveal nothing").
    base_payment, false_win_payment, illegal_payment : int
        Amounts: each player pays the winner ``base_payment`` (+ the fan to the discarder / on a self-drawn win);
        a false win in penalty mode pays ``false_win_payment`` to each other player; an illegal action in
        terminate mode pays ``illegal_payment`` to each other player.
    """

    match: bool = False
    prevalent_wind: int = 0
    dealer: int = 0
    min_fan: int = MIN_WIN_FAN
    illegal: str = "terminate"
    flowers: bool = True
    claim_windows: str = "claimants"
    base_payment: int = BASE_PAYMENT
    false_win_payment: int = FALSE_WIN_PAYMENT
    illegal_payment: int = ILLEGAL_PAYMENT
    private_walls: bool = False
    knitted_wait_fans: bool = True

    @classmethod
    def botzone(cls, quan: int = 0, **overrides: object) -> RuleConfig:
        """The Botzone / IJCAI variant of the judge ``ailab-pku/Chinese-Standard-Mahjong`` ``judge/main.cpp``:
        136 tiles without flowers, private 34-tile walls, seat wind = player index (dealer chair 0), prevalent
        wind ``quan``, every seat asked in every claim window, an illegal action ends the hand with -30 / +10
        (WA / WH), and the judge's fan calculator (``knitted_wait_fans=False``). ``overrides`` replace fields
        (e.g. ``flowers=True`` for a 144-tile ``walltiles``)."""
        kw: dict = {
            "prevalent_wind": quan,
            "dealer": 0,
            "flowers": False,
            "private_walls": True,
            "knitted_wait_fans": False,
            "claim_windows": "all",
            "illegal": "terminate",
            "min_fan": MIN_WIN_FAN,
            "base_payment": BASE_PAYMENT,
            "illegal_payment": ILLEGAL_PAYMENT,
        }
        kw.update(overrides)
        return cls(**kw)

    def __post_init__(self) -> None:
        # numpy bools and integers are accepted and stored as Python ones (to_dict() is JSON-able)
        for name in ("match", "flowers", "private_walls", "knitted_wait_fans"):
            v = getattr(self, name)
            if not isinstance(v, (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {type(v).__name__}")
            object.__setattr__(self, name, bool(v))
        for name, hi in (("prevalent_wind", 3), ("dealer", 3), ("min_fan", 10_000), ("base_payment", 10_000),
                         ("false_win_payment", 10_000), ("illegal_payment", 10_000)):  # fmt: skip
            _check_int(name, getattr(self, name), 0, hi)
            object.__setattr__(self, name, int(getattr(self, name)))
        if self.illegal not in ILLEGAL_MODES:
            raise ValueError(f"illegal must be one of {ILLEGAL_MODES}, got {self.illegal!r}")
        if self.claim_windows not in CLAIM_WINDOWS:
            raise ValueError(f"claim_windows must be one of {CLAIM_WINDOWS}, got {self.claim_windows!r}")

    @property
    def num_hands(self) -> int:
        """Hands per episode: 16 in a match, else 1."""
        return HANDS_PER_MATCH if self.match else 1

    @property
    def num_tiles(self) -> int:
        """Tiles in the wall: 144 with flowers, 136 without."""
        return 144 if self.flowers else 136

    def hand_setup(self, hand_index: int) -> tuple[int, int]:
        """``(prevalent_wind, dealer_chair)`` of hand ``hand_index`` of an episode."""
        if not 0 <= hand_index < self.num_hands:
            raise ValueError(f"hand_index must be 0..{self.num_hands - 1}, got {hand_index}")
        if not self.match:
            return int(self.prevalent_wind), int(self.dealer)
        return hand_index // 4, hand_index % 4

    def encode(self) -> np.ndarray:
        """The rules block, ``int32[RULE_WORDS]`` (see :data:`RULE_FIELDS`), that ``reset_kernel`` copies."""
        out = np.zeros(RULE_WORDS, np.int32)
        out[R_MIN_FAN] = self.min_fan
        out[R_BASE_PAY] = self.base_payment
        out[R_FALSE_WIN_PAY] = self.false_win_payment
        out[R_ILLEGAL_PAY] = self.illegal_payment
        out[R_ILLEGAL] = ILLEGAL_MODES.index(self.illegal)
        out[R_FLOWERS] = int(self.flowers)
        out[R_ASK_ALL] = CLAIM_WINDOWS.index(self.claim_windows)
        out[R_PRIVATE_WALLS] = int(self.private_walls)
        out[R_KNITTED_WAIT] = int(self.knitted_wait_fans)
        return out

    def to_dict(self) -> dict:
        """JSON-able fields (records, checkpoints); :meth:`from_dict` inverts it."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict) -> RuleConfig:
        if not isinstance(d, dict):
            raise TypeError(f"rules must be a dict, got {type(d).__name__}")
        unknown = set(d) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown rule options {sorted(unknown)}")
        return cls(**d)


def check_rules(rules: object, **overrides: object) -> RuleConfig:
    """``rules`` (a :class:`RuleConfig` or None for the defaults) with ``overrides`` applied; an override that
    contradicts an explicitly given ``rules`` is a ``ValueError`` (never silently ignored). ``None`` overrides
    are ignored."""
    given = {k: v for k, v in overrides.items() if v is not None}
    if rules is None:
        return RuleConfig(**given)
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    clash = {k: (v, getattr(rules, k)) for k, v in given.items() if getattr(rules, k) != v}
    if clash:
        shown = ", ".join(f"{k}={v!r} but rules.{k}={r!r}" for k, (v, r) in clash.items())
        raise ValueError(f"conflicting rule options: {shown}; set them in the RuleConfig only")
    return rules


def chair_of_player(round_index: int, player: int) -> int:
    """Chair (engine seat) of player ``player`` in round ``round_index`` of a match (the seat rotation)."""
    if not 0 <= round_index < 4 or not 0 <= player < 4:
        raise ValueError(f"round_index and player must be 0..3, got {round_index}, {player}")
    return int(SEATING[round_index, player])


def placements(scores: np.ndarray) -> np.ndarray:
    """Places 1..4 (1 = the highest score) of the four players in each row of ``scores`` (``[..., 4]``, e.g.
    final match scores), as ``float64``. Players level share the mean of the places they cover (two level
    first: 1.5 each), as the arena's placements (``docs/arena.md``), so the places of a row always sum to 10."""
    s = np.asarray(scores)
    if s.ndim < 1 or s.shape[-1] != 4 or not (np.issubdtype(s.dtype, np.number) and s.dtype != np.bool_):
        raise ValueError(f"scores must be a numeric array of shape [..., 4], got {s.dtype}{s.shape}")
    above = (s[..., None, :] > s[..., :, None]).sum(axis=-1)  # players above each player
    level = (s[..., None, :] == s[..., :, None]).sum(axis=-1) - 1  # other players level with it
    return 1.0 + above + level / 2.0


def payments(winner: int, loser: int, fan: int, base: int = BASE_PAYMENT) -> np.ndarray:
    """Score deltas of one hand (``int32[4]``, summing to 0) for ``winner`` with ``fan`` fan.

    ``loser`` is the discarder (or robbed kong declarer), or -1 for a self-drawn win; ``winner`` -1 is a draw.

    >>> payments(0, -1, 8).tolist(), payments(1, 2, 10).tolist()
    ([48, -16, -16, -16], [0, 34, -18, -8])
    """
    out = np.zeros(4, dtype=np.int32)
    if winner == -1:
        return out
    if not 0 <= winner < 4 or not -1 <= loser < 4 or loser == winner:
        raise ValueError(f"bad winner/loser {winner}/{loser}")
    for s in range(4):
        if s != winner:
            pay = base + fan if loser in (-1, s) else base
            out[s] -= pay
            out[winner] += pay
    return out
