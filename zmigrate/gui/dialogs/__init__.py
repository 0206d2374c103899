"""Dialogs the wizard opens."""
