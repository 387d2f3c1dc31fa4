"""The luck-adjusted evaluation (mjenv.arena.luck): corrections with mean exactly zero over every possible next
tile, unbiased adjusted means, the same report for every split of the walls, the CLI and the model files."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from mjenv import game as G
from mjenv.arena import luck as L
from mjenv.arena import mean_ci, run_arena
from mjenv.rules import RuleConfig

RULE = "agents.rule:make"
RANDOM = "agents.random:make"
VARIANTS = {
    "flowers": RuleConfig(),
    "no-flowers": RuleConfig(flowers=False),
    "botzone": RuleConfig.botzone(),
    "botzone-flowers": RuleConfig.botzone(flowers=True),
}


def _draw_position(pre: np.ndarray, post: np.ndarray) -> int:
    """The wall index the first draw of the step from ``pre`` to ``post`` read (-1: the step drew nothing)."""
    if pre[G.PRIVATE_WALLS]:
        part = G.wall_part_kernel(pre)
        for s in range(4):
            if post[G.PWALL + s] != pre[G.PWALL + s]:
                return part * s + int(pre[G.PWALL + s]) - 1
        return -1
    if post[G.FRONT] > pre[G.FRONT]:
        return int(pre[G.FRONT])
    if post[G.BACK] < pre[G.BACK]:
        return int(pre[G.BACK]) - 1
    return -1


def _remaining_positions(state: np.ndarray) -> list[int]:
    if state[G.PRIVATE_WALLS]:
        part = G.wall_part_kernel(state)
        return [part * s + i for s in range(4) for i in range(int(state[G.PWALL + s]))]
    return list(range(int(state[G.FRONT]), int(state[G.BACK])))


def _step_correction(adj: L.LuckAdjuster, pre: np.ndarray, action: int) -> tuple[np.ndarray, np.ndarray]:
    """The corrections the adjuster gives the step ``action`` from ``pre`` (and the state after it)."""
    rows = np.zeros(1, np.int64)
    states = pre[None].copy()
    adj.track(states, rows)
    adj.before_step(states, np.array([action]), rows)
    post = states.copy()
    assert G.step_kernel(post[0], action, np.zeros(4, np.float32), *G.win_tables()) == G.OK
    over = np.array([post[0, G.PHASE] == G.PH_OVER])
    ended = adj.after_step(post, rows, over, post[:, G.EVENTS], np.zeros(1, bool))
    return (ended[0] if over[0] else adj.corr[0].copy()), post[0]


def _expected_correction(adj, pre, action) -> np.ndarray:
    """``E[correction]`` of the step over every order of the tiles not yet taken that changes what it draws:
    every kind the first draw could take (weighted by its copies), and for a flower every replacement in turn."""
    c0, post0 = _step_correction(adj, pre, action)
    p = _draw_position(pre, post0)
    return c0 if p < 0 else _average_over_draw(adj, pre, action, p, set())


def _average_over_draw(adj, pre, action, p, taken) -> np.ndarray:
    """``E[correction]`` of the step from ``pre`` over the kinds of its draw at wall index ``p`` (from the
    tiles left but ``taken``, the flowers this step already drew); a flower there is followed by its replacement,
    averaged in turn at the replacement's position (the back of the shared wall, or the next tile of the
    drawer's own part)."""
    positions = [q for q in _remaining_positions(pre) if q not in taken]
    kinds: dict[int, list[int]] = {}
    for q in positions:
        kinds.setdefault(int(pre[G.WALL + q]), []).append(q)
    total = np.zeros(4)
    for t, qs in kinds.items():
        s = pre.copy()
        q = qs[0]
        s[G.WALL + p], s[G.WALL + q] = s[G.WALL + q], s[G.WALL + p]
        prob = len(qs) / len(positions)
        left = [q for q in positions if q != p]
        if pre[G.PRIVATE_WALLS]:
            p2 = p - 1 if p % G.wall_part_kernel(pre) > 0 else -1
        else:
            p2 = max(left, default=-1)
        if t >= 34 and p2 in left:  # a flower, and a tile left to replace it
            total += prob * _average_over_draw(adj, s, action, p2, taken | {p})
        else:  # a normal tile, or a flower that ended the wall: the step as it stands
            c, _ = _step_correction(adj, s, action)
            total += prob * c
    return total


