"""The lab probes of session 35: ``lab/probes/override.py`` (one kind of decision handed to the rule agent)
and ``lab/probes/wait_value.py`` (the screen of the wait check that ``agents.waits`` ships)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from lab.probes import override as ov  # noqa: E402
from lab.probes import wait_value as wv  # noqa: E402

SEVEN = ("win", "chow", "pung", "kong_turn", "tenpai", "near", "far")


def _play(steps: int, n: int = 48):
    import agents.nn as ann
    from mjenv.vector import VectorEnv

    env = VectorEnv(n, seed=36)
    env.reset()
    net = ann.zoo(n, 0, "avg109-2026-12-06")
    for _ in range(steps):
        yield env.obs.copy(), env.masks.copy()
        env.step(net(env.obs, env.masks))


def test_override_hands_its_kind_to_the_rule_agent():
    import agents.nn as ann
    import agents.rule as rule

    net, agent = ann.zoo(32, 0, "avg109-2026-12-06"), rule.make(32, 0)
    kinds = {k: ov.override(32, 0, kind=k) for k in ("tenpai", "chow", "kong_turn")}
    counts = dict.fromkeys(kinds, 0)
    for obs, masks in _play(80, 32):
        a_net, a_rule = net(obs, masks), agent(obs, masks)
        for k, pol in kinds.items():
            rows = ov.kind_rows(obs, masks, k)
            assert np.array_equal(pol(obs, masks), np.where(rows, a_rule, a_net))
            counts[k] += int(rows.sum())
        cover = sum(ov.kind_rows(obs, masks, k).astype(int) for k in SEVEN)
        assert (cover == 1).all()  # the seven kinds partition the decisions
    assert all(c > 0 for c in counts.values())
    with pytest.raises(ValueError, match="unknown kind"):
        ov.override(1, 0, kind="defence")
    with pytest.raises(ValueError, match="late"):
        ov.override(1, 0, kind="far_late", late=-1)


def test_the_screen_plays_as_the_shipped_check():
    """``wait_value`` without ``keep`` is ``agents.nn:make(waits=...)`` with the same settings; ``keep`` also moves
    a discard that leaves no waiting hand to the best live wait."""
    import agents.nn as ann
    from agents import waits as W

    lab = wv.wait_value(32, 0, margin=0.5, near=0.5)
    lab_keep = wv.wait_value(32, 0, margin=0.5, keep=True)
    shipped = ann.make(
        32, 0, checkpoint=ann.zoo_path("avg109-2026-12-06"), greedy=True, waits={"margin": 0.5, "near": 0.5}
    )
    kept = 0
    for obs, masks in _play(60, 32):
        np.testing.assert_array_equal(lab(obs, masks), shipped(obs, masks))
        vals = W.discard_values(obs, masks)
        # rows with a live wait on offer and a legal discard that leaves none: play that one, keep moves it
        legal = masks[:, : vals.shape[1]]
        rows = np.flatnonzero((vals.max(axis=1) > 0) & (legal & (vals < 0)).any(axis=1))
        actions = np.zeros(obs.shape[0], np.int64) + vals.shape[1]  # not a discard: never moved
        actions[rows] = (legal & (vals < 0))[rows].argmax(axis=1)
        moved = lab_keep._override(actions, vals, 0.5, True)
        np.testing.assert_array_equal(np.sort(moved), rows)
        np.testing.assert_array_equal(actions[rows], vals[rows].argmax(axis=1))
        kept += rows.size
    assert kept > 0
    with pytest.raises(ValueError, match="keep"):
        wv.wait_value(1, 0, keep=1)
