"""The wizard's pages: a compiled Designer form each, plus the behaviour in code."""
