"""The process-start floor of ``benchmarks.botzone_runner`` (the per-call cost before any judge replay)."""

import json
import shutil
import stat
import subprocess

import pytest

from benchmarks.botzone_runner import build_floor_program, process_start_per_call

pytestmark = pytest.mark.skipif(
    not (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")), reason="no C compiler"
)


def test_floor_program_reads_every_request(tmp_path):
    exe = build_floor_program(tmp_path)
    assert exe is not None and exe.is_file()
    log = [{"output": {"content": {"0": "x" * 5000}}}, {"0": {"response": "PASS"}}] * 40
    assert process_start_per_call(log, {"srand": 1}, exe) > 0
    request = json.dumps({"log": log, "initdata": {}}).encode()
    out = subprocess.run([str(exe)], input=request, capture_output=True, check=True).stdout
    assert json.loads(out) == {"command": "request", "bytes": len(request)}


def test_floor_rejects_a_program_that_answers_garbage(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("#!/bin/sh\ncat > /dev/null\necho garbage\n")
    bad.chmod(bad.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(RuntimeError, match="garbage"):
        process_start_per_call([{}, {}], {}, bad)
