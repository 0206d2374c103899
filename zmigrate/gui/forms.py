"""Apply a compiled Designer form (zmigrate/gui/generated) to a widget by composition."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QVBoxLayout, QWidget


def setup(ui: Any, widget: QWidget) -> None:
    """`ui.setupUi(widget)`: the generated code is untyped, its attributes are typed for mypy."""
    ui.setupUi(widget)


def placeholder_layout(host: QWidget) -> QVBoxLayout:
    """The placeholder's margin-less vertical layout (made on first use)."""
    layout = host.layout()
    if isinstance(layout, QVBoxLayout):
        return layout
    assert layout is None, "a placeholder must have no layout of another kind"
    layout = QVBoxLayout(host)
    layout.setContentsMargins(0, 0, 0, 0)
    return layout


def embed(host: QWidget, widget: QWidget) -> None:
    """Put `widget` into the placeholder `host` (a Designer QWidget without a layout),
    filling it edge to edge."""
    placeholder_layout(host).addWidget(widget)
