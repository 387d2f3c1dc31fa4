"""Test helpers (random case generators, validators); not used by the runtime hot path."""
