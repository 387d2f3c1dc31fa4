"""A Botzone bot (JSON interaction, keep-running: spec kind ``json-keep``) that prints its answers as styled,
multi-line JSON (as jsoncpp's ``cout << value`` does), plays the tile it draws and passes on everything else."""

import json
import sys

line = sys.stdin.readline()
while line:
    if line.strip():
        inp = json.loads(line)
        req = inp["requests"][-1] if isinstance(inp, dict) else inp  # the whole input, then one request
        w = req.split()
        out = {"response": f"PLAY {w[1]}" if w[0] == "2" else "PASS", "debug": f"turn of {req!r}"}
        print(json.dumps(out, indent=4))
        print(">>>BOTZONE_REQUEST_KEEP_RUNNING<<<", flush=True)
    line = sys.stdin.readline()
