"""A Botzone bot (simple interaction, one process per turn) that always answers PASS, or plays its draw."""

import sys

n = int(sys.stdin.readline())
lines = [sys.stdin.readline().strip() for _ in range(2 * n - 1)]
req = lines[-1].split()
print(f"PLAY {req[1]}" if req[0] == "2" else "PASS")
