"""Thread settings shared by the adapters whose libraries run torch beside mjenv's Numba kernels."""

from __future__ import annotations


def keep_torch_threads() -> None:
    """Start numba's threading layer now and keep torch's thread count as it is.

    numba's OpenMP layer, when it starts (the vector env's first step), sets OpenMP's thread count to the core
    count, and torch reads the same libgomp: a count the user set (``torch.set_num_threads(1)``) would be
    silently replaced, and small torch ops across threads that wait passively (mjenv.vector sets
    ``OMP_WAIT_POLICY=PASSIVE``) ran 10-100x slower on a loaded 2-core machine. (``agents.nn.set_torch_threads``
    is the same fix for mjenv's own trainer.)
    """
    import numba
    import torch

    n = torch.get_num_threads()
    numba.get_num_threads()  # starts the threading layer (a no-op once started)
    torch.set_num_threads(n)
