"""Rule options of a table (:class:`RuleConfig`), the match schedule and the payments.

Rules
-----
MCR (``../shared/rules/RULES.md``, "Seats, winds, match" and "Scoring"): a match is 16 hands, four rounds with
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
* ``illegal``: ``"terminate"`` (PettingZoo convention: the offender gets ``-30`` and every other player ``+10``,
  the hand ends), ``"raise"`` (``ValueError``, state unchanged) or ``"penalty"`` (competition rules: a false
  win pays 10 to each other player and the offender may no longer win this hand; any other illegal action only
  loses the right to win; either way the offender must then choose again).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_WIN_FAN = 8
BASE_PAYMENT = 8
FALSE_WIN_PAYMENT = 10
ILLEGAL_LOSS, ILLEGAL_GAIN = -30, 10  # Botzone's penalty for an illegal move
HANDS_PER_MATCH = 16
ILLEGAL_MODES = ("terminate", "raise", "penalty")

#: ``SEATING[round, player] = chair`` (commentary 001 seat rotation)
SEATING = np.array([[0, 1, 2, 3], [1, 0, 3, 2], [3, 2, 0, 1], [2, 3, 1, 0]], dtype=np.int8)
SEATING.setflags(write=False)


@dataclass(frozen=True)
class RuleConfig:
    """Options of a table.

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
    """

    match: bool = False
    prevalent_wind: int = 0
    dealer: int = 0
    min_fan: int = MIN_WIN_FAN
    illegal: str = "terminate"

    def __post_init__(self) -> None:
        if not isinstance(self.match, bool):
            raise TypeError(f"match must be a bool, got {type(self.match).__name__}")
        for name in ("prevalent_wind", "dealer"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) <= 3:
                raise ValueError(f"{name} must be an int 0..3, got {v!r}")
        if isinstance(self.min_fan, bool) or not isinstance(self.min_fan, (int, np.integer)) or self.min_fan < 0:
            raise ValueError(f"min_fan must be a non-negative int, got {self.min_fan!r}")
        if self.illegal not in ILLEGAL_MODES:
            raise ValueError(f"illegal must be one of {ILLEGAL_MODES}, got {self.illegal!r}")

    @property
    def num_hands(self) -> int:
        """Hands per episode: 16 in a match, else 1."""
        return HANDS_PER_MATCH if self.match else 1

    def hand_setup(self, hand_index: int) -> tuple[int, int]:
        """``(prevalent_wind, dealer_chair)`` of hand ``hand_index`` of an episode."""
        if not 0 <= hand_index < self.num_hands:
            raise ValueError(f"hand_index must be 0..{self.num_hands - 1}, got {hand_index}")
        if not self.match:
            return int(self.prevalent_wind), int(self.dealer)
        return hand_index // 4, hand_index % 4


def chair_of_player(round_index: int, player: int) -> int:
    """Chair (engine seat) of player ``player`` in round ``round_index`` of a match (the seat rotation)."""
    if not 0 <= round_index < 4 or not 0 <= player < 4:
        raise ValueError(f"round_index and player must be 0..3, got {round_index}, {player}")
    return int(SEATING[round_index, player])


def payments(winner: int, loser: int, fan: int) -> np.ndarray:
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
            pay = BASE_PAYMENT + fan if loser in (-1, s) else BASE_PAYMENT
            out[s] -= pay
            out[winner] += pay
    return out
