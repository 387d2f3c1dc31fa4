"""A Botzone bot that crashes at once."""

raise SystemExit(3)
