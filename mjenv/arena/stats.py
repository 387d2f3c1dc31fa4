"""Statistics of the arena's report: Student's t (tail and quantile, from the regularized incomplete beta), the
mean of per-wall samples with its t-interval and p-value, and placements.

The t functions are written out here (a few lines, checked against scipy in ``tests/test_arena.py``) because
scipy is not a dependency of mjenv.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_sf2(t: float, df: float) -> float:
    """Two-sided tail ``P(|T| >= |t|)`` of Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return _betainc(df / 2.0, 0.5, df / (df + t * t))


def t_ppf(q: float, df: float) -> float:
    """Quantile of Student's t (``q`` in (0.5, 1)), by bisection of :func:`t_sf2` (to ~1e-12).

    >>> round(t_ppf(0.975, 10), 6), round(t_ppf(0.975, 1e9), 4)
    (2.228139, 1.96)
    """
    if not 0.5 < q < 1.0 or df <= 0:
        raise ValueError(f"t_ppf needs 0.5 < q < 1 and df > 0, got q={q}, df={df}")
    target = 2.0 * (1.0 - q)
    lo, hi = 0.0, 1.0
    while t_sf2(hi, df) > target:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_sf2(mid, df) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def mean_ci(x: np.ndarray, level: float = 0.95) -> dict[str, Any]:
    """Mean of the per-wall samples ``x`` with its t-interval: ``{"mean", "ci95", "sd", "se", "n", "p"}``.

    ``ci95`` is ``mean -+ t_{(1+level)/2, n-1} * sd / sqrt(n)`` (``None`` with fewer than two walls); ``p`` is
    the two-sided p-value of ``mean == 0`` (1 when every sample is 0).
    """
    x = np.asarray(x, np.float64)
    n = int(x.size)
    m = float(x.mean()) if n else float("nan")
    if n < 2:
        return {"mean": m, "ci95": None, "sd": None, "se": None, "n": n, "p": None}
    sd = float(x.std(ddof=1))
    se = sd / math.sqrt(n)
    half = t_ppf(0.5 + level / 2.0, n - 1) * se
    if se > 0:
        p = t_sf2(m / se, n - 1)
    else:
        p = 1.0 if m == 0 else 0.0
    return {"mean": m, "ci95": [m - half, m + half], "sd": sd, "se": se, "n": n, "p": p}


def ranks(totals: np.ndarray) -> np.ndarray:
    """Placement 1..4 (1 = highest) of each player per row of ``totals`` ``[W, 4]``; ties share the mean."""
    gt = (totals[:, None, :] > totals[:, :, None]).sum(axis=2)  # players above
    eq = (totals[:, None, :] == totals[:, :, None]).sum(axis=2) - 1  # others level
    return 1.0 + gt + eq / 2.0
