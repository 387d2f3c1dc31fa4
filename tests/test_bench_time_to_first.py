"""benchmarks/time_to_first.py: the time to a marker in a command's output (the cold start's first-result figure)."""

from __future__ import annotations

import io

import pytest

from benchmarks.time_to_first import time_to_first


def test_times_the_first_appearance_of_the_marker_on_either_stream():
    log = io.BytesIO()
    first, total, rc = time_to_first(
        "echo start; sleep 0.3; echo '12 decisions/s' >&2; sleep 0.3", "decisions/s", log
    )
    assert rc == 0
    assert first is not None and 0.25 <= first < total
    assert total >= 0.55
    assert b"start" in log.getvalue() and b"12 decisions/s" in log.getvalue()


def test_marker_never_shown_and_exit_code():
    first, _total, rc = time_to_first("echo nothing here; exit 3", "decisions/s")
    assert first is None and rc == 3


def test_empty_marker_is_an_error():
    with pytest.raises(ValueError, match="marker"):
        time_to_first("true", "")
