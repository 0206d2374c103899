"""Item models over engine data."""
