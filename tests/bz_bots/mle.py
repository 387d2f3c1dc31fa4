"""A Botzone bot that allocates 1 GB at once (more than Botzone's 256 MB memory limit)."""

block = bytearray(1 << 30)
print("PASS")