def _positions(rules: RuleConfig, seed: int, n: int):
    """``n`` (state, action) pairs just before a step that draws, from hands of random legal play."""
    rng = np.random.default_rng(seed)
    out = []
    tabs = G.win_tables()
    while len(out) < n:
        st = G.new_state()
        G.reset(st, int(rng.integers(1 << 40)), int(rng.integers(4)), int(rng.integers(4)), rules)
        stop = int(rng.integers(2, 60))
        for k in range(200):
            if st[G.PHASE] == G.PH_OVER:
                break
            legal = np.flatnonzero(G.legal_mask(st, int(st[G.CUR])))
            a = int(rng.choice(legal))
            probe = st.copy()
            G.step_kernel(probe, a, np.zeros(4, np.float32), *tabs)
            if k >= stop and _draw_position(st, probe) >= 0:
                # with flowers, few enough flowers left to enumerate every order of them
                left = [int(st[G.WALL + q]) for q in _remaining_positions(st)]
                if sum(t >= 34 for t in left) <= 3:
                    out.append((st.copy(), a))
                    break
            G.step_kernel(st, a, np.zeros(4, np.float32), *tabs)
    return out


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_corrections_average_to_zero_over_every_next_tile(variant):
    """For mid-hand states of every variant, the step's correction averaged over every tile the draw could
    have taken (flowers and their replacements enumerated too) is zero, for every seat, to rounding."""
    rules = VARIANTS[variant]
    adj = L.LuckAdjuster(L.random_model(3, 5.0), 1)
    saw_flower = False
    corrected = 0
    for pre, action in _positions(rules, 11 + len(variant), 8):
        left = [int(pre[G.WALL + q]) for q in _remaining_positions(pre)]
        saw_flower |= any(t >= 34 for t in left)
        e = _expected_correction(adj, pre, action)
        assert np.abs(e).max() < 1e-9, (variant, e)
        c, _ = _step_correction(adj, pre, action)
        corrected += int(np.abs(c).max() > 0)
    # the corrections are not all zero (the test could otherwise pass by doing nothing); a draw whose every
    # outcome the model scores alike (a hand far from waiting, no wait of anyone's among the tiles) gets none
    assert corrected >= 3
    if rules.flowers:
        assert saw_flower


def test_corrections_at_the_end_of_the_wall_with_flowers():
    """Steps near the end of walls that hold their flowers there: every such step's correction averages to zero
    over the orders of the last tiles, the steps that meet flowers as the wall runs out and end the hand (the
    adjuster replays them from its copy of the table) included."""
    rng = np.random.default_rng(5)
    tabs = G.win_tables()
    adj = L.LuckAdjuster(L.random_model(4, 5.0), 1)
    checked = ended_on_flower = 0
    for _ in range(300):
        wall = rng.permutation(np.repeat(np.arange(34), 4))
        wall = np.concatenate([wall[:134], np.arange(34, 42), wall[134:]])  # the flowers at 134..141 of 144
        st = G.new_state()
        G.reset_wall(st, wall, 0, 0, RuleConfig())
        while st[G.PHASE] != G.PH_OVER:
            left = [int(st[G.WALL + q]) for q in _remaining_positions(st)]
            legal = np.flatnonzero(G.legal_mask(st, int(st[G.CUR])))
            a = int(rng.choice(legal))
            if len(left) <= 8 and any(t >= 34 for t in left):
                probe = st.copy()
                G.step_kernel(probe, a, np.zeros(4, np.float32), *tabs)
                if _draw_position(st, probe) >= 0:
                    e = _expected_correction(adj, st, a)
                    assert np.abs(e).max() < 1e-9, e
                    checked += 1
                    # the hand ended on flowers: every tile left was a flower (a normal tile would have been
                    # drawn), the outcomes the model cannot tell apart, so the replayed step's correction is 0
                    ended_on_flower += int(probe[G.PHASE] == G.PH_OVER)
            G.step_kernel(st, a, np.zeros(4, np.float32), *tabs)
        if checked >= 12 and ended_on_flower >= 2:
            break
    assert checked >= 12 and ended_on_flower >= 2, (checked, ended_on_flower)


