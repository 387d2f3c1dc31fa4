"""Human logs as training data (mjenv.botzone.dataset): labels legal, observations equal to the engine's, outvoted
claims as labels, bad input."""

import gzip

import numpy as np
import pytest

from mjenv import actions as A
from mjenv import game as G
from mjenv.botzone import dataset as D
from mjenv.botzone import humanlog as H
from mjenv.observation import OBS_SIZE, observe_kernel
from tests._corpus import CORPUS
from tests._corpus import records as corpus_records


def _unpack(m):
    return np.unpackbits(m, axis=-1, count=A.NUM_ACTIONS).astype(bool)


def _direct(r, k, forced=False):
    """(seat, obs, mask, action) of every decision of round ``r`` by humanlog.replay_round's own event walk."""
    out = []

    def hook(st, seat, action):
        mask = np.zeros(A.NUM_ACTIONS, np.bool_)
        n = G.legal_mask_kernel(st, seat, mask)
        if forced or n > 1:
            ob = np.zeros(OBS_SIZE, np.uint8)
            observe_kernel(st, seat, ob)
            out.append((seat, ob, mask, action))

    H.replay_round(r, k, hook=hook)
    return out


def _check_rows(d, rows, sel):
    assert len(rows) == sel.size
    for j, (seat, ob, mask, action) in zip(sel, rows):
        assert d["seats"][j] == seat and d["actions"][j] == action
        assert np.array_equal(d["obs"][j], ob)
        assert np.array_equal(_unpack(d["masks"][j]), mask)


def _legal_and_typed(d):
    m = _unpack(d["masks"])
    assert m[np.arange(m.shape[0]), d["actions"]].all()
    assert np.array_equal(d["types"], D.decision_types(d["actions"]))


