"""The lab probe of session 34: ``lab/probes/hybrid.py`` plays one chair by two agents, the claims (the rows
where passing is legal) by one and the turns by the other."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from lab.probes.hybrid import hybrid  # noqa: E402
from mjenv.actions import PASS  # noqa: E402


def test_claims_and_turns_go_to_their_agents():
    import agents.nn as ann
    import agents.rule as rule
    from mjenv.vector import VectorEnv

    env = VectorEnv(64, seed=12)
    env.reset()
    net, agent = ann.zoo(64, 0, "avg109-2026-12-06"), rule.make(64, 0)
    both = {c: hybrid(64, 0, claims=c) for c in ("rule", "nn")}
    windows = turns = 0
    for _ in range(120):
        window = env.masks[:, PASS]
        a_net, a_rule = net(env.obs, env.masks), agent(env.obs, env.masks)
        assert np.array_equal(both["rule"](env.obs, env.masks), np.where(window, a_rule, a_net))
        assert np.array_equal(both["nn"](env.obs, env.masks), np.where(window, a_net, a_rule))
        windows, turns = windows + int(window.sum()), turns + int((~window).sum())
        env.step(a_net)
    assert windows > 0 and turns > 0
    with pytest.raises(ValueError, match="claims"):
        hybrid(1, 0, claims="both")
