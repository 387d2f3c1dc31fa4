"""Benchmarks: the timing harness, third-party measurements and the one-command suite (see suite.py)."""