@pytest.mark.skipif(not CORPUS.exists(), reason="shared Botzone corpus not present")
def test_corpus_labels_legal_observations_equal_outvoted_claims():
    recs = corpus_records(CORPUS)
    d = D.build_dataset(recs, on_error="skip")
    assert len(d["skipped"]) == 39 and all("flowers" in msg for _, _, msg in d["skipped"])
    assert d["obs"].dtype == np.uint8 and d["obs"].shape == (d["actions"].size, OBS_SIZE)
    assert d["masks"].shape == (d["actions"].size, 14)
    _legal_and_typed(d)
    assert (_unpack(d["masks"]).sum(1) > 1).all()  # forced decisions left out
    assert np.array_equal(d["round_scores"], d["log_scores"])
    # every outvoted claim (bots' claims the judge did not take) is a label of its player
    parsed = []
    for r in recs:
        try:
            parsed.extend(H.parse_json(r))
        except ValueError:
            pass
    parsed = [r for r in parsed if r["deals"] is not None]
    assert [r["match"] for r in parsed] == list(d["matches"])
    n_ign = sum(len(e[4]) for r in parsed for e in r["events"])
    assert n_ign > 20 and d["outvoted"].sum() == n_ign
    ov = d["actions"][d["outvoted"]]
    assert ((ov >= A.CHOW) & (ov <= A.WIN)).all()
    # the observations, masks and labels of 40 rounds equal a direct replay (humanlog's own event walk)
    for k in range(0, len(parsed), len(parsed) // 40):
        _check_rows(d, _direct(parsed[k], k), np.flatnonzero(d["round"] == k))


def _games(seed, n):
    """Engine games with eager claims; each decision's (seat, obs, mask, action) as the engine showed it."""
    rng = np.random.default_rng(seed)
    seen = []

    def pol(st, s, m):
        ids = np.flatnonzero(m)
        claims = [a for a in ids if A.CHOW <= a <= A.WIN]
        a = (
            A.WIN
            if m[A.WIN]
            else (int(rng.choice(claims)) if claims and rng.random() < 0.7 else int(rng.choice(ids)))
        )
        if ids.size > 1:
            ob = np.zeros(OBS_SIZE, np.uint8)
            observe_kernel(st, s, ob)
            seen[-1].append((s, ob, m.copy(), a))
        return a

    rounds = []
    for g in range(n):
        seen.append([])
        w = np.repeat(np.arange(34), 4)
        rng.shuffle(w)
        rounds.append(H.record_round(w, g % 4, pol, f"m{g}"))
    return rounds, seen


def test_exported_engine_games_equal_what_the_engine_showed():
    rounds, seen = _games(3, 30)
    text = H.export_text(rounds)
    d = D.build_dataset(text)
    _legal_and_typed(d)
    assert list(d["matches"]) == [f"m{g}" for g in range(30)]
    for g in range(30):
        _check_rows(d, seen[g], np.flatnonzero(d["round"] == g))
    n_ign = text.count(" Ignore ")
    assert n_ign > 0 and d["outvoted"].sum() == n_ign
    assert np.array_equal(d["round_scores"], np.array([r["scores"] for r in rounds]))
    # forced=True keeps the single-action decisions too (the direct replay agrees)
    f = D.build_dataset(text, forced=True)
    assert f["actions"].size > d["actions"].size
    parsed = H.parse_text(text)
    _check_rows(f, _direct(parsed[5], 5, forced=True), np.flatnonzero(f["round"] == 5))
    # a list of sources is the concatenation; a small chunk size changes nothing
    two = D.build_dataset([text, text], chunk_rows=1024)
    assert two["actions"].size == 2 * d["actions"].size
    assert np.array_equal(two["obs"][: d["actions"].size], d["obs"])


def test_bad_input_clear_errors(tmp_path):
    rounds, _ = _games(4, 3)
    text = H.export_text(rounds)
    with pytest.raises(TypeError, match="corpus must be"):
        D.build_dataset(42)
    with pytest.raises(ValueError, match="on_error"):
        D.build_dataset(text, on_error="ignore")
    with pytest.raises(TypeError, match="forced"):
        D.build_dataset(text, forced=1)
    with pytest.raises(ValueError, match="malformed JSON"):
        D.build_dataset("{not json")
    # an illegal action: the error names the round and the line; "skip" leaves that round out
    lines = text.splitlines()
    i = next(j for j, s in enumerate(lines) if " Play " in s)
    p, t = lines[i].split()[1], lines[i].split()[3]
    hand = lines[2 + int(p)]
    bad_tile = next(c for c in ("W1", "T5", "B9", "F1", "J3", "W7") if c not in hand and c != t)
    bad = "\n".join(lines[:i] + [f"Player {p} Play {bad_tile}"] + lines[i + 1 :])
    with pytest.raises(ValueError, match=r"round 0 \(match m0\) line \d+: illegal action"):
        D.build_dataset(bad)
    s = D.build_dataset(bad, on_error="skip")
    assert list(s["matches"]) == ["m1", "m2"] and len(s["skipped"]) == 1
    assert s["skipped"][0][1] == "m0" and "illegal" in s["skipped"][0][2]
    assert set(np.unique(s["round"])) == {0, 1}
    # load_corpus: text, JSON lines (gz), missing files
    (tmp_path / "a.txt").write_text(text)
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as f:
        f.write('{"log": []}\n')
    assert D.load_corpus(tmp_path / "a.txt") == [text]
    with pytest.raises(ValueError, match="finish"):
        D.build_dataset(D.load_corpus(tmp_path / "b.jsonl.gz"))
    with pytest.raises(FileNotFoundError, match="no file"):
        D.load_corpus(tmp_path / "c.txt")


def test_decision_types_match_train_bc_and_bc_fits(tmp_path):
    bc = pytest.importorskip("train.bc")
    a = np.arange(A.NUM_ACTIONS)
    assert np.array_equal(D.decision_types(a), bc.decision_types(a))
    assert D.TYPE_NAMES == bc.TYPE_NAMES
    rounds, _ = _games(5, 6)
    (tmp_path / "h.txt").write_text(H.export_text(rounds))
    cfg = bc.BCConfig(out=str(tmp_path / "p.safetensors"), botzone_logs=(str(tmp_path / "h.txt"),),
                      data=str(tmp_path / "d.npz"), epochs=1, channels=4, hidden=16, progress=False)  # fmt: skip
    rep = bc.run(cfg)
    assert rep["source"]["rounds"] == 6 and rep["decisions"] > 50
    assert (tmp_path / "p.safetensors").is_file()
    data = bc.load_dataset(tmp_path / "d.npz")
    assert data["obs"].dtype == np.uint8 and data["masks"].shape[1] == 14
    with pytest.raises(ValueError, match="not both"):
        bc.check_config(
            bc.BCConfig(records=(str(tmp_path / "h.txt"),), botzone_logs=(str(tmp_path / "h.txt"),))
        )
