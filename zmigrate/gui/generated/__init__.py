"""Modules compiled from ui/ by packaging/gen_qt.py: never edit them by hand."""
