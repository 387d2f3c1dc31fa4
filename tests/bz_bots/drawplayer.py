"""A Botzone bot (simple interaction, keep-running) that plays the tile it draws and passes on everything else."""

import sys


def answer(request: str) -> str:
    w = request.split()
    return f"PLAY {w[1]}" if w and w[0] == "2" else "PASS"


first = sys.stdin.readline()
lines = [sys.stdin.readline().strip() for _ in range(2 * int(first) - 1)]
while True:
    print(answer(lines[-1]))
    print(">>>BOTZONE_REQUEST_KEEP_RUNNING<<<", flush=True)
    line = sys.stdin.readline()
    if not line:
        break
    lines = [line.strip()]
