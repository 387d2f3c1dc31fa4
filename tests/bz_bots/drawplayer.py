"""A Botzone bot (simple interaction) that plays the tile it draws and passes on everything else. Run with
keep-running (spec kind ``simple-keep``) it keeps running: after each answer it prints the keep-running marker and
reads the next request; its first input also carries the (empty) data and globaldata lines, which it skips."""

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
    while line and not line.strip():  # the data and globaldata lines of the first input
        line = sys.stdin.readline()
    if not line:
        break
    lines = [line.strip()]
