"""mjenv.rng: the one splitmix64 of mjenv, for kernels and for numpy arrays."""

import numpy as np

from mjenv.rng import GOLDEN, splitmix64, splitmix64_mix


def test_reference_stream():
    # the first outputs of splitmix64 seeded with 0 and with 1234567 (the reference C code of Vigna's splitmix64.c)
    ks = np.arange(1, 4, dtype=np.uint64)
    assert [hex(int(v)) for v in splitmix64(ks * GOLDEN)] == [
        "0xe220a8397b1dcdaf",
        "0x6e789e6aa1b965f4",
        "0x6c45d188009454f",
    ]
    assert hex(int(splitmix64(np.uint64(1234567) + GOLDEN)[0])) == "0x599ed017fb08fc85"


def test_kernel_and_array_forms_agree():
    x = np.random.default_rng(0).integers(0, 2**63, 1000, dtype=np.uint64) * np.uint64(2)
    out = splitmix64(x)
    assert out.dtype == np.uint64 and out.shape == x.shape
    assert all(int(splitmix64_mix(v)) == int(o) for v, o in zip(x[:50], out[:50], strict=True))
