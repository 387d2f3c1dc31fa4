"""The on-disk kernel cache guard of ``mjenv._jit``: cached kernels are dropped when a kernel module changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mjenv import _jit


def _fake_cache(root):
    d = root / "__pycache__"
    d.mkdir(exist_ok=True)
    files = [d / "a.f-3.py311.nbi", d / "a.f-3.py311.1.nbc"]
    for f in files:
        f.write_bytes(b"x")
    return files


def test_drops_caches_only_when_a_kernel_module_changes(tmp_path):
    (tmp_path / "a.py").write_text("from mjenv._jit import njit\n")
    (tmp_path / "b.py").write_text("x = 1\n")  # not a kernel module
    files = _fake_cache(tmp_path)
    assert _jit.drop_stale_caches(tmp_path) == 2  # no stamp yet: caches of unknown age go
    assert not any(f.exists() for f in files)
    files = _fake_cache(tmp_path)
    assert _jit.drop_stale_caches(tmp_path) == 0  # unchanged sources: caches kept
    assert all(f.exists() for f in files)
    (tmp_path / "b.py").write_text("x = 22\n")
    assert _jit.drop_stale_caches(tmp_path) == 0  # a module without kernels does not count
    (tmp_path / "a.py").write_text("from mjenv._jit import njit\nY = 2\n")
    assert _jit.drop_stale_caches(tmp_path) == 2  # a kernel module changed: every cached kernel goes
    assert not any(f.exists() for f in files)


def test_modification_time_alone_changes_the_stamp(tmp_path):
    p = tmp_path / "a.py"
    p.write_text("from mjenv._jit import njit\n")
    before = _jit.source_stamp(tmp_path)
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert _jit.source_stamp(tmp_path) != before


def test_file_system_errors_are_not_raised(tmp_path):
    assert _jit.drop_stale_caches(tmp_path / "missing" / "pkg") == 0


def test_the_package_stamp_is_current():
    """Importing mjenv stored the stamp of the sources the running kernels come from."""
    marker = _jit._ROOT / "__pycache__" / _jit._STAMP
    if not os.access(_jit._ROOT, os.W_OK):
        pytest.skip("read-only install: numba's own cache behaviour applies, no stamp is written")
    if not _jit.CACHE:
        pytest.skip("MJENV_NO_CACHE is set: no on-disk cache, no stamp")
    assert marker.is_file(), f"importing mjenv wrote no stamp at {marker}"
    assert marker.read_text() == _jit.source_stamp()


def test_a_package_beside_mjenv_drops_its_caches_when_mjenv_changes(tmp_path, monkeypatch):
    """``agents``' kernels inline mjenv's (the own-view decoder, the shanten tables): a change of a kernel module
    of mjenv drops them as a change of their own does."""
    core, pkg = tmp_path / "core", tmp_path / "pkg"
    core.mkdir(), pkg.mkdir()
    (core / "k.py").write_text("from mjenv._jit import njit\n")
    (pkg / "a.py").write_text("from mjenv._jit import njit\n")
    monkeypatch.setattr(_jit, "_ROOT", core)
    monkeypatch.setattr(_jit, "CACHE", True)
    files = _fake_cache(pkg)
    assert _jit.guard_package_caches(pkg) == 2  # no stamp yet
    files = _fake_cache(pkg)
    assert _jit.guard_package_caches(pkg) == 0 and all(f.exists() for f in files)
    (core / "k.py").write_text("from mjenv._jit import njit\nY = 2\n")
    assert _jit.guard_package_caches(pkg) == 2 and not any(f.exists() for f in files)
    monkeypatch.setattr(_jit, "CACHE", False)
    _fake_cache(pkg)
    (pkg / "a.py").write_text("from mjenv._jit import njit\nZ = 3\n")
    assert _jit.guard_package_caches(pkg) == 0  # no on-disk cache in use: nothing to guard


def test_the_agents_stamp_is_current():
    """Importing agents stored the stamp of its kernel sources and mjenv's."""
    import agents

    root = Path(agents.__file__).resolve().parent
    if not _jit.CACHE or not os.access(root, os.W_OK):
        pytest.skip("no on-disk cache in use")
    stamp = (root / "__pycache__" / _jit._STAMP).read_text()
    assert stamp == f"{_jit.source_stamp(root)} {_jit.source_stamp()}"
