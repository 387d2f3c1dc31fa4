"""Seconds from starting a shell command to the first line of its output that contains a marker.

Used for the cold-start target (``pip install -e . && mjenv selfplay`` shows its first result in <= 60 s on
a fresh clone): the first result is the first progress line of ``mjenv selfplay`` with a decisions/s figure.

    git clone -q <repo-url> fc && cd fc
    python benchmarks/time_to_first.py "pip install -q -e . && mjenv selfplay --seconds 5" "decisions/s"

Prints ``FIRST <s> s  TOTAL <s> s  rc <exit code>`` (``FIRST None`` when the marker never appeared); the command's
stdout and stderr go to ``--log`` (default: discarded).
"""

from __future__ import annotations

import argparse
import os
import selectors
import subprocess
import sys
import time


def time_to_first(cmd: str, marker: str, log=None) -> tuple[float | None, float, int]:
    """Run ``cmd`` in bash; return (seconds to the first output chunk holding ``marker``, total seconds, exit code)."""
    if not marker:
        raise ValueError("marker must be a non-empty string")
    want = marker.encode()
    t0 = time.perf_counter()
    proc = subprocess.Popen(["bash", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    sel.register(proc.stderr, selectors.EVENT_READ)
    first, tail, open_streams = None, b"", 2
    while open_streams:
        for key, _ in sel.select():
            data = os.read(key.fileobj.fileno(), 65536)
            if not data:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            if log is not None:
                log.write(data)
            tail = (tail + data)[-(len(want) + 65536) :]  # a marker split over two reads is still found
            if first is None and want in tail:
                first = time.perf_counter() - t0
    rc = proc.wait()
    return first, time.perf_counter() - t0, rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", help="a bash command line")
    ap.add_argument("marker", help="text whose first appearance in the output is timed")
    ap.add_argument("--log", default=None, help="write the command's output to this file")
    args = ap.parse_args(argv)
    log = open(args.log, "wb") if args.log else None  # noqa: SIM115
    try:
        first, total, rc = time_to_first(args.command, args.marker, log)
    finally:
        if log is not None:
            log.close()
    print(f"FIRST {None if first is None else round(first, 1)} s  TOTAL {total:.1f} s  rc {rc}")
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
