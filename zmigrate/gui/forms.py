"""Apply a compiled Designer form (zmigrate/gui/generated) to a widget by composition."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QWidget


def setup(ui: Any, widget: QWidget) -> None:
    """`ui.setupUi(widget)`: the generated code is untyped, its attributes are typed for mypy."""
    ui.setupUi(widget)