def test_constant_model_gives_the_raw_scores():
    rep = run_arena({"rule": RULE, "random": RANDOM}, walls=6, seed=3, progress=False, adjust=L.constant())
    for a in rep["agents"].values():
        assert a["adjusted"]["points_per_hand"] == a["points_per_hand"]
        assert a["adjusted"]["variance_ratio"] == pytest.approx(1.0)
        assert a["adjusted"]["equivalent_walls"] == pytest.approx(6.0)


@pytest.mark.parametrize("model", ["random", "shipped"])
def test_adjusted_mean_agrees_with_the_raw_mean(model):
    """A deliberately bad value function (random weights) and the shipped one: the mean of raw minus adjusted
    per wall has a 95% CI that covers 0 (the corrections have mean zero), on 150 walls."""
    m = L.random_model(7, 2.0) if model == "random" else L.shipped()
    from dataclasses import replace

    from mjenv.arena import play_shard
    from mjenv.arena.play import run_arena_setup

    setup = run_arena_setup({"rule": RULE, "rule2": RULE}, "1v3", 150, 21)
    setup = replace(setup, luck=m)
    out = play_shard(setup, 0, setup.schedule.n_jobs)
    d = (out.scores - out.adjusted).reshape(150, 4, 4).mean(axis=(1, 2))
    assert np.abs(d).max() > 0
    ci = mean_ci(d)["ci95"]
    assert ci[0] <= 0.0 <= ci[1], ci


def test_report_is_the_same_for_every_split():
    kw = dict(agents={"rule": RULE, "random": RANDOM}, walls=8, seed=5, progress=False, adjust="shipped")
    a = run_arena(**kw, tables=7)
    b = run_arena(**kw, tables=64, shards=3)
    for nm in a["agents"]:
        assert a["agents"][nm]["adjusted"] == b["agents"][nm]["adjusted"]
    assert a["differences"][0]["adjusted"] == b["differences"][0]["adjusted"]
    assert a["settings"]["adjust"]["name"] == L.shipped().name
    assert "rule (adjusted)" in a["convergence"]["half_width"]


@pytest.mark.parametrize("variant", ["botzone", "no-flowers"])
def test_variants_report_adjusted_figures(variant):
    rep = run_arena({"rule": RULE, "random": RANDOM}, walls=5, seed=9, progress=False, rules=VARIANTS[variant],
                    adjust=True)  # fmt: skip
    adj = rep["agents"]["rule"]["adjusted"]
    assert np.isfinite(adj["points_per_hand"]["mean"]) and adj["variance_ratio"] > 0


def test_model_files_and_specs(tmp_path):
    m = L.random_model(1, 1.0, deals=3)
    path = tmp_path / "m.npz"
    L.save(m, path)
    back = L.load(path)
    assert np.array_equal(back.weights, m.weights) and back.deals == 3 and back.meta == m.meta
    assert L.resolve_model(str(path)).deals == 3
    assert L.resolve_model("mjenv.arena.luck:constant").name == "constant"
    shipped = L.shipped()
    for key in ("command", "commit", "date", "games", "training_seeds"):
        assert key in shipped.meta
    assert all(g["seed"] in range(7_000_000, 8_000_000) for g in shipped.meta["games"])
    with pytest.raises(ValueError, match="shape"):
        L.LuckModel(np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        L.LuckModel(np.full(L.N_PARAMS, np.nan))
    with pytest.raises(ValueError, match="deals"):
        L.LuckModel(np.zeros(L.N_PARAMS), -1)
    with pytest.raises(ValueError, match="no value model"):
        L.resolve_model(str(tmp_path / "missing.npz"))
    with pytest.raises(ValueError, match="import"):
        L.resolve_model("no_such_module_xyz:make")
    with pytest.raises(TypeError, match="LuckModel"):
        L.resolve_model("builtins:dict")
    bad = tmp_path / "bad.npz"
    np.savez(
        bad, weights=np.zeros(3), deals=np.int64(1), meta=np.frombuffer(b"{}", np.uint8), n_params=np.int64(3)
    )
    with pytest.raises(ValueError, match="weights"):
        L.load(bad)


def test_fit_recovers_the_best_control_variate():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(3000, 4, L.N_PARAMS)).astype(np.float32)
    w = rng.normal(size=L.N_PARAMS)
    y = np.einsum("hjp,p->hj", z.astype(np.float64), w) + rng.normal(scale=0.1, size=(3000, 4))
    got = L.fit(z, y, ridge=1e-9)
    assert np.abs(got - w).max() < 0.05
    with pytest.raises(ValueError, match="seat-hands"):
        L.fit(z, y[:10])


