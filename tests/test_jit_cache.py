"""The on-disk kernel cache guard of ``mjenv._jit``: cached kernels are dropped when a kernel module changes."""

from __future__ import annotations

import os

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
