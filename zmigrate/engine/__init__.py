"""The engine: everything that runs with no face (no Qt, no terminal)."""
