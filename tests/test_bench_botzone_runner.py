"""The process-start floor of ``benchmarks.botzone_runner`` (the per-call cost before any judge replay) and its
``--real-judge`` path (a judge binary called once per round, its outputs compared with the log's)."""

import json
import shutil
import stat
import subprocess

import pytest

from benchmarks.botzone_runner import build_floor_program, process_start_per_call, real_judge_per_call

needs_cc = pytest.mark.skipif(
    not (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")), reason="no C compiler"
)


@needs_cc
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


def _stub_judge(tmp_path, answer: str):
    """A 'judge' that reads its request and prints ``answer`` (a shell script: no compiler needed)."""
    exe = tmp_path / "judge"
    exe.write_text(f"#!/bin/sh\ncat > /dev/null\necho '{answer}'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def test_real_judge_outputs_are_counted_against_the_log(tmp_path):
    out = {"command": "request", "content": {"0": "0 0 1"}}
    exe = _stub_judge(tmp_path, json.dumps(out))
    log = [{"output": out}, {"0": {"response": "PASS"}}, {"output": {**out, "command": "finish"}}]
    wall, cpu, same = real_judge_per_call(log, {"srand": 1}, exe)
    assert wall > 0 and cpu >= 0
    assert same == 1  # round 0 equals the log's entry, round 1 (log[2]) does not


def test_real_judge_that_answers_garbage_is_an_error(tmp_path):
    with pytest.raises(RuntimeError, match="garbage"):
        real_judge_per_call([{}, {}], {}, _stub_judge(tmp_path, "garbage"))
