"""The compact uint8 observations of the VectorEnv equal the float32 ones once decoded."""

import numpy as np
import pytest

from mjenv import observation as O
from mjenv.policy import random_legal_actions
from mjenv.vector import VectorEnv


def _pair(n=32, seed=3):
    f = VectorEnv(n, seed=seed, threads=1)
    u = VectorEnv(n, seed=seed, threads=1, obs_dtype=np.uint8)
    return f, u


def test_uint8_equals_float32_decoded():
    f, u = _pair()
    of, mf, _ = f.reset()
    ou, mu, _ = u.reset()
    assert ou.dtype == np.uint8 and ou.shape == of.shape
    rng = np.random.default_rng(0)
    claimed = 0
    for _ in range(400):
        assert np.array_equal(O.decode(ou), of)
        assert np.array_equal(mf, mu)
        claimed += int((O.views(ou)["discard_seq"] < 0).sum())
        a = random_legal_actions(mf, rng)
        of, mf, *_ = f.step(a)
        ou, mu, *_ = u.step(a)
    assert claimed > 0  # the negative (claimed) discards were exercised
    # views give the same values for both dtypes (discard_seq read as int8, a view)
    vf, vu = O.views(of), O.views(ou)
    for name in vf:
        assert np.array_equal(vf[name], vu[name].astype(np.float32)), name
    assert np.shares_memory(vu["discard_seq"], ou)


def test_uint8_zero_copy_torch():
    torch = pytest.importorskip("torch")
    _, u = _pair(4)
    _ou, *_ = u.reset()
    t = torch.from_numpy(u.obs)
    assert t.dtype == torch.uint8 and t.data_ptr() == u.obs.ctypes.data


def test_bad_obs_dtype():
    with pytest.raises(ValueError, match="float32 or uint8"):
        VectorEnv(2, obs_dtype=np.int16)
    with pytest.raises(TypeError, match="obs_dtype"):
        VectorEnv(2, obs_dtype="nonsense")
    with pytest.raises(ValueError, match="float32 or uint8"):
        O.decode(np.zeros(O.OBS_SIZE, np.int32))
