"""Top-level windows besides the wizard."""
