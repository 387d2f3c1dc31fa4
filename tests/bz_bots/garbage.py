"""A Botzone bot (keep-running, spec kind ``simple-keep``) that answers PASS, then garbage on its third turn."""

import sys

n = 0
for line in sys.stdin:
    if not line.strip():  # the data and globaldata lines of the first input
        continue
    if line.strip().isdigit():
        for _ in range(2 * int(line) - 1):
            sys.stdin.readline()
    n += 1
    print("PASS" if n < 3 else "\x01 garbage ~~ {{{")
    print(">>>BOTZONE_REQUEST_KEEP_RUNNING<<<", flush=True)