def test_cli_adjust(tmp_path):
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "mjenv", "eval", "--agent", f"rule={RULE}", "--agent", f"random={RANDOM}",
           "--walls", "4", "--no-progress", "--adjust", "--json", str(out)]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "luck-adjusted" in r.stdout and "equivalent walls" in r.stdout
    rep = json.loads(out.read_text())
    entry = rep["agents"]["rule"]["adjusted"]
    assert set(entry) == {"points_per_hand", "variance_ratio", "equivalent_walls"}
    assert rep["agents"]["rule"]["points_per_hand"]["n"] == 4
    r = subprocess.run(
        cmd[:-3] + ["--adjust-value", str(tmp_path / "nope.npz")], capture_output=True, text=True
    )
    assert r.returncode != 0 and "no value model" in r.stderr
    r = subprocess.run(cmd[:-2] + ["--match"], capture_output=True, text=True)
    assert r.returncode != 0 and "--adjust" in r.stderr


def test_training_command_tiny(tmp_path):
    """``python -m train.luck_value`` on one wall per game: writes a model with its metadata, resumes from
    its work folder, and refuses seeds outside the reserved range."""
    from train import luck_value as LV

    cfg = LV.LuckValueConfig(walls=1, out=str(tmp_path / "v.npz"), work_dir=str(tmp_path / "w"), threads=1,
                             tables=8, deals=2)  # fmt: skip
    m = LV.run(cfg)
    back = L.load(tmp_path / "v.npz")
    assert np.array_equal(back.weights, m.weights) and back.deals == 2
    assert [g["game"] for g in back.meta["games"]] == [g[0] for g in LV.GAMES]
    assert len(list((tmp_path / "w").glob("*.npz"))) == len(LV.GAMES)
    again = LV.run(cfg)  # every game read back: the same fit
    assert np.array_equal(again.weights, m.weights)
    with pytest.raises(ValueError, match="training range"):
        LV.run(LV.LuckValueConfig(seed=20261207, walls=1, out=str(tmp_path / "x.npz")))


@pytest.mark.parametrize("seating", ["2v2", "perm24"])
def test_every_seating(seating):
    agents = {"rule": RULE, "random": RANDOM} if seating == "2v2" else {f"r{k}": RULE for k in range(4)}
    rep = run_arena(agents, seating, walls=3, seed=2, progress=False, adjust=True, records=2)
    for a in rep["agents"].values():
        assert "adjusted" in a
    assert len(rep["records"]) == 2


def test_no_alternative_deals_means_no_deal_correction():
    """``deals=0`` drops the deal's correction altogether (its value without an expectation would not have mean
    zero); with a model of zeros but for the deal-only weights, nothing is corrected then."""
    w = np.zeros(L.N_PARAMS)
    # the one-hot of a waiting seat's shanten: only the deal's states score it (a draw scores the drawer)
    w[L.F_H13 : L.F_H13 + L.SH13 * L.NLB] = np.repeat(np.arange(L.SH13, dtype=np.float64), L.NLB)
    m0 = L.LuckModel(w, 0)
    rep = run_arena({"rule": RULE, "random": RANDOM}, walls=4, seed=8, progress=False, adjust=m0)
    a = rep["agents"]["rule"]
    assert a["adjusted"]["points_per_hand"] == a["points_per_hand"]
    rep = run_arena(
        {"rule": RULE, "random": RANDOM}, walls=4, seed=8, progress=False, adjust=L.LuckModel(w, 4)
    )
    a = rep["agents"]["rule"]
    assert a["adjusted"]["points_per_hand"] != a["points_per_hand"]
